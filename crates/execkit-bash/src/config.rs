//! The bash tool's configuration, read once when the Toolkit is built.

use std::path::{Path, PathBuf};
use std::time::Duration;

use execkit_process::find_on_path;
use execkit_tool::{Knob, KnobError, Lookup, Notes};

use crate::rules::Rules;

/// J17: seconds before a foreground call moves to the background; 0 is off (the default).
const AUTO_BACKGROUND_S: Knob =
    Knob { name: "EXECKIT_BASH_AUTO_BACKGROUND", default: 0, min: 0, max: 3600 };
/// B25: silence on a PTY before input-wait sampling starts; 0 turns detection off.
const INPUT_WAIT_MS: Knob =
    Knob { name: "EXECKIT_BASH_INPUT_WAIT_MS", default: 1000, min: 0, max: 60_000 };

/// Which shell snapshot runs (`EXECKIT_BASH_SNAPSHOT`, B17): the login shell's environment,
/// that plus its aliases and functions, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotMode {
    Env,
    Full,
    Off,
}

impl SnapshotMode {
    pub fn as_str(self) -> &'static str {
        match self {
            SnapshotMode::Env => "env",
            SnapshotMode::Full => "full",
            SnapshotMode::Off => "off",
        }
    }
}

/// What happens to processes a command leaves running (`EXECKIT_BASH_LINGERING`, B31): adopted
/// as a background job, or killed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LingeringPolicy {
    Adopt,
    Kill,
}

#[derive(Debug, Clone)]
pub struct BashConfig {
    /// `EXECKIT_BASH`, else `bash` on PATH, else `/bin/bash`; `None` when none exists.
    pub bash: Option<PathBuf>,
    pub snapshot: SnapshotMode,
    /// `EXECKIT_BASH_PREFIX`, put before every command.
    pub prefix: Option<String>,
    /// `EXECKIT_BASH_ENV_SCRUB` (on unless `0`).
    pub scrub: bool,
    pub lingering: LingeringPolicy,
    /// `EXECKIT_BASH_AUTO_BACKGROUND` (J17): foreground calls still running after this move to
    /// the background. Off by default.
    pub auto_background: Option<Duration>,
    /// `EXECKIT_BASH_INPUT_WAIT_MS` (B25): silence on a PTY before input-wait sampling starts;
    /// `None` (0) turns detection off.
    pub input_wait: Option<Duration>,
    /// `EXECKIT_NO_PTY=1`.
    pub no_pty: bool,
    /// The process ends with its one call (`execkit call`, `execkit bash`): `async` is refused,
    /// nothing moves to the background, and processes a command leaves running are stopped
    /// with the reason said, since no job could outlive the call. Set by the front end.
    pub one_shot: bool,
    /// Take the shell snapshot when the runner starts (a server), rather than at the first
    /// call (a one-shot front end, where a call that runs no bash must not pay for it). Set by
    /// the Toolkit; on by default.
    pub prewarm: bool,
    /// `EXECKIT_BASH_RULES`: rules given inline, loaded with the rule files by the runner.
    pub(crate) inline_rules: String,
}

impl BashConfig {
    /// Reads the `EXECKIT_BASH*` variables through `lookup`. A number out of range is clamped
    /// with a note; a value that does not parse (a number knob, or a word knob given a word it
    /// does not know) is an error naming the knob and what it accepts.
    pub fn from_lookup(lookup: &Lookup, notes: &mut Notes) -> Result<BashConfig, KnobError> {
        let bash = match lookup.get("EXECKIT_BASH").filter(|s| !s.is_empty()) {
            Some(path) => Some(PathBuf::from(path)),
            None => find_on_path(lookup.get("PATH").unwrap_or(""), "bash")
                .or_else(|| Some(PathBuf::from("/bin/bash")).filter(|p| p.exists())),
        };
        let snapshot = match lookup.get("EXECKIT_BASH_SNAPSHOT") {
            None | Some("") | Some("env") => SnapshotMode::Env,
            Some("full") => SnapshotMode::Full,
            Some("off") => SnapshotMode::Off,
            Some(other) => {
                return Err(KnobError::new(
                    "EXECKIT_BASH_SNAPSHOT",
                    other,
                    "one of env, full, off",
                ));
            }
        };
        let lingering = match lookup.get("EXECKIT_BASH_LINGERING") {
            None | Some("") | Some("adopt") => LingeringPolicy::Adopt,
            Some("kill") => LingeringPolicy::Kill,
            Some(other) => {
                return Err(KnobError::new("EXECKIT_BASH_LINGERING", other, "one of adopt, kill"));
            }
        };
        let auto_background = Some(AUTO_BACKGROUND_S.read(lookup, notes)?)
            .filter(|secs| *secs > 0)
            .map(Duration::from_secs);
        let input_wait = Some(INPUT_WAIT_MS.read(lookup, notes)?)
            .filter(|ms| *ms > 0)
            .map(Duration::from_millis);
        Ok(BashConfig {
            bash,
            snapshot,
            prefix: lookup.non_empty("EXECKIT_BASH_PREFIX"),
            scrub: lookup.get("EXECKIT_BASH_ENV_SCRUB") != Some("0"),
            lingering,
            auto_background,
            input_wait,
            no_pty: lookup.is_on("EXECKIT_NO_PTY"),
            one_shot: false,
            prewarm: true,
            inline_rules: lookup.get("EXECKIT_BASH_RULES").unwrap_or("").to_string(),
        })
    }

