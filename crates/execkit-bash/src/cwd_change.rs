//! Whether a command could leave bash in another directory (the `final_cwd` notice).
//!
//! The notice needs an EXIT trap that records the final `$PWD`, and a trap costs every call
//! that has one: bash then forks the command's last program instead of `exec`ing it, about
//! a millisecond for an external command. So the trap is set only for commands that could
//! change bash's own directory.

use execkit_process::glob::glob_match;

/// Words that change bash's directory or run text as commands in this shell; found inside
/// longer words too (`abcd`), which costs a prelude and nothing else.
const CHANGERS: &[&str] = &["cd", "pushd", "popd", "source", "eval"];

/// Changers found only as whole words: `fc` runs a history entry again, and as a part of a
/// word it is common (`3fc2a1b`, `fcntl`, `rfc3339`).
const WORD_CHANGERS: &[&str] = &["fc"];

/// Expansions that can compute a command word at run time: command substitution and ANSI-C
/// quoting (`$'\143d'`).
const COMPUTED: &[&str] = &["$(", "`", "$'"];

/// Words after which the next word is a command: reserved words (`if . ./env; then`) and the
/// builtins that run the builtin named next (`builtin . ./env`).
const BEFORE_COMMAND: &[&str] =
    &["if", "then", "else", "elif", "do", "while", "until", "time", "builtin", "command"];

/// Characters that end a word and start the next command.
const OPERATORS: &str = ";&|()!";

/// Conservative: `false` only when no word of `command` can change bash's directory. Quotes,
/// backslashes and brace-expansion characters are removed before looking, so `c''d`, `c\d`
/// and `{c,}d` still read as `cd`; a `cd` inside a longer word (`abcd`) counts too, and so do
/// a brace sequence (`{c..b}d`) and a command word that is a pattern matching one (`c?`). A
/// command that spells the word from a variable's pieces gets no notice, like one that
/// `exec`s or replaces the EXIT trap.
pub(crate) fn may_change_directory(command: &str) -> bool {
    if COMPUTED.iter().any(|c| command.contains(c)) || has_brace_sequence(command) {
        return true;
    }
    // bash removes a backslash-newline before it reads words: `c\⏎d` is `cd`.
    let joined = command.replace("\\\n", "");
    let squashed: String =
        joined.chars().filter(|c| !matches!(c, '\'' | '"' | '\\' | '{' | '}' | ',')).collect();
    CHANGERS.iter().any(|w| squashed.contains(w))
        || sources_with_dot(&squashed)
        || words(&squashed).any(|(start, word)| {
            WORD_CHANGERS.contains(&word) || globs_a_changer(&squashed[..start], word)
        })
}

/// The words of `text` with their byte offsets, split at blanks and operators (not at `!`,
/// which negates inside a pattern's class: `[!x]d`).
fn words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut start = 0;
    text.char_indices().chain([(text.len(), ' ')]).filter_map(move |(end, c)| {
        if !(c.is_whitespace() || (c != '!' && OPERATORS.contains(c))) {
            return None;
        }
        let word = (start, &text[start..end]);
        start = end + c.len_utf8();
        (!word.1.is_empty()).then_some(word)
    })
}

/// A brace sequence of letters (`{a..z}`), which can spell a word from its ends; a sequence of
/// numbers (`{1..10}`) cannot.
fn has_brace_sequence(command: &str) -> bool {
    let is_letter = |end: &str| end.len() == 1 && end.bytes().all(|b| b.is_ascii_alphabetic());
    command.split('{').skip(1).any(|after| {
        let inside = after.split('}').next().unwrap_or_default();
        let mut ends = inside.split("..");
        let (first, second) = (ends.next(), ends.next());
        second.is_some() && (first.is_some_and(is_letter) || second.is_some_and(is_letter))
    })
}

/// A `.` command word: `. ./env.sh`, `make && . out/vars`, `if . ./x; then`, and a `.` with an
/// operand after it wherever it stands (`2>/dev/null . ./env`, `time -p . ./env`, the text of
/// a trap). A `.` argument with an option, an operator or nothing after it (`find . -name x`,
/// `git add . && git commit`, `ls .`) is none.
fn sources_with_dot(text: &str) -> bool {
    let bytes = text.as_bytes();
    (0..bytes.len()).any(|i| {
        let alone = bytes[i] == b'.'
            && (i == 0 || is_blank_or_op(bytes[i - 1]))
            && bytes.get(i + 1).is_none_or(|b| b.is_ascii_whitespace());
        alone && (in_command_position(&text[..i]) || has_operand(&text[i + 1..]))
    })
}

/// Whether the next word on the line is an operand: not an option, an operator, a comment or
/// a redirection (`2>/dev/null`, `>f`, `&>log`).
fn has_operand(rest: &str) -> bool {
    let next = rest.trim_start_matches([' ', '\t']);
    next.chars().next().is_some_and(|c| {
        !c.is_whitespace()
            && c != '-'
            && !OPERATORS.contains(c)
            && c != '#'
            && !is_redirection(next)
    })
}

fn is_blank_or_op(byte: u8) -> bool {
    byte.is_ascii_whitespace() || OPERATORS.as_bytes().contains(&byte)
}

