//! The Toolkit: configuration, runners and their long-lived state, and the dispatcher.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use execkit_bash::{BashConfig, BashDeps, BashExtras, BashRunner};
use execkit_debug::{DebugConfig, DebugDeps, DebugRunner};
use execkit_eval::{EvalConfig, EvalDeps, EvalRunner, ToolCallback};
use execkit_jobs::{JobConfig, JobTable};
use execkit_output::artifact::ArtifactStore;
use execkit_output::clamp::Limits;
use execkit_process::Supervisor;
use execkit_protocol::args::FieldHints;
use execkit_protocol::bash::BashParams;
use execkit_protocol::{Content, ToolResult, parse_params};
use execkit_sandbox::SandboxOptions;
use execkit_ssh::tool::{SshDeps, SshRunner, SshToolConfig};
use execkit_tool::{CallContext, Lookup, Notes};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::audit::{AuditLog, CallRecord};
use crate::doctor::{self, Doctor, DoctorSection};
#[cfg(test)]
use crate::echo;
use crate::escalation::{Approver, ApproverSlot, Escalations};
use crate::sandbox;
use crate::settings::{artifact_store, supervisor_config, toolkit_lookup};
use crate::tools::{Tool, ToolSpec};

/// How often artifact retention runs while the Toolkit lives (O28).
const GC_INTERVAL: Duration = Duration::from_secs(3600);

/// Builds a [`Toolkit`].
#[derive(Debug, Default)]
pub struct ToolkitBuilder {
    cwd: Option<PathBuf>,
    subreaper: bool,
    one_shot: bool,
    /// Set by `prewarm(false)`: nothing starts before a call needs it.
    lazy: bool,
    vars: HashMap<String, String>,
    sandbox: SandboxOptions,
    approver: ApproverSlot,
}