    /// The rules in force: `EXECKIT_BASH_RULES`, then the project's file under `base_cwd`,
    /// then the user's under `home`.
    pub(crate) fn load_rules(&self, base_cwd: &Path, home: Option<&Path>) -> Rules {
        let project_rules = base_cwd.join(".execkit/bash-rules.json");
        let user_rules = home.map(|h| h.join(".execkit/bash-rules.json"));
        let mut files: Vec<&Path> = vec![project_rules.as_path()];
        if let Some(user) = &user_rules {
            files.push(user.as_path());
        }
        Rules::load(&self.inline_rules, &files)
    }

    /// Lines for `execkit doctor`.
    pub fn doctor_lines(&self) -> Vec<String> {
        let mut lines = vec![match &self.bash {
            Some(bash) => format!("bash: {}", bash.display()),
            None => "bash: not found on PATH; set EXECKIT_BASH to its path".to_string(),
        }];
        lines.push(format!("shell snapshot: {}", self.snapshot.as_str()));
        if let Some(prefix) = &self.prefix {
            lines.push(format!("command prefix: {prefix}"));
        }
        lines.push(format!(
            "credential scrub: {}",
            if self.scrub { "on" } else { "off (EXECKIT_BASH_ENV_SCRUB=0)" }
        ));
        lines.push(pty_line(self.input_wait, self.no_pty));
        if let Some(after) = self.auto_background {
            lines.push(format!("auto-background after {} s", after.as_secs()));
        }
        lines
    }
}

/// Doctor's PTY line: whether terminals can be opened here, and input-wait detection.
fn pty_line(input_wait: Option<Duration>, no_pty: bool) -> String {
    let detection = match input_wait {
        Some(after) => format!("input-wait detection after {} ms of silence", after.as_millis()),
        None => "input-wait detection off (EXECKIT_BASH_INPUT_WAIT_MS=0)".to_string(),
    };
    if no_pty {
        return "pty: off (EXECKIT_NO_PTY=1); \"pty\": true runs without a terminal".to_string();
    }
    match std::fs::OpenOptions::new().read(true).write(true).open("/dev/ptmx") {
        Ok(_) => format!("pty: available (/dev/ptmx); {detection}"),
        Err(err) => {
            format!("pty: unavailable (/dev/ptmx: {err}); \"pty\": true runs without a terminal")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(name: &str, value: &str) -> Result<BashConfig, KnobError> {
        BashConfig::from_lookup(&Lookup::from_vars([(name, value)]), &mut Notes::default())
    }

    #[test]
    fn an_unknown_word_stops_the_start_naming_the_accepted_words() {
        let err = read("EXECKIT_BASH_SNAPSHOT", "bogus").unwrap_err();
        assert_eq!(err.to_string(), "EXECKIT_BASH_SNAPSHOT=\"bogus\" is not one of env, full, off");
        let err = read("EXECKIT_BASH_LINGERING", "keep").unwrap_err();
        assert_eq!(err.to_string(), "EXECKIT_BASH_LINGERING=\"keep\" is not one of adopt, kill");
        assert_eq!(read("EXECKIT_BASH_SNAPSHOT", "full").unwrap().snapshot, SnapshotMode::Full);
    }

    #[test]
    fn a_number_out_of_range_is_clamped_with_a_note() {
        let lookup = Lookup::from_vars([("EXECKIT_BASH_INPUT_WAIT_MS", "999999")]);
        let mut notes = Notes::default();
        let config = BashConfig::from_lookup(&lookup, &mut notes).unwrap();
        assert_eq!(config.input_wait, Some(Duration::from_millis(60_000)));
        assert_eq!(notes.lines().len(), 1, "{notes:?}");
    }
}
