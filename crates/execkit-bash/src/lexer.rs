//! A conservative lexer for a bash command, run once per call.
//!
//! Normalisation (B5, B7, B8), semantic exit codes (B34) and the command kind (B40) all read
//! the tokens of one lexing pass. The tokens know quotes, heredoc bodies and comments, so data
//! (a heredoc body, a comment) is never taken for words or operators. Anything this lexer does
//! not model exactly (command substitution, subshells, compound commands, backslash escapes)
//! sets `unsure`, and the rewrites that need an exact picture then leave the command alone.

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
    /// `<`, `>`, `>>`, `>&`, `&>`, `<&`, `>|`, `&>>`, `<>`, `<<`, `<<-`, `<<<`, with any fd
    /// number before it in the span; the next word is its target.
    Redirect,
    /// Exactly `2>&1`: stderr joins stdout. It takes no target word.
    MergeStderr,
}

impl Op {
    /// Ends a pipeline (everything but pipes and redirections).
    pub fn separates_commands(self) -> bool {
        !matches!(self, Op::Pipe | Op::PipeAll | Op::Redirect | Op::MergeStderr)
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
    /// A heredoc's body: the lines after the line holding its `<<`, up to (not including) the
    /// delimiter line. Data, never words.
    Heredoc {
        span: Span,
    },
    /// From a `#` that starts a word to the end of the line.
    Comment {
        span: Span,
    },
}

impl Token {
    /// Newlines and comments carry no command.
    fn is_filler(&self) -> bool {
        matches!(self, Token::Comment { .. } | Token::Op { op: Op::Newline, .. })
    }
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Lexed {
    pub tokens: Vec<Token>,
    /// The command uses syntax this lexer does not model exactly.
    pub unsure: bool,
}

impl Lexed {
    /// The tokens without leading and trailing newlines and comments.
    pub fn trimmed(&self) -> &[Token] {
        &self.tokens[self.trimmed_range()]
    }

    /// The indexes of [`Lexed::trimmed`].
    pub fn trimmed_range(&self) -> std::ops::Range<usize> {
        let tokens = &self.tokens;
        let start = tokens.iter().position(|t| !t.is_filler()).unwrap_or(tokens.len());
        let end = tokens.iter().rposition(|t| !t.is_filler()).map_or(start, |i| i + 1);
        start..end
    }
}

const RESERVED: &[&str] = &[
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
    "select", "function", "{", "}", "!", "coproc", "time",
];

/// A heredoc whose operator was seen and whose body starts after the current line.
struct PendingHeredoc {
    delimiter: String,
    /// `<<-`: leading tabs are stripped from the delimiter line.
    strip_tabs: bool,
}

struct Lexer<'a> {
    command: &'a str,
    bytes: &'a [u8],
    i: usize,
    out: Lexed,
    command_start: bool,
    /// The last operator was `<<`/`<<-` (the value: strip tabs) and its delimiter comes next.
    awaiting_delimiter: Option<bool>,
    pending: Vec<PendingHeredoc>,
}

pub(crate) fn lex(command: &str) -> Lexed {
    let mut lexer = Lexer {
        command,
        bytes: command.as_bytes(),
        i: 0,
        out: Lexed::default(),
        command_start: true,
        awaiting_delimiter: None,
        pending: Vec::new(),
    };
    while lexer.i < lexer.bytes.len() {
        lexer.step();
    }
    if lexer.awaiting_delimiter.is_some() || !lexer.pending.is_empty() {
        lexer.out.unsure = true;
    }
    lexer.out
}

impl Lexer<'_> {
    fn step(&mut self) {
        let i = self.i;
        match self.bytes[i] {
            b' ' | b'\t' => self.i += 1,
            b'\n' => {
                self.push_op(Op::Newline, i, i + 1);
                self.command_start = true;
                self.i += 1;
                self.heredoc_bodies();
            }
            b'#' => {
                let end = self.command[i..].find('\n').map_or(self.bytes.len(), |off| i + off);
                self.out.tokens.push(Token::Comment { span: Span { start: i, end } });
                self.i = end;
            }
            b'(' | b')' => {
                self.out.unsure = true;
                self.i += 1;
            }
            b'|' | b'&' | b';' | b'<' | b'>' => self.operator(i, i),
            _ => self.word(),
        }
    }