impl ToolkitBuilder {
    /// The base working directory (default: the process cwd).
    pub fn cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }

    /// Make this process a child subreaper (the `execkit` binary does).
    pub fn subreaper(mut self, on: bool) -> Self {
        self.subreaper = on;
        self
    }

    /// The process ends with its one call (`execkit call`, `execkit bash`): bash refuses
    /// `async` and stops what a command leaves running, saying so, since no job could
    /// outlive the call.
    pub fn one_shot(mut self, on: bool) -> Self {
        self.one_shot = on;
        self
    }

    /// Start what calls will need when the Toolkit starts (default on): the bash snapshot's
    /// login shell and the default session's kernels (`EXECKIT_EVAL_PREWARM`), so a server's
    /// first call finds them ready. A one-shot front end turns it off, so a call starts only
    /// what it uses: no login shell for a call that runs no bash, no kernel for one that runs
    /// no code.
    pub fn prewarm(mut self, on: bool) -> Self {
        self.lazy = !on;
        self
    }

    /// Sets a variable as if it were in this process's environment, for this Toolkit only:
    /// `EXECKIT_*` knobs and what children inherit (embedders and tests use it instead of
    /// mutating the process environment).
    pub fn var(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.vars.insert(name.into(), value.into());
        self
    }

    /// The sandbox policy (modes, network, writable, protected and denied paths), above the
    /// environment and `sandbox.json` in precedence; fixed for the Toolkit's life.
    pub fn sandbox(mut self, options: SandboxOptions) -> Self {
        self.sandbox = options;
        self
    }

    /// Who approves a bash call that asks to run outside the sandbox (`sandbox_permissions:
    /// "require_escalated"`); without one such calls are refused. A front end may pass its own
    /// per call instead ([`Toolkit::call_with_approver`]).
    pub fn approver(mut self, approver: Approver) -> Self {
        self.approver = ApproverSlot(Some(approver));
        self
    }

    /// Reads every knob through one lookup and starts the supervisor. Must run inside a tokio
    /// runtime. A knob that does not parse fails here, naming the knob and what it accepts;
    /// one out of range is clamped and said in doctor and the first result.
    pub fn build(self) -> Result<Toolkit, String> {
        let lookup = toolkit_lookup(&self.vars);
        let cwd = base_cwd(self.cwd)?;
        // Every knob is read before anything starts, so a bad value leaves nothing behind.
        let mut notes = Notes::default();
        let limits = Limits::from_lookup(&lookup, &mut notes).map_err(|e| e.to_string())?;
        let mut job_config =
            JobConfig::from_lookup(&lookup, &mut notes).map_err(|e| e.to_string())?;
        job_config.kill_grace = Duration::from_millis(limits.kill_grace_ms);
        let jobs = JobTable::new(job_config);
        let mut bash_config =
            BashConfig::from_lookup(&lookup, &mut notes).map_err(|e| e.to_string())?;
        bash_config.one_shot = self.one_shot;
        // Pre-warmed by the Toolkit itself, after the eval kernels (`Parts::start`).
        bash_config.prewarm = false;
        let mut eval_config =
            EvalConfig::from_lookup(&lookup, &mut notes).map_err(|e| e.to_string())?;
        let ssh_config =
            SshToolConfig::from_lookup(&lookup, &mut notes).map_err(|e| e.to_string())?;
        eval_config.prewarm &= !self.lazy;
        let escalations =
            Escalations::from_lookup(&lookup, &mut notes).map_err(|e| e.to_string())?;
        let debug_config =
            DebugConfig::from_lookup(&lookup, &mut notes).map_err(|e| e.to_string())?;
        #[cfg(test)]
        let echo_config =
            echo::EchoConfig::from_lookup(&lookup, &mut notes).map_err(|e| e.to_string())?;
        let mut supervisor_config = supervisor_config(&limits, &lookup, self.subreaper, &mut notes)
            .map_err(|e| e.to_string())?;
        supervisor_config.sandbox = sandbox::resolve_policy(self.sandbox, &lookup, &cwd)?;
        let supervisor = Supervisor::start(supervisor_config)
            .map_err(|e| format!("failed to start the process supervisor: {e}"))?;
        let artifacts = artifact_store(&lookup, &limits);
        let shutdown = CancellationToken::new();
        let parts = Parts {
            lookup,
            cwd,
            limits,
            supervisor,
            artifacts,
            jobs,
            shutdown,
            ssh_config,
            escalations,
            approver: self.approver,
            debug_config,
            #[cfg(test)]
            echo_config,
        };
        let toolkit = parts.start(bash_config, eval_config, notes);
        tokio::spawn(after_kernels(toolkit.inner.clone(), !self.lazy));
        Ok(toolkit)
    }
}

/// The base working directory: absolute, relative to the process's, or the process's own.
fn base_cwd(cwd: Option<PathBuf>) -> Result<PathBuf, String> {
    let cwd = match cwd {
        Some(cwd) if cwd.is_absolute() => cwd,
        Some(cwd) => std::env::current_dir().map_err(|e| e.to_string())?.join(cwd),
        None => std::env::current_dir()
            .map_err(|e| format!("cannot read the current directory: {e}"))?,
    };
    if !cwd.is_dir() {
        return Err(format!("Working directory is not a directory: {}", cwd.display()));
    }
    Ok(cwd)
}

/// What the Toolkit has started before its tool runners exist.
struct Parts {
    lookup: Lookup,
    cwd: PathBuf,
    limits: Limits,
    supervisor: Supervisor,
    artifacts: Result<ArtifactStore, String>,
    jobs: JobTable,
    shutdown: CancellationToken,
    ssh_config: SshToolConfig,
    escalations: Escalations,
    approver: ApproverSlot,
    debug_config: DebugConfig,
    #[cfg(test)]
    echo_config: echo::EchoConfig,
}

