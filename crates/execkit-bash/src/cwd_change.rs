//! Whether a command could leave bash in another directory (B15's notice).
//!
//! The notice needs an EXIT trap that records the final `$PWD`, and a trap costs every call
//! that has one: bash then forks the command's last program instead of `exec`ing it, about
//! a millisecond for an external command. So the trap is set only for commands that could
//! change bash's own directory.

/// Words that change bash's directory or run text as commands in this shell.
const CHANGERS: &[&str] = &["cd", "pushd", "popd", "source", "eval"];

/// Expansions that can compute a command word at run time: command substitution and ANSI-C
/// quoting (`$'\143d'`).
const COMPUTED: &[&str] = &["$(", "`", "$'"];

/// Words after which the next word is a command: reserved words (`if . ./env; then`) and the
/// builtins that run the builtin named next (`builtin . ./env`).
const BEFORE_COMMAND: &[&str] =
    &["if", "then", "else", "elif", "do", "while", "until", "time", "builtin", "command"];

/// Conservative: `false` only when no word of `command` can change bash's directory. Quotes,
/// backslashes and brace-expansion characters are removed before looking, so `c''d`, `c\d`
/// and `{c,}d` still read as `cd`; a `cd` inside a longer word (`abcd`) counts too. A
/// command that spells the word from a variable's pieces gets no notice, like one that
/// `exec`s or replaces the EXIT trap.
pub(crate) fn may_change_directory(command: &str) -> bool {
    if COMPUTED.iter().any(|c| command.contains(c)) {
        return true;
    }
    let squashed: String =
        command.chars().filter(|c| !matches!(c, '\'' | '"' | '\\' | '{' | '}' | ',')).collect();
    CHANGERS.iter().any(|w| squashed.contains(w)) || sources_with_dot(&squashed)
}

/// A `.` command word: `. ./env.sh`, `make && . out/vars`, `if . ./x; then`. A `.` argument
/// (`find . -name x`, `git add .`) is none.
fn sources_with_dot(text: &str) -> bool {
    let bytes = text.as_bytes();
    (0..bytes.len()).any(|i| {
        let alone = bytes[i] == b'.'
            && (i == 0 || is_blank_or_op(bytes[i - 1]))
            && bytes.get(i + 1).is_none_or(|b| b.is_ascii_whitespace());
        alone && in_command_position(&text[..i])
    })
}

fn is_blank_or_op(byte: u8) -> bool {
    byte.is_ascii_whitespace() || b";&|()!".contains(&byte)
}

/// Whether a word starting right after `before` is a command word.
fn in_command_position(before: &str) -> bool {
    let trimmed = before.trim_end_matches([' ', '\t']);
    match trimmed.bytes().last() {
        None => true,
        Some(b) if b";&|()!\n".contains(&b) => true,
        Some(_) => {
            let word = trimmed.rsplit(|c: char| c.is_whitespace() || ";&|()!".contains(c));
            // An assignment (`X=1 . ./env`) comes before a command word too.
            word.take(1).any(|w| BEFORE_COMMAND.contains(&w) || w.contains('='))
        }
    }
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
        ] {
            assert!(may(command), "{command}");
        }
    }
}
