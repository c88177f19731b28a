//! The shell snapshot (B17, B18): the variables the user's login shell adds, captured once.
//! [`crate::snapshot_start`] decides when it runs and [`crate::snapshot_cache`] keeps it on disk.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use execkit_process::env::{EnvBuilder, ScrubRules, is_credential};
use execkit_process::run::{RunEnd, RunLimits, RunObserver, RunOutcome, run};
use execkit_process::{CancellationToken, SpawnSpec, Supervisor};
use execkit_tool::Lookup;

/// How long the login shell may take (B17): rc files that take longer are not worth waiting for.
pub(crate) const SNAPSHOT_BUDGET: Duration = Duration::from_secs(3);
/// Output kept from the login shell; an environment larger than this is not plausible.
const MAX_CAPTURE: usize = 4 << 20;
const MARKER: &str = "__EXECKIT_SNAPSHOT_7f3a__";

/// `full` mode's aliases, functions and options are capped here (B17): larger rc files cost
/// more per call than they are worth.
const FULL_MAX_BYTES: usize = 512 << 10;
/// `full` mode's replay budget per call (B17).
const FULL_REPLAY_BUDGET: Duration = Duration::from_millis(100);
const FULL_MARKER: &str = "__EXECKIT_SNAPSHOT_FULL_7f3a__";
/// Options never replayed: they change what commands mean (`noclobber` breaks `>`, `errexit`
/// ends scripts early) or only make sense interactively.
const FULL_DROPPED_OPTIONS: &str =
    "errexit|nounset|noclobber|xtrace|verbose|noexec|pipefail|monitor|history|histexpand|emacs|vi";

/// What the snapshot produced.
#[derive(Debug, Clone, Default)]
pub(crate) struct Snapshot {
    /// Variables to overlay on the inherited, scrubbed environment, before hardening (layer 3 of O44).
    pub vars: Vec<(OsString, OsString)>,
    /// `full` mode: a file of aliases, functions and options the prelude sources.
    pub replay: Option<PathBuf>,
    /// Why the snapshot fell back to the inherited environment.
    pub fallback: Option<String>,
    /// Why `full` mode fell back to `env` mode (the environment is still applied).
    pub full_fallback: Option<String>,
}

const DROPPED: &[&str] = &[
    "PWD",
    "OLDPWD",
    "SHLVL",
    "_",
    "PS1",
    "PS2",
    "PS4",
    "PROMPT_COMMAND",
    "TERM",
    "COLUMNS",
    "LINES",
    "SHELLOPTS",
    "BASHOPTS",
    "BASH_ENV",
    "ENV",
];
const DROPPED_PREFIXES: &[&str] = &["HIST", "BASH_", "EXECKIT"];

/// The login shell to ask: `$SHELL` when it is a known shell, else bash.
fn login_shell(shell_var: Option<&str>, bash: &Path) -> PathBuf {
    const KNOWN: &[&str] = &["bash", "zsh", "fish", "ksh", "dash"];
    match shell_var {
        Some(s) if KNOWN.iter().any(|k| s.rsplit('/').next() == Some(*k)) => PathBuf::from(s),
        _ => bash.to_path_buf(),
    }
}

struct Capture(Vec<u8>);

impl RunObserver for Capture {
    fn output(&mut self, chunk: &[u8]) {
        let room = MAX_CAPTURE.saturating_sub(self.0.len());
        self.0.extend_from_slice(&chunk[..chunk.len().min(room)]);
    }
}

/// What the login shell printed, reduced to what the snapshot keeps: the variables it adds and,
/// in `full` mode, its aliases, functions and options. This is what the disk cache stores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LoginOutput {
    pub vars: Vec<(OsString, OsString)>,
    /// `full` mode's part, or `None` when the login shell printed none.
    pub full_part: Option<Vec<u8>>,
}

/// Where and how the login shell runs.
pub(crate) struct LoginShell<'a> {
    pub supervisor: &'a Supervisor,
    pub bash: &'a Path,
    pub own: &'a Lookup,
    pub rules: &'a ScrubRules,
    pub cwd: PathBuf,
    /// `full` mode was asked for.
    pub full: bool,
}