impl Parts {
    /// Starts the tool runners over the shared parts.
    fn start(self, bash_config: BashConfig, eval_config: EvalConfig, notes: Notes) -> Toolkit {
        let audit = AuditLog::from_lookup(&self.lookup);
        let bash = BashRunner::new(
            bash_config,
            BashDeps {
                supervisor: self.supervisor.clone(),
                artifacts: self.artifacts.clone(),
                limits: self.limits.clone(),
                lookup: self.lookup.clone(),
                cwd: self.cwd.clone(),
                jobs: self.jobs.clone(),
            },
        );
        let ssh = SshRunner::new(
            self.ssh_config,
            SshDeps {
                supervisor: self.supervisor.clone(),
                artifacts: self.artifacts.clone(),
                limits: self.limits.clone(),
                lookup: self.lookup.clone(),
                cwd: self.cwd.clone(),
            },
        );
        let debug = DebugRunner::new(
            self.debug_config,
            DebugDeps {
                supervisor: self.supervisor.clone(),
                limits: self.limits.clone(),
                lookup: self.lookup.clone(),
                cwd: self.cwd.clone(),
            },
        );
        let inner = Arc::new_cyclic(|weak: &Weak<Inner>| {
            let eval = EvalRunner::new(
                eval_config,
                EvalDeps {
                    supervisor: self.supervisor.clone(),
                    artifacts: self.artifacts.clone(),
                    limits: self.limits.clone(),
                    lookup: self.lookup.clone(),
                    cwd: self.cwd.clone(),
                    tools: Tool::ALL
                        .iter()
                        .filter(|t| **t != Tool::Eval)
                        .map(|t| t.name().to_string())
                        .collect(),
                    tool_callback: Some(tool_callback(weak.clone())),
                },
            );
            Inner {
                #[cfg(test)]
                echo: echo::EchoRunner::new(
                    self.echo_config,
                    echo::EchoDeps { cwd: self.cwd.clone() },
                ),
                cwd: self.cwd,
                limits: self.limits,
                notes,
                notes_shown: AtomicBool::new(false),
                supervisor: self.supervisor,
                artifacts: self.artifacts,
                bash,
                eval,
                ssh,
                debug,
                jobs: self.jobs,
                shutdown: self.shutdown,
                escalations: self.escalations,
                approver: self.approver,
                audit,
            }
        });
        Toolkit { inner }
    }
}

/// Start-up work that would compete with the eval kernels' own start for the CPU (a login
/// shell running rc files can take 100 ms of it): the bash snapshot (with pre-warm on; else
/// at the first bash call), the first artifact retention round and the audit log's pruning
/// begin once the default kernels are ready or failed, which is at once when eval pre-warms nothing. Holds the
/// Toolkit weakly meanwhile, so a Toolkit closed first is not kept alive.
async fn after_kernels(inner: Arc<Inner>, prewarm_bash: bool) {
    let eval = inner.eval.clone();
    let weak = Arc::downgrade(&inner);
    drop(inner);
    eval.prewarmed().await;
    let Some(inner) = weak.upgrade() else { return };
    if prewarm_bash {
        inner.bash.prewarm_snapshot();
    }
    if let Ok(store) = &inner.artifacts {
        tokio::spawn(collect_garbage(store.clone(), inner.shutdown.clone()));
    }
    let audit = inner.audit.clone();
    let _ = tokio::task::spawn_blocking(move || audit.prune()).await;
}

/// Artifact retention (O28): a round at start, then every hour until the Toolkit closes.
async fn collect_garbage(store: ArtifactStore, shutdown: CancellationToken) {
    loop {
        let round = store.clone();
        let _ = tokio::task::spawn_blocking(move || round.gc()).await;
        tokio::select! {
            _ = tokio::time::sleep(GC_INTERVAL) => {}
            _ = shutdown.cancelled() => return,
        }
    }
}

/// How prelude `tool.<name>(args)` reaches the other tools: through the Toolkit, held weakly
/// so kernels never keep a closed Toolkit alive.
fn tool_callback(toolkit: Weak<Inner>) -> ToolCallback {
    Arc::new(move |name: String, args: Value| {
        let toolkit = toolkit.clone();
        Box::pin(async move {
            match toolkit.upgrade() {
                Some(inner) => Toolkit { inner }.call(&name, args, CallContext::default()).await,
                None => ToolResult::error("The toolkit has closed"),
            }
        })
    })
}

