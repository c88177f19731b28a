//! Starting one bash process and turning its run into a result.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use execkit_output::fsutil::write_private;
use execkit_output::sink::OutputSink;
use execkit_process::env::EnvBuilder;
use execkit_process::run::{RunLimits, RunOutcome};
use execkit_process::{CancellationToken, Child, PtyHandle, PtySize, SpawnSpec, StdinMode};
use execkit_protocol::ToolResult;
use execkit_runkit::LingeringAction;

use crate::cwd_change::may_change_directory;
use crate::input_wait::Detector;
use crate::request::Request;
use crate::result::{Explained, Finished, start_failed_result};
use crate::runner::{BashExtras, BashRunner};
use crate::snapshot::Snapshot;

/// Commands longer than this run from a script file (B9): Linux limits one exec argument to
/// 128 KiB, and the prelude and environment need room too.
const SCRIPT_FILE_THRESHOLD: usize = 96 << 10;

static CALLS: AtomicU64 = AtomicU64::new(0);

/// The whole environment a command may get (O48), counted as `NAME=value\0` strings.
const MAX_ENV_BYTES: usize = 1 << 20;

/// The run observer of a bash call: the sink, progress, and input-wait detection on a PTY.
pub(crate) type Observer = execkit_runkit::Observer<Detector>;

/// A started bash process with what is needed to explain its run.
pub(crate) struct Launched {
    pub child: Child,
    pub started: Instant,
    pub sink: OutputSink,
    /// The terminal, when the command runs on one.
    pub pty: Option<PtyHandle>,
    info: LaunchedInfo,
}

impl BashRunner {
    /// Builds the environment and prelude, spawns bash, and creates the output sink.
    pub(crate) async fn launch(
        &self,
        request: &Request,
        bash: PathBuf,
        extras: BashExtras,
        spill_from_start: bool,
    ) -> Result<Launched, ToolResult> {
        let inner = &self.inner;
        // The run directory is shared by every Toolkit of this process: number files per process.
        let call_no = CALLS.fetch_add(1, Ordering::Relaxed);
        let snap = self.wait_snapshot().await;
        let run_dir = inner.deps.supervisor.run_dir().to_path_buf();
        let caller_bash_env = request.env.contains_key("BASH_ENV");
        let mut temp = RemoveOnDrop(Vec::new());
        let (env, tracks_cwd) = self.call_env(request, &snap, &run_dir, caller_bash_env)?;
        let scrubbed = env.scrubbed();
        let limits = &inner.deps.limits;
        let size = PtySize { cols: limits.pty_cols as u16, rows: limits.pty_rows as u16 };
        let layers = EnvLayers { env: &env, size, request, extras: &extras, prelude: tracks_cwd };
        let vars = layers.vars(request.pty)?;
        let args = bash_args(request, &run_dir, call_no, &mut temp)?;
        let spec = |pty: bool, env: Vec<(OsString, OsString)>| SpawnSpec {
            program: bash.clone(),
            args: args.clone(),
            arg0: Some("bash".into()),
            cwd: request.cwd.clone(),
            env,
            stdin: if extras.stdin.is_some() { StdinMode::Pipe } else { StdinMode::Null },
            pty: pty.then_some(size),
            confinement: request.confinement,
            ..SpawnSpec::default()
        };
        let supervisor = &inner.deps.supervisor;
        let mut pty_fallback = None;
        let mut started = Instant::now();
        let spawned = match supervisor.spawn(spec(request.pty, vars)).await {
            Err(err) if err.pty_unavailable().is_some() => {
                pty_fallback = err.pty_unavailable().map(|p| p.reason.clone());
                started = Instant::now();
                supervisor.spawn(spec(false, layers.vars(false)?)).await
            }
            other => other,
        };
        let mut child = spawned
            .map_err(|err| start_failed_result(&format!("Failed to start bash: {}", err.source)))?;
        let pty = child.pty();
        let cwd_file = tracks_cwd.then(|| run_dir.join(format!("bash-cwd-{}", child.pid())));
        temp.0.extend(cwd_file.clone());
        if let Some(bytes) = extras.stdin {
            feed_stdin(&mut child, pty.clone(), bytes);
        }
        let sink = self.sink(request, spill_from_start);
        let info = LaunchedInfo {
            snap,
            scrubbed,
            cwd_file,
            pty: pty.is_some(),
            pty_fallback,
            _temp: temp,
        };
        Ok(Launched { child, started, sink, pty, info })
    }

