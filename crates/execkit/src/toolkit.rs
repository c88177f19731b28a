//! The Toolkit: configuration, runners and their long-lived state.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Weak};
use std::time::Duration;

use execkit_bash::{BashConfig, BashContext, BashDeps, BashExtras, BashRunner};
use execkit_eval::{EvalConfig, EvalDeps, EvalRunner, ToolCallback};
use execkit_jobs::{JobConfig, JobTable};
use execkit_output::artifact::{ArtifactStore, StoreLimits};
use execkit_output::clamp::{Knob, Limits};
use execkit_process::env::ScrubRules;
use execkit_process::{Supervisor, SupervisorConfig};
use execkit_protocol::bash::BashParams;
use execkit_protocol::eval::EvalParams;
use execkit_protocol::job::JobParams;
use execkit_protocol::{ProgressFn, ToolResult, parse_params};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::tools::{Tool, ToolSpec};

/// Processes one command may have (spec O35's `pids.max`).
const PIDS_MAX: Knob = Knob { name: "EXECKIT_PIDS_MAX", default: 4096, min: 16, max: 4_194_304 };

/// How often artifact retention runs while the Toolkit lives (O28).
const GC_INTERVAL: Duration = Duration::from_secs(3600);

/// Per-call context from the front end. Cancelling `cancel` (or dropping the call's future)
/// kills whatever the call started.
#[derive(Clone, Default)]
pub struct CallContext {
    pub progress: Option<ProgressFn>,
    pub cancel: CancellationToken,
}

/// Builds a [`Toolkit`].
#[derive(Debug, Default)]
pub struct ToolkitBuilder {
    cwd: Option<PathBuf>,
    subreaper: bool,
    one_shot: bool,
    vars: HashMap<String, String>,
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

    /// Sets a variable as if it were in this process's environment, for this Toolkit only:
    /// `EXECKIT_*` knobs and what children inherit (embedders and tests use it instead of
    /// mutating the process environment).
    pub fn var(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.vars.insert(name.into(), value.into());
        self
    }

    /// Reads the `EXECKIT_*` knobs and starts the supervisor. Must run inside a tokio runtime.
    pub fn build(self) -> Result<Toolkit, String> {
        let mut own_env: HashMap<String, String> = execkit_process::env::inherited_vars()
            .into_iter()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect();
        own_env.extend(self.vars);
        let lookup = |name: &str| own_env.get(name).cloned();
        let mut notes = Vec::new();
        let limits = Limits::from_lookup(&lookup, &mut notes).map_err(|e| e.to_string())?;
        let cwd = match self.cwd {
            Some(cwd) if cwd.is_absolute() => cwd,
            Some(cwd) => std::env::current_dir().map_err(|e| e.to_string())?.join(cwd),
            None => std::env::current_dir()
                .map_err(|e| format!("cannot read the current directory: {e}"))?,
        };
        if !cwd.is_dir() {
            return Err(format!("Working directory is not a directory: {}", cwd.display()));
        }
        // Every knob is read before anything starts, so a bad value leaves nothing behind.
        let home = own_env.get("HOME").map(PathBuf::from);
        let jobs = JobTable::new(
            JobConfig::from_lookup(
                &lookup,
                &mut notes,
                Duration::from_millis(limits.kill_grace_ms),
            )
            .map_err(|e| e.to_string())?,
        );
        let mut bash_config = BashConfig::from_lookup(cwd.clone(), &lookup, home.as_deref())
            .map_err(|e| e.to_string())?;
        bash_config.one_shot = self.one_shot;
        let supervisor = Supervisor::start(SupervisorConfig {
            kill_grace: Duration::from_millis(limits.kill_grace_ms),
            drain_idle: Duration::from_millis(limits.drain_idle_ms),
            drain_max: Duration::from_millis(limits.drain_max_ms),
            subreaper: self.subreaper,
            use_cgroup: lookup("EXECKIT_NO_CGROUP").as_deref() != Some("1"),
            memory_max: memory_max(&lookup)?,
            no_pty: lookup("EXECKIT_NO_PTY").as_deref() == Some("1"),
            pids_max: PIDS_MAX.read(&lookup, &mut notes).map_err(|e| e.to_string())?,
        })
        .map_err(|e| format!("failed to start the process supervisor: {e}"))?;
        let store_limits = StoreLimits {
            max_bytes: limits.artifact_max_bytes,
            store_bytes: limits.artifact_store_bytes,
            max_age_s: limits.artifact_max_age_s,
        };
        let artifact_dir = match lookup("EXECKIT_ARTIFACT_DIR").filter(|d| !d.is_empty()) {
            Some(dir) => PathBuf::from(dir),
            None => ArtifactStore::default_dir(),
        };
        let artifacts = ArtifactStore::open(&artifact_dir, store_limits).map_err(|e| e.to_string());
        let shutdown = CancellationToken::new();
        if let Ok(store) = &artifacts {
            tokio::spawn(collect_garbage(store.clone(), shutdown.clone()));
        }
        let bash = BashRunner::new(
            bash_config,
            BashDeps {
                supervisor: supervisor.clone(),
                artifacts: artifacts.clone(),
                limits: limits.clone(),
                scrub_rules: ScrubRules::from_lookup(&lookup),
                own_env: own_env.clone(),
                home,
                jobs: jobs.clone(),
            },
        );
        let eval_lookup = execkit_tool::Lookup::from_vars(own_env.clone());
        let mut eval_notes = execkit_tool::Notes::default();
        let eval_config =
            EvalConfig::from_lookup(&eval_lookup, &mut eval_notes).map_err(|e| e.to_string())?;
        notes.extend(eval_notes.lines().iter().cloned());
        let inner = Arc::new_cyclic(|weak: &Weak<Inner>| {
            let eval = EvalRunner::new(
                eval_config,
                EvalDeps {
                    supervisor: supervisor.clone(),
                    artifacts: artifacts.clone(),
                    limits: limits.clone(),
                    lookup: eval_lookup,
                    cwd: cwd.clone(),
                    tools: Tool::ALL
                        .iter()
                        .filter(|t| **t != Tool::Eval)
                        .map(|t| t.name().to_string())
                        .collect(),
                    tool_callback: Some(tool_callback(weak.clone())),
                },
            );
            Inner { cwd, limits, notes, supervisor, artifacts, bash, eval, jobs, shutdown }
        });
        Ok(Toolkit { inner })
    }
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

/// `EXECKIT_MEMORY_MAX` in bytes (a plain number, or with a K/M/G suffix).
fn memory_max(lookup: &dyn Fn(&str) -> Option<String>) -> Result<Option<u64>, String> {
    let Some(raw) = lookup("EXECKIT_MEMORY_MAX").filter(|v| !v.trim().is_empty()) else {
        return Ok(None);
    };
    let text = raw.trim();
    let (digits, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((at, _)) => text.split_at(at),
        None => (text, ""),
    };
    let shift = match unit.to_ascii_uppercase().trim_end_matches("IB").trim_end_matches('B') {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        _ => return Err(format!("EXECKIT_MEMORY_MAX={raw:?} is not a size (e.g. 2G, 512M)")),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1 << shift))
        .map(Some)
        .ok_or_else(|| format!("EXECKIT_MEMORY_MAX={raw:?} is not a size (e.g. 2G, 512M)"))
}