struct Inner {
    cwd: PathBuf,
    limits: Limits,
    /// Every settings note, the Toolkit's and each tool's: doctor lists them and the first
    /// result says them once.
    notes: Notes,
    notes_shown: AtomicBool,
    supervisor: Supervisor,
    artifacts: Result<ArtifactStore, String>,
    bash: BashRunner,
    eval: EvalRunner,
    ssh: SshRunner,
    debug: DebugRunner,
    jobs: JobTable,
    /// Remembered approvals of calls that run outside the sandbox, and the answer timeout.
    escalations: Escalations,
    /// The library's approver, for calls that bring none of their own.
    approver: ApproverSlot,
    /// One JSON line per call for the person watching (`execkit log`).
    audit: AuditLog,
    #[cfg(test)]
    echo: echo::EchoRunner,
    /// Cancelled by `close()`: every call in flight ends as cancelled.
    shutdown: CancellationToken,
}

impl Drop for Inner {
    /// The last clone gone: background loops (artifact retention) end with it. Processes are
    /// the Supervisor's to kill on its own drop.
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// The dispatcher. Cheap to clone; every clone serves the same state.
#[derive(Clone)]
pub struct Toolkit {
    inner: Arc<Inner>,
}

impl Toolkit {
    pub fn builder() -> ToolkitBuilder {
        ToolkitBuilder::default()
    }

    /// For the `execkit` binary only, first thing in `main` while it has one thread: saves the
    /// environment for every Toolkit of the process, wipes the credentials the scrub removes
    /// from the process's own environment block (which children can read through
    /// `/proc/<pid>/environ`), and makes the process non-dumpable. Embedders must not call it:
    /// it rewrites the host process's memory.
    pub fn protect_process_environment() -> Result<(), String> {
        execkit_process::env::protect_own_environment()
    }

    /// Runs one tool call. Never panics; invalid calls come back as `isError` results.
    pub async fn call(&self, name: &str, args: Value, ctx: CallContext) -> ToolResult {
        let approver = self.inner.approver.0.clone();
        self.call_with_approver(name, args, ctx, approver).await
    }

    /// [`Toolkit::call`] with the front end's own way to ask a person (MCP elicitation when the
    /// client offers it), or `None` when it has none.
    pub async fn call_with_approver(
        &self,
        name: &str,
        args: Value,
        ctx: CallContext,
        approver: Option<Approver>,
    ) -> ToolResult {
        let Some(tool) = Tool::from_name(name) else {
            let known: Vec<String> = self.tools().into_iter().map(|t| t.name).collect();
            return ToolResult::error(format!(
                "Unknown tool \"{name}\"; available tools: {}",
                known.join(", ")
            ));
        };
        if let Some(refused) = sandbox::refusal(&self.inner.supervisor, tool) {
            return refused;
        }
        let call_cwd = sandbox::call_cwd(&args, &self.inner.cwd);
        let summary = self.inner.audit.summary(&args);
        let started = std::time::SystemTime::now();
        let answer = OnceLock::new();
        #[cfg(test)]
        let echo = &self.inner.echo;
        let Inner { eval, jobs, debug, ssh, .. } = &*self.inner;
        let escalated = AtomicBool::new(false);
        let approver = approver.as_ref();
        // One arm per tool, all of one shape: parse the arguments, then the guarded call.
        let mut result = match tool {
            Tool::Bash => {
                let bash = async |p, ctx: &CallContext| {
                    self.bash(p, ctx, approver, &escalated, &answer).await
                };
                self.run(args, ctx, bash).await
            }
            Tool::Eval => self.run(args, ctx, async |p, ctx| eval.call(p, ctx).await).await,
            Tool::Job => self.run(args, ctx, async |p, ctx| jobs.call(p, ctx).await).await,
            Tool::Debug => self.run(args, ctx, async |p, ctx| debug.call(p, ctx).await).await,
            Tool::Ssh => self.run(args, ctx, async |p, ctx| ssh.call(p, ctx).await).await,
            #[cfg(test)]
            Tool::Echo => self.run(args, ctx, async |p, ctx| echo.call(p, ctx).await).await,
        };
        let escalated = escalated.load(Ordering::Relaxed);
        sandbox::annotate(&self.inner.supervisor, tool, &call_cwd, escalated, &mut result);
        if tool != Tool::Job && !self.inner.shutdown.is_cancelled() {
            self.announce_finished_jobs(&mut result);
        }
        self.add_settings_notice(&mut result);
        if let Some(summary) = summary {
            let policy = self.inner.supervisor.sandbox().policy();
            self.inner.audit.record(&CallRecord {
                tool: tool.name(),
                summary,
                cwd: &call_cwd,
                policy: serde_json::json!({
                    "mode": policy.mode.as_str(),
                    "network": policy.network.as_str(),
                    "escalated": escalated,
                }),
                approval: answer.get().copied(),
                started,
                result: &result,
            });
        }
        result
    }