    fn push_op(&mut self, op: Op, start: usize, end: usize) {
        self.out.tokens.push(Token::Op { op, span: Span { start, end } });
    }

    /// An operator at `at`; `start` is where its span begins (earlier for an fd number).
    fn operator(&mut self, start: usize, at: usize) {
        let (op, len) = operator(&self.bytes[at..]);
        if len == 0 {
            self.out.unsure = true;
            self.i = at + 1;
            return;
        }
        let text = &self.bytes[at..at + len];
        if text == b"<<" || text == b"<<-" {
            self.awaiting_delimiter = Some(text == b"<<-");
        }
        self.push_op(op, start, at + len);
        self.command_start = op.separates_commands();
        self.i = at + len;
    }

    fn word(&mut self) {
        let start = self.i;
        let (end, text, quoted, unsure) = word(self.command, start);
        self.out.unsure |= unsure;
        let bytes = self.bytes;
        // `2>file`, `1>&2`: the digits name the redirected fd; they are no argument.
        let fd_number = !quoted
            && !text.is_empty()
            && text.bytes().all(|b| b.is_ascii_digit())
            && matches!(bytes.get(end), Some(b'<' | b'>'));
        if fd_number {
            if text == "2" && bytes[end..].starts_with(b">&1") && ends_word(bytes, end + 3) {
                self.push_op(Op::MergeStderr, start, end + 3);
                self.i = end + 3;
            } else {
                self.operator(start, end);
            }
            return;
        }
        if let Some(strip_tabs) = self.awaiting_delimiter.take() {
            self.pending.push(PendingHeredoc { delimiter: text.clone(), strip_tabs });
        } else if self.command_start && !quoted && RESERVED.contains(&text.as_str()) {
            self.out.unsure = true;
        }
        let is_assignment = self.command_start && is_assignment(&text);
        self.out.tokens.push(Token::Word { span: Span { start, end }, text, quoted });
        self.command_start = is_assignment;
        self.i = end;
    }

    /// After a newline: the bodies of the heredocs opened on the line just ended, in order.
    fn heredoc_bodies(&mut self) {
        for heredoc in std::mem::take(&mut self.pending) {
            let start = self.i;
            let mut end = self.bytes.len();
            let mut next = self.bytes.len();
            let mut at = start;
            while at < self.bytes.len() {
                let line_end = self.command[at..].find('\n').map_or(self.bytes.len(), |o| at + o);
                let line = &self.command[at..line_end];
                let line = if heredoc.strip_tabs { line.trim_start_matches('\t') } else { line };
                if line == heredoc.delimiter {
                    end = at;
                    next = (line_end + 1).min(self.bytes.len());
                    break;
                }
                at = line_end + 1;
            }
            self.out.tokens.push(Token::Heredoc { span: Span { start, end } });
            self.i = next;
        }
    }
}

