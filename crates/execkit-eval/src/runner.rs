//! The eval tool: validate the whole call, hold the session, run cells in order on pooled
//! kernels, and turn what happened into one ToolResult.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex as StdMutex};

use execkit_output::artifact::ArtifactStore;
use execkit_output::clamp::Limits;
use execkit_process::{CancellationToken, Supervisor};
use execkit_protocol::ToolResult;
use execkit_protocol::eval::{EvalParams, Language};
use execkit_tool::{CallContext, Lookup};
use tokio::sync::{Mutex, OnceCell};
use tokio::time::Instant;

use crate::ToolCallback;
use crate::cell::{CellEnd, CellRun, Stop};
use crate::collect::{CallImages, Collector};
use crate::config::{EvalConfig, KernelMode};
use crate::error::{PoolError, StartError};
use crate::kernel::{KernelSpawn, describe_exit};
use crate::pool::{KernelKey, LossReason, Pool};
use crate::python::{self, Interpreter, Resolution};
use crate::request::{self, Allowed, Cell};
use crate::result::{self, CellReport, KernelInfo, Status};

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
    pool: Pool,
    python: OnceCell<Resolution>,
    sessions: StdMutex<HashMap<String, Arc<Mutex<()>>>>,
    prewarm_error: StdMutex<Option<String>>,
    /// Runs the pre-warm once; the first default-session call awaits it (E37).
    prewarmed: OnceCell<()>,
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

