//! What an exit code or a command means, for the model and for UIs (B20, B34, B40).

use serde::Serialize;

use crate::lexer::{self, Lexed, single_pipeline};

/// A semantic reading of a non-zero exit code (B34).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExitMeaning {
    NoMatch,
    Differs,
    False,
    HttpError,
    InnerTimeout,
    NotExecutable,
    NotFound,
    Signal,
}

/// Wrappers skipped to find the real command word.
const WRAPPERS: &[&str] = &["command", "env", "time", "nice", "sudo"];

/// The meaning of `code` for a command that is one pipeline of `stages` (the lexer's reading;
/// `None` for anything else), with its text: `(ExitMeaning::NoMatch, "no lines matched")`.
pub(crate) fn exit_meaning(
    stages: Option<&[Vec<String>]>,
    code: i32,
) -> Option<(ExitMeaning, String)> {
    let last = stages?.last()?;
    let words = command_words(last);
    let word = words.first().map(|w| basename(w)).unwrap_or_default();
    let arg = |a: &str| words.iter().skip(1).any(|w| w == a || w.starts_with(&format!("{a}=")));
    let meaning = match (word, code) {
        ("grep" | "egrep" | "fgrep" | "rg" | "ag" | "ack", 1) => ExitMeaning::NoMatch,
        ("git", 1) if words.get(1).map(String::as_str) == Some("grep") => ExitMeaning::NoMatch,
        ("diff" | "cmp", 1) => ExitMeaning::Differs,
        ("git", 1)
            if words.get(1).map(String::as_str) == Some("diff")
                && (arg("--exit-code") || arg("--quiet") || arg("--no-index")) =>
        {
            ExitMeaning::Differs
        }
        ("test" | "[" | "[[", 1) => ExitMeaning::False,
        ("curl", 22) if arg("-f") || arg("--fail") || arg("--fail-with-body") => {
            ExitMeaning::HttpError
        }
        ("timeout", 124) => ExitMeaning::InnerTimeout,
        (_, 126) => ExitMeaning::NotExecutable,
        (_, 127) => ExitMeaning::NotFound,
        (_, 129..=159) => ExitMeaning::Signal,
        _ => return None,
    };
    let text = match meaning {
        ExitMeaning::NoMatch => "no lines matched".to_string(),
        ExitMeaning::Differs => "the inputs differ".to_string(),
        ExitMeaning::False => "the test is false".to_string(),
        ExitMeaning::HttpError => "the server returned an HTTP error".to_string(),
        ExitMeaning::InnerTimeout => "the inner command hit its own time limit".to_string(),
        ExitMeaning::NotExecutable => "found but not executable".to_string(),
        ExitMeaning::NotFound => "command not found".to_string(),
        ExitMeaning::Signal => {
            format!("a process died from {}", execkit_process::signal_name(code - 128))
        }
    };
    Some((meaning, text))
}

/// The words of one stage after `VAR=x` assignments and wrapper commands.
fn command_words(stage: &[String]) -> Vec<String> {
    let mut words: &[String] = stage;
    loop {
        match words.first() {
            Some(w) if lexer::is_assignment(w) => words = &words[1..],
            Some(w) if WRAPPERS.contains(&basename(w)) => {
                words = &words[1..];
                while let Some(option) = words.first().filter(|w| w.starts_with('-')) {
                    // Options that take a separate argument: `nice -n 10`, `sudo -u root`,
                    // `env -u NAME`.
                    let takes_value = matches!(option.as_str(), "-n" | "-u" | "-g" | "-C");
                    words = &words[if takes_value { 2.min(words.len()) } else { 1 }..];
                }
            }
            _ => break,
        }
    }
    words.to_vec()
}

fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// `structuredContent.command_kind` (B40).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CommandKind {
    Search,
    Read,
    List,
    Other,
}