impl LoginShell<'_> {
    /// The shell asked: `$SHELL` when it is a known shell, else bash.
    pub fn shell(&self) -> PathBuf {
        login_shell(self.own.get("SHELL"), self.bash)
    }

    /// Why `full` mode cannot run with this shell, if it cannot.
    fn full_refused(&self) -> Option<String> {
        let shell = self.shell();
        let name = shell.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        (self.full && name != "bash")
            .then(|| format!("login shell is {name}; full mode needs bash"))
    }

    /// Whether `full` mode's part is captured.
    pub fn captures_full(&self) -> bool {
        self.full && self.full_refused().is_none()
    }
}

/// Turns a login shell's output (fresh or from the disk cache) into the snapshot: in `full`
/// mode, writes the replay file and checks that sourcing it fits the budget.
pub(crate) async fn from_output(login: &LoginShell<'_>, output: LoginOutput) -> Snapshot {
    let mut full_fallback = login.full_refused();
    let LoginOutput { vars, full_part } = output;
    // A failed full mode keeps the environment: it falls back to `env` mode (B17).
    let replay = match full_part {
        None if login.captures_full() => {
            full_fallback = Some("the login shell printed no aliases or functions".to_string());
            None
        }
        None => None,
        Some(part) => {
            match prepare_replay(login.supervisor, login.bash, &part, &vars, login.own).await {
                Ok(path) => Some(path),
                Err(reason) => {
                    full_fallback = Some(reason);
                    None
                }
            }
        }
    };
    Snapshot { vars, replay, fallback: None, full_fallback }
}

/// Runs the login shell once and parses what it printed; the error is the fallback reason.
pub(crate) async fn run_login_shell(login: &LoginShell<'_>) -> Result<LoginOutput, String> {
    let full = login.captures_full();
    let mut script = format!("printf '\\n{MARKER}\\n'; env -0");
    if full {
        script.push_str(&format!(
            "; printf '\\n{FULL_MARKER}\\n'; alias -p; \
             for f in $(compgen -A function); do case $f in _*) ;; *) declare -f \"$f\";; esac; done; \
             set +o | grep -Ev ' ({FULL_DROPPED_OPTIONS})$'"
        ));
    }
    let mut env = EnvBuilder::from_vars(login.own.vars().map(|(k, v)| (k.clone(), v.clone())));
    env.remove_shell_state();
    let spec = SpawnSpec {
        program: login.shell(),
        args: vec!["-l".into(), "-i".into(), "-c".into(), script.into()],
        cwd: login.cwd.clone(),
        env: env.into_vars(),
        ..SpawnSpec::default()
    };
    let started = Instant::now();
    let child = login.supervisor.spawn(spec).await.map_err(|err| format!("{err}"))?;
    let limits = budget_limits(started, Duration::from_millis(250), Duration::from_millis(500));
    let mut capture = Capture(Vec::new());
    let outcome = run(child, &mut capture, limits).await;
    if !outcome.lingering.is_empty() {
        let tree = outcome.tree.clone();
        tokio::spawn(async move { tree.kill(Duration::from_millis(200)).await });
    }
    if let Some(reason) = run_failure(&outcome) {
        return Err(reason);
    }
    parse_output(&capture.0, full, login.own, login.rules)
}

/// Splits the login shell's output at the markers and keeps the variables it adds.
fn parse_output(
    text: &[u8],
    full: bool,
    own: &Lookup,
    rules: &ScrubRules,
) -> Result<LoginOutput, String> {
    let marker = format!("\n{MARKER}\n");
    let Some(at) = find(text, marker.as_bytes()) else {
        return Err("the login shell printed no environment".to_string());
    };
    let full_marker = format!("\n{FULL_MARKER}\n");
    let (env_part, full_part) = match find(text, full_marker.as_bytes()) {
        Some(end) if full => {
            (&text[at + marker.len()..end], Some(text[end + full_marker.len()..].to_vec()))
        }
        _ => (&text[at + marker.len()..], None),
    };
    Ok(LoginOutput { vars: kept_vars(env_part, own, rules), full_part })
}

static REPLAYS: AtomicU64 = AtomicU64::new(0);

