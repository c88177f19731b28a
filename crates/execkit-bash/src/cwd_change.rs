//! Whether a command could leave bash in another directory (B15's notice).
//!
//! The notice needs an EXIT trap that records the final `$PWD`, and a trap costs every call
//! that has one: bash then forks the command's last program instead of `exec`ing it, about
//! a millisecond for an external command. So the trap is set only for commands that could
//! change bash's own directory.

/// Words that change bash's directory or run text as commands in this shell (`fc` runs a
/// history entry again, edited).
const CHANGERS: &[&str] = &["cd", "pushd", "popd", "source", "eval", "fc"];

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
        || globs_a_changer(&squashed)
}

/// A brace sequence (`{a..z}`), which can spell any word from its ends.
fn has_brace_sequence(command: &str) -> bool {
    command
        .split('{')
        .skip(1)
        .any(|after| after.split('}').next().is_some_and(|i| i.contains("..")))
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

/// Whether the next word on the line is an operand: not an option, an operator or a
/// redirection.
fn has_operand(rest: &str) -> bool {
    let next = rest.trim_start_matches([' ', '\t']).chars().next();
    next.is_some_and(|c| !c.is_whitespace() && c != '-' && !OPERATORS.contains(c) && c != '#')
}

fn is_blank_or_op(byte: u8) -> bool {
    byte.is_ascii_whitespace() || OPERATORS.as_bytes().contains(&byte)
}

/// Whether a word starting right after `before` is a command word.
fn in_command_position(before: &str) -> bool {
    let trimmed = before.trim_end_matches([' ', '\t']);
    match trimmed.bytes().last() {
        None => true,
        Some(b) if b == b'\n' || OPERATORS.as_bytes().contains(&b) => true,
        Some(_) => {
            let word = trimmed.rsplit(|c: char| c.is_whitespace() || OPERATORS.contains(c));
            // An assignment (`X=1 . ./env`) comes before a command word too.
            word.take(1).any(|w| BEFORE_COMMAND.contains(&w) || w.contains('='))
        }
    }
}

/// A command word that is a pattern (`c? /tmp`, `[c]d`), which a file named `cd` in the
/// directory turns into `cd`.
fn globs_a_changer(text: &str) -> bool {
    let mut start = 0;
    for (end, c) in text.char_indices().chain([(text.len(), ' ')]) {
        // `!` negates inside a class (`[!x]d`); as a pipeline's `!` a blank follows it.
        if !(c.is_whitespace() || (c != '!' && OPERATORS.contains(c))) {
            continue;
        }
        let word = &text[start..end];
        let is_pattern = word.contains(['*', '?', '[']);
        if is_pattern && in_command_position(&text[..start]) {
            let names = CHANGERS.iter().copied().chain(["."]);
            if names.into_iter().any(|name| glob_matches(word.as_bytes(), name.as_bytes())) {
                return true;
            }
        }
        start = end + c.len_utf8();
    }
    false
}

/// Shell pattern matching with `*`, `?` and `[...]` (ranges, `!` or `^` to negate).
fn glob_matches(pattern: &[u8], name: &[u8]) -> bool {
    match pattern.split_first() {
        None => name.is_empty(),
        Some((b'*', rest)) => (0..=name.len()).any(|skip| glob_matches(rest, &name[skip..])),
        Some((b'?', rest)) => !name.is_empty() && glob_matches(rest, &name[1..]),
        Some((b'[', rest)) => match (name.split_first(), class_end(rest)) {
            (Some((&c, name_rest)), Some(end)) => {
                in_class(&rest[..end], c) && glob_matches(&rest[end + 1..], name_rest)
            }
            // An unclosed `[` is an ordinary character.
            (Some((&c, name_rest)), None) => c == b'[' && glob_matches(rest, name_rest),
            (None, _) => false,
        },
        Some((&p, rest)) => name.first() == Some(&p) && glob_matches(rest, &name[1..]),
    }
}

/// The index of the `]` closing a class that starts at `class[0]` (a leading `]` is a member).
fn class_end(class: &[u8]) -> Option<usize> {
    let skip = usize::from(matches!(class.first(), Some(b'!' | b'^')));
    let from = skip + usize::from(class.get(skip) == Some(&b']'));
    class[from.min(class.len())..].iter().position(|&b| b == b']').map(|i| i + from)
}

fn in_class(class: &[u8], c: u8) -> bool {
    let (negated, members) = match class.split_first() {
        Some((b'!' | b'^', rest)) => (true, rest),
        _ => (false, class),
    };
    let mut i = 0;
    let mut found = false;
    while i < members.len() {
        if members.get(i + 1) == Some(&b'-') && i + 2 < members.len() {
            found |= (members[i]..=members[i + 2]).contains(&c);
            i += 3;
        } else {
            found |= members[i] == c;
            i += 1;
        }
    }
    found != negated
}

#[cfg(test)]
mod tests {
    use super::{glob_matches, may_change_directory as may};

    #[test]
    fn shell_patterns() {
        for (pattern, name, expected) in [
            ("c?", "cd", true),
            ("*", "cd", true),
            ("c*d", "cd", true),
            ("[c]d", "cd", true),
            ("[a-c]d", "cd", true),
            ("[!c]d", "cd", false),
            ("[^a]d", "cd", true),
            ("[]c]d", "cd", true),
            ("[cd", "[cd", true),
            ("?", "cd", false),
            ("*.rs", "cd", false),
            ("c?", "eval", false),
        ] {
            assert_eq!(glob_matches(pattern.as_bytes(), name.as_bytes()), expected, "{pattern}");
        }
    }

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
            "history -s 'xd /tmp'; fc -s x=c xd",
        ] {
            assert!(may(command), "{command}");
        }
    }
}
