//! The bash runner: one fresh `bash -c` per call, supervised, bounded, explained.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use execkit_output::artifact::ArtifactStore;
use execkit_output::clamp::Limits;
use execkit_output::sink::{OutputSink, SinkConfig, Spill};
use execkit_process::env::{EnvBuilder, ScrubRules};
use execkit_process::run::{RunLimits, run};
use execkit_process::{CancellationToken, ProcessTree, SpawnSpec, StdinMode, Supervisor};
use execkit_protocol::ToolResult;
use execkit_protocol::bash::BashParams;
use indexmap::IndexMap;
use tokio::sync::watch;

use crate::config::{BashConfig, SnapshotMode};
use crate::progress::{Observer, ProgressFn};
use crate::request::{Rejection, Request, prepare};
use crate::result::{Finished, blocked_result, start_failed_result};
use crate::rules::blocked_text;
use crate::snapshot::{self, SNAPSHOT_BUDGET, Snapshot};

/// Commands longer than this run from a script file (B9): Linux limits one exec argument to
/// 128 KiB, and the prelude and environment need room too.
const SCRIPT_FILE_THRESHOLD: usize = 96 << 10;

/// What library callers may add beyond the published schema (B42).
#[derive(Debug, Clone, Default)]
pub struct BashExtras {
    /// Written to the command's stdin, which is then closed (≤ 1 MiB).
    pub stdin: Option<Vec<u8>>,
    /// Extra variables that bypass the scrub.
    pub env: IndexMap<String, String>,
}

/// Per-call context from the dispatcher.
#[derive(Clone, Default)]
pub struct BashContext {
    pub progress: Option<ProgressFn>,
    pub cancel: CancellationToken,
}

/// Everything the runner needs from the Toolkit.
#[derive(Debug, Clone)]
pub struct BashDeps {
    pub supervisor: Supervisor,
    pub artifacts: Result<ArtifactStore, String>,
    pub limits: Limits,
    pub scrub_rules: ScrubRules,
    /// This process's environment, read once.
    pub own_env: HashMap<String, String>,
    pub home: Option<PathBuf>,
}

/// The bash tool. Cheap to clone.
#[derive(Clone)]
pub struct BashRunner {
    inner: Arc<Inner>,
}

struct Inner {
    config: BashConfig,
    deps: BashDeps,
    snapshot: watch::Receiver<Option<Snapshot>>,
    snapshot_started: Instant,
    snapshot_notice_due: AtomicBool,
    scrub_notice_due: AtomicBool,
    calls: AtomicU64,
}

impl BashRunner {
    /// Starts the shell snapshot in the background (B17). Must run inside a tokio runtime.
    pub fn new(config: BashConfig, deps: BashDeps) -> BashRunner {
        let (tx, rx) = watch::channel(None);
        match (config.snapshot, &config.bash) {
            (SnapshotMode::Off, _) | (_, None) => {
                let _ = tx.send(Some(Snapshot::default()));
            }
            (_, Some(bash)) => {
                let supervisor = deps.supervisor.clone();
                let bash = bash.clone();
                let own = deps.own_env.clone();
                let rules = deps.scrub_rules.clone();
                let cwd = config.base_cwd.clone();
                tokio::spawn(async move {
                    let snap = snapshot::capture(&supervisor, &bash, &own, &rules, cwd).await;
                    let _ = tx.send(Some(snap));
                });
            }
        }
        BashRunner {
            inner: Arc::new(Inner {
                config,
                deps,
                snapshot: rx,
                snapshot_started: Instant::now(),
                snapshot_notice_due: AtomicBool::new(true),
                scrub_notice_due: AtomicBool::new(true),
                calls: AtomicU64::new(0),
            }),
        }
    }

    pub fn config(&self) -> &BashConfig {
        &self.inner.config
    }

    /// Doctor lines, including the snapshot outcome when known.
    pub fn doctor_lines(&self) -> Vec<String> {
        let mut lines = self.inner.config.doctor_lines();
        if let Some(Some(snap)) = self.inner.snapshot.borrow().as_ref().map(|s| s.fallback.clone())
        {
            lines.push(format!("shell snapshot fell back: {snap}"));
        }
        lines
    }