/// Whether a word starting right after `before` is a command word: after an operator or a
/// reserved word, and after the assignments, redirections and options that may come first
/// (`X=1 . ./env`, `2>/dev/null c? /tmp`, `time -p . ./env`). Past [`LEADING_WORDS_LOOKED_AT`]
/// such words it says yes.
fn in_command_position(before: &str) -> bool {
    let mut before = before;
    for _ in 0..LEADING_WORDS_LOOKED_AT {
        let trimmed = before.trim_end_matches([' ', '\t']);
        let Some(last) = trimmed.bytes().last() else { return true };
        if last == b'\n' || OPERATORS.as_bytes().contains(&last) {
            return true;
        }
        let (rest, word) = trimmed.split_at(last_word_start(trimmed));
        if BEFORE_COMMAND.contains(&word) {
            return true;
        }
        let target = rest.trim_end_matches([' ', '\t']).ends_with(['<', '>']);
        let may_lead =
            is_assignment(word) || is_redirection(word) || target || word.starts_with('-');
        if !may_lead {
            return false;
        }
        before = rest;
    }
    true
}

/// How many assignments, redirections and options [`in_command_position`] walks back over;
/// it runs for every `.` and pattern word, so a long command of `-?` words stays linear.
const LEADING_WORDS_LOOKED_AT: usize = 32;

/// Where the last word of `text` starts.
fn last_word_start(text: &str) -> usize {
    let is_break = |c: char| c.is_whitespace() || OPERATORS.contains(c);
    text.char_indices().rev().find(|(_, c)| is_break(*c)).map_or(0, |(i, c)| i + c.len_utf8())
}

/// `2>/dev/null`, `>f`, `<in`, `&>log`, `2>&1`, or an operator alone (`2>`).
fn is_redirection(word: &str) -> bool {
    word.trim_start_matches(|c: char| c.is_ascii_digit()).starts_with(['<', '>'])
        || word.starts_with("&>")
}

/// `NAME=value`, where `NAME` is a shell identifier (`--color=auto` is none).
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        let mut chars = name.chars();
        chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// A command word that is a pattern (`c? /tmp`, `[c]d`), which a file named `cd` in the
/// directory turns into `cd`.
fn globs_a_changer(before: &str, word: &str) -> bool {
    word.contains(['*', '?', '['])
        && in_command_position(before)
        && CHANGERS.iter().chain(WORD_CHANGERS).chain(&["."]).any(|name| glob_match(word, name))
}

#[cfg(test)]
mod tests {
    use super::may_change_directory as may;

    #[test]
    fn commands_that_cannot_change_directory() {
        for command in [
            "true",
            "ls -la",
            "cargo test --workspace 2>&1 | tail -20",
            "find . -name '*.rs'",
            "git add . && git commit -m 'x'",
            "ls .",
            "echo ${HOME} $PATH",
            "./configure && make",
            "python3 -c 'print(1)'",
            "grep -rn TODO src/",
            "git add .\nmake",
            "ls -la *.rs",
            "rm -f build/*.o",
            "echo {a,b}/x ${HOME}",
            "awk '{print $1}' ../notes.txt",
            "find . | wc -l",
            "grep -rn TODO . 2>/dev/null | head",
            "pip install -e . 2>&1 | tail -5",
            "ls -la . >listing.txt",
            "for i in {1..10}; do echo $i; done",
            "git show 3fc2a1b",
            "gcc -fcolor-diagnostics -o x x.c",
            "ls --color=auto *",
            "echo X=1 c? x",
            "ls -la c?",
            &"-? ".repeat(10_000),
            &format!("cat > banner.c <<EOF\n/*\n {}/\nEOF", "*".repeat(300)),
        ] {
            assert!(!may(command), "{command}");
        }
    }

    #[test]
    fn commands_that_can() {
        for command in [
            "cd /tmp",
            "make; cd build",
            "pushd x && make && popd",
            "source venv/bin/activate",
            ". venv/bin/activate",
            "true && . ./env.sh",
            "if . ./env.sh; then ls; fi",
            "x=1\n. ./env.sh",
            "X=1 . ./env.sh",
            "builtin . ./env.sh",
            "command . ./env.sh",
            "eval \"$setup\"",
            "c''d /tmp",
            "c\\d /tmp",
            "{c,}d /tmp",
            "\"c\"d /tmp",
            "$(printf cd) /tmp",
            "`echo cd` /tmp",
            "$'\\143d' /tmp",
            "f() { cd /; }; f",
            "(cd sub && make)",
            "builtin cd /",
            "command cd /",
            ".",
            "2>/dev/null . ./env.sh",
            ">/dev/null . venv/bin/activate",
            "time -p . ./env.sh",
            "command -p . ./env.sh",
            "builtin -- . ./env.sh",
            "function f { . ./env.sh; }; f",
            "trap '. ./env.sh' ERR; false",
            "mapfile -C '. ./env.sh' -c 1 arr <<< x",
            "c\\\nd /tmp",
            "so\\\nurce ./env.sh",
            "{c..b}d",
            "c? /tmp",
            "[c]d /tmp",
            "x=1; [b-d][!x] /tmp",
            "2>/dev/null c? /tmp",
            "2> /dev/null c? /tmp",
            "time -p c? /tmp",
            "command -p c? /tmp",
            "history -s 'xd /tmp'; fc -s x=c xd",
        ] {
            assert!(may(command), "{command}");
        }
    }
}
