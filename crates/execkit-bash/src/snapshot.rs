//! The shell snapshot (B17, B18): the variables the user's login shell adds, captured once.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use execkit_process::env::{EnvBuilder, ScrubRules, is_credential};
use execkit_process::run::{RunEnd, RunLimits, RunObserver, run};
use execkit_process::{CancellationToken, SpawnSpec, Supervisor};

/// How long the login shell may take (B17): rc files that take longer are not worth waiting for.
pub(crate) const SNAPSHOT_BUDGET: Duration = Duration::from_secs(3);
/// Output kept from the login shell; an environment larger than this is not plausible.
const MAX_CAPTURE: usize = 4 << 20;
const MARKER: &str = "__EXECKIT_SNAPSHOT_7f3a__";

/// What the snapshot produced.
#[derive(Debug, Clone, Default)]
pub(crate) struct Snapshot {
    /// Variables to overlay (layer 3 of O44).
    pub vars: Vec<(OsString, OsString)>,
    /// Why the snapshot fell back to the inherited environment.
    pub fallback: Option<String>,
}

const DROPPED: &[&str] = &[
    "PWD", "OLDPWD", "SHLVL", "_", "PS1", "PS2", "PS4", "PROMPT_COMMAND", "TERM", "COLUMNS",
    "LINES", "SHELLOPTS", "BASHOPTS", "BASH_ENV", "ENV",
];
const DROPPED_PREFIXES: &[&str] = &["HIST", "BASH_", "EXECKIT"];

/// The login shell to ask: `$SHELL` when it is a known shell, else bash.
fn login_shell(shell_var: Option<&str>, bash: &PathBuf) -> PathBuf {
    const KNOWN: &[&str] = &["bash", "zsh", "fish", "ksh", "dash"];
    match shell_var {
        Some(s) if KNOWN.iter().any(|k| s.rsplit('/').next() == Some(*k)) => PathBuf::from(s),
        _ => bash.clone(),
    }
}

struct Capture(Vec<u8>);

impl RunObserver for Capture {
    fn output(&mut self, chunk: &[u8]) {
        let room = MAX_CAPTURE.saturating_sub(self.0.len());
        self.0.extend_from_slice(&chunk[..chunk.len().min(room)]);
    }
}

/// Runs the login shell and keeps the variables that differ from `own` (this process's
/// environment), minus scrubbed, shell-state and hardening names.
pub(crate) async fn capture(
    supervisor: &Supervisor,
    bash: &PathBuf,
    own: &HashMap<String, String>,
    rules: &ScrubRules,
    cwd: PathBuf,
) -> Snapshot {
    let shell = login_shell(own.get("SHELL").map(String::as_str), bash);
    let script = format!("printf '\\n{MARKER}\\n'; env -0");
    let mut env = EnvBuilder::from_vars(own.iter().map(|(k, v)| (k.into(), v.into())));
    env.remove_shell_state();
    let spec = SpawnSpec {
        program: shell.clone(),
        args: vec!["-l".into(), "-i".into(), "-c".into(), script.into()],
        cwd,
        env: env.into_vars(),
        ..SpawnSpec::default()
    };
    let started = Instant::now();
    let child = match supervisor.spawn(spec).await {
        Ok(child) => child,
        Err(err) => return fallback(format!("{err}")),
    };
    let limits = RunLimits {
        deadline: Some(started + SNAPSHOT_BUDGET),
        cancel: CancellationToken::new(),
        kill_grace: Duration::from_millis(200),
        drain_idle: Duration::from_millis(250),
        drain_max: Duration::from_millis(500),
    };
    let mut capture = Capture(Vec::new());
    let outcome = run(child, &mut capture, limits).await;
    if !outcome.lingering.is_empty() {
        let tree = outcome.tree.clone();
        tokio::spawn(async move { tree.kill(Duration::from_millis(200)).await });
    }
    match (outcome.end, outcome.status) {
        (RunEnd::TimedOut, _) => return fallback("timed out after 3 s".to_string()),
        (RunEnd::Cancelled, _) => return fallback("cancelled".to_string()),
        (RunEnd::Exited, Some(status)) if status.code != Some(0) => {
            let shown = status.code.unwrap_or_else(|| 128 + status.signal.unwrap_or(0));
            return fallback(format!("exited with status {shown}"));
        }
        _ => {}
    }
    let text = capture.0;
    let marker = format!("\n{MARKER}\n");
    let Some(at) = find(&text, marker.as_bytes()) else {
        return fallback("the login shell printed no environment".to_string());
    };
    let mut hardened = EnvBuilder::from_vars(std::iter::empty());
    hardened.harden();
    let mut vars = Vec::new();
    for entry in text[at + marker.len()..].split(|&b| b == 0) {
        let Ok(entry) = std::str::from_utf8(entry) else { continue };
        let Some((name, value)) = entry.split_once('=') else { continue };
        if keep(name, value, own, &hardened, rules) {
            vars.push((name.into(), value.into()));
        }
    }
    Snapshot { vars, fallback: None }
}

fn keep(
    name: &str,
    value: &str,
    own: &HashMap<String, String>,
    hardened: &EnvBuilder,
    rules: &ScrubRules,
) -> bool {
    if own.get(name).is_some_and(|v| v == value) || name.is_empty() {
        return false;
    }
    if DROPPED.contains(&name) || DROPPED_PREFIXES.iter().any(|p| name.starts_with(p)) {
        return false;
    }
    if hardened.get(name).is_some() {
        return false;
    }
    !is_credential(name, value, rules)
}

fn fallback(reason: String) -> Snapshot {
    Snapshot { vars: Vec::new(), fallback: Some(reason) }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