    /// Runs one call. Never panics; every failure is an `isError` result.
    pub async fn call(&self, params: BashParams, extras: BashExtras, ctx: BashContext) -> ToolResult {
        let inner = &self.inner;
        let store = inner.deps.artifacts.as_ref().ok();
        let home = inner.deps.home.as_deref();
        let request = match prepare(params, &inner.config, store, inner.deps.limits.max_timeout_s, home)
        {
            Ok(request) => request,
            Err(Rejection::Invalid(text)) | Err(Rejection::Failed(text)) => {
                return ToolResult::error(text);
            }
        };
        if request.run_async {
            return ToolResult::error(
                "Invalid argument \"async\": background jobs are not available in this build",
            );
        }
        if let Some(rule) = inner.config.rules.check(&request.command, &request.original) {
            return blocked_result(&rule.id, blocked_text(rule, &request.original));
        }
        let Some(bash) = inner.config.bash.clone() else {
            return ToolResult::error("bash not found on PATH; set EXECKIT_BASH to its path");
        };
        self.run(request, bash, extras, ctx).await
    }

    async fn wait_snapshot(&self) -> Snapshot {
        let mut rx = self.inner.snapshot.clone();
        let budget_end = self.inner.snapshot_started + SNAPSHOT_BUDGET + Duration::from_millis(500);
        let waited = tokio::time::timeout_at(budget_end.into(), rx.wait_for(Option::is_some)).await;
        match waited {
            Ok(Ok(snap)) => snap.clone().unwrap_or_default(),
            _ => Snapshot { vars: Vec::new(), fallback: Some("timed out after 3 s".to_string()) },
        }
    }