    /// The call's environment before the terminal and caller layers: the Toolkit's base (or,
    /// with a caller's own `BASH_ENV`, the layers without snapshot and prelude) and `PWD`; and
    /// whether the prelude records the final `$PWD`.
    ///
    /// The prelude runs when it has work: the snapshot's replay, or a command that could change
    /// directory (its EXIT trap records where bash ended). A call with neither gets no
    /// `BASH_ENV` at all, so bash starts as fast as a plain `bash -c` and can `exec` the
    /// command's last program.
    fn call_env(
        &self,
        request: &Request,
        snap: &Snapshot,
        run_dir: &Path,
        caller_bash_env: bool,
    ) -> Result<(EnvBuilder, bool), ToolResult> {
        let inner = &self.inner;
        let (mut env, tracks_cwd) = if caller_bash_env {
            // A caller's own BASH_ENV means no snapshot and no prelude (B16).
            (self.layered_env(None), false)
        } else {
            let base = match inner.base_env.get() {
                Some(base) => base,
                None => {
                    let built = self.base_env(snap, run_dir).map_err(start_failed)?;
                    inner.base_env.get_or_init(|| built)
                }
            };
            let mut env = base.env.clone();
            // Replayed functions and aliases may `cd`, so a replay always records the `$PWD`.
            let tracks = snap.replay.is_some() || may_change_directory(&request.command);
            if tracks {
                env.set("BASH_ENV", base.prelude.as_os_str());
            }
            (env, tracks)
        };
        env.set("PWD", request.cwd.as_os_str());
        Ok((env, tracks_cwd))
    }

    /// The limits of a run of `request` that started at `started`.
    pub(crate) fn run_limits(
        &self,
        request: &Request,
        started: Instant,
        cancel: CancellationToken,
    ) -> RunLimits {
        execkit_runkit::run_limits(&self.inner.deps.limits, started, request.timeout.secs, cancel)
    }

    /// The result text and JSON of a finished run. Consumes the once-per-Toolkit notices.
    pub(crate) fn explain(
        &self,
        request: &Request,
        launched: LaunchedInfo,
        outcome: RunOutcome,
        observer: Observer,
        lingering: LingeringAction,
    ) -> Explained {
        let input_wait = observer.watcher.and_then(|d| d.found);
        let sink = observer.sink;
        let inner = &self.inner;
        let final_cwd = launched
            .cwd_file
            .as_ref()
            .and_then(|f| std::fs::read_to_string(f).ok())
            .filter(|s| !s.is_empty());
        let snap = &launched.snap;
        let snapshot_notice = match (&snap.fallback, &snap.full_fallback) {
            (Some(reason), _) => Some(format!(
                "[Shell startup files not applied ({reason}); running with the inherited environment]"
            )),
            (None, Some(reason)) => Some(format!(
                "[Shell aliases and functions not applied ({reason}); running with the login \
                 shell's environment only]"
            )),
            (None, None) => None,
        }
        .filter(|_| inner.snapshot_notice_due.swap(false, Ordering::Relaxed));
        let snapshot_mode = match (&snap.fallback, &snap.full_fallback) {
            (Some(_), _) => "fallback",
            (None, Some(_)) => "env",
            (None, None) => inner.config.snapshot.as_str(),
        };
        let scrub_notice = (!launched.scrubbed.is_empty()
            && inner.scrub_notice_due.swap(false, Ordering::Relaxed))
        .then(|| launched.scrubbed.clone());
        Finished {
            request,
            outcome,
            summary: sink.finish(),
            base_cwd: &inner.deps.cwd,
            final_cwd,
            containment: inner.deps.supervisor.containment().as_str(),
            scrubbed: launched.scrubbed,
            snapshot_mode,
            snapshot_notice,
            scrub_notice,
            prefix: inner.config.prefix.clone(),
            artifacts: inner.deps.artifacts.as_ref().ok(),
            lingering,
            pty: launched.pty,
            pty_fallback: launched.pty_fallback,
            input_wait,
        }
        .into_result()
    }
}