/// What kills this process's children's descendants if it dies by SIGKILL (O41).
fn watchdog_line(supervisor: &Supervisor) -> String {
    match (supervisor.watchdog(), supervisor.containment()) {
        (Err(why), _) => format!("watchdog: off ({why})"),
        (Ok(pid), execkit_process::Containment::Cgroup { .. }) => format!("watchdog: pid {pid}"),
        (Ok(pid), execkit_process::Containment::ProcessGroup { .. }) => format!(
            "watchdog: pid {pid}; without cgroups a `setsid` escapee is in no process group it \
             knows and can outlive a SIGKILL of execkit"
        ),
    }
}

/// One section of `execkit doctor`.
#[derive(Debug, Clone)]
pub struct DoctorSection {
    pub title: String,
    pub lines: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Doctor {
    pub sections: Vec<DoctorSection>,
}

struct Inner {
    cwd: PathBuf,
    limits: Limits,
    notes: Vec<String>,
    supervisor: Supervisor,
    artifacts: Result<ArtifactStore, String>,
    bash: BashRunner,
    eval: EvalRunner,
    jobs: JobTable,
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
        let Some(tool) = Tool::from_name(name) else {
            let known: Vec<&str> = Tool::ALL.iter().map(|t| t.name()).collect();
            return ToolResult::error(format!(
                "Unknown tool \"{name}\"; available tools: {}",
                known.join(", ")
            ));
        };
        let CallContext { progress, cancel } = ctx;
        let mut result = match tool {
            Tool::Bash => match parse_params::<BashParams>(args) {
                Ok(params) => {
                    let bash = &self.inner.bash;
                    self.guarded(cancel, |cancel| {
                        bash.call(params, BashExtras::default(), BashContext { progress, cancel })
                    })
                    .await
                }
                Err(err) => ToolResult::error(err.to_string()),
            },
            Tool::Eval => match parse_params::<EvalParams>(args) {
                Ok(params) => {
                    let eval = &self.inner.eval;
                    self.guarded(cancel, |cancel| {
                        let ctx = execkit_tool::CallContext { progress, cancel };
                        async move { eval.call(params, &ctx).await }
                    })
                    .await
                }
                Err(err) => ToolResult::error(err.to_string()),
            },
            Tool::Job => match parse_params::<JobParams>(args) {
                Ok(params) => {
                    let jobs = &self.inner.jobs;
                    self.guarded(cancel, |cancel| jobs.call(params, progress, cancel)).await
                }
                Err(err) => ToolResult::error(err.to_string()),
            },
        };
        if tool != Tool::Job && !self.inner.shutdown.is_cancelled() {
            self.announce_finished_jobs(&mut result);
        }
        result
    }

