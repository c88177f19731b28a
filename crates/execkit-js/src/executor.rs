//! The job executor: promise jobs, async jobs (dynamic imports), the JS7 timers, pending tool
//! calls and the rejection tracker. boa's default executor never runs promise jobs, so the
//! kernel installs this one. Everything lives on the VM thread.

use boa_engine::builtins::promise::OperationType;
use boa_engine::context::HostHooks;
use boa_engine::job::{GenericJob, Job, JobExecutor, NativeAsyncJob, PromiseJob, TimeoutJob};
use boa_engine::object::builtins::JsFunction;
use boa_engine::object::builtins::JsPromise;
use boa_engine::{Context, JsObject, JsResult};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::rc::Rc;
use std::time::{Duration, Instant};

/// A `setTimeout`/`setInterval` callback waiting for its time.
pub struct Timer {
    pub id: u64,
    pub callback: JsFunction,
    pub interval: Option<Duration>,
}

/// A `tool.<name>()` call waiting for the host's `tool_result`.
pub struct PendingTool {
    pub name: String,
    pub resolve: JsFunction,
    pub deadline: Instant,
}

/// The running cell, as native functions need to know it.
#[derive(Debug, Clone, Default)]
pub struct CellInfo {
    pub id: u64,
    pub deadline: Option<Instant>,
}

/// Queues and cell-scoped state shared by the executor, the host hooks and the natives.
#[derive(Default)]
pub struct Executor {
    pub promise_jobs: RefCell<VecDeque<PromiseJob>>,
    pub async_jobs: RefCell<VecDeque<NativeAsyncJob>>,
    pub generic_jobs: RefCell<VecDeque<GenericJob>>,
    pub timeout_jobs: RefCell<Vec<(Instant, TimeoutJob)>>,
    pub timers: RefCell<BTreeMap<(Instant, u64), Timer>>,
    timer_due: RefCell<HashMap<u64, Instant>>,
    cleared_while_running: RefCell<HashSet<u64>>,
    next_timer: Cell<u64>,
    pub tools: RefCell<BTreeMap<u64, PendingTool>>,
    next_call: Cell<u64>,
    pub rejections: RefCell<Vec<JsObject>>,
    pub cell: RefCell<Option<CellInfo>>,
}

thread_local! {
    static EXECUTOR: Rc<Executor> = Rc::new(Executor::default());
}

/// The VM thread's executor.
pub fn executor() -> Rc<Executor> {
    EXECUTOR.with(Rc::clone)
}

impl Executor {
    /// Adds a timer; returns its id.
    pub fn add_timer(&self, callback: JsFunction, ms: f64, repeat: bool) -> u64 {
        let id = self.next_timer.get() + 1;
        self.next_timer.set(id);
        let delay = Duration::from_secs_f64(ms.clamp(0.0, 1e10) / 1000.0);
        let interval = repeat.then(|| delay.max(Duration::from_millis(1)));
        self.schedule(Timer { id, callback, interval }, Instant::now() + delay);
        id
    }

    fn schedule(&self, timer: Timer, due: Instant) {
        self.timer_due.borrow_mut().insert(timer.id, due);
        self.timers.borrow_mut().insert((due, timer.id), timer);
    }

    pub fn clear_timer(&self, id: u64) {
        match self.timer_due.borrow_mut().remove(&id) {
            Some(due) => {
                self.timers.borrow_mut().remove(&(due, id));
            }
            None => {
                self.cleared_while_running.borrow_mut().insert(id);
            }
        }
    }

    /// The earliest timer if it is due, taken out of the queue.
    pub fn take_due_timer(&self, now: Instant) -> Option<Timer> {
        let mut timers = self.timers.borrow_mut();
        let key = *timers.keys().next()?;
        if key.0 > now {
            return None;
        }
        let timer = timers.remove(&key)?;
        self.timer_due.borrow_mut().remove(&timer.id);
        Some(timer)
    }

