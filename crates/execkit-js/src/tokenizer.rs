//! A small JavaScript tokenizer: just enough to find a cell's top-level declarations
//! (spec-eval.md JS3). It understands strings, nested template literals, comments, regular
//! expressions versus division, and bracket nesting. Whenever it cannot be sure what it is
//! looking at (an unterminated literal, unbalanced brackets, a `/` after `}`), it gives up and
//! the cell runs unmodified.

/// What a token is, as far as declaration finding cares.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Ident,
    Num,
    Str,
    Template,
    Regex,
    Punct,
}

/// One token: its kind, byte span, and whether a line break precedes it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Token {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
    pub nl_before: bool,
}

impl Token {
    pub fn text<'a>(&self, src: &'a str) -> &'a str {
        &src[self.start..self.end]
    }
}

/// The tokenizer could not be sure about the cell.
#[derive(Debug, PartialEq, Eq)]
pub struct Unsure;

const PUNCTS: [&str; 33] = [
    ">>>=", "...", "===", "!==", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "??=", "=>", "==", "!=",
    "<=", ">=", "&&", "||", "??", "?.", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=",
    "<<", ">>", "**",
];

/// Keywords after which a `/` starts a regular expression.
const REGEX_AFTER: [&str; 15] = [
    "return",
    "typeof",
    "instanceof",
    "in",
    "of",
    "new",
    "delete",
    "void",
    "throw",
    "case",
    "do",
    "else",
    "yield",
    "await",
    "extends",
];

/// Template literals nested deeper than this are not analysed.
const MAX_TEMPLATE_DEPTH: usize = 64;

/// Tokenizes `src`; brackets must balance.
pub fn tokenize(src: &str) -> Result<Vec<Token>, Unsure> {
    let mut lexer = Lexer { src, b: src.as_bytes(), i: 0, tokens: Vec::new() };
    lexer.run(0, false)?;
    Ok(lexer.tokens)
}

struct Lexer<'a> {
    src: &'a str,
    b: &'a [u8],
    i: usize,
    tokens: Vec<Token>,
}