pub(crate) fn command_kind(lexed: &Lexed) -> CommandKind {
    let stages = if lexed.unsure { None } else { single_pipeline(lexed.trimmed()) };
    let Some(stages) = stages else { return CommandKind::Other };
    let mut kind = None;
    for stage in &stages {
        let words = command_words(stage);
        let Some(word) = words.first().map(|w| basename(w)) else { return CommandKind::Other };
        let stage_kind = match word {
            "grep" | "egrep" | "fgrep" | "rg" | "ag" | "ack" => Some(CommandKind::Search),
            "find" if words.iter().any(|w| w == "-name" || w == "-iname" || w == "-path") => {
                Some(CommandKind::Search)
            }
            "cat" | "head" | "tail" | "less" | "bat" | "more" => Some(CommandKind::Read),
            "sed" if words.iter().any(|w| w == "-n") => Some(CommandKind::Read),
            "ls" | "tree" | "du" | "fd" => Some(CommandKind::List),
            "sort" | "uniq" | "wc" | "cut" | "awk" | "tr" | "nl" => None,
            _ => return CommandKind::Other,
        };
        if let Some(k) = stage_kind {
            match kind {
                None => kind = Some(k),
                Some(prev) if prev == k => {}
                Some(_) => return CommandKind::Other,
            }
        }
    }
    kind.unwrap_or(CommandKind::Other)
}

/// Output fragments that mean a program wanted a terminal (B20).
const TTY_PHRASES: &[&str] = &[
    "a terminal is required",
    "no tty present",
    "not a tty",
    "inappropriate ioctl for device",
    "input device is not a tty",
    "must be run from a terminal",
];

pub(crate) fn wanted_terminal(output: &str) -> bool {
    let lower = output.to_ascii_lowercase();
    TTY_PHRASES.iter().any(|p| lower.contains(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meanings() {
        let m = |c: &str, code| {
            let lexed = lexer::lex(c);
            let stages = if lexed.unsure { None } else { single_pipeline(lexed.trimmed()) };
            exit_meaning(stages.as_deref(), code).map(|m| m.1)
        };
        assert_eq!(m("grep zzz /etc/hostname", 1).as_deref(), Some("no lines matched"));
        assert_eq!(m("LC_ALL=C command grep x f", 1).as_deref(), Some("no lines matched"));
        assert_eq!(m("cat f | grep x", 1).as_deref(), Some("no lines matched"));
        assert_eq!(m("grep x f; echo", 1), None);
        assert_eq!(m("grep x f", 2), None);
        assert_eq!(m("git diff --quiet", 1).as_deref(), Some("the inputs differ"));
        assert_eq!(m("git diff", 1), None);
        assert_eq!(m("curl -f http://x", 22).as_deref(), Some("the server returned an HTTP error"));
        assert_eq!(m("nosuchcmd", 127).as_deref(), Some("command not found"));
        assert_eq!(m("sleep 5", 137).as_deref(), Some("a process died from SIGKILL"));
        assert_eq!(m("[ -f x ]", 1).as_deref(), Some("the test is false"));
        assert_eq!(m("[[ -f x ]]", 1).as_deref(), Some("the test is false"));
        assert_eq!(m("nice -n 10 grep zzz f", 1).as_deref(), Some("no lines matched"));
        assert_eq!(m("sudo -u nobody grep zzz f", 1).as_deref(), Some("no lines matched"));
    }

    #[test]
    fn kinds() {
        let command_kind = |c: &str| command_kind(&lexer::lex(c));
        assert_eq!(command_kind("grep -rn foo . | sort | uniq"), CommandKind::Search);
        assert_eq!(command_kind("cat a.txt"), CommandKind::Read);
        assert_eq!(command_kind("sed -n 1,5p f"), CommandKind::Read);
        assert_eq!(command_kind("ls -la | wc -l"), CommandKind::List);
        assert_eq!(command_kind("cat f | grep x"), CommandKind::Other);
        assert_eq!(command_kind("make"), CommandKind::Other);
        assert_eq!(command_kind("find . -name '*.rs'"), CommandKind::Search);
    }
}