impl EvalRunner {
    /// Builds the runner. With pre-warm on (E37) and a tokio runtime present, resolves the
    /// interpreter and starts the default-session Python kernel in the background.
    pub fn new(config: EvalConfig, deps: EvalDeps) -> EvalRunner {
        let EvalDeps { supervisor, artifacts, limits, lookup, cwd, tools, tool_callback } = deps;
        // One private directory per runner: runners in one process share the run dir.
        static RUNNERS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = RUNNERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let snap_dir =
            config.snapshot.then(|| supervisor.run_dir().join(format!("eval-snapshots-{n}")));
        let pool = Pool::new(supervisor.clone(), config.max_kernels, config.idle_timeout, snap_dir);
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
                pool,
                python: OnceCell::new(),
                sessions: StdMutex::default(),
                prewarm_error: StdMutex::default(),
                prewarmed: OnceCell::new(),
                canonical_cwd: StdMutex::default(),
            }),
        };
        let wanted =
            runner.inner.config.prewarm && runner.inner.config.backends.enabled(Language::Py);
        if let (true, Ok(handle)) = (wanted, tokio::runtime::Handle::try_current()) {
            let r = runner.clone();
            handle.spawn(async move {
                r.inner.prewarmed.get_or_init(|| r.prewarm()).await;
            });
        }
        runner
    }

    async fn prewarm(&self) {
        let outcome = match self.python_key("default").await {
            Ok((key, interp)) => self
                .inner
                .pool
                .prewarm(&key, || self.python_spawn(&key, interp))
                .await
                .map_err(|e| e.to_string()),
            Err(e) => Err(e),
        };
        if let (Err(e), Ok(mut slot)) = (outcome, self.inner.prewarm_error.lock()) {
            *slot = Some(e);
        }
    }

    /// The languages the schema should list (E26).
    pub fn languages(&self) -> Vec<Language> {
        self.inner.config.backends.languages()
    }

    /// The pool (tests inspect live kernels).
    pub fn pool(&self) -> &Pool {
        &self.inner.pool
    }

    async fn resolution(&self) -> &Resolution {
        let cfg = &self.inner.config;
        self.inner
            .python
            .get_or_init(|| async {
                let lookup = &self.inner.lookup;
                let cwd = &self.inner.cwd;
                let found = python::candidates(cwd, cfg.python.as_deref(), &lookup.as_fn());
                python::resolve(&self.inner.supervisor, cwd, found, &cfg.cache_dir, lookup).await
            })
            .await
    }

    /// The canonical session cwd; canonicalised once, then only checked to still exist (B26).
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

    async fn python_key(&self, session: &str) -> Result<(KernelKey, Interpreter), String> {
        let cwd = self.cwd()?;
        let res = self.resolution().await;
        let Some(interp) = res.chosen.clone() else { return Err(res.missing_message()) };
        let key = KernelKey {
            session: session.to_string(),
            language: Language::Py,
            cwd,
            executable: interp.executable.clone(),
        };
        Ok((key, interp))
    }

    /// What to spawn for `key`; only built when a kernel has to start.
    fn python_spawn(
        &self,
        key: &KernelKey,
        interp: Interpreter,
    ) -> Result<KernelSpawn, StartError> {
        let cfg = &self.inner.config;
        let runner = match &cfg.kernel_script {
            Some(script) => script.clone(),
            None => python::kernel_files(&cfg.cache_dir)?,
        };
        let base = self.inner.lookup.vars().map(|(k, v)| (k.clone(), v.clone()));
        let env = python::kernel_env(base, &cfg.env_allow, &interp, &key.session);
        Ok(KernelSpawn {
            language: Language::Py,
            program: interp.executable,
            args: vec![
                "-I".into(),
                "-B".into(),
                "-X".into(),
                "utf8".into(),
                runner.into_os_string(),
            ],
            cwd: key.cwd.clone(),
            env,
            ready_timeout: cfg.ready_timeout,
            trace: cfg.trace,
        })
    }

    /// Runs one eval call. Never panics; invalid calls come back as `isError` results.
    pub async fn call(&self, params: EvalParams, ctx: &CallContext) -> ToolResult {
        let progress = ctx.progress.clone();
        let cancel = ctx.cancel.clone();
        let started = Instant::now();
        let cfg = &self.inner.config;
        let allowed = Allowed {
            backends: &cfg.backends,
            backends_value: cfg.backends_value.as_deref(),
            max_timeout: self.inner.limits.max_timeout_s,
        };
        let call = match request::resolve(params, allowed) {
            Ok(call) => call,
            Err(msg) => return ToolResult::error(msg),
        };
        if let Err(msg) = self.cwd() {
            let known = self.inner.canonical_cwd.lock().ok().and_then(|c| c.clone());
            self.inner.pool.drop_cwd(known.as_ref().unwrap_or(&self.inner.cwd)).await;
            return ToolResult::error(msg);
        }
        if call.cells.iter().any(|c| c.language == Language::Py) {
            let res = self.resolution().await;
            if res.chosen.is_none() {
                return ToolResult::error(res.missing_message());
            }
        }
        let lock = {
            let mut sessions = match self.inner.sessions.lock() {
                Ok(s) => s,
                Err(poisoned) => poisoned.into_inner(),
            };
            sessions.entry(call.session.clone()).or_default().clone()
        };
        let Ok(_held) = tokio::time::timeout(cfg.session_wait, lock.lock()).await else {
            return ToolResult::error(format!(
                "session \"{}\" is busy with another eval call; retry, or use another session",
                call.session
            ));
        };
        if cfg.prewarm && call.session == "default" {
            self.inner.prewarmed.get_or_init(|| self.prewarm()).await;
        }
        // Per-call mode (E38): this call's kernels live under a private key and stop at its end.
        static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let per_call = cfg.mode == KernelMode::PerCall;
        let kernel_session = if per_call {
            let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            format!("{}~call{n}", call.session)
        } else {
            call.session.clone()
        };
        let n = call.cells.len();
        let mut reports = Vec::with_capacity(n);
        let mut images = CallImages::default();
        let mut stop = false;
        for cell in &call.cells {
            if stop {
                reports.push(CellReport::skipped(cell.index, cell.title.clone(), cell.language));
                continue;
            }
            let report =
                self.run_one(&kernel_session, cell, n, &mut images, &progress, &cancel).await;
            stop = report.status != Status::Ok;
            reports.push(report);
        }
        if let (true, Ok((key, _))) = (per_call, self.python_key(&kernel_session).await) {
            self.inner.pool.reset(&key).await;
        }
        let wall = started.elapsed().as_millis() as u64;
        result::build(&call.session, reports, wall, Vec::new(), self.inner.artifacts.as_ref().ok())
    }

    async fn run_one(
        &self,
        session: &str,
        cell: &Cell,
        n: usize,
        images: &mut CallImages,
        progress: &Option<execkit_protocol::ProgressFn>,
        cancel: &CancellationToken,
    ) -> CellReport {
        let mut report = CellReport::skipped(cell.index, cell.title.clone(), cell.language);
        report.timeout_s = cell.timeout.as_secs();
        if let Some(notice) = &cell.notice {
            report.notes.push(notice.clone());
        }
        let lang = cell.language.display_name();
        if cell.language == Language::Js {
            return fail(
                report,
                "KernelUnavailable",
                "the JavaScript backend is not available in this build; use \"py\"",
            );
        }
        let (key, interp) = match self.python_key(session).await {
            Ok(pair) => pair,
            Err(msg) => return fail(report, "KernelUnavailable", &msg),
        };
        if cell.reset {
            self.inner.pool.reset(&key).await;
        }
        let lease = match self.inner.pool.acquire(&key, || self.python_spawn(&key, interp)).await {
            Ok(lease) => lease,
            Err(PoolError::Start(StartError::Broke { reason, .. })) => {
                return broke_before_ready(report, lang, &reason);
            }
            Err(PoolError::Start(e)) => {
                let mut r = fail(report, "KernelStartError", &e.to_string());
                if let Some(diag) = e.diag() {
                    r.body.push_str(&format!("\n{diag}"));
                }
                return r;
            }
            Err(e) => return fail(report, "KernelUnavailable", &e.to_string()),
        };
        let kernel = lease.kernel.clone();
        report.kernel = KernelInfo {
            pid: Some(kernel.pid),
            started: lease.started,
            start_ms: lease.started.then_some(kernel.start_ms),
            ..KernelInfo::default()
        };
        let label = match &cell.title {
            Some(t) => format!("Cell {}/{n} ({t}) [{}]", cell.index, cell.language.as_str()),
            None => format!("Cell {}/{n} [{}]", cell.index, cell.language.as_str()),
        };
        let mut collector = Collector::new(
            &self.inner.limits,
            &self.inner.artifacts,
            images,
            progress.clone(),
            label,
            cell.timeout.as_millis() as f64,
        );
        if let Some(loss) = &lease.loss {
            report.kernel.state_lost = Some(loss.reason.as_str());
            let clause = match &lease.restored {
                Some(r) => r.clause(),
                None => "variables from earlier cells are lost".to_string(),
            };
            report
                .announcements
                .push(format!("[{lang} kernel restarted: {}; {clause}]", loss.text));
        }
        report.restored = lease.restored.clone();
        let tools: Vec<String> =
            self.inner.tools.iter().filter(|t| t.as_str() != "eval").cloned().collect();
        let outcome = kernel
            .run_cell(
                CellRun {
                    code: &cell.code,
                    timeout: cell.timeout,
                    index: cell.index,
                    title: cell.title.clone(),
                    tools,
                    callback: self.inner.callback.clone(),
                    cancel: cancel.clone(),
                    interrupt_grace: self.inner.config.interrupt_grace,
                },
                &mut collector,
            )
            .await;
        report.duration_ms = outcome.duration.as_millis() as u64;
        report.execution_count = outcome.execution_count;
        report.cpu_ms = outcome.cpu_ms;
        let cpu = outcome
            .cpu_ms
            .map_or(String::new(), |ms| format!(" (CPU {:.1} s)", ms as f64 / 1000.0));
        report.tool_calls = outcome.tool_calls.clone();
        report.kernel.bad_frames = outcome.bad_frames;
        let t = cell.timeout.as_secs();
        let (status, summary, note) = match &outcome.end {
            CellEnd::Ok => (Status::Ok, None, None),
            CellEnd::Error => {
                let e = collector.error.clone();
                let what = e.map_or("error".to_string(), |e| error_summary(&e.ename, &e.evalue));
                (Status::Error, Some(format!("failed: {what}.")), None)
            }
            CellEnd::Interrupted(Stop::Timeout) => (
                Status::Timeout,
                Some(format!("timed out after {t} s and was interrupted; variables are kept.")),
                Some(format!(
                    "[cell timed out after {t} s{cpu}; interrupted with KeyboardInterrupt; variables are kept]"
                )),
            ),
            CellEnd::Interrupted(Stop::Cancel) => {
                (Status::Cancelled, Some("was cancelled.".into()), None)
            }
            CellEnd::Killed(stop) => {
                report.kernel.killed = true;
                report.kernel.state_lost = Some(LossReason::TimeoutKill.as_str());
                self.inner.pool.record_timeout_kill(&key, *stop == Stop::Cancel).await;
                let grace = self.inner.config.interrupt_grace.as_secs();
                match stop {
                    Stop::Timeout => (
                        Status::Timeout,
                        Some(format!("timed out after {t} s; the {lang} kernel was restarted.")),
                        Some(format!(
                            "[cell timed out after {t} s{cpu} and ignored the interrupt for {grace} s; \
                             the {lang} kernel was killed and its variables are lost]"
                        )),
                    ),
                    Stop::Cancel => (
                        Status::Cancelled,
                        Some("was cancelled.".into()),
                        Some(format!(
                            "[the cell ignored the interrupt for {grace} s; the {lang} kernel was \
                             killed and its variables are lost]"
                        )),
                    ),
                }
            }
            CellEnd::Crashed(exit) => {
                let desc = exit.map_or("ended unexpectedly".to_string(), describe_exit);
                // Children the dead kernel left in its group go with it.
                kernel.kill().await;
                let deaths_before = self.inner.pool.deaths(&key).await;
                self.inner.pool.record_death(&key, desc.clone(), false).await;
                report.kernel.state_lost = Some(LossReason::Crashed.as_str());
                let next = if deaths_before == 0 {
                    "The next cell starts a fresh kernel (automatic restart 1 of 1)."
                } else {
                    "It will not be restarted automatically; run a cell with \"reset\": true."
                };
                let ended = exit.map_or("ended unexpectedly".to_string(), exit_phrase);
                let mut note = format!(
                    "[the {lang} kernel {ended} during this cell; its variables are lost. {next}]"
                );
                let diag = kernel.diag_tail();
                if !diag.trim().is_empty() {
                    note.push('\n');
                    note.push_str(&diag);
                }
                (Status::Crashed, Some(format!("crashed: the {lang} kernel {ended}.")), Some(note))
            }
            CellEnd::ProtocolError(why) => {
                self.inner
                    .pool
                    .record_death(&key, format!("broke the protocol: {why}"), true)
                    .await;
                report.kernel.state_lost = Some(LossReason::ProtocolError.as_str());
                (
                    Status::Crashed,
                    Some(format!("crashed: the {lang} kernel broke the protocol ({why}).")),
                    Some(format!(
                        "[the {lang} kernel broke the protocol ({why}) and was killed; its variables are lost]"
                    )),
                )
            }
        };
        report.status = status;
        report.summary = summary;
        report.displays = std::mem::take(&mut collector.displays);
        report.images = std::mem::take(&mut collector.images);
        report.image_count = collector.image_count;
        report.error = collector.error.take();
        let finished = collector.sink.finish();
        report.body = finished.body;
        report.footer = finished.footer;
        report.truncation = finished.truncation.and_then(|t| serde_json::to_value(t).ok());
        report.spill = finished.artifact;
        if let Some(note) = note {
            report.notes.push(note);
        }
        if collector.value_cut && report.footer.is_some() {
            // The artifact keeps the cell's text as the kernel sent it: a value the kernel cut
            // is cut there too, so "full output" must not be read as "the whole value".
            report.notes.push(VALUE_CUT_NOTE.to_string());
        }
        if matches!(outcome.end, CellEnd::Ok | CellEnd::Error | CellEnd::Interrupted(_)) {
            self.inner.pool.release(lease).await;
        }
        report
    }

    /// Shuts every kernel down.
    pub async fn close(&self) {
        self.inner.pool.close().await;
    }

    /// Doctor lines (E39).
    pub fn doctor(&self) -> Vec<String> {
        let cfg = &self.inner.config;
        let mut lines = Vec::new();
        lines.push(format!(
            "backends: {} (EXECKIT_EVAL_BACKENDS={})",
            cfg.backends.languages().iter().map(|l| l.as_str()).collect::<Vec<_>>().join(", "),
            cfg.backends_value.as_deref().unwrap_or("unset")
        ));
        match self.inner.python.get() {
            None => {
                lines.push("python: not resolved yet (resolved on first use or pre-warm)".into())
            }
            Some(res) => {
                match &res.chosen {
                    Some(i) => {
                        let (a, b, c) = i.version;
                        lines.push(format!(
                            "python: {} (Python {a}.{b}.{c}, from {}; found as {})",
                            i.executable.display(),
                            i.source,
                            i.candidate.display()
                        ));
                        if i.candidate != i.executable
                            && std::fs::canonicalize(&i.candidate).ok().as_ref()
                                != Some(&i.executable)
                        {
                            lines.push(format!(
                                "python: {} is a shim; kernels start {} directly",
                                i.candidate.display(),
                                i.executable.display()
                            ));
                        }
                    }
                    None => lines.push(res.missing_message()),
                }
                for (path, why) in &res.rejected {
                    lines.push(format!("python: rejected {} ({why})", path.display()));
                }
            }
        }
        if let Some(e) = self.inner.prewarm_error.lock().ok().and_then(|s| s.clone()) {
            lines.push(format!("pre-warm failed: {e}"));
        }
        lines.push("javascript: not available in this build".into());
        lines
    }
}

