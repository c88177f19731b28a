//! The eval tool: validate the whole call, hold the session, run cells in order on pooled
//! kernels, and turn what happened into one ToolResult. Nothing here is specific to one
//! language: each cell's kernel comes from its [`KernelBackend`].

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex as StdMutex};

use execkit_output::artifact::ArtifactStore;
use execkit_output::clamp::Limits;
use execkit_process::Supervisor;
use execkit_protocol::ToolResult;
use execkit_protocol::eval::{EvalParams, Language};
use execkit_tool::{CallContext, Lookup};
use tokio::sync::{Mutex, OnceCell};
use tokio::time::Instant;

use crate::ToolCallback;
use crate::backend::{BackendEnv, Interruption, KernelBackend, kernel_key};
use crate::cell::{CellEnd, CellOutcome, CellRun, Stop};
use crate::collect::{CallImages, Collector};
use crate::config::{EvalConfig, KernelMode};
use crate::ending::{self, Crash, EndFacts, Ending, NoKernel};
use crate::error::{PoolError, StartError};
use crate::kernel::Kernel;
use crate::park::Restored;
use crate::pool::{KernelKey, Lease, Pool};
use crate::report::{CellReport, KernelInfo, Status};
use crate::request::{self, Allowed, Call, Cell};
use crate::result;

/// What the Toolkit hands the eval runner.
pub struct EvalDeps {
    pub supervisor: Supervisor,
    pub artifacts: Result<ArtifactStore, String>,
    pub limits: Limits,
    /// The saved environment: interpreter discovery, probes and kernels read it, never the
    /// process environment.
    pub lookup: Lookup,
    /// The base working directory of kernels (canonicalised on first use).
    pub cwd: PathBuf,
    /// Names of the tools `tool.<name>` may call (eval itself is always excluded).
    pub tools: Vec<String>,
    /// How those calls reach the dispatcher.
    pub tool_callback: Option<ToolCallback>,
}

struct Inner {
    supervisor: Supervisor,
    artifacts: Result<ArtifactStore, String>,
    limits: Limits,
    config: EvalConfig,
    lookup: Lookup,
    cwd: PathBuf,
    tools: Vec<String>,
    callback: Option<ToolCallback>,
    backends: Vec<Arc<dyn KernelBackend>>,
    pool: Pool,
    sessions: StdMutex<HashMap<String, Arc<Mutex<()>>>>,
    prewarm_error: StdMutex<Option<String>>,
    /// The pre-warm of each backend's default-session kernel, run once. A default-session
    /// call awaits only the languages its cells use, so a Python cell never waits for the
    /// JavaScript kernel's start (spec E37).
    prewarmed: Vec<(Language, OnceCell<()>)>,
    canonical_cwd: StdMutex<Option<PathBuf>>,
}

/// The eval tool's runner. Cheap to clone.
#[derive(Clone)]
pub struct EvalRunner {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for EvalRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EvalRunner").finish_non_exhaustive()
    }
}

/// One cell of a call, with what its run needs from the call.
struct CellStep<'a> {
    /// The kernel session (a private one per call in per-call mode).
    session: &'a str,
    cell: &'a Cell,
    /// Cells in the call.
    n: usize,
    images: &'a mut CallImages,
    ctx: &'a CallContext,
}

/// A kernel leased for one cell.
struct Leased {
    key: KernelKey,
    lease: Lease,
    backend: Arc<dyn KernelBackend>,
}

impl EvalRunner {
    /// Builds the runner. With pre-warm on (spec E37) and a tokio runtime present, resolves
    /// the executables and starts the default session's kernels in the background.
    pub fn new(config: EvalConfig, deps: EvalDeps) -> EvalRunner {
        let EvalDeps { supervisor, artifacts, limits, lookup, cwd, tools, tool_callback } = deps;
        // One private directory per runner: runners in one process share the run dir.
        static RUNNERS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = RUNNERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let snap_dir =
            config.snapshot.then(|| supervisor.run_dir().join(format!("eval-snapshots-{n}")));
        let pool = Pool::new(supervisor.clone(), config.max_kernels, config.idle_timeout, snap_dir);
        let backends = crate::languages::backends();
        let runner = EvalRunner {
            inner: Arc::new(Inner {
                supervisor,
                artifacts,
                limits,
                config,
                lookup,
                cwd,
                tools,
                callback: tool_callback,
                prewarmed: backends.iter().map(|b| (b.language(), OnceCell::new())).collect(),
                backends,
                pool,
                sessions: StdMutex::default(),
                prewarm_error: StdMutex::default(),
                canonical_cwd: StdMutex::default(),
            }),
        };
        let wanted = runner.inner.config.prewarm && !runner.enabled_backends().is_empty();
        if let (true, Ok(handle)) = (wanted, tokio::runtime::Handle::try_current()) {
            let r = runner.clone();
            handle.spawn(async move { r.prewarmed().await });
        }
        runner
    }