    async fn run(
        &self,
        request: Request,
        bash: PathBuf,
        extras: BashExtras,
        ctx: BashContext,
    ) -> ToolResult {
        let inner = &self.inner;
        let call_no = inner.calls.fetch_add(1, Ordering::Relaxed);
        let snap = self.wait_snapshot().await;
        let run_dir = inner.deps.supervisor.run_dir().to_path_buf();
        let caller_bash_env = request.env.contains_key("BASH_ENV");
        let cwd_file = run_dir.join(format!("bash-{call_no}.cwd"));
        let prelude = run_dir.join(format!("bash-{call_no}.prelude"));
        let mut temp_files = vec![cwd_file.clone()];

        let mut env = EnvBuilder::from_vars(
            inner.deps.own_env.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))),
        );
        env.remove_shell_state();
        if inner.config.scrub {
            env.scrub(&inner.deps.scrub_rules);
        }
        env.overlay(snap.vars.iter().cloned());
        env.harden();
        env.set("EXECKIT", "1");
        env.set("PWD", request.cwd.as_os_str());
        if !caller_bash_env {
            if let Err(err) = write_private(&prelude, prelude_text(&cwd_file).as_bytes()) {
                return start_failed_result(&format!("Failed to start bash: {err}"));
            }
            temp_files.push(prelude.clone());
            env.set("BASH_ENV", prelude.as_os_str());
        }
        for (name, value) in request.env.iter().chain(extras.env.iter()) {
            env.set(name.as_str(), value.as_str());
        }
        let scrubbed = env.scrubbed();

        let mut args: Vec<OsString> = vec!["--noprofile".into(), "--norc".into()];
        if request.command.len() > SCRIPT_FILE_THRESHOLD {
            let script = run_dir.join(format!("bash-{call_no}.sh"));
            if let Err(err) = write_private(&script, request.command.as_bytes()) {
                return start_failed_result(&format!("Failed to start bash: {err}"));
            }
            args.push(script.clone().into());
            temp_files.push(script);
        } else {
            args.push("-c".into());
            args.push(request.command.clone().into());
        }
        let spec = SpawnSpec {
            program: bash,
            args,
            arg0: Some("bash".into()),
            cwd: request.cwd.clone(),
            env: env.into_vars(),
            stdin: if extras.stdin.is_some() { StdinMode::Pipe } else { StdinMode::Null },
            ..SpawnSpec::default()
        };
        let _cleanup = RemoveOnDrop(temp_files);
        let started = Instant::now();
        let mut child = match inner.deps.supervisor.spawn(spec).await {
            Ok(child) => child,
            Err(err) => {
                let text = format!("Failed to start bash: {}", err.source);
                return start_failed_result(&text);
            }
        };
        if let (Some(bytes), Some(mut stdin)) = (extras.stdin, child.take_stdin()) {
            tokio::spawn(async move {
                let _ = stdin.write_all(&bytes).await;
            });
        }
        let guard = KillOnDrop::new(child.tree(), self.kill_grace());
        let sink = self.sink(&request);
        let mut observer = Observer::new(sink, ctx.progress.clone(), request.timeout.secs);
        let limits = RunLimits {
            deadline: request.timeout.secs.map(|s| started + Duration::from_secs(s)),
            cancel: ctx.cancel.clone(),
            kill_grace: self.kill_grace(),
            drain_idle: Duration::from_millis(inner.deps.limits.drain_idle_ms),
            drain_max: Duration::from_millis(inner.deps.limits.drain_max_ms),
        };
        let outcome = run(child, &mut observer, limits).await;
        guard.disarm();
        if !outcome.lingering.is_empty() {
            let tree = outcome.tree.clone();
            let grace = self.kill_grace();
            tokio::spawn(async move { tree.kill(grace).await });
        }
        let final_cwd = if caller_bash_env {
            None
        } else {
            std::fs::read_to_string(&cwd_file).ok().filter(|s| !s.is_empty())
        };
        let snapshot_notice = snap
            .fallback
            .as_ref()
            .filter(|_| inner.snapshot_notice_due.swap(false, Ordering::Relaxed))
            .cloned();
        let scrub_notice = (!scrubbed.is_empty()
            && inner.scrub_notice_due.swap(false, Ordering::Relaxed))
        .then(|| scrubbed.clone());
        Finished {
            request: &request,
            outcome,
            summary: observer.sink.finish(),
            base_cwd: &inner.config.base_cwd,
            final_cwd,
            containment: inner.deps.supervisor.containment().as_str(),
            scrubbed,
            snapshot_mode: if snap.fallback.is_some() {
                "fallback"
            } else {
                inner.config.snapshot.as_str()
            },
            snapshot_notice,
            scrub_notice,
            prefix: inner.config.prefix.clone(),
            artifacts: inner.deps.artifacts.as_ref().ok(),
        }
        .into_result()
    }

    fn kill_grace(&self) -> Duration {
        Duration::from_millis(self.inner.deps.limits.kill_grace_ms)
    }

    fn sink(&self, request: &Request) -> OutputSink {
        let config = SinkConfig::from_limits(&self.inner.deps.limits)
            .with_line_window(request.head, request.tail);
        let label: String = request.original.chars().take(120).collect();
        match &self.inner.deps.artifacts {
            Ok(store) => OutputSink::new(
                config,
                Some(Spill { store: store.clone(), tool: "bash".to_string(), label }),
                None,
            ),
            Err(reason) => OutputSink::new(config, None, Some(reason.clone())),
        }
    }
}

/// B16: the EXIT trap records the final `$PWD`; `unset BASH_ENV` keeps nested bash scripts
/// from running it again.
fn prelude_text(cwd_file: &Path) -> String {
    let file = crate::normalize::shell_quote(&cwd_file.to_string_lossy());
    format!(
        "trap 'builtin printf \"%s\" \"$PWD\" > {file} 2>/dev/null' EXIT\nunset BASH_ENV\n"
    )
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(bytes)
}

struct RemoveOnDrop(Vec<PathBuf>);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        for path in &self.0 {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Kills the tree in the background when the call's future is dropped mid-run (B30).
struct KillOnDrop {
    tree: Option<ProcessTree>,
    grace: Duration,
}

impl KillOnDrop {
    fn new(tree: ProcessTree, grace: Duration) -> Self {
        KillOnDrop { tree: Some(tree), grace }
    }

    fn disarm(mut self) {
        self.tree = None;
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(tree) = self.tree.take() {
            let grace = self.grace;
            if let Ok(handle) = tokio::runtime::Handle::try_current() {
                handle.spawn(async move { tree.kill(grace).await });
            }
        }
    }
}
