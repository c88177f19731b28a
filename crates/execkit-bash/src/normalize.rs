//! Normalisation of the command before it runs (B5, B7, B8).
//!
//! Every rewrite reads the tokens of the command's one lexing ([`plan`]), so a heredoc body or a
//! comment is never rewritten. Each rewrite is taken only when the lexer saw the relevant part of
//! the command exactly; when unsure, the command runs as written.

use std::ops::Range;

use serde::Serialize;

use crate::lexer::{Lexed, Op, Span, Token, single_pipeline};

/// The largest `| tail -n N` that becomes the tail window (O6's line cap).
const MAX_TAIL_LINES: u64 = 100_000;

/// What the trailing `| tail` rewrite removed (B5), for `structuredContent.normalized`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TailRewrite {
    pub removed: String,
    pub tail: u64,
}

/// Which rewrites the call allows: `cd` only without a `cwd` argument, `tail` only without
/// `head`/`tail` arguments and without a PTY.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Allowed {
    pub cd: bool,
    pub tail: bool,
}

/// What normalisation makes of a command, read off its one lexing.
#[derive(Debug, Clone, Default)]
pub(crate) struct Plan {
    /// Leading `cd <dir> &&` prefixes taken off (B7), in order.
    pub cd_steps: Vec<CdStep>,
    /// The bytes of the command that run (after the `cd` prefixes, before a removed tail stage).
    pub kept: Range<usize>,
    pub tail: Option<TailRewrite>,
    /// Artifact URI words inside `kept` (B8), in order.
    pub artifacts: Vec<UriWord>,
    /// The kept command's stages when it is one pipeline the lexer saw exactly (for B34).
    pub stages: Option<Vec<Vec<String>>>,
}

pub(crate) fn plan(command: &str, lexed: &Lexed, allowed: Allowed) -> Plan {
    let tokens = &lexed.tokens;
    let mut range = lexed.trimmed_range();
    let mut kept = 0..command.len();
    let mut cd_steps = Vec::new();
    while let Some((step, and_end)) =
        allowed.cd.then(|| one_cd(command, &tokens[range.clone()])).flatten()
    {
        cd_steps.push(step);
        range.start += 3;
        let rest = &command[and_end..];
        kept.start = and_end + (rest.len() - rest.trim_start().len());
    }
    let mut tail = None;
    let found = (allowed.tail && !lexed.unsure)
        .then(|| trailing_tail(command, &tokens[range.clone()]))
        .flatten();
    if let Some((pipe_index, rewrite, pipe)) = found {
        range.end = range.start + pipe_index;
        kept.end = kept.start.max(command[..pipe.start].trim_end().len());
        tail = Some(rewrite);
    }
    let kept_tokens = &tokens[range];
    let artifacts = artifact_words(command, kept_tokens, &kept);
    let stages = if lexed.unsure { None } else { single_pipeline(kept_tokens) };
    Plan { cd_steps, kept, tail, artifacts, stages }
}

/// B5: a trailing `| tail -n N` stage of a command that is one pipeline whose stderr flows
/// into the pipe. Returns the pipe's token index, the rewrite and the pipe's span.
fn trailing_tail(command: &str, tokens: &[Token]) -> Option<(usize, TailRewrite, Span)> {
    let separated = tokens.iter().any(|t| match t {
        Token::Op { op, .. } => op.separates_commands(),
        Token::Heredoc { .. } | Token::Comment { .. } => true,
        Token::Word { .. } => false,
    });
    if separated {
        return None;
    }
    let pipe_index = tokens.iter().rposition(|t| matches!(t, Token::Op { .. }))?;
    let Token::Op { op: Op::Pipe | Op::PipeAll, span: pipe } = tokens[pipe_index] else {
        return None;
    };
    if pipe_index == 0 || !stderr_merged(&tokens[..=pipe_index]) {
        return None;
    }
    let mut words = Vec::new();
    for token in &tokens[pipe_index + 1..] {
        match token {
            Token::Word { text, quoted: false, span } => words.push((text.as_str(), span.end)),
            _ => return None,
        }
    }
    let end = words.last()?.1;
    let texts: Vec<&str> = words.iter().map(|w| w.0).collect();
    let lines = tail_lines(&texts)?;
    let removed = command[pipe.start..end].to_string();
    Some((pipe_index, TailRewrite { removed, tail: lines }, pipe))
}

