//! A conservative lexer for the top level of a bash command.
//!
//! Normalisation (B5, B7, B8), semantic exit codes (B34) and the command kind (B40) only need
//! to know the top-level words and operators of simple commands and pipelines. Anything this
//! lexer does not model exactly (command substitution, heredocs, subshells, compound commands,
//! comments) sets `unsure`, and callers then leave the command alone.

/// A half-open byte range into the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    pub start: usize,
    pub end: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    /// `|`
    Pipe,
    /// `|&`
    PipeAll,
    /// `&&`
    And,
    /// `||`
    Or,
    /// `;`
    Semi,
    /// `&`
    Background,
    /// A newline.
    Newline,
    /// `<`, `>`, `>>`, `>&`, `&>`, `<&`, `>|`, `&>>`, `<>`
    Redirect,
}

impl Op {
    /// Ends a pipeline (everything but pipes and redirections).
    pub fn separates_commands(self) -> bool {
        !matches!(self, Op::Pipe | Op::PipeAll | Op::Redirect)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Token {
    /// A word, with its text after quote removal (when the quoting was simple).
    Word {
        span: Span,
        text: String,
        quoted: bool,
    },
    Op {
        op: Op,
        span: Span,
    },
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Lexed {
    pub tokens: Vec<Token>,
    /// The command uses syntax this lexer does not model exactly.
    pub unsure: bool,
}

const RESERVED: &[&str] = &[
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
    "select", "function", "{", "}", "!", "coproc", "time",
];

pub(crate) fn lex(command: &str) -> Lexed {
    let bytes = command.as_bytes();
    let mut out = Lexed::default();
    let mut i = 0;
    let mut command_start = true;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b' ' | b'\t' => i += 1,
            b'\n' => {
                out.tokens.push(Token::Op { op: Op::Newline, span: Span { start: i, end: i + 1 } });
                command_start = true;
                i += 1;
            }
            b'#' => {
                out.unsure = true;
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'(' | b')' => {
                out.unsure = true;
                i += 1;
            }
            b'|' | b'&' | b';' | b'<' | b'>' => {
                let (op, len) = operator(&bytes[i..]);
                if len == 0 {
                    out.unsure = true;
                    i += 1;
                    continue;
                }
                if bytes[i..].starts_with(b"<<") {
                    out.unsure = true;
                }
                out.tokens.push(Token::Op { op, span: Span { start: i, end: i + len } });
                command_start = op.separates_commands();
                i += len;
            }
            _ => {
                let (end, text, quoted, unsure) = word(command, i);
                out.unsure |= unsure;
                // `2>file`, `1>&2`: the digits name the redirected fd; they are no argument.
                let fd_number = !quoted
                    && !text.is_empty()
                    && text.bytes().all(|b| b.is_ascii_digit())
                    && matches!(bytes.get(end), Some(b'<' | b'>'));
                if fd_number {
                    i = end;
                    continue;
                }
                if command_start && !quoted && RESERVED.contains(&text.as_str()) {
                    out.unsure = true;
                }
                let is_assignment = command_start && is_assignment(&text);
                out.tokens.push(Token::Word { span: Span { start: i, end }, text, quoted });
                command_start = is_assignment;
                i = end;
            }
        }
    }
    out
}

fn operator(rest: &[u8]) -> (Op, usize) {
    const TABLE: &[(&[u8], Op)] = &[
        (b"&>>", Op::Redirect),
        (b"|&", Op::PipeAll),
        (b"||", Op::Or),
        (b"&&", Op::And),
        (b"&>", Op::Redirect),
        (b">>", Op::Redirect),
        (b">&", Op::Redirect),
        (b"<&", Op::Redirect),
        (b">|", Op::Redirect),
        (b"<>", Op::Redirect),
        (b"<<", Op::Redirect),
        (b"|", Op::Pipe),
        (b"&", Op::Background),
        (b";", Op::Semi),
        (b"<", Op::Redirect),
        (b">", Op::Redirect),
    ];
    for (text, op) in TABLE {
        if rest.starts_with(text) {
            let mut len = text.len();
            // `<<-`, `<<<`: still redirections (heredoc / here-string).
            while *text == b"<<" && rest.get(len).is_some_and(|&b| b == b'-' || b == b'<') {
                len += 1;
            }
            if *text == b";" && rest.get(1) == Some(&b';') {
                return (Op::Semi, 0);
            }
            return (*op, len);
        }
    }
    (Op::Semi, 0)
}

/// Scans one word from `start`; returns (end, text after quote removal, any quoting, unsure).
fn word(command: &str, start: usize) -> (usize, String, bool, bool) {
    let bytes = command.as_bytes();
    let mut i = start;
    let mut text = String::new();
    let mut quoted = false;
    let mut unsure = false;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b' ' | b'\t' | b'\n' | b'|' | b'&' | b';' | b'<' | b'>' | b'(' | b')' => break,
            b'\'' => {
                quoted = true;
                match command[i + 1..].find('\'') {
                    Some(off) => {
                        text.push_str(&command[i + 1..i + 1 + off]);
                        i += off + 2;
                    }
                    None => return (bytes.len(), text, quoted, true),
                }
            }
            b'"' => {
                quoted = true;
                i += 1;
                loop {
                    match bytes.get(i) {
                        None => return (bytes.len(), text, quoted, true),
                        Some(b'"') => {
                            i += 1;
                            break;
                        }
                        Some(b'\\') if i + 1 < bytes.len() => {
                            unsure |= true;
                            push_char(command, i + 1, &mut text);
                            i += 1 + char_len(command, i + 1);
                        }
                        Some(b'$') | Some(b'`') => {
                            unsure = true;
                            text.push(bytes[i] as char);
                            i += 1;
                        }
                        Some(_) => {
                            push_char(command, i, &mut text);
                            i += char_len(command, i);
                        }
                    }
                }
            }
            b'\\' => {
                unsure = true;
                if i + 1 < bytes.len() {
                    push_char(command, i + 1, &mut text);
                    i += 1 + char_len(command, i + 1);
                } else {
                    i += 1;
                }
            }
            b'`' => {
                unsure = true;
                text.push('`');
                i += 1;
            }
            b'$' if bytes.get(i + 1) == Some(&b'(') => {
                unsure = true;
                let end = matching_paren(bytes, i + 1);
                text.push_str(&command[i..end]);
                i = end;
            }
            _ => {
                push_char(command, i, &mut text);
                i += char_len(command, i);
            }
        }
    }
    (i, text, quoted, unsure)
}