/// What `explain` needs from a launch once the child and sink are handed out.
pub(crate) struct LaunchedInfo {
    snap: Snapshot,
    scrubbed: Vec<String>,
    cwd_file: Option<PathBuf>,
    pty: bool,
    /// Why a requested PTY could not be had (B24).
    pty_fallback: Option<String>,
    _temp: RemoveOnDrop,
}

impl Launched {
    /// Hands out the child and an observer that owns the sink; on a PTY the observer also
    /// watches for input waits, and cancels `stop` when it finds one.
    pub fn into_run(
        self,
        progress: Option<execkit_protocol::ProgressFn>,
        timeout_s: Option<u64>,
        input_wait: Option<Duration>,
        stop: &CancellationToken,
    ) -> (Child, Instant, Observer, LaunchedInfo) {
        let mut observer = Observer::new(self.sink, progress, timeout_s);
        if let (Some(pty), Some(silence)) = (self.pty, input_wait) {
            observer.watcher = Some(Detector::new(pty, self.child.tree(), stop.clone(), silence));
        }
        (self.child, self.started, observer, self.info)
    }
}

/// The last layers of a call's environment: the terminal's variables, then the caller's.
struct EnvLayers<'a> {
    env: &'a EnvBuilder,
    size: PtySize,
    request: &'a Request,
    extras: &'a BashExtras,
    /// Whether `BASH_ENV` names the prelude, which bash in POSIX mode would not read.
    prelude: bool,
}

impl EnvLayers<'_> {
    /// The complete environment, with or without a terminal; refused when it is larger than
    /// a command may get.
    fn vars(&self, pty: bool) -> Result<Vec<(OsString, OsString)>, ToolResult> {
        let mut env = self.env.clone();
        if pty {
            env.set("TERM", "xterm-256color");
            env.set("COLUMNS", self.size.cols.to_string());
            env.set("LINES", self.size.rows.to_string());
        }
        for (name, value) in self.request.env.iter().chain(self.extras.env.iter()) {
            env.set(name.as_str(), value.as_str());
        }
        if self.prelude {
            crate::posix_mode::defer(&mut env);
        }
        let vars = env.into_vars();
        let total: usize = vars.iter().map(|(k, v)| k.len() + v.len() + 2).sum();
        if total > MAX_ENV_BYTES {
            return Err(ToolResult::error(format!(
                "Invalid argument \"env\": environment would be {total} bytes; the limit is \
                 {MAX_ENV_BYTES}"
            )));
        }
        Ok(vars)
    }
}

/// bash's arguments: the command itself, or a private script file for a long one (removed
/// with `temp`).
fn bash_args(
    request: &Request,
    run_dir: &Path,
    call_no: u64,
    temp: &mut RemoveOnDrop,
) -> Result<Vec<OsString>, ToolResult> {
    let mut args: Vec<OsString> = vec!["--noprofile".into(), "--norc".into()];
    if request.command.len() > SCRIPT_FILE_THRESHOLD {
        let script = run_dir.join(format!("bash-{call_no}.sh"));
        write_private(&script, request.command.as_bytes()).map_err(start_failed)?;
        args.push(script.clone().into());
        temp.0.push(script);
    } else {
        args.push("-c".into());
        args.push(request.command.clone().into());
    }
    Ok(args)
}

/// Writes a library caller's stdin bytes to the child's stdin pipe, or to its terminal.
fn feed_stdin(child: &mut Child, pty: Option<PtyHandle>, bytes: Vec<u8>) {
    if let Some(mut stdin) = child.take_stdin() {
        tokio::spawn(async move {
            let _ = stdin.write_all(&bytes).await;
        });
    } else if let Some(pty) = pty {
        tokio::spawn(async move {
            let _ = pty.write_all(&bytes).await;
        });
    }
}

fn start_failed(err: std::io::Error) -> ToolResult {
    start_failed_result(&format!("Failed to start bash: {err}"))
}

