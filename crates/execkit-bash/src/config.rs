//! The bash tool's configuration, read once when the Toolkit is built.

use std::path::{Path, PathBuf};
use std::time::Duration;

use execkit_output::clamp::{Knob, KnobError};

use crate::rules::Rules;

/// J17: seconds before a foreground call moves to the background; 0 is off (the default).
const AUTO_BACKGROUND_S: Knob =
    Knob { name: "EXECKIT_BASH_AUTO_BACKGROUND", default: 0, min: 0, max: 3600 };
/// B25: silence on a PTY before input-wait sampling starts; 0 turns detection off.
const INPUT_WAIT_MS: Knob =
    Knob { name: "EXECKIT_BASH_INPUT_WAIT_MS", default: 1000, min: 0, max: 60_000 };

/// `EXECKIT_BASH_SNAPSHOT` (B17).
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

/// `EXECKIT_BASH_LINGERING` (B31).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LingeringPolicy {
    Adopt,
    Kill,
}

#[derive(Debug, Clone)]
pub struct BashConfig {
    /// The Toolkit's cwd: the base every call resolves against.
    pub base_cwd: PathBuf,
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
    pub(crate) rules: Rules,
    /// Problems found while reading the configuration, for doctor.
    pub notes: Vec<String>,
}

impl BashConfig {
    /// Reads the `EXECKIT_BASH*` variables through `lookup`; `home` locates `~/.execkit`.
    pub fn from_lookup(
        base_cwd: PathBuf,
        lookup: &dyn Fn(&str) -> Option<String>,
        home: Option<&Path>,
    ) -> Result<BashConfig, KnobError> {
        let mut notes = Vec::new();
        let bash = match lookup("EXECKIT_BASH").filter(|s| !s.is_empty()) {
            Some(path) => Some(PathBuf::from(path)),
            None => find_on_path(lookup("PATH").as_deref().unwrap_or(""), "bash")
                .or_else(|| Some(PathBuf::from("/bin/bash")).filter(|p| p.exists())),
        };
        let snapshot = match lookup("EXECKIT_BASH_SNAPSHOT").as_deref() {
            None | Some("") | Some("env") => SnapshotMode::Env,
            Some("full") => SnapshotMode::Full,
            Some("off") => SnapshotMode::Off,
            Some(other) => {
                notes.push(format!(
                    "EXECKIT_BASH_SNAPSHOT={other} is not one of env, full, off; using env"
                ));
                SnapshotMode::Env
            }
        };
        let lingering = match lookup("EXECKIT_BASH_LINGERING").as_deref() {
            None | Some("") | Some("adopt") => LingeringPolicy::Adopt,
            Some("kill") => LingeringPolicy::Kill,
            Some(other) => {
                notes.push(format!(
                    "EXECKIT_BASH_LINGERING={other} is not one of adopt, kill; using adopt"
                ));
                LingeringPolicy::Adopt
            }
        };
        let auto_background = Some(AUTO_BACKGROUND_S.read(lookup, &mut notes)?)
            .filter(|secs| *secs > 0)
            .map(Duration::from_secs);
        let input_wait = Some(INPUT_WAIT_MS.read(lookup, &mut notes)?)
            .filter(|ms| *ms > 0)
            .map(Duration::from_millis);
        let project_rules = base_cwd.join(".execkit/bash-rules.json");
        let user_rules = home.map(|h| h.join(".execkit/bash-rules.json"));
        let mut files: Vec<&Path> = vec![project_rules.as_path()];
        if let Some(user) = &user_rules {
            files.push(user.as_path());
        }
        let rules = Rules::load(lookup("EXECKIT_BASH_RULES").as_deref().unwrap_or(""), &files);
        Ok(BashConfig {
            base_cwd,
            bash,
            snapshot,
            prefix: lookup("EXECKIT_BASH_PREFIX").filter(|p| !p.trim().is_empty()),
            scrub: lookup("EXECKIT_BASH_ENV_SCRUB").as_deref() != Some("0"),
            lingering,
            auto_background,
            input_wait,
            no_pty: lookup("EXECKIT_NO_PTY").as_deref() == Some("1"),
            one_shot: false,
            rules,
            notes,
        })
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
        lines.push(format!("rules: {}", if self.rules.is_empty() { "none" } else { "active" }));
        lines.extend(self.rules.errors.iter().map(|e| format!("rule error: {e}")));
        lines.extend(self.notes.iter().cloned());
        lines
    }
}

/// The first executable `name` in a PATH string.
pub fn find_on_path(path: &str, name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    path.split(':').filter(|d| !d.is_empty()).map(|d| Path::new(d).join(name)).find(|p| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
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
