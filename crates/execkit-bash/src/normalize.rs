//! Normalisation of the command before it runs (B5, B7, B8).
//!
//! Each rewrite is taken only when the lexer saw the relevant part of the command exactly;
//! when unsure, the command runs as written.

use serde::Serialize;

use crate::lexer::{self, Lexed, Op, Token};

/// The largest `| tail -n N` that becomes the tail window (O6's line cap).
const MAX_TAIL_LINES: u64 = 100_000;

/// What B5 removed, for `structuredContent.normalized`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TailRewrite {
    pub removed: String,
    pub tail: u64,
}

/// Removes a trailing `| tail -n N` stage (B5). Returns the shortened command and what was
/// removed, or `None` to run the command as written.
pub(crate) fn strip_trailing_tail(command: &str) -> Option<(String, TailRewrite)> {
    let command = command.trim_end();
    let lexed = lexer::lex(command);
    if lexed.unsure {
        return None;
    }
    let pipe_index = lexed.tokens.iter().rposition(|t| matches!(t, Token::Op { .. }))?;
    let Token::Op { op: Op::Pipe | Op::PipeAll, span: pipe } = lexed.tokens[pipe_index] else {
        return None;
    };
    if pipe_index == 0 || !matches!(lexed.tokens[pipe_index - 1], Token::Word { .. }) {
        return None;
    }
    let stage: Vec<&Token> = lexed.tokens[pipe_index + 1..].iter().collect();
    let words: Vec<(&str, bool)> = stage
        .iter()
        .filter_map(|t| match t {
            Token::Word { text, quoted, .. } => Some((text.as_str(), *quoted)),
            Token::Op { .. } => None,
        })
        .collect();
    if words.iter().any(|(_, quoted)| *quoted) {
        return None;
    }
    let words: Vec<&str> = words.into_iter().map(|(w, _)| w).collect();
    let lines = tail_lines(&words)?;
    let kept = command[..pipe.start].trim_end().to_string();
    if kept.is_empty() {
        return None;
    }
    let removed = command[pipe.start..].trim().to_string();
    Some((kept, TailRewrite { removed, tail: lines }))
}

fn tail_lines(words: &[&str]) -> Option<u64> {
    let (first, rest) = words.split_first()?;
    if *first != "tail" {
        return None;
    }
    let number = match rest {
        [flag, n] if *flag == "-n" || *flag == "--lines" => *n,
        [single] => {
            if let Some(n) = single.strip_prefix("--lines=") {
                n
            } else if let Some(n) = single.strip_prefix("-n") {
                n
            } else {
                single.strip_prefix('-')?
            }
        }
        _ => return None,
    };
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = number.parse().ok()?;
    (1..=MAX_TAIL_LINES).contains(&n).then_some(n)
}

/// One `cd <dir> &&` prefix taken off the command (B7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CdStep {
    /// The directory as written, quotes removed.
    pub dir: String,
    /// `cd nope &&`, for the error text.
    pub source: String,
}

/// Takes leading `cd <dir> &&` prefixes off the command. Returns the steps and the rest.
pub(crate) fn strip_leading_cd(command: &str) -> (Vec<CdStep>, String) {
    let mut steps = Vec::new();
    let mut rest = command.trim_start().to_string();
    while let Some((step, remainder)) = one_cd(&rest) {
        steps.push(step);
        rest = remainder;
    }
    (steps, rest)
}

fn one_cd(command: &str) -> Option<(CdStep, String)> {
    let lexed: Lexed = lexer::lex(command);
    let mut tokens = lexed.tokens.iter();
    let Some(Token::Word { text, quoted: false, .. }) = tokens.next() else { return None };
    if text != "cd" {
        return None;
    }
    let Some(Token::Word { span: dir_span, text: dir, .. }) = tokens.next() else { return None };
    let Some(Token::Op { op: Op::And, span: and_span }) = tokens.next() else { return None };
    if let Some(Token::Op { .. }) = tokens.next() {
        return None;
    }
    let raw = &command[dir_span.start..dir_span.end];
    let quoted = raw.starts_with(['\'', '"']);
    // A quoted `~` is a literal directory name; bash does not expand it.
    if !plain_dir_word(raw)
        || dir == "-"
        || (dir.starts_with('~') && (quoted || !is_home_form(dir)))
    {
        return None;
    }
    // The rest is taken from the text after `&&`, not from the next token, which may follow
    // syntax the lexer skips (a `(` opening a subshell).
    let rest = command[and_span.end..].trim_start().to_string();
    if rest.trim().is_empty() {
        return None;
    }
    let source = command[..and_span.end].trim().to_string();
    Some((CdStep { dir: dir.clone(), source }, rest))
}

fn is_home_form(dir: &str) -> bool {
    dir == "~" || dir.starts_with("~/")
}