impl BashRunner {
    /// Layers 1 to 4 of O44 and `EXECKIT=1`: inherited, removals, scrub, snapshot, hardening.
    fn layered_env(&self, snapshot: Option<&Snapshot>) -> EnvBuilder {
        let inner = &self.inner;
        let mut env =
            EnvBuilder::from_vars(inner.deps.lookup.vars().map(|(k, v)| (k.clone(), v.clone())));
        env.remove_shell_state();
        if inner.config.scrub {
            env.scrub(&inner.derived.scrub_rules);
        }
        if let Some(snapshot) = snapshot {
            env.overlay(snapshot.vars.iter().cloned());
        }
        env.harden();
        env.set("EXECKIT", "1");
        env
    }

    /// The environment every call starts from and its prelude, built once per Toolkit (the
    /// scrub and the snapshot do not change between calls).
    fn base_env(&self, snapshot: &Snapshot, run_dir: &Path) -> std::io::Result<BaseEnv> {
        let n = PRELUDES.fetch_add(1, Ordering::Relaxed);
        let prelude = run_dir.join(format!("bash-prelude-{n}.sh"));
        write_private(&prelude, prelude_text(run_dir, snapshot.replay.as_deref()).as_bytes())?;
        let env = self.layered_env(Some(snapshot));
        Ok(BaseEnv { env, prelude })
    }
}

/// What every call of a Toolkit starts from, built at its first call.
pub(crate) struct BaseEnv {
    /// The environment, without `BASH_ENV`.
    env: EnvBuilder,
    /// The prelude file a call's `BASH_ENV` points at when it runs one.
    prelude: PathBuf,
}

static PRELUDES: AtomicU64 = AtomicU64::new(0);

/// B16: the `full` snapshot's replay, then an EXIT trap that records the final `$PWD` in
/// `bash-cwd-<pid>` when it differs from the start; `unset BASH_ENV` keeps nested bash scripts
/// from running the prelude again. A call runs it only when it has work ([`BashRunner::call_env`]).
///
/// A caller's `SHELLOPTS=xtrace` turns tracing on before the prelude runs, and the prelude
/// must not trace itself: its first line turns `xtrace` and `verbose` off, the trace of that one
/// command going to /dev/null; its last line turns back on what was on, for the user's command;
/// the EXIT trap turns them off again the same way before it runs.
///
/// The command sees the `$_` bash started with: the first line keeps it and the last simple
/// command repeats it. The prelude's variables are never exported, even under `allexport`.
/// The trap first removes a user's DEBUG and ERR traps, which would otherwise run for each of
/// its commands. The trap's words are `\builtin`, safe from a user's aliases, and it
/// reads `${PWD-}`, safe from `set -u` after an `unset PWD`.
fn prelude_text(run_dir: &Path, replay: Option<&Path>) -> String {
    let dir = crate::normalize::shell_quote(&run_dir.to_string_lossy());
    let mut text = String::from(
        "{ __execkit_underscore=$_; __execkit_flags=$-; builtin set +xv; } 2>/dev/null\n",
    );
    if let Some(replay) = replay {
        text.push_str(&format!(". {}\n", crate::normalize::shell_quote(&replay.to_string_lossy())));
    }
    text.push_str("__execkit_start_pwd=$PWD\n");
    // The path lives in a variable set while tracing is off, so a caller's `verbose` option,
    // which echoes the trap's text when it runs, never shows the run directory.
    text.push_str(&format!("__execkit_cwd_file={dir}/bash-cwd-$$\n"));
    text.push_str(
        "builtin trap '{ \\builtin trap - DEBUG ERR; \\builtin set +xv; } 2>/dev/null; \
         \\builtin [ \"${PWD-}\" = \"$__execkit_start_pwd\" ] || \\builtin printf \"%s\" \"${PWD-}\" \
         > \"$__execkit_cwd_file\" 2>/dev/null' EXIT\nbuiltin unset BASH_ENV\n",
    );
    text.push_str(crate::posix_mode::PRELUDE_LINE);
    text.push_str(
        "{ case $__execkit_flags in *x*) builtin set -x;; esac; case $__execkit_flags in \
         *v*) builtin set -v;; esac; builtin unset __execkit_flags; builtin export -n \
         __execkit_underscore __execkit_start_pwd __execkit_cwd_file; \
         : \"$__execkit_underscore\"; } 2>/dev/null\n",
    );
    text
}

struct RemoveOnDrop(Vec<PathBuf>);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        for path in &self.0 {
            let _ = std::fs::remove_file(path);
        }
    }
}
