//! The bash runner: one fresh `bash -c` per call, supervised, bounded, explained.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use execkit_jobs::JobTable;
use execkit_output::artifact::ArtifactStore;
use execkit_output::clamp::Limits;
use execkit_output::sink::{OutputSink, SinkConfig, Spill};
use execkit_process::env::ScrubRules;
use execkit_process::{Confinement, Supervisor};
use execkit_protocol::ToolResult;
use execkit_protocol::bash::BashParams;
use execkit_runkit::{mark_cancelled_kill, run_to_end};
use execkit_tool::{CallContext, Lookup};
use indexmap::IndexMap;

use crate::config::{BashConfig, SnapshotMode};
use crate::request::{Prepare, Rejection, Request};
use crate::result::blocked_result;
use crate::rules::{Rules, blocked_text};
use crate::snapshot::Snapshot;
use crate::snapshot_start::{SnapshotJob, SnapshotStart};

/// What library callers may add beyond the published schema (B42).
#[derive(Debug, Clone, Default)]
pub struct BashExtras {
    /// Written to the command's stdin, which is then closed (≤ 1 MiB).
    pub stdin: Option<Vec<u8>>,
    /// Extra variables that bypass the scrub.
    pub env: IndexMap<String, String>,
}

/// Everything the runner needs from the Toolkit. The scrub rules and the home directory are
/// read from `lookup`; `cwd` is the base every call resolves against.
#[derive(Debug, Clone)]
pub struct BashDeps {
    pub supervisor: Supervisor,
    pub artifacts: Result<ArtifactStore, String>,
    pub limits: Limits,
    /// The saved process environment plus overrides: what children inherit.
    pub lookup: Lookup,
    pub cwd: PathBuf,
    /// Where background jobs and adopted processes are registered.
    pub jobs: JobTable,
}

/// What the runner derives from [`BashDeps`] once.
pub(crate) struct Derived {
    pub scrub_rules: ScrubRules,
    pub home: Option<PathBuf>,
    pub rules: Rules,
}

/// The bash tool. Cheap to clone.
#[derive(Clone)]
pub struct BashRunner {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub config: BashConfig,
    pub deps: BashDeps,
    pub derived: Derived,
    snapshot: SnapshotStart,
    pub snapshot_notice_due: AtomicBool,
    /// Built at the first call, once the snapshot is known.
    pub base_env: OnceLock<crate::launch::BaseEnv>,
    pub scrub_notice_due: AtomicBool,
}

impl BashRunner {
    /// Starts the shell snapshot in the background (B17), or with `prewarm` off at the first
    /// call. Must run inside a tokio runtime.
    pub fn new(config: BashConfig, deps: BashDeps) -> BashRunner {
        let home = deps.lookup.get("HOME").map(PathBuf::from);
        let derived = Derived {
            scrub_rules: ScrubRules::from_lookup(&deps.lookup.as_fn()),
            rules: config.load_rules(&deps.cwd, home.as_deref()),
            home,
        };
        let snapshot = match (config.snapshot, &config.bash) {
            (SnapshotMode::Off, _) | (_, None) => SnapshotStart::known(Snapshot::default()),
            (mode, Some(bash)) => {
                let job = SnapshotJob {
                    supervisor: deps.supervisor.clone(),
                    bash: bash.clone(),
                    own: deps.lookup.clone(),
                    rules: derived.scrub_rules.clone(),
                    cwd: deps.cwd.clone(),
                    full: mode == SnapshotMode::Full,
                    home: derived.home.clone(),
                };
                SnapshotStart::pending(job, config.prewarm)
            }
        };
        BashRunner {
            inner: Arc::new(Inner {
                config,
                deps,
                derived,
                snapshot,
                snapshot_notice_due: AtomicBool::new(true),
                base_env: OnceLock::new(),
                scrub_notice_due: AtomicBool::new(true),
            }),
        }
    }

    pub fn config(&self) -> &BashConfig {
        &self.inner.config
    }

    /// Starts the shell snapshot in the background now unless it has started: for a runner
    /// built with `prewarm` off whose owner pre-warms it later (the Toolkit, once the eval
    /// kernels are up). Must run inside a tokio runtime.
    pub fn prewarm_snapshot(&self) {
        self.inner.snapshot.start();
    }

    /// Doctor lines: the configuration, the rules, and the snapshot outcome when known.
    pub fn doctor(&self) -> Vec<String> {
        let mut lines = self.inner.config.doctor_lines();
        let rules = &self.inner.derived.rules;
        lines.push(format!("rules: {}", if rules.is_empty() { "none" } else { "active" }));
        lines.extend(rules.errors.iter().map(|e| format!("rule error: {e}")));
        let fallback = self.inner.snapshot.current().and_then(|s| s.fallback);
        if let Some(reason) = fallback {
            lines.push(format!("shell snapshot fell back: {reason}"));
        }
        lines.extend(self.inner.snapshot.cache_line());
        lines
    }

