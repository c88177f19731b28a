//! The debug tool's runner: one root session at a time, calls serialised, `pause` and
//! `terminate` able to end the wait of a `continue` or step in flight, idle sessions swept.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use execkit_output::clamp::Limits;
use execkit_process::Supervisor;
use execkit_protocol::ToolResult;
use execkit_protocol::debug::{DebugAction, DebugParams};
use execkit_tool::{CallContext, Lookup};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::breakpoints::Breakpoints;
use crate::config::DebugConfig;
use crate::redact::Redactor;
use crate::registry::Registry;
use crate::render::{self, Reply};
use crate::request::{DebugRequest, resolve};
use crate::ring::OutputRing;
use crate::session::{Session, Shared};
use crate::{actions, nodelay, terminate};

/// What the Toolkit hands the debug tool.
#[derive(Debug, Clone)]
pub struct DebugDeps {
    pub supervisor: Supervisor,
    pub limits: Limits,
    pub lookup: Lookup,
    pub cwd: PathBuf,
}

/// A `continue` or step waiting for the program; `pause`/`terminate` end the wait.
#[derive(Debug, Clone)]
pub(crate) struct Waiter {
    pub token: CancellationToken,
    pub by: Arc<Mutex<Option<&'static str>>>,
}

/// Everything one call may change; behind one async lock, so calls are serialised.
pub(crate) struct State {
    /// The root session; its children are in its tree.
    pub session: Option<Arc<Session>>,
    pub breakpoints: Breakpoints,
    /// The number of the next `debug-N`, shared with the tasks that open child sessions.
    pub ids: Arc<std::sync::atomic::AtomicU64>,
    /// The last session that ended on its own: its id and why.
    pub last_ended: Option<(String, String)>,
    pub ring: Shared<OutputRing>,
    /// Ring offset up to which output was shown in a result.
    pub shown: u64,
}

pub(crate) struct Inner {
    pub config: DebugConfig,
    pub deps: DebugDeps,
    pub registry: Registry,
    pub state: tokio::sync::Mutex<State>,
    /// The action holding the lock, for the queued call's error.
    pub busy: Mutex<Option<&'static str>>,
    pub waiter: Mutex<Option<Waiter>>,
    /// Where the debugpy TCP_NODELAY `sitecustomize` lives, when it is on.
    pub nodelay_dir: Option<PathBuf>,
    /// The `dap.json` warnings are appended once, to the first result.
    pub warnings_shown: std::sync::atomic::AtomicBool,
    pub shutdown: CancellationToken,
}

/// Everything an action needs: the shared parts, its request, its deadline.
pub(crate) struct Call<'a> {
    pub inner: &'a Inner,
    pub state: &'a mut State,
    pub request: &'a DebugRequest,
    pub deadline: Instant,
    pub redactor: Redactor,
    pub ctx: &'a CallContext,
}

#[derive(Clone)]
pub struct DebugRunner {
    inner: Arc<Inner>,
}

impl DebugRunner {
    pub fn new(config: DebugConfig, deps: DebugDeps) -> DebugRunner {
        let nodelay_dir =
            config.debugpy_nodelay.then(|| nodelay::install(deps.supervisor.run_dir())).flatten();
        let state = State {
            session: None,
            breakpoints: Breakpoints::default(),
            ids: Arc::new(std::sync::atomic::AtomicU64::new(1)),
            last_ended: None,
            ring: Arc::default(),
            shown: 0,
        };
        let home = deps.lookup.get("HOME").map(Path::new);
        let registry = Registry::new(home, &crate::start::project_root(&deps.cwd));
        let inner = Arc::new(Inner {
            config,
            deps,
            registry,
            warnings_shown: std::sync::atomic::AtomicBool::new(false),
            state: tokio::sync::Mutex::new(state),
            busy: Mutex::new(None),
            waiter: Mutex::new(None),
            nodelay_dir,
            shutdown: CancellationToken::new(),
        });
        if tokio::runtime::Handle::try_current().is_ok() {
            tokio::spawn(sweep_idle(Arc::downgrade(&inner)));
        }
        DebugRunner { inner }
    }