/// B7's plain word: unquoted without specials, fully single-quoted, or fully double-quoted
/// without `$`, backtick or backslash.
fn plain_dir_word(raw: &str) -> bool {
    const SPECIAL: &str = "$`\\\"'*?[]{}();&|<>!#";
    if let Some(inner) = raw.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
        return !inner.contains('\'') && !inner.is_empty();
    }
    if let Some(inner) = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        return !inner.is_empty() && !inner.contains(['$', '`', '\\', '"']);
    }
    !raw.is_empty() && !raw.chars().any(|c| c.is_whitespace() || SPECIAL.contains(c))
}

/// A word that is exactly an artifact URI (B8): its span and the id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UriWord {
    pub start: usize,
    pub end: usize,
    pub id: String,
}

/// Finds shell words that are exactly `artifact://<8 hex>`, unquoted or fully quoted.
pub(crate) fn artifact_words(command: &str) -> Vec<UriWord> {
    if !command.contains("artifact://") {
        return Vec::new();
    }
    lexer::lex(command)
        .tokens
        .iter()
        .filter_map(|t| match t {
            Token::Word { span, .. } => {
                let raw = &command[span.start..span.end];
                let inner = unquote_whole(raw)?;
                let id = inner.strip_prefix("artifact://")?;
                let valid = id.len() == 8
                    && id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
                valid.then(|| UriWord { start: span.start, end: span.end, id: id.to_string() })
            }
            Token::Op { .. } => None,
        })
        .collect()
}

fn unquote_whole(raw: &str) -> Option<&str> {
    for q in ['\'', '"'] {
        if let Some(inner) = raw.strip_prefix(q) {
            return inner.strip_suffix(q).filter(|i| !i.contains(q));
        }
    }
    (!raw.contains(['\'', '"'])).then_some(raw)
}

/// Single-quotes `text` for bash.
pub(crate) fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tail(cmd: &str) -> Option<(String, u64, String)> {
        strip_trailing_tail(cmd).map(|(c, r)| (c, r.tail, r.removed))
    }

    #[test]
    fn trailing_tail_forms() {
        assert_eq!(
            tail("cargo build 2>&1 | tail -20"),
            Some(("cargo build 2>&1".into(), 20, "| tail -20".into()))
        );
        assert_eq!(tail("seq 1 100 | tail -n 3").map(|t| t.1), Some(3));
        assert_eq!(tail("seq 1 100 | tail -n3").map(|t| t.1), Some(3));
        assert_eq!(tail("seq 1 100 |& tail --lines=7").map(|t| t.1), Some(7));
        assert_eq!(tail("seq 1 100 | tail --lines 7").map(|t| t.1), Some(7));
        assert_eq!(tail("make; seq 9 | tail -2").map(|t| t.0), Some("make; seq 9".into()));
    }

    #[test]
    fn tail_left_alone() {
        for cmd in [
            "echo \"a | tail -5\"",
            "x || tail -5",
            "tail -5 file",
            "| tail -5",
            "seq 9 | tail -f",
            "seq 9 | tail -n +2",
            "seq 9 | tail -5 file",
            "seq 9 | tail -n 0",
            "seq 9 | tail -n 100001",
            "echo $(seq 9 | tail -2)",
            "seq 9 | tail -2 &",
            "seq 9 | tail -2; echo",
            "seq 9 | 'tail' -2",
        ] {
            assert_eq!(tail(cmd), None, "{cmd}");
        }
    }

    #[test]
    fn leading_cd() {
        let (steps, rest) = strip_leading_cd("cd a && cd 'b c' && make -j2");
        assert_eq!(steps.iter().map(|s| s.dir.as_str()).collect::<Vec<_>>(), ["a", "b c"]);
        assert_eq!(steps[0].source, "cd a &&");
        assert_eq!(rest, "make -j2");
        assert_eq!(strip_leading_cd("cd ~/x && ls").0[0].dir, "~/x");
        assert_eq!(strip_leading_cd("cd sub && (echo hi)").1, "(echo hi)");
        assert!(strip_leading_cd("cd '~' && pwd").0.is_empty());
        for cmd in [
            "cd && ls",
            "cd - && ls",
            "cd ~user && ls",
            "cd $HOME && ls",
            "cd a; b",
            "cd a || b",
            "cd a &&",
            "cd \"$X\" && ls",
            "cd a*b && ls",
        ] {
            assert!(strip_leading_cd(cmd).0.is_empty(), "{cmd}");
        }
    }

    #[test]
    fn artifact_uris() {
        let words = artifact_words("grep -n x artifact://3f9a0c12 'artifact://00000000'");
        assert_eq!(words.len(), 2);
        assert_eq!(words[0].id, "3f9a0c12");
        assert!(artifact_words("cat artifact://../../etc/passwd").is_empty());
        assert!(artifact_words("echo \"see artifact://3f9a0c12 here\"").is_empty());
        assert!(artifact_words("cat xartifact://3f9a0c12").is_empty());
        assert!(artifact_words("cat artifact://3F9A0C12").is_empty());
        assert_eq!(shell_quote("a'b"), "'a'\\''b'");
    }
}