    /// Puts an interval back after its callback ran, unless the callback cleared it.
    pub fn reschedule(&self, timer: Timer, now: Instant) {
        if self.cleared_while_running.borrow_mut().remove(&timer.id) {
            return;
        }
        if let Some(every) = timer.interval {
            self.schedule(timer, now + every);
        }
    }

    pub fn next_timer_due(&self) -> Option<Instant> {
        let timer = self.timers.borrow().keys().next().map(|k| k.0);
        let job = self.timeout_jobs.borrow().iter().map(|j| j.0).min();
        timer.into_iter().chain(job).min()
    }

    /// Cancels every timer; returns how many were pending.
    pub fn cancel_timers(&self) -> usize {
        let n = self.timers.borrow().len() + self.timeout_jobs.borrow().len();
        self.timers.borrow_mut().clear();
        self.timer_due.borrow_mut().clear();
        self.timeout_jobs.borrow_mut().clear();
        self.cleared_while_running.borrow_mut().clear();
        n
    }

    /// Registers a tool call; returns its call id.
    pub fn add_tool_call(&self, name: String, resolve: JsFunction, deadline: Instant) -> u64 {
        let id = self.next_call.get() + 1;
        self.next_call.set(id);
        self.tools.borrow_mut().insert(id, PendingTool { name, resolve, deadline });
        id
    }

    pub fn next_tool_deadline(&self) -> Option<Instant> {
        self.tools.borrow().values().map(|t| t.deadline).min()
    }

    pub fn has_pending_jobs(&self) -> bool {
        !self.promise_jobs.borrow().is_empty()
            || !self.async_jobs.borrow().is_empty()
            || !self.generic_jobs.borrow().is_empty()
    }

    pub fn current_cell(&self) -> Option<CellInfo> {
        self.cell.borrow().clone()
    }
}

/// The [`JobExecutor`] installed in the context: it only queues; the kernel's event loop
/// ([`crate::event_loop`]) runs the queues.
#[derive(Debug, Default)]
pub struct QueueingExecutor;

impl JobExecutor for QueueingExecutor {
    fn enqueue_job(self: Rc<Self>, job: Job, _context: &mut Context) {
        let ex = executor();
        match job {
            Job::PromiseJob(p) => ex.promise_jobs.borrow_mut().push_back(p),
            Job::AsyncJob(a) => ex.async_jobs.borrow_mut().push_back(a),
            Job::GenericJob(g) => ex.generic_jobs.borrow_mut().push_back(g),
            Job::TimeoutJob(t) => {
                let due = Instant::now() + Duration::from_millis(t.timeout().as_millis());
                ex.timeout_jobs.borrow_mut().push((due, t));
            }
            // Engine-internal interval jobs and finalization-registry cleanups are not used by
            // anything a cell can reach without a host API; they are dropped.
            _ => {}
        }
    }

    fn run_jobs(self: Rc<Self>, context: &mut Context) -> JsResult<()> {
        crate::event_loop::run_microtasks(context)
    }
}

/// Host hooks: tracks promises rejected without a handler (JS8).
#[derive(Debug, Default)]
pub struct KernelHooks;

impl HostHooks for KernelHooks {
    fn promise_rejection_tracker(
        &self,
        promise: &JsObject<boa_engine::builtins::promise::Promise>,
        operation: OperationType,
        _context: &mut Context,
    ) {
        let object = promise.clone().upcast();
        let ex = executor();
        let mut list = ex.rejections.borrow_mut();
        match operation {
            OperationType::Reject => list.push(object),
            OperationType::Handle => list.retain(|p| p != &object),
        }
    }
}

/// The first promise rejected and still unhandled, other than `except`.
pub fn unhandled_rejection(except: Option<&JsPromise>) -> Option<JsPromise> {
    let ex = executor();
    let list = std::mem::take(&mut *ex.rejections.borrow_mut());
    let except: Option<JsObject> = except.map(|p| JsObject::from(p.clone()));
    list.into_iter()
        .filter(|p| Some(p) != except.as_ref())
        .filter_map(|p| JsPromise::from_object(p).ok())
        .find(|p| matches!(p.state(), boa_engine::builtins::promise::PromiseState::Rejected(_)))
}