    /// A bash call: in the sandbox, or outside it when it asks and a person approves.
    async fn bash(
        &self,
        params: BashParams,
        ctx: &CallContext,
        approver: Option<&Approver>,
        escalated: &AtomicBool,
        answer: &OnceLock<&'static str>,
    ) -> ToolResult {
        let policy = self.inner.supervisor.sandbox().policy();
        match self.inner.escalations.decide(&params, policy, approver, answer).await {
            Err(refused) => refused,
            Ok(false) => self.inner.bash.call(params, ctx).await,
            Ok(true) => {
                escalated.store(true, Ordering::Relaxed);
                self.inner.bash.call_escalated(params, ctx).await
            }
        }
    }

    /// Parses `args` into the tool's params (an argument error is the result), then runs the
    /// call guarded.
    async fn run<P: DeserializeOwned + FieldHints>(
        &self,
        args: Value,
        ctx: CallContext,
        call: impl AsyncFnOnce(P, &CallContext) -> ToolResult,
    ) -> ToolResult {
        match parse_params::<P>(args) {
            Ok(params) => self.guarded(ctx, async |ctx| call(params, ctx).await).await,
            Err(err) => ToolResult::error(err.to_string()),
        }
    }

    /// Runs one call with a context whose token fires when the caller cancels, the Toolkit
    /// closes, or this future is dropped mid-call.
    async fn guarded(
        &self,
        caller: CallContext,
        call: impl AsyncFnOnce(&CallContext) -> ToolResult,
    ) -> ToolResult {
        let linked = caller.with_cancel(self.inner.shutdown.child_token());
        let guard = linked.cancel.clone().drop_guard();
        let work = call(&linked);
        tokio::pin!(work);
        let mut forwarded = false;
        let result = loop {
            tokio::select! {
                result = &mut work => break result,
                _ = caller.cancel.cancelled(), if !forwarded => {
                    forwarded = true;
                    linked.cancel.cancel();
                }
            }
        };
        guard.disarm();
        result
    }

    /// One line per finished job that nothing has reported yet, after the result's text (J9).
    fn announce_finished_jobs(&self, result: &mut ToolResult) {
        append_lines(result, &self.inner.jobs.take_announcements());
    }

    /// Settings that were clamped or ignored, said once per Toolkit in its first result (doctor
    /// lists them too).
    fn add_settings_notice(&self, result: &mut ToolResult) {
        let notes = &self.inner.notes;
        if notes.is_empty() || self.inner.notes_shown.swap(true, Ordering::Relaxed) {
            return;
        }
        let lines: Vec<String> =
            notes.lines().iter().map(|note| format!("[Setting adjusted: {note}]")).collect();
        append_lines(result, &lines);
    }

    /// Library callers' bash with stdin bytes and unscrubbed extra env (B42).
    pub async fn bash_with(
        &self,
        params: BashParams,
        extras: BashExtras,
        ctx: CallContext,
    ) -> ToolResult {
        if let Some(refused) = sandbox::refusal(&self.inner.supervisor, Tool::Bash) {
            return refused;
        }
        let call_cwd = self.inner.cwd.join(params.cwd.as_deref().unwrap_or_default());
        let bash = &self.inner.bash;
        let mut result =
            self.guarded(ctx, async |ctx| bash.call_with(params, extras, ctx).await).await;
        sandbox::annotate(&self.inner.supervisor, Tool::Bash, &call_cwd, false, &mut result);
        self.announce_finished_jobs(&mut result);
        self.add_settings_notice(&mut result);
        result
    }

    /// The tool list with JSON schemas. ssh is listed with its configured hosts, and left
    /// out while none is configured.
    pub fn tools(&self) -> Vec<ToolSpec> {
        Tool::ALL.iter().filter_map(|t| self.listed(*t)).collect()
    }