/// Writes `full` mode's replay file and checks that sourcing it fits the budget.
async fn prepare_replay(
    supervisor: &Supervisor,
    bash: &Path,
    part: &[u8],
    vars: &[(OsString, OsString)],
    own: &Lookup,
) -> Result<PathBuf, String> {
    if part.len() > FULL_MAX_BYTES {
        let limit = execkit_output::format::size(FULL_MAX_BYTES as u64);
        return Err(format!("snapshot {} KiB exceeds {limit}", part.len().div_ceil(1024)));
    }
    let n = REPLAYS.fetch_add(1, Ordering::Relaxed);
    let path = supervisor.run_dir().join(format!("snapshot-{n}.sh"));
    let mut text = b"shopt -s expand_aliases\n".to_vec();
    text.extend_from_slice(part);
    execkit_output::fsutil::write_private(&path, &text)
        .map_err(|e| format!("cannot write the snapshot: {e}"))?;
    let sourced = format!(". {}", crate::normalize::shell_quote(&path.to_string_lossy()));
    let with = time_bash(supervisor, bash, &sourced, vars, own).await;
    let without = time_bash(supervisor, bash, ":", vars, own).await;
    match (with, without) {
        (Some(with), Some(without)) => {
            let cost = with.saturating_sub(without);
            if cost > FULL_REPLAY_BUDGET {
                let _ = std::fs::remove_file(&path);
                return Err(format!("replay took {} ms (budget 100 ms)", cost.as_millis()));
            }
            Ok(path)
        }
        _ => Err("the snapshot could not be replayed".to_string()),
    }
}

/// Wall time of one `bash -c <script>` with the snapshot's environment; `None` on failure.
async fn time_bash(
    supervisor: &Supervisor,
    bash: &Path,
    script: &str,
    vars: &[(OsString, OsString)],
    own: &Lookup,
) -> Option<Duration> {
    let mut env = EnvBuilder::from_vars(own.vars().map(|(k, v)| (k.clone(), v.clone())));
    env.remove_shell_state();
    env.overlay(vars.iter().cloned());
    env.harden();
    let spec = SpawnSpec {
        program: bash.to_path_buf(),
        args: vec!["--noprofile".into(), "--norc".into(), "-c".into(), script.into()],
        cwd: PathBuf::from("/"),
        env: env.into_vars(),
        ..SpawnSpec::default()
    };
    let started = Instant::now();
    let child = supervisor.spawn(spec).await.ok()?;
    let limits = budget_limits(started, Duration::from_millis(50), Duration::from_millis(200));
    let outcome = run(child, &mut Capture(Vec::new()), limits).await;
    (outcome.end == RunEnd::Exited && outcome.status.is_some_and(|s| s.code == Some(0)))
        .then(|| started.elapsed())
}

/// The variables of `env -0` output that the snapshot adds: see [`keep`].
fn kept_vars(env_part: &[u8], own: &Lookup, rules: &ScrubRules) -> Vec<(OsString, OsString)> {
    let mut hardened = EnvBuilder::from_vars(std::iter::empty());
    hardened.harden();
    let mut vars = Vec::new();
    for entry in env_part.split(|&b| b == 0) {
        let Ok(entry) = std::str::from_utf8(entry) else { continue };
        let Some((name, value)) = entry.split_once('=') else { continue };
        if keep(name, value, own, &hardened, rules) {
            vars.push((name.into(), value.into()));
        }
    }
    vars
}

/// A login-shell variable is kept when it differs from this process's value and is not shell
/// state, a hardening variable or a credential.
fn keep(name: &str, value: &str, own: &Lookup, hardened: &EnvBuilder, rules: &ScrubRules) -> bool {
    if own.get(name) == Some(value) || name.is_empty() {
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

/// A run that must end within the snapshot budget from `started`.
fn budget_limits(started: Instant, drain_idle: Duration, drain_max: Duration) -> RunLimits {
    RunLimits {
        deadline: Some(started + SNAPSHOT_BUDGET),
        cancel: CancellationToken::new(),
        kill_grace: Duration::from_millis(200),
        drain_idle,
        drain_max,
    }
}

/// Why the login shell's run gives no snapshot: a timeout, a cancel, or a status other than 0.
fn run_failure(outcome: &RunOutcome) -> Option<String> {
    match (outcome.end, outcome.status) {
        (RunEnd::TimedOut, _) => Some("timed out after 3 s".to_string()),
        (RunEnd::Cancelled, _) => Some("cancelled".to_string()),
        (RunEnd::Exited, Some(status)) if status.code != Some(0) => {
            let shown = status.code.unwrap_or_else(|| 128 + status.signal.unwrap_or(0));
            Some(format!("exited with status {shown}"))
        }
        _ => None,
    }
}

pub(crate) fn fallback(reason: String) -> Snapshot {
    Snapshot { vars: Vec::new(), replay: None, fallback: Some(reason), full_fallback: None }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