    fn env(&self) -> BackendEnv<'_> {
        let inner = &self.inner;
        BackendEnv {
            supervisor: &inner.supervisor,
            config: &inner.config,
            lookup: &inner.lookup,
            cwd: &inner.cwd,
        }
    }

    fn backend(&self, language: Language) -> Option<Arc<dyn KernelBackend>> {
        self.inner.backends.iter().find(|b| b.language() == language).cloned()
    }

    fn enabled_backends(&self) -> Vec<Arc<dyn KernelBackend>> {
        let enabled =
            |b: &&Arc<dyn KernelBackend>| self.inner.config.backends.enabled(b.language());
        self.inner.backends.iter().filter(enabled).cloned().collect()
    }

    /// Returns once the default session's pre-warmed kernels are ready or failed to start;
    /// at once when pre-warm is off.
    pub async fn prewarmed(&self) {
        if self.inner.config.prewarm {
            for backend in self.enabled_backends() {
                self.prewarmed_language(backend.as_ref()).await;
            }
        }
    }

    /// Returns once the pre-warm of `backend`'s default-session kernel is done, running it
    /// here if nothing has started it yet.
    async fn prewarmed_language(&self, backend: &dyn KernelBackend) {
        let language = backend.language();
        let Some((_, once)) = self.inner.prewarmed.iter().find(|(l, _)| *l == language) else {
            return;
        };
        once.get_or_init(|| self.prewarm(backend)).await;
    }

    async fn prewarm(&self, backend: &dyn KernelBackend) {
        let outcome = match self.key("default", backend).await {
            Ok(key) => {
                let spawn = || backend.spawn(&key, self.env());
                self.inner.pool.prewarm(&key, spawn).await.map_err(|e| e.to_string())
            }
            Err(e) => Err(e),
        };
        if let (Err(e), Ok(mut slot)) = (outcome, self.inner.prewarm_error.lock()) {
            *slot = Some(e);
        }
    }

    /// The languages the schema should list (spec E26).
    pub fn languages(&self) -> Vec<Language> {
        self.inner.config.backends.languages()
    }

    /// The pool (tests inspect live kernels).
    pub fn pool(&self) -> &Pool {
        &self.inner.pool
    }

    /// The canonical session cwd; canonicalised once, then only checked to still exist
    /// (spec B26: a deleted working directory is reported, not silently replaced).
    fn cwd(&self) -> Result<PathBuf, String> {
        let cwd = &self.inner.cwd;
        let missing = || format!("working directory {} no longer exists", cwd.display());
        let mut cached = self.inner.canonical_cwd.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(known) = cached.as_ref() {
            return if known.is_dir() { Ok(known.clone()) } else { Err(missing()) };
        }
        let canonical = std::fs::canonicalize(cwd).map_err(|_| missing())?;
        *cached = Some(canonical.clone());
        Ok(canonical)
    }

    /// The pool key of `session`'s kernel for `backend`, resolving its executable.
    async fn key(&self, session: &str, backend: &dyn KernelBackend) -> Result<KernelKey, String> {
        let cwd = self.cwd()?;
        let executable = backend.executable(self.env()).await?;
        Ok(kernel_key(session, backend, cwd, executable))
    }

    /// Runs one eval call. Never panics; invalid calls come back as `isError` results.
    pub async fn call(&self, params: EvalParams, ctx: &CallContext) -> ToolResult {
        let started = Instant::now();
        let call = match self.admit(params).await {
            Ok(call) => call,
            Err(refusal) => return refusal,
        };
        let lock = self.session_lock(&call.session);
        let Ok(_held) = tokio::time::timeout(self.inner.config.session_wait, lock.lock()).await
        else {
            return ToolResult::error(format!(
                "session \"{}\" is busy with another eval call; retry, or use another session",
                call.session
            ));
        };
        if self.inner.config.prewarm && call.session == "default" {
            for backend in self.enabled_backends() {
                if call.cells.iter().any(|c| c.language == backend.language()) {
                    self.prewarmed_language(backend.as_ref()).await;
                }
            }
        }
        let per_call = self.inner.config.mode == KernelMode::PerCall;
        let kernel_session =
            if per_call { private_session(&call.session) } else { call.session.clone() };
        let reports = self.run_cells(&kernel_session, &call, ctx).await;
        if per_call {
            // Per-call mode (spec E38): this call's kernels stop at its end.
            for backend in self.inner.backends.clone() {
                if let Ok(key) = self.key(&kernel_session, backend.as_ref()).await {
                    self.inner.pool.reset(&key).await;
                }
            }
        }
        let wall = started.elapsed().as_millis() as u64;
        result::build(&call.session, reports, wall, Vec::new(), self.inner.artifacts.as_ref().ok())
    }

    /// The checked call, or the error result that refuses it before anything runs.
    async fn admit(&self, params: EvalParams) -> Result<Call, ToolResult> {
        let cfg = &self.inner.config;
        let allowed = Allowed {
            backends: &cfg.backends,
            backends_value: cfg.backends_value.as_deref(),
            max_timeout: self.inner.limits.max_timeout_s,
        };
        let call = request::resolve(params, allowed).map_err(ToolResult::error)?;
        if let Err(msg) = self.cwd() {
            let known = self.inner.canonical_cwd.lock().ok().and_then(|c| c.clone());
            self.inner.pool.drop_cwd(known.as_ref().unwrap_or(&self.inner.cwd)).await;
            return Err(ToolResult::error(msg));
        }
        for backend in &self.inner.backends {
            if call.cells.iter().any(|c| c.language == backend.language()) {
                backend.executable(self.env()).await.map_err(ToolResult::error)?;
            }
        }
        Ok(call)
    }

    fn session_lock(&self, session: &str) -> Arc<Mutex<()>> {
        let mut sessions = self.inner.sessions.lock().unwrap_or_else(|p| p.into_inner());
        sessions.entry(session.to_string()).or_default().clone()
    }

    /// Runs the cells in order; after the first that does not end ok the rest are skipped.
    async fn run_cells(&self, session: &str, call: &Call, ctx: &CallContext) -> Vec<CellReport> {
        let n = call.cells.len();
        let mut reports = Vec::with_capacity(n);
        let mut images = CallImages::default();
        let mut stop = false;
        for cell in &call.cells {
            if stop {
                reports.push(CellReport::skipped(cell.index, cell.title.clone(), cell.language));
                continue;
            }
            let step = CellStep { session, cell, n, images: &mut images, ctx };
            let report = self.run_one(step).await;
            stop = report.status != Status::Ok;
            reports.push(report);
        }
        reports
    }

    async fn run_one(&self, step: CellStep<'_>) -> CellReport {
        let cell = step.cell;
        let lang = cell.language.display_name();
        let mut report = opening_report(cell);
        let leased = match self.lease(step.session, cell).await {
            Ok(leased) => leased,
            Err(why) => return ending::no_kernel(report, why, lang),
        };
        let kernel = leased.lease.kernel.clone();
        record_lease(&mut report, &leased.lease, lang);
        let label = cell_label(cell, step.n);
        let mut collector = Collector::new(
            &self.inner.limits,
            &self.inner.artifacts,
            step.images,
            step.ctx.progress.clone(),
            label,
            cell.timeout.as_millis() as f64,
        );
        let run = self.cell_run(cell, step.ctx, leased.backend.as_ref());
        let outcome = kernel.run_cell(run, &mut collector).await;
        record_outcome(&mut report, &outcome);
        let crash = self.settle(&outcome.end, &leased, &kernel).await;
        let restart = self.restart_if_killed(&outcome.end, &leased, &kernel).await;
        if let Some(Ok(restored)) = &restart {
            report.restored = restored.clone();
        }
        let facts = EndFacts {
            lang,
            timeout_s: cell.timeout.as_secs(),
            cpu_ms: outcome.cpu_ms,
            grace_s: self.inner.config.interrupt_grace.as_secs(),
            interrupt_name: leased.backend.interrupt_name(),
            error: collector.error.as_ref(),
            crash,
            interruption: leased.backend.interruption(),
            restart: restart.map(|r| restart_clause(&r)),
        };
        let ending = ending::describe(&outcome.end, &facts);
        finish_report(&mut report, ending, collector);
        if outcome.end == CellEnd::Ok
            && leased.backend.interruption() != Interruption::Signal
            && let Some(path) = self.inner.pool.cell_snapshot_path(&leased.key)
        {
            kernel.request_cell_snapshot(path);
        }
        if matches!(outcome.end, CellEnd::Ok | CellEnd::Error | CellEnd::Interrupted(_)) {
            self.inner.pool.release(leased.lease).await;
        }
        report
    }

    /// The cell's kernel: its backend, key and a lease from the pool (after a reset when the
    /// cell asks for one).
    async fn lease(&self, session: &str, cell: &Cell) -> Result<Leased, NoKernel> {
        let Some(backend) = self.backend(cell.language) else {
            return Err(NoKernel::Unavailable(self.no_backend_message(cell.language)));
        };
        let key = self.key(session, backend.as_ref()).await.map_err(NoKernel::Unavailable)?;
        if cell.reset {
            self.inner.pool.reset(&key).await;
        }
        let spawn = || backend.spawn(&key, self.env());
        match self.inner.pool.acquire(&key, spawn).await {
            Ok(lease) => Ok(Leased { key, lease, backend }),
            Err(PoolError::Start(StartError::Broke { reason, .. })) => {
                Err(NoKernel::BrokeBeforeReady(reason))
            }
            Err(PoolError::Start(e)) => Err(NoKernel::StartFailed(e)),
            Err(e) => Err(NoKernel::Unavailable(e.to_string())),
        }
    }

    /// `the JavaScript backend is not available in this build; use "py"`.
    fn no_backend_message(&self, language: Language) -> String {
        let others: Vec<String> =
            self.inner.backends.iter().map(|b| format!("\"{}\"", b.language().as_str())).collect();
        format!(
            "the {} backend is not available in this build; use {}",
            language.display_name(),
            others.join(" or ")
        )
    }

    fn cell_run<'a>(
        &self,
        cell: &'a Cell,
        ctx: &CallContext,
        backend: &dyn KernelBackend,
    ) -> CellRun<'a> {
        let tools = self.inner.tools.iter().filter(|t| t.as_str() != "eval").cloned().collect();
        CellRun {
            code: &cell.code,
            timeout: cell.timeout,
            index: cell.index,
            title: cell.title.clone(),
            tools,
            callback: self.inner.callback.clone(),
            cancel: ctx.cancel.clone(),
            interruption: backend.interruption(),
            interrupt_grace: self.inner.config.interrupt_grace,
        }
    }

    /// Tells the pool what the cell's end means for its kernel; for a crash, returns what
    /// the words about it need.
    async fn settle(&self, end: &CellEnd, leased: &Leased, kernel: &Kernel) -> Option<Crash> {
        let (pool, key) = (&self.inner.pool, &leased.key);
        match end {
            // A kernel killed while busy is replaced by `restart_if_killed`.
            CellEnd::Killed(_) if leased.backend.interruption() != Interruption::Signal => {}
            CellEnd::Killed(stop) => pool.record_timeout_kill(key, *stop == Stop::Cancel).await,
            CellEnd::Crashed(exit) => {
                // Children the dead kernel left in its group go with it.
                kernel.kill().await;
                let first_death = pool.deaths(key).await == 0;
                let diag = kernel.diag_tail();
                let cause = leased.backend.crash_cause(&diag, self.env());
                pool.record_death(key, ending::death_description(*exit), false).await;
                return Some(Crash { first_death, diag, cause });
            }
            CellEnd::ProtocolError(why) => {
                pool.record_death(key, format!("broke the protocol: {why}"), true).await;
            }
            CellEnd::Ok | CellEnd::Error | CellEnd::Interrupted(_) => {}
        }
        None
    }

    /// A kernel that can only be stopped by a kill (spec JS16) and was killed: its
    /// replacement starts now, with the snapshot of its last `ok` cell restored (JS17).
    async fn restart_if_killed(
        &self,
        end: &CellEnd,
        leased: &Leased,
        kernel: &Kernel,
    ) -> Option<Result<Option<Restored>, String>> {
        let CellEnd::Killed(stop) = end else { return None };
        if leased.backend.interruption() == Interruption::Signal {
            return None;
        }
        let (key, backend) = (&leased.key, &leased.backend);
        let snapshot = kernel.last_cell_snapshot();
        let spawn = || backend.spawn(key, self.env());
        let replaced = self.inner.pool.replace_killed(key, *stop == Stop::Cancel, snapshot, spawn);
        Some(replaced.await.map_err(|e| e.to_string()))
    }

    /// Shuts every kernel down.
    pub async fn close(&self) {
        self.inner.pool.close().await;
    }

    /// Doctor lines (spec E39): the backends setting, each backend's executable, a failed
    /// pre-warm, the languages this build has no backend for.
    pub fn doctor(&self) -> Vec<String> {
        let cfg = &self.inner.config;
        let mut lines = vec![format!(
            "backends: {} (EXECKIT_EVAL_BACKENDS={})",
            cfg.backends.languages().iter().map(|l| l.as_str()).collect::<Vec<_>>().join(", "),
            cfg.backends_value.as_deref().unwrap_or("unset")
        )];
        for backend in &self.inner.backends {
            lines.extend(backend.doctor_in(self.env()));
        }
        if let Some(e) = self.inner.prewarm_error.lock().ok().and_then(|s| s.clone()) {
            lines.push(format!("pre-warm failed: {e}"));
        }
        for language in [Language::Py, Language::Js] {
            if self.backend(language).is_none() {
                let name = language.display_name().to_lowercase();
                lines.push(format!("{name}: not available in this build"));
            }
        }
        lines
    }
}