    /// Nothing to release: background jobs belong to the job table, processes to the
    /// supervisor, and both are closed by the Toolkit.
    pub async fn close(&self) {}

    /// Runs one call. Never panics; every failure is an `isError` result.
    pub async fn call(&self, params: BashParams, ctx: &CallContext) -> ToolResult {
        self.call_with(params, BashExtras::default(), ctx).await
    }

    /// [`BashRunner::call`] with what library callers may add: stdin bytes and extra variables.
    pub async fn call_with(
        &self,
        params: BashParams,
        extras: BashExtras,
        ctx: &CallContext,
    ) -> ToolResult {
        self.call_confined(params, extras, ctx, Confinement::Policy).await
    }

    /// Runs one call outside the sandbox, its processes and jobs included. Only for a call a
    /// person has approved: the Toolkit asks before it calls this.
    pub async fn call_escalated(&self, params: BashParams, ctx: &CallContext) -> ToolResult {
        self.call_confined(params, BashExtras::default(), ctx, Confinement::Exempt).await
    }

    async fn call_confined(
        &self,
        params: BashParams,
        extras: BashExtras,
        ctx: &CallContext,
        confinement: Confinement,
    ) -> ToolResult {
        let inner = &self.inner;
        let prepared = Prepare {
            config: &inner.config,
            base_cwd: &inner.deps.cwd,
            store: inner.deps.artifacts.as_ref().ok(),
            max_timeout: inner.deps.limits.max_timeout_s,
            home: inner.derived.home.as_deref(),
        };
        let mut request = match prepared.run(params) {
            Ok(request) => request,
            Err(Rejection::Invalid(text)) | Err(Rejection::Failed(text)) => {
                return ToolResult::error(text);
            }
        };
        request.confinement = confinement;
        if let Err(text) = check_extras(&extras) {
            return ToolResult::error(text);
        }
        if let Some(rule) =
            inner.derived.rules.check(&request.normalized_command, &request.original)
        {
            return blocked_result(&rule.id, blocked_text(rule, &request.original));
        }
        let Some(bash) = inner.config.bash.clone() else {
            return ToolResult::error("bash not found on PATH; set EXECKIT_BASH to its path");
        };
        if request.run_async {
            return self.start_job(request, bash, extras).await;
        }
        // With a 1 s deadline there is no moment before it to move the call (J17).
        // Nor in a one-shot call, where the job would die with the process.
        let movable = request.timeout.secs.is_none_or(|secs| secs > 1) && !inner.config.one_shot;
        match inner.config.auto_background.filter(|_| movable) {
            Some(after) => self.foreground_or_background(request, bash, extras, ctx, after).await,
            None => self.foreground(request, bash, extras, ctx).await,
        }
    }

    async fn foreground(
        &self,
        request: Request,
        bash: PathBuf,
        extras: BashExtras,
        ctx: &CallContext,
    ) -> ToolResult {
        let launched = match self.launch(&request, bash, extras, false).await {
            Ok(launched) => launched,
            Err(result) => return result,
        };
        // A child of the caller's token, so input-wait detection can stop this run alone.
        let run_cancel = ctx.cancel.child_token();
        let (child, started, mut observer, info) = launched.into_run(
            ctx.progress.clone(),
            request.timeout.secs,
            self.inner.config.input_wait,
            &run_cancel,
        );
        let limits = self.run_limits(&request, started, run_cancel);
        let deadline = limits.deadline;
        let mut outcome = run_to_end(child, &mut observer, limits).await;
        mark_cancelled_kill(&mut outcome, &ctx.cancel);
        let lingering = self.handle_lingering(&mut outcome, deadline);
        self.explain(&request, info, outcome, observer, lingering).result
    }

    pub(crate) async fn wait_snapshot(&self) -> Snapshot {
        self.inner.snapshot.wait().await
    }

    pub(crate) fn kill_grace(&self) -> Duration {
        Duration::from_millis(self.inner.deps.limits.kill_grace_ms)
    }

    pub(crate) fn sink(&self, request: &Request, spill_from_start: bool) -> OutputSink {
        let mut config = SinkConfig::from_limits(&self.inner.deps.limits)
            .with_line_window(request.head, request.tail);
        config.spill_from_start = spill_from_start;
        let label: String = request.original.chars().take(120).collect();
        self.new_sink(config, label)
    }

    pub(crate) fn new_sink(&self, config: SinkConfig, label: String) -> OutputSink {
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

/// The most stdin bytes a library caller may pass (B42).
const MAX_STDIN_BYTES: usize = 1 << 20;

/// B42's limits: stdin size, and the same name and value rules as the `env` argument.
fn check_extras(extras: &BashExtras) -> Result<(), String> {
    if let Some(stdin) = extras.stdin.as_ref().filter(|s| s.len() > MAX_STDIN_BYTES) {
        return Err(format!(
            "Invalid argument \"stdin\": {} bytes exceeds the {MAX_STDIN_BYTES}-byte limit",
            stdin.len()
        ));
    }
    execkit_process::env::validate_caller_env(&extras.env).map_err(|e| e.to_string())
}
