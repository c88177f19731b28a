//! Shell-style patterns: `*`, `?` and `[...]` classes (ranges, `!` or `^` to negate; an
//! unclosed `[` is an ordinary character). The credential scrub matches variable names with
//! them, and the bash tool matches command words against the builtins that change directory.
//!
//! Matching is linear in the text for each pattern item: a `*` only ever moves its restart
//! point forward, so a pattern of many stars (a `/****…` comment banner) costs no more than
//! its length.

/// Whether `pattern` matches the whole of `text`.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti) = (0, 0);
    // Where to resume after the last `*`: the pattern just past it, and how much of the text
    // the star has absorbed.
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match item(&p, pi, t[ti]) {
            Item::Star => {
                star = Some((pi + 1, ti));
                pi += 1;
            }
            Item::Matched(next) => {
                pi = next;
                ti += 1;
            }
            Item::Failed => match star {
                Some((after_star, absorbed)) => {
                    star = Some((after_star, absorbed + 1));
                    pi = after_star;
                    ti = absorbed + 1;
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

enum Item {
    /// The item is a `*`.
    Star,
    /// The item matched the character; the next item starts here.
    Matched(usize),
    Failed,
}

/// Matches the one pattern item at `p` against `c`.
fn item(pattern: &[char], p: usize, c: char) -> Item {
    match pattern.get(p) {
        None => Item::Failed,
        Some('*') => Item::Star,
        Some('?') => Item::Matched(p + 1),
        Some('[') => match class_end(&pattern[p + 1..]) {
            Some(end) if in_class(&pattern[p + 1..p + 1 + end], c) => Item::Matched(p + end + 2),
            Some(_) => Item::Failed,
            None if c == '[' => Item::Matched(p + 1),
            None => Item::Failed,
        },
        Some(&literal) if literal == c => Item::Matched(p + 1),
        Some(_) => Item::Failed,
    }
}

/// The index of the `]` closing a class whose members start at `class[0]` (a leading `]` is a
/// member).
fn class_end(class: &[char]) -> Option<usize> {
    let skip = usize::from(matches!(class.first(), Some('!' | '^')));
    let from = (skip + usize::from(class.get(skip) == Some(&']'))).min(class.len());
    class[from..].iter().position(|&c| c == ']').map(|i| i + from)
}

fn in_class(class: &[char], c: char) -> bool {
    let (negated, members) = match class.split_first() {
        Some(('!' | '^', rest)) => (true, rest),
        _ => (false, class),
    };
    let mut i = 0;
    let mut found = false;
    while i < members.len() {
        if members.get(i + 1) == Some(&'-') && i + 2 < members.len() {
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
    use super::glob_match;

    #[test]
    fn stars_and_question_marks() {
        assert!(glob_match("MY_*", "MY_TOKEN"));
        assert!(glob_match("*_KEY", "A_KEY"));
        assert!(glob_match("A?C", "ABC"));
        assert!(glob_match("*", ""));
        assert!(!glob_match("MY_*", "YOUR_TOKEN"));
        assert!(!glob_match("A?C", "AC"));
        assert!(glob_match("*a*b*", "xxaxxbxx"));
        assert!(glob_match("**d", "cd"));
        assert!(!glob_match("*x*", "cd"));
        assert!(glob_match("c*", "c"));
    }

    #[test]
    fn classes() {
        for (pattern, text, expected) in [
            ("[c]d", "cd", true),
            ("[a-c]d", "cd", true),
            ("[!c]d", "cd", false),
            ("[^a]d", "cd", true),
            ("[]c]d", "cd", true),
            ("[cd", "[cd", true),
            ("[b-d][!x]", "cd", true),
        ] {
            assert_eq!(glob_match(pattern, text), expected, "{pattern} {text}");
        }
    }

    #[test]
    fn many_stars_stay_linear() {
        let banner = format!("{}/", "*".repeat(100_000));
        assert!(!glob_match(&banner, "source"));
    }
}