fn ends_word(bytes: &[u8], at: usize) -> bool {
    bytes.get(at).is_none_or(|b| b" \t\n|&;<>()".contains(b))
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

/// The stages of a command that is one pipeline: each stage is its words (redirections and
/// their targets removed). `None` when the tokens hold more than one pipeline. The caller
/// checks `unsure` and passes the tokens it means (see [`Lexed::trimmed`]).
pub(crate) fn single_pipeline(tokens: &[Token]) -> Option<Vec<Vec<String>>> {
    let mut stages = vec![Vec::new()];
    let mut skip_next_word = false;
    for token in tokens {
        match token {
            Token::Word { text, .. } => {
                if skip_next_word {
                    skip_next_word = false;
                } else if let Some(stage) = stages.last_mut() {
                    stage.push(text.clone());
                }
            }
            Token::Op { op: Op::Redirect, .. } => skip_next_word = true,
            Token::Op { op: Op::MergeStderr, .. } => {}
            Token::Op { op: Op::Pipe | Op::PipeAll, .. } => stages.push(Vec::new()),
            Token::Op { .. } => return None,
            Token::Heredoc { .. } | Token::Comment { .. } => {}
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
                _ => None,
            })
            .collect()
    }

    fn words(cmd: &str) -> Vec<String> {
        lex(cmd)
            .tokens
            .into_iter()
            .filter_map(|t| match t {
                Token::Word { text, .. } => Some(text),
                _ => None,
            })
            .collect()
    }

    fn bodies(cmd: &str) -> Vec<&str> {
        lex(cmd)
            .tokens
            .iter()
            .filter_map(|t| match t {
                Token::Heredoc { span } => Some(&cmd[span.start..span.end]),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn operators_and_quotes() {
        assert_eq!(ops("a | b |& c"), vec![Op::Pipe, Op::PipeAll]);
        assert_eq!(ops("a && b || c; d & e"), vec![Op::And, Op::Or, Op::Semi, Op::Background]);
        assert_eq!(ops("cargo build 2>&1 | tail -20"), vec![Op::MergeStderr, Op::Pipe]);
        assert_eq!(ops("a 2>/dev/null 1>&2 2>&10"), vec![Op::Redirect; 3]);
        assert_eq!(ops("echo \"a | tail -5\""), vec![]);
        assert!(lex("echo $(ls | wc -l)").unsure);
        assert!(lex("for i in 1; do echo; done | tail -1").unsure);
        assert!(!lex("cargo build 2>&1 | tail -20").unsure);
    }

    #[test]
    fn heredoc_bodies_are_data() {
        let cmd = "cat > f <<'EOF'\nThe log is at artifact://3f9a0c12 | tail -2; x\nEOF\necho done";
        assert_eq!(bodies(cmd), ["The log is at artifact://3f9a0c12 | tail -2; x\n"]);
        assert_eq!(words(cmd), ["cat", "f", "EOF", "echo", "done"]);
        assert!(!lex(cmd).unsure);
        // Unquoted delimiter, `<<-` with tab-indented delimiter line, and two on one line.
        assert_eq!(bodies("cat <<EOF\n$HOME\nEOF"), ["$HOME\n"]);
        assert_eq!(bodies("cat <<-END\n\ta\n\tEND\nls"), ["\ta\n"]);
        assert_eq!(words("cat <<-END\n\ta\n\tEND\nls"), ["cat", "END", "ls"]);
        let two = "cat <<A - <<\"B\" | wc\none\nA\ntwo\nB\nls";
        assert_eq!(bodies(two), ["one\n", "two\n"]);
        assert_eq!(words(two), ["cat", "A", "-", "B", "wc", "ls"]);
        // A delimiter never found: the body runs to the end, as in bash.
        assert_eq!(bodies("cat <<EOF\nx\ny"), ["x\ny"]);
        // A here-string is a word, not a heredoc.
        assert_eq!(words("cat <<< hi"), ["cat", "hi"]);
        assert!(bodies("cat <<< hi").is_empty());
    }

    #[test]
    fn comments_are_data() {
        let lexed = lex("ls # cat artifact://3f9a0c12 | tail -2\necho a#b");
        assert_eq!(
            words("ls # cat artifact://3f9a0c12 | tail -2\necho a#b"),
            ["ls", "echo", "a#b"]
        );
        assert!(matches!(lexed.tokens[1], Token::Comment { .. }));
        assert_eq!(ops("ls # x | y"), vec![]);
        assert!(!lexed.unsure);
    }

    #[test]
    fn pipeline_stages() {
        let lexed = lex("FOO=1 grep -r x . 2>/dev/null | sort | head");
        let stages = single_pipeline(lexed.trimmed()).unwrap();
        assert_eq!(stages.len(), 3);
        assert_eq!(stages[0], vec!["FOO=1", "grep", "-r", "x", "."]);
        assert!(single_pipeline(lex("a; b").trimmed()).is_none());
        assert_eq!(single_pipeline(lex("\ngrep x f # why\n").trimmed()).unwrap().len(), 1);
    }
}