/// The restore clause of a killed cell's note: what the replacement kernel got back.
fn restart_clause(restart: &Result<Option<Restored>, String>) -> String {
    match restart {
        Ok(Some(restored)) => restored.clause(),
        Ok(None) => "variables from earlier cells are lost".to_string(),
        Err(e) => format!("its replacement did not start ({e}); the next cell tries again"),
    }
}

/// A private kernel session for one call in per-call mode.
fn private_session(session: &str) -> String {
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{session}~call{n}")
}

fn opening_report(cell: &Cell) -> CellReport {
    let mut report = CellReport::skipped(cell.index, cell.title.clone(), cell.language);
    report.timeout_s = cell.timeout.as_secs();
    report.notes.extend(cell.notice.clone());
    report
}

/// `Cell 2/3 (load) [py]`: the progress label.
fn cell_label(cell: &Cell, n: usize) -> String {
    match &cell.title {
        Some(t) => format!("Cell {}/{n} ({t}) [{}]", cell.index, cell.language.as_str()),
        None => format!("Cell {}/{n} [{}]", cell.index, cell.language.as_str()),
    }
}

/// The kernel facts of the lease, and the announcement of a restart since the last cell.
fn record_lease(report: &mut CellReport, lease: &Lease, lang: &str) {
    let kernel = &lease.kernel;
    report.kernel = KernelInfo {
        pid: Some(kernel.pid),
        started: lease.started,
        start_ms: lease.started.then_some(kernel.start_ms),
        ..KernelInfo::default()
    };
    if let Some(loss) = &lease.loss {
        report.kernel.state_lost = Some(loss.reason.as_str());
        let clause = match &lease.restored {
            Some(r) => r.clause(),
            None => "variables from earlier cells are lost".to_string(),
        };
        report.announcements.push(format!("[{lang} kernel restarted: {}; {clause}]", loss.text));
    }
    report.restored = lease.restored.clone();
}