fn matching_paren(bytes: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    let mut i = open;
    while i < bytes.len() {
        match bytes[i] {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    bytes.len()
}

fn char_len(s: &str, at: usize) -> usize {
    s[at..].chars().next().map_or(1, char::len_utf8)
}

fn push_char(s: &str, at: usize, out: &mut String) {
    if let Some(c) = s[at..].chars().next() {
        out.push(c);
    }
}

/// `NAME=value` before a command word.
pub(crate) fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

/// The top-level pipelines' stages: each stage is its words (redirections and their targets
/// removed). `None` when the command has more than one pipeline or is unsure.
pub(crate) fn single_pipeline(lexed: &Lexed) -> Option<Vec<Vec<String>>> {
    if lexed.unsure {
        return None;
    }
    let mut stages = vec![Vec::new()];
    let mut skip_next_word = false;
    for token in &lexed.tokens {
        match token {
            Token::Word { text, .. } => {
                if skip_next_word {
                    skip_next_word = false;
                } else if let Some(stage) = stages.last_mut() {
                    stage.push(text.clone());
                }
            }
            Token::Op { op: Op::Redirect, .. } => skip_next_word = true,
            Token::Op { op: Op::Pipe | Op::PipeAll, .. } => stages.push(Vec::new()),
            Token::Op { .. } => return None,
        }
    }
    if stages.iter().any(Vec::is_empty) { None } else { Some(stages) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ops(cmd: &str) -> Vec<Op> {
        lex(cmd)
            .tokens
            .into_iter()
            .filter_map(|t| match t {
                Token::Op { op, .. } => Some(op),
                Token::Word { .. } => None,
            })
            .collect()
    }

    #[test]
    fn operators_and_quotes() {
        assert_eq!(ops("a | b |& c"), vec![Op::Pipe, Op::PipeAll]);
        assert_eq!(ops("a && b || c; d & e"), vec![Op::And, Op::Or, Op::Semi, Op::Background]);
        assert_eq!(ops("cargo build 2>&1 | tail -20"), vec![Op::Redirect, Op::Pipe]);
        assert_eq!(ops("echo \"a | tail -5\""), vec![]);
        assert!(lex("cat <<EOF\nx\nEOF").unsure);
        assert!(lex("echo $(ls | wc -l)").unsure);
        assert!(lex("for i in 1; do echo; done | tail -1").unsure);
        assert!(!lex("cargo build 2>&1 | tail -20").unsure);
    }

    #[test]
    fn pipeline_stages() {
        let stages = single_pipeline(&lex("FOO=1 grep -r x . 2>/dev/null | sort | head")).unwrap();
        assert_eq!(stages.len(), 3);
        assert_eq!(stages[0], vec!["FOO=1", "grep", "-r", "x", "."]);
        assert!(single_pipeline(&lex("a; b")).is_none());
    }
}