/// Added when a cell's text was cut and a value in it had already been cut by the kernel.
const VALUE_CUT_NOTE: &str = "[the artifact holds this cell's whole text as the kernel sent it; \
     the value cut above is cut there too, and the rest of it is not kept anywhere]";

/// E31: a frame before `ready` is a protocol violation; the kernel is already killed.
fn broke_before_ready(mut report: CellReport, lang: &str, reason: &str) -> CellReport {
    report.status = Status::Crashed;
    report.kernel.state_lost = Some(LossReason::ProtocolError.as_str());
    report.summary = Some(format!("crashed: the {lang} kernel broke the protocol ({reason})."));
    report.notes.push(format!(
        "[the {lang} kernel broke the protocol ({reason}) and was killed; its variables are lost]"
    ));
    report
}

/// `KeyError: 'name'`, or the bare name when the exception carries no message.
fn error_summary(ename: &str, evalue: &str) -> String {
    let short = result::short_evalue(evalue);
    let short = short.trim_end_matches('.');
    if short.trim().is_empty() { ename.to_string() } else { format!("{ename}: {short}") }
}

/// `exited with code 3` / `was killed by SIGKILL`: the verb phrase after "the kernel".
fn exit_phrase(status: execkit_process::ExitStatus) -> String {
    match (status.code, status.signal) {
        (_, Some(_)) => format!("was {}", describe_exit(status)),
        (Some(_), None) => describe_exit(status),
        (None, None) => "ended unexpectedly".to_string(),
    }
}

fn fail(mut report: CellReport, ename: &str, msg: &str) -> CellReport {
    report.status = Status::Error;
    report.summary = Some(format!("failed: {}.", error_summary(ename, msg)));
    report.body = format!("{ename}: {msg}");
    report.error = Some(crate::collect::CellError {
        ename: ename.to_string(),
        evalue: msg.to_string(),
        traceback: Vec::new(),
    });
    report.duration_ms = 0;
    report
}