fn record_outcome(report: &mut CellReport, outcome: &CellOutcome) {
    report.duration_ms = outcome.duration.as_millis() as u64;
    report.execution_count = outcome.execution_count;
    report.cpu_ms = outcome.cpu_ms;
    report.tool_calls = outcome.tool_calls.clone();
    report.kernel.bad_frames = outcome.bad_frames;
}

/// Added when a cell's text was cut and a value in it had already been cut by the kernel.
const VALUE_CUT_NOTE: &str = "[the artifact holds this cell's whole text as the kernel sent it; \
     the value cut above is cut there too, and the rest of it is not kept anywhere]";

/// The ending's words and the collector's output into the report.
fn finish_report(report: &mut CellReport, ending: Ending, mut collector: Collector<'_>) {
    report.status = ending.status;
    report.summary = ending.summary;
    if ending.killed {
        report.kernel.killed = true;
    }
    if let Some(reason) = ending.state_lost {
        report.kernel.state_lost = Some(reason.as_str());
    }
    report.displays = std::mem::take(&mut collector.displays);
    report.images = std::mem::take(&mut collector.images);
    report.image_count = collector.image_count;
    report.error = collector.error.take();
    let finished = collector.sink.finish();
    report.body = finished.body;
    report.footer = finished.footer;
    report.footer_parts = Some(finished.footer_parts);
    report.truncation = finished.truncation.and_then(|t| serde_json::to_value(t).ok());
    report.spill = finished.artifact;
    report.notes.extend(ending.note);
    if collector.value_cut && report.footer.is_some() {
        // The artifact keeps the cell's text as the kernel sent it: a value the kernel cut
        // is cut there too, so "full output" must not be read as "the whole value".
        report.notes.push(VALUE_CUT_NOTE.to_string());
    }
}