    pub async fn call(&self, params: DebugParams, ctx: &CallContext) -> ToolResult {
        let request = match resolve(params, self.inner.deps.limits.max_timeout_s) {
            Ok(request) => request,
            Err(err) => return ToolResult::error(err.to_string()),
        };
        let action = request.action;
        let deadline = Instant::now() + std::time::Duration::from_secs(request.timeout_s);
        if matches!(action, DebugAction::Pause | DebugAction::Terminate) {
            self.interrupt_waiter(action.name());
        }
        let locked = tokio::select! {
            state = tokio::time::timeout_at(deadline, self.inner.state.lock()) => state.ok(),
            _ = ctx.cancel.cancelled() => None,
        };
        let Some(mut state) = locked else {
            let busy = self.inner.busy.lock().ok().and_then(|b| *b).unwrap_or("?");
            return ToolResult::error(format!(
                "Another debug action (\"{busy}\") is still running."
            ));
        };
        if let Ok(mut busy) = self.inner.busy.lock() {
            *busy = Some(action.name());
        }
        let redactor = Redactor::new(self.inner.config.redact);
        let mut call = Call {
            inner: &self.inner,
            state: &mut state,
            request: &request,
            deadline,
            redactor,
            ctx,
        };
        let reply = actions::run(&mut call).await;
        let redacted = call.redactor.count;
        let result = finish(&mut call, reply).into_result(action.name(), redacted);
        if let Ok(mut busy) = self.inner.busy.lock() {
            *busy = None;
        }
        result
    }

    fn interrupt_waiter(&self, by: &'static str) {
        let waiter = self.inner.waiter.lock().ok().and_then(|w| w.clone());
        if let Some(waiter) = waiter {
            if let Ok(mut slot) = waiter.by.lock() {
                slot.get_or_insert(by);
            }
            waiter.token.cancel();
        }
    }

    /// Checks every adapter's availability, so doctor can list found and missing ones.
    pub async fn probe_adapters(&self) {
        let deps = &self.inner.deps;
        let root = crate::start::project_root(&deps.cwd);
        let vars = deps.lookup.vars().map(|(k, v)| (k.clone(), v.clone()));
        let mut env = execkit_process::env::EnvBuilder::from_vars(vars);
        env.harden();
        let env = env.into_vars();
        let probe = crate::registry::Probe {
            supervisor: &deps.supervisor,
            lookup: &deps.lookup,
            project_root: &root,
            env: &env,
        };
        self.inner.registry.check_all(&probe).await;
    }

    pub fn doctor(&self) -> Vec<String> {
        crate::doctor::lines(&self.inner)
    }

    /// Terminates the session (every process of it), then stops the sweep.
    pub async fn close(&self) {
        self.interrupt_waiter("terminate");
        let mut state = self.inner.state.lock().await;
        if let Some(session) = state.session.take() {
            terminate::sequence(&session, None).await;
        }
        self.inner.shutdown.cancel();
    }
}

impl State {
    /// The session thread-level actions go to: the one that stopped last (D14).
    pub fn target(&self) -> Option<Arc<Session>> {
        self.session.as_ref().map(crate::tree::target)
    }
}

/// The common parts of every result: the summary of the session acted on, notices, ignored
/// fields. The tree's breakpoint plan is brought up to date for children opened later.
fn finish(call: &mut Call<'_>, mut reply: Reply) -> Reply {
    if let Some(root) = &call.state.session {
        root.tree.set_plan(call.state.breakpoints.plan());
        let target = crate::tree::target(root);
        reply.fields.entry("session").or_insert_with(|| render::summary(&target));
    }
    for notice in &call.request.notices {
        reply.lines.push(notice.clone());
    }
    let warnings = &call.inner.registry.warnings;
    if !warnings.is_empty()
        && !call.inner.warnings_shown.swap(true, std::sync::atomic::Ordering::Relaxed)
    {
        reply.lines.extend(warnings.iter().cloned());
    }
    if !call.request.ignored.is_empty() {
        reply.lines.push(format!("(ignored: {})", call.request.ignored.join(", ")));
    }
    reply
}

/// Every sweep interval, a session unused for longer than the idle limit is terminated.
async fn sweep_idle(inner: Weak<Inner>) {
    loop {
        let Some(strong) = inner.upgrade() else { return };
        let (every, shutdown) = (strong.config.sweep, strong.shutdown.clone());
        drop(strong);
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = shutdown.cancelled() => return,
        }
        let Some(strong) = inner.upgrade() else { return };
        let Ok(mut state) = strong.state.try_lock() else { continue };
        let idle = strong.config.idle;
        let stale =
            state.session.as_ref().is_some_and(|s| s.with(|st| st.last_used.elapsed() >= idle));
        if let Some(session) = state.session.take_if(|_| stale) {
            terminate::sequence(&session, None).await;
            state.last_ended = Some((session.id.clone(), format!("idle for {}", idle_text(idle))));
        }
    }
}

/// `10 min`, `2 s`.
fn idle_text(idle: std::time::Duration) -> String {
    let secs = idle.as_secs();
    if secs >= 60 && secs.is_multiple_of(60) {
        format!("{} min", secs / 60)
    } else {
        format!("{secs} s")
    }
}