    /// The tools left out of [`Toolkit::tools`] now, each with why (for `execkit tools`).
    pub fn unlisted_tools(&self) -> Vec<(String, String)> {
        let ssh = (self.inner.ssh.tool_description().is_none()).then(|| {
            let why = "no ssh hosts are configured (add them to .execkit/ssh.json)";
            (Tool::Ssh.name().to_string(), why.to_string())
        });
        ssh.into_iter().collect()
    }

    /// The names and descriptions of [`Toolkit::tools`], without their input schemas (building
    /// those is most of the cost): what an MCP server compares after every call to tell
    /// whether the list changed.
    pub fn tool_descriptions(&self) -> Vec<(String, String)> {
        Tool::ALL
            .iter()
            .filter_map(|t| Some((t.name().to_string(), self.description(*t)?)))
            .collect()
    }

    /// A tool as listed now, or `None` when it is left out.
    fn listed(&self, tool: Tool) -> Option<ToolSpec> {
        let description = self.description(tool)?;
        Some(ToolSpec { description, ..tool.spec() })
    }

    /// A tool's description as listed now, or `None` when it is left out.
    fn description(&self, tool: Tool) -> Option<String> {
        let mut description = if tool == Tool::Ssh {
            self.inner.ssh.tool_description()?
        } else {
            tool.description().to_string()
        };
        sandbox::describe(&self.inner.supervisor, tool, &mut description);
        Some(description)
    }

    /// The ssh client behind the ssh tool (`execkit ssh close|probe`).
    pub fn ssh_client(&self) -> &execkit_ssh::SshClient {
        self.inner.ssh.client()
    }

    /// The artifact store, or why artifacts are off.
    pub fn artifacts(&self) -> Result<&ArtifactStore, &str> {
        self.inner.artifacts.as_ref().map_err(String::as_str)
    }

    pub fn cwd(&self) -> &std::path::Path {
        &self.inner.cwd
    }

    /// Checks what doctor reports that needs a probe (debug adapters), then [`Toolkit::doctor`].
    pub async fn doctor_probed(&self) -> Doctor {
        self.inner.debug.probe_adapters().await;
        self.doctor()
    }

    pub fn doctor(&self) -> Doctor {
        let inner = &self.inner;
        let mut sections = vec![
            DoctorSection::new(
                "execkit",
                vec![
                    format!("version: {}", env!("CARGO_PKG_VERSION")),
                    format!("working directory: {}", inner.cwd.display()),
                ],
            ),
            doctor::processes(&inner.supervisor, &inner.limits),
            doctor::artifacts(&inner.artifacts),
            sandbox::doctor(&inner.supervisor),
            DoctorSection::new("bash", inner.bash.doctor()),
            DoctorSection::new("eval", inner.eval.doctor()),
            DoctorSection::new("job", inner.jobs.doctor()),
            DoctorSection::new("debug", inner.debug.doctor()),
            DoctorSection::new("ssh", inner.ssh.doctor()),
            #[cfg(test)]
            DoctorSection::new("echo", inner.echo.doctor()),
        ];
        if !inner.notes.is_empty() {
            sections.push(DoctorSection::new("settings", inner.notes.lines().to_vec()));
        }
        Doctor { sections }
    }

    /// Kills every job and live process tree; returns within kill grace + 1 s.
    pub async fn close(&self) {
        self.inner.shutdown.cancel();
        #[cfg(test)]
        self.inner.echo.close().await;
        tokio::join!(
            self.inner.jobs.close(),
            self.inner.eval.close(),
            self.inner.debug.close(),
            self.inner.ssh.close()
        );
        self.inner.supervisor.close().await;
    }
}

/// Adds `lines` after the first text of `result` (or as its first text).
fn append_lines(result: &mut ToolResult, lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    let text = lines.join("\n");
    match result.content.iter_mut().find_map(|c| match c {
        Content::Text { text } => Some(text),
        _ => None,
    }) {
        Some(existing) => {
            existing.push('\n');
            existing.push_str(&text);
        }
        None => result.content.insert(0, Content::text(text)),
    }
}
