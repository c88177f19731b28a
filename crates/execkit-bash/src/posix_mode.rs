//! POSIX mode, turned on by the prelude instead of at bash's start.
//!
//! bash in POSIX mode (`POSIXLY_CORRECT` in its environment, or `posix` in `SHELLOPTS`) reads
//! no `BASH_ENV`, so the prelude would silently not run: no directory notice, and no replay of
//! the login shell's functions. When a call runs the prelude, those two are moved out of the
//! way and the prelude's last line turns POSIX mode on, before the command runs.

use execkit_process::env::EnvBuilder;

/// Where `POSIXLY_CORRECT`'s value waits for the prelude.
const HELD_POSIXLY_CORRECT: &str = "__execkit_posixly_correct";
/// Set when `SHELLOPTS` asked for `posix`.
const HELD_SET_POSIX: &str = "__execkit_set_posix";

/// The prelude's line that turns POSIX mode back on; setting `POSIXLY_CORRECT` in a running
/// bash does what `set -o posix` does. `SHELLOPTS` is exported, as bash does when it finds it
/// in its environment, so child shells are in POSIX mode too.
pub(crate) const PRELUDE_LINE: &str = "{ if builtin [ -n \"${__execkit_posixly_correct+set}\" ]; then \
     builtin export POSIXLY_CORRECT=\"$__execkit_posixly_correct\"; \
     builtin unset __execkit_posixly_correct; fi; \
     if builtin [ -n \"${__execkit_set_posix+set}\" ]; then builtin set -o posix; \
     builtin export SHELLOPTS; builtin unset __execkit_set_posix; fi; } 2>/dev/null\n";

/// Moves what would start bash in POSIX mode into the variables [`PRELUDE_LINE`] reads.
pub(crate) fn defer(env: &mut EnvBuilder) {
    if let Some(value) = env.get("POSIXLY_CORRECT").map(ToOwned::to_owned) {
        env.remove("POSIXLY_CORRECT");
        env.set(HELD_POSIXLY_CORRECT, value);
    }
    let Some(options) = env.get("SHELLOPTS").and_then(|v| v.to_str()).map(str::to_string) else {
        return;
    };
    if !options.split(':').any(|o| o == "posix") {
        return;
    }
    let rest: Vec<&str> = options.split(':').filter(|o| *o != "posix").collect();
    if rest.is_empty() {
        env.remove("SHELLOPTS");
    } else {
        env.set("SHELLOPTS", rest.join(":"));
    }
    env.set(HELD_SET_POSIX, "1");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> EnvBuilder {
        EnvBuilder::from_vars(vars.iter().map(|(k, v)| (k.into(), v.into())))
    }

    #[test]
    fn posix_mode_waits_for_the_prelude() {
        let mut vars = env(&[("POSIXLY_CORRECT", "y"), ("SHELLOPTS", "nounset:posix:xtrace")]);
        defer(&mut vars);
        assert_eq!(vars.get("POSIXLY_CORRECT"), None);
        assert_eq!(vars.get(HELD_POSIXLY_CORRECT), Some("y".as_ref()));
        assert_eq!(vars.get("SHELLOPTS"), Some("nounset:xtrace".as_ref()));
        assert_eq!(vars.get(HELD_SET_POSIX), Some("1".as_ref()));

        let mut only = env(&[("SHELLOPTS", "posix")]);
        defer(&mut only);
        assert_eq!(only.get("SHELLOPTS"), None);

        let mut other = env(&[("SHELLOPTS", "nounset")]);
        defer(&mut other);
        assert_eq!(other.get("SHELLOPTS"), Some("nounset".as_ref()));
        assert_eq!(other.get(HELD_SET_POSIX), None);
    }
}