impl Lexer<'_> {
    /// Tokenizes until EOF (top level) or until the `}` that closes a template substitution.
    fn run(&mut self, template_depth: usize, in_template: bool) -> Result<(), Unsure> {
        let mut stack: Vec<u8> = Vec::new();
        loop {
            let nl = self.skip_space()?;
            let Some(&c) = self.b.get(self.i) else {
                return if stack.is_empty() && !in_template { Ok(()) } else { Err(Unsure) };
            };
            if c == b'}' && stack.is_empty() && in_template {
                self.i += 1;
                return Ok(());
            }
            let start = self.i;
            let kind = self.scan(c, template_depth, &mut stack)?;
            self.tokens.push(Token { kind, start, end: self.i, nl_before: nl });
        }
    }

    fn scan(&mut self, c: u8, depth: usize, stack: &mut Vec<u8>) -> Result<Kind, Unsure> {
        match c {
            b'\'' | b'"' => self.string(c).map(|()| Kind::Str),
            b'`' => self.template(depth).map(|()| Kind::Template),
            b'/' if self.regex_allowed()? => self.regex().map(|()| Kind::Regex),
            b'0'..=b'9' => Ok(self.number()),
            b'.' if self.b.get(self.i + 1).is_some_and(u8::is_ascii_digit) => Ok(self.number()),
            b'(' | b'[' | b'{' => {
                stack.push(c);
                self.i += 1;
                Ok(Kind::Punct)
            }
            b')' | b']' | b'}' => {
                let open = match c {
                    b')' => b'(',
                    b']' => b'[',
                    _ => b'{',
                };
                if stack.pop() != Some(open) {
                    return Err(Unsure);
                }
                self.i += 1;
                Ok(Kind::Punct)
            }
            _ if is_ident_start(c) => Ok(self.ident()),
            _ => Ok(self.punct()),
        }
    }

    /// Skips whitespace and comments; reports whether a line break was crossed.
    fn skip_space(&mut self) -> Result<bool, Unsure> {
        let mut nl = false;
        while let Some(&c) = self.b.get(self.i) {
            match c {
                b'\n' | b'\r' => {
                    nl = true;
                    self.i += 1;
                }
                b' ' | b'\t' | 0x0b | 0x0c => self.i += 1,
                b'/' if self.b.get(self.i + 1) == Some(&b'/') => self.line_comment(),
                b'/' if self.b.get(self.i + 1) == Some(&b'*') => {
                    let rest = &self.src[self.i + 2..];
                    let end = rest.find("*/").ok_or(Unsure)?;
                    nl |= rest[..end].contains('\n');
                    self.i += 2 + end + 2;
                }
                _ if c >= 0x80 && self.src[self.i..].starts_with('\u{a0}') => self.i += 2,
                _ if c >= 0x80 && self.src[self.i..].starts_with('\u{feff}') => self.i += 3,
                _ => break,
            }
        }
        Ok(nl)
    }

    fn line_comment(&mut self) {
        while let Some(&c) = self.b.get(self.i) {
            if c == b'\n' {
                break;
            }
            self.i += 1;
        }
    }

    fn string(&mut self, quote: u8) -> Result<(), Unsure> {
        self.i += 1;
        while let Some(&c) = self.b.get(self.i) {
            self.i += 1;
            match c {
                b'\\' => self.i += 1,
                b'\n' => return Err(Unsure),
                _ if c == quote => return Ok(()),
                _ => {}
            }
        }
        Err(Unsure)
    }

    fn template(&mut self, depth: usize) -> Result<(), Unsure> {
        if depth >= MAX_TEMPLATE_DEPTH {
            return Err(Unsure);
        }
        self.i += 1;
        while let Some(&c) = self.b.get(self.i) {
            self.i += 1;
            match c {
                b'\\' => self.i += 1,
                b'`' => return Ok(()),
                b'$' if self.b.get(self.i) == Some(&b'{') => {
                    self.i += 1;
                    // The substitution's tokens are analysed (for regexes and nesting) and then
                    // dropped: the whole template is one token at its own level.
                    let keep = self.tokens.len();
                    self.run(depth + 1, true)?;
                    self.tokens.truncate(keep);
                }
                _ => {}
            }
        }
        Err(Unsure)
    }

    fn regex_allowed(&self) -> Result<bool, Unsure> {
        let Some(prev) = self.tokens.last() else { return Ok(true) };
        let text = prev.text(self.src);
        match prev.kind {
            Kind::Ident => Ok(REGEX_AFTER.contains(&text)),
            Kind::Num | Kind::Str | Kind::Template | Kind::Regex => Ok(false),
            Kind::Punct => match text {
                ")" | "]" => Ok(false),
                // After `}` a `/` divides an object literal or starts a regex after a block.
                "}" | "++" | "--" => Err(Unsure),
                _ => Ok(true),
            },
        }
    }

    fn regex(&mut self) -> Result<(), Unsure> {
        self.i += 1;
        let mut in_class = false;
        while let Some(&c) = self.b.get(self.i) {
            self.i += 1;
            match c {
                b'\\' => self.i += 1,
                b'\n' | b'\r' => return Err(Unsure),
                b'[' => in_class = true,
                b']' => in_class = false,
                b'/' if !in_class => {
                    while self.b.get(self.i).is_some_and(|&f| is_ident_part(f)) {
                        self.i += 1;
                    }
                    return Ok(());
                }
                _ => {}
            }
        }
        Err(Unsure)
    }

    fn number(&mut self) -> Kind {
        let hex = self.src[self.i..].starts_with("0x") || self.src[self.i..].starts_with("0X");
        while let Some(&c) = self.b.get(self.i) {
            let exponent_sign = (c == b'+' || c == b'-')
                && !hex
                && matches!(self.b.get(self.i.wrapping_sub(1)), Some(b'e' | b'E'));
            if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || exponent_sign {
                self.i += 1;
            } else {
                break;
            }
        }
        Kind::Num
    }

    fn ident(&mut self) -> Kind {
        self.i += 1;
        while self.b.get(self.i).is_some_and(|&c| is_ident_part(c)) {
            self.i += 1;
        }
        Kind::Ident
    }

    fn punct(&mut self) -> Kind {
        let rest = &self.src[self.i..];
        let len = PUNCTS
            .iter()
            .find(|p| rest.starts_with(*p))
            .map_or_else(|| rest.chars().next().map_or(1, char::len_utf8), |p| p.len());
        self.i += len;
        Kind::Punct
    }
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c == b'\\' || c == b'#' || c >= 0x80
}

fn is_ident_part(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c == b'\\' || c >= 0x80
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(src: &str) -> Vec<&str> {
        tokenize(src).unwrap().iter().map(|t| t.text(src)).collect()
    }

    #[test]
    fn strings_comments_and_templates_are_single_tokens() {
        assert_eq!(texts("let a = 'x}' // }\n"), ["let", "a", "=", "'x}'"]);
        assert_eq!(texts("x = `a${ {b: `c${d}`} }e`;"), ["x", "=", "`a${ {b: `c${d}`} }e`", ";"]);
        assert_eq!(texts("/* { */ y"), ["y"]);
    }

    #[test]
    fn regex_versus_division() {
        assert_eq!(texts("a = b / c / d"), ["a", "=", "b", "/", "c", "/", "d"]);
        assert_eq!(texts("a = /}[/]/g.test(s)")[2], "/}[/]/g");
        assert_eq!(texts("return /x/")[1], "/x/");
        assert_eq!(tokenize("if (x) {}\n/re/.test(s)"), Err(Unsure));
    }

    #[test]
    fn unsure_cases() {
        assert_eq!(tokenize("let a = {"), Err(Unsure));
        assert_eq!(tokenize("let a = 'x"), Err(Unsure));
        assert_eq!(tokenize("x = `a${b"), Err(Unsure));
        assert_eq!(tokenize("f(]"), Err(Unsure));
    }

    #[test]
    fn newlines_are_tracked() {
        let toks = tokenize("a\nb").unwrap();
        assert!(!toks[0].nl_before && toks[1].nl_before);
    }
}