    /// Runs one call with a token that fires when the caller cancels, the Toolkit closes, or
    /// this future is dropped mid-call.
    async fn guarded<F: Future<Output = ToolResult>>(
        &self,
        caller: CancellationToken,
        start: impl FnOnce(CancellationToken) -> F,
    ) -> ToolResult {
        let linked = self.inner.shutdown.child_token();
        let guard = linked.clone().drop_guard();
        let work = start(linked.clone());
        tokio::pin!(work);
        let mut forwarded = false;
        let result = loop {
            tokio::select! {
                result = &mut work => break result,
                _ = caller.cancelled(), if !forwarded => {
                    forwarded = true;
                    linked.cancel();
                }
            }
        };
        guard.disarm();
        result
    }

    /// J9: one line per finished job that nothing has reported yet, after the result's text.
    fn announce_finished_jobs(&self, result: &mut ToolResult) {
        let lines = self.inner.jobs.take_announcements();
        if lines.is_empty() {
            return;
        }
        let text = lines.join("\n");
        match result.content.iter_mut().find_map(|c| match c {
            execkit_protocol::Content::Text { text } => Some(text),
            _ => None,
        }) {
            Some(existing) => {
                existing.push('\n');
                existing.push_str(&text);
            }
            None => result.content.insert(0, execkit_protocol::Content::text(text)),
        }
    }

    /// Library callers' bash with stdin bytes and unscrubbed extra env (B42).
    pub async fn bash_with(
        &self,
        params: BashParams,
        extras: BashExtras,
        ctx: CallContext,
    ) -> ToolResult {
        let CallContext { progress, cancel } = ctx;
        let bash = &self.inner.bash;
        let mut result = self
            .guarded(cancel, |cancel| bash.call(params, extras, BashContext { progress, cancel }))
            .await;
        self.announce_finished_jobs(&mut result);
        result
    }

    /// The tool list with JSON schemas.
    pub fn tools(&self) -> Vec<ToolSpec> {
        Tool::ALL.iter().map(|t| t.spec()).collect()
    }

    /// The artifact store, or why artifacts are off.
    pub fn artifacts(&self) -> Result<&ArtifactStore, &str> {
        self.inner.artifacts.as_ref().map_err(String::as_str)
    }

    pub fn cwd(&self) -> &std::path::Path {
        &self.inner.cwd
    }

    pub fn doctor(&self) -> Doctor {
        let inner = &self.inner;
        let mut sections = vec![DoctorSection {
            title: "execkit".to_string(),
            lines: vec![
                format!("version: {}", env!("CARGO_PKG_VERSION")),
                format!("working directory: {}", inner.cwd.display()),
            ],
        }];
        let containment = match inner.supervisor.containment() {
            execkit_process::Containment::Cgroup { root } => {
                format!("containment: cgroup v2 ({})", root.display())
            }
            execkit_process::Containment::ProcessGroup { reason } => format!(
                "containment: process group ({reason}); to enable cgroups run under \
                 `systemd-run --user --scope -p Delegate=yes execkit mcp`"
            ),
        };
        sections.push(DoctorSection {
            title: "processes".to_string(),
            lines: vec![
                containment,
                match inner.supervisor.run_dir_note() {
                    Some(why) => {
                        format!("run directory: {} ({why})", inner.supervisor.run_dir().display())
                    }
                    None => format!("run directory: {}", inner.supervisor.run_dir().display()),
                },
                format!("kill grace: {} ms", inner.limits.kill_grace_ms),
                watchdog_line(&inner.supervisor),
            ],
        });
        sections.push(DoctorSection {
            title: "artifacts".to_string(),
            lines: vec![match &inner.artifacts {
                Ok(store) => format!("directory: {}", store.dir().display()),
                Err(reason) => format!("off: {reason}"),
            }],
        });
        sections
            .push(DoctorSection { title: "bash".to_string(), lines: inner.bash.doctor_lines() });
        sections.push(DoctorSection { title: "eval".to_string(), lines: inner.eval.doctor() });
        if !inner.notes.is_empty() {
            sections
                .push(DoctorSection { title: "settings".to_string(), lines: inner.notes.clone() });
        }
        Doctor { sections }
    }

    /// Kills every job and live process tree; returns within kill grace + 1 s.
    pub async fn close(&self) {
        self.inner.shutdown.cancel();
        tokio::join!(self.inner.jobs.close(), self.inner.eval.close());
        self.inner.supervisor.close().await;
    }
}