/// Every pipe sends its stage's stderr along: `|&`, or `2>&1` as the stage's last redirection.
/// Otherwise some stderr would bypass `tail` in bash, and the window must not hide it.
fn stderr_merged(tokens: &[Token]) -> bool {
    let mut last_redirect = None;
    for token in tokens {
        match token {
            Token::Op { op: Op::PipeAll, .. } => last_redirect = None,
            Token::Op { op: Op::Pipe, .. } => {
                if last_redirect != Some(Op::MergeStderr) {
                    return false;
                }
                last_redirect = None;
            }
            Token::Op { op: op @ (Op::Redirect | Op::MergeStderr), .. } => {
                last_redirect = Some(*op)
            }
            _ => {}
        }
    }
    true
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

/// One `cd <dir> &&` at the start of `tokens`: the step and where the `&&` ends.
fn one_cd(command: &str, tokens: &[Token]) -> Option<(CdStep, usize)> {
    let [cd, dir, and, next, ..] = tokens else { return None };
    let Token::Word { text, quoted: false, .. } = cd else { return None };
    let Token::Word { span: dir_span, text: dir, .. } = dir else { return None };
    let Token::Op { op: Op::And, span: and_span } = and else { return None };
    // Something must follow; the next token may come after syntax the lexer skips (a `(`
    // opening a subshell).
    if text != "cd" || !matches!(next, Token::Word { .. }) {
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
    let cd_start = match cd {
        Token::Word { span, .. } => span.start,
        _ => return None,
    };
    let source = command[cd_start..and_span.end].trim().to_string();
    Some((CdStep { dir: dir.clone(), source }, and_span.end))
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

/// Shell words inside `kept` that are exactly `artifact://<8 hex>`, unquoted or fully quoted.
/// Heredoc bodies and comments are separate tokens, so a URI there is never a word.
fn artifact_words(command: &str, tokens: &[Token], kept: &Range<usize>) -> Vec<UriWord> {
    tokens
        .iter()
        .filter_map(|t| match t {
            Token::Word { span, .. } if kept.start <= span.start && span.end <= kept.end => {
                let raw = &command[span.start..span.end];
                let id = unquote_whole(raw)?.strip_prefix("artifact://")?;
                let valid = id.len() == 8
                    && id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
                valid.then(|| UriWord { start: span.start, end: span.end, id: id.to_string() })
            }
            _ => None,
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
    use crate::lexer::lex;

    const ALL: Allowed = Allowed { cd: true, tail: true };

    fn plan_of(cmd: &str) -> Plan {
        plan(cmd, &lex(cmd), ALL)
    }

    fn tail(cmd: &str) -> Option<(String, u64, String)> {
        let plan = plan_of(cmd);
        plan.tail.map(|r| (cmd[plan.kept].to_string(), r.tail, r.removed))
    }

    fn cd(cmd: &str) -> (Vec<CdStep>, String) {
        let plan = plan_of(cmd);
        (plan.cd_steps, cmd[plan.kept].to_string())
    }

    fn uris(cmd: &str) -> Vec<String> {
        plan_of(cmd).artifacts.into_iter().map(|w| w.id).collect()
    }

    #[test]
    fn trailing_tail_forms() {
        assert_eq!(
            tail("cargo build 2>&1 | tail -20"),
            Some(("cargo build 2>&1".into(), 20, "| tail -20".into()))
        );
        assert_eq!(tail("seq 1 100 2>&1 | tail -n 3").map(|t| t.1), Some(3));
        assert_eq!(tail("seq 1 100 2>&1 | tail -n3").map(|t| t.1), Some(3));
        assert_eq!(tail("seq 1 100 |& tail --lines=7").map(|t| t.1), Some(7));
        assert_eq!(tail("seq 1 100 |& tail --lines 7").map(|t| t.1), Some(7));
        assert_eq!(tail("a 2>&1 | b |& tail -2").map(|t| t.0), Some("a 2>&1 | b".into()));
        assert_eq!(tail("make >log 2>&1 | tail -2").map(|t| t.1), Some(2));
        assert_eq!(tail("make 2>&1 | tail -2\n").map(|t| t.2), Some("| tail -2".into()));
        // The `cd` prefix becomes the cwd first; what is left is one pipeline.
        assert_eq!(tail("cd a && make 2>&1 | tail -2").map(|t| t.0), Some("make 2>&1".into()));
    }

    #[test]
    fn tail_left_alone() {
        for cmd in [
            "echo \"a | tail -5\"",
            "x || tail -5",
            "tail -5 file",
            "| tail -5",
            "seq 9 |& tail -f",
            "seq 9 |& tail -n +2",
            "seq 9 |& tail -5 file",
            "seq 9 |& tail -n 0",
            "seq 9 |& tail -n 100001",
            "echo $(seq 9 |& tail -2)",
            "seq 9 |& tail -2 &",
            "seq 9 |& tail -2; echo",
            "seq 9 |& 'tail' -2",
            // Not one pipeline: bash applies `tail` to the last one only.
            "echo first; seq 1 10 |& tail -n 2",
            "make && seq 9 2>&1 | tail -2",
            "echo first\nseq 9 2>&1 | tail -2",
            // stderr not merged into the pipe: it bypasses `tail` in bash.
            "make | tail -n 5",
            "seq 1 10 | tail -n 2",
            "a | b 2>&1 | tail -2",
            "make 2>&1 >/dev/null | tail -2",
            // Heredoc and comment lines are data.
            "cat <<EOF 2>&1 | tail -1\nx\nEOF",
            "seq 9 2>&1 # | tail -2",
        ] {
            assert_eq!(tail(cmd), None, "{cmd}");
        }
    }

    #[test]
    fn leading_cd() {
        let (steps, rest) = cd("cd a && cd 'b c' && make -j2");
        assert_eq!(steps.iter().map(|s| s.dir.as_str()).collect::<Vec<_>>(), ["a", "b c"]);
        assert_eq!(steps[0].source, "cd a &&");
        assert_eq!(rest, "make -j2");
        assert_eq!(cd("cd ~/x && ls").0[0].dir, "~/x");
        assert_eq!(cd("cd sub && (echo hi)").1, "(echo hi)");
        assert_eq!(cd("cd sub && cat <<E\nx\nE").1, "cat <<E\nx\nE");
        assert!(cd("cd '~' && pwd").0.is_empty());
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
            assert!(cd(cmd).0.is_empty(), "{cmd}");
        }
        let plan = plan("cd a && ls", &lex("cd a && ls"), Allowed { cd: false, tail: true });
        assert!(plan.cd_steps.is_empty());
    }

    #[test]
    fn artifact_uris() {
        assert_eq!(
            uris("grep -n x artifact://3f9a0c12 'artifact://00000000'"),
            ["3f9a0c12", "00000000"]
        );
        assert!(uris("cat artifact://../../etc/passwd").is_empty());
        assert!(uris("echo \"see artifact://3f9a0c12 here\"").is_empty());
        assert!(uris("cat xartifact://3f9a0c12").is_empty());
        assert!(uris("cat artifact://3F9A0C12").is_empty());
        assert_eq!(shell_quote("a'b"), "'a'\\''b'");
    }

    #[test]
    fn odd_input_never_panics() {
        for cmd in [
            "<<",
            "<<\n",
            "cat <<'",
            "cat <<E\n",
            "2>&1",
            "#",
            "\n\n",
            "ä<<ö\nö\nö",
            "a\\",
            "cd",
            "cd a &&",
            "| tail -1",
            "2>&1 |& tail -2",
            "cat <<-\n\t\n",
            "x <<A <<B\nA",
            "cd é && ü 2>&1 | tail -3 # ß",
            "$(",
            "`",
            "'",
            "\"",
            "cat <<EOF\nartifact://",
        ] {
            let plan = plan_of(cmd);
            assert!(plan.kept.start <= plan.kept.end && plan.kept.end <= cmd.len(), "{cmd}");
            let _ = &cmd[plan.kept];
        }
        assert_eq!(tail("cd é && ü 2>&1 | tail -3 # ß").map(|t| t.0), Some("ü 2>&1".into()));
    }

    #[test]
    fn artifact_uris_in_data_are_kept() {
        let heredoc =
            "cat > f <<'EOF'\nThe log is at artifact://3f9a0c12\n  artifact://3f9a0c12\nEOF";
        assert!(uris(heredoc).is_empty());
        assert!(uris("cat <<-EOF\n\tartifact://3f9a0c12\n\tEOF").is_empty());
        assert!(uris("cat <<EOF\nartifact://3f9a0c12\nEOF").is_empty());
        assert!(uris("ls # artifact://3f9a0c12").is_empty());
        // The same URI as a word after the heredoc is still a word.
        assert_eq!(uris("cat <<EOF\nx\nEOF\ncat artifact://3f9a0c12"), ["3f9a0c12"]);
        assert_eq!(uris("cat <<A <<B artifact://3f9a0c12\nA\nB"), ["3f9a0c12"]);
    }
}
