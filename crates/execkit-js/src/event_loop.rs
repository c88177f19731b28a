//! The per-cell event loop (spec-eval.md JS4, JS7, JS16): runs microtasks, timers and tool
//! replies until the cell's promise settles, the host interrupts it, or a job fails with an
//! error JS cannot catch.

use crate::executor::executor;
use crate::wire::emit;
use boa_engine::builtins::promise::PromiseState;
use boa_engine::object::builtins::JsPromise;
use boa_engine::{Context, JsError, JsResult, JsValue, js_string};
use execkit_protocol::kernel::{HostFrame, KernelFrame};
use serde_json::json;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::task::{Poll, Waker};
use std::time::Instant;

/// Why the loop stopped before the cell's promise settled.
#[derive(Debug)]
pub enum Stop {
    /// The host sent `interrupt` for this cell.
    Interrupted,
    /// A job or timer callback failed (an engine limit, or a timer that threw).
    Failed(JsError),
}

/// Runs promise, async and generic jobs until none are left.
pub fn run_microtasks(context: &mut Context) -> JsResult<()> {
    let ex = executor();
    loop {
        let asyncs: Vec<_> = ex.async_jobs.borrow_mut().drain(..).collect();
        for job in asyncs {
            let cell = RefCell::new(&mut *context);
            let mut future = job.call(&cell);
            // The module loader answers synchronously, so these futures finish in one poll;
            // one that does not is dropped rather than left to stall the cell.
            let mut cx = std::task::Context::from_waker(Waker::noop());
            if let Poll::Ready(result) = Pin::new(&mut future).poll(&mut cx) {
                result?;
            }
        }
        let promises: Vec<_> = ex.promise_jobs.borrow_mut().drain(..).collect();
        for job in promises {
            job.call(context)?;
        }
        let generics: Vec<_> = ex.generic_jobs.borrow_mut().drain(..).collect();
        for job in generics {
            job.call(context)?;
        }
        if !ex.has_pending_jobs() {
            context.clear_kept_objects();
            return Ok(());
        }
    }
}

/// What the loop needs from the kernel: the command channel and a place for commands that
/// arrive while a cell runs (they run after it).
pub struct Inbox<'a> {
    pub commands: &'a Receiver<HostFrame>,
    pub deferred: &'a mut VecDeque<HostFrame>,
    pub cell_id: u64,
}

/// Drives jobs until `promise` settles (or, without a promise, until microtasks are done).
pub fn drive(
    context: &mut Context,
    promise: Option<&JsPromise>,
    inbox: &mut Inbox<'_>,
) -> Result<(), Stop> {
    let ex = executor();
    loop {
        run_microtasks(context).map_err(Stop::Failed)?;
        let Some(promise) = promise else { return Ok(()) };
        if !matches!(promise.state(), PromiseState::Pending) {
            return Ok(());
        }
        let now = Instant::now();
        if let Some(timer) = ex.take_due_timer(now) {
            let result = timer.callback.call(&JsValue::undefined(), &[], context);
            ex.reschedule(timer, Instant::now());
            result.map_err(Stop::Failed)?;
            continue;
        }
        if run_due_timeout_job(context, now).map_err(Stop::Failed)? {
            continue;
        }
        if expire_tool_calls(context, now) {
            continue;
        }
        let wake = [ex.next_timer_due(), ex.next_tool_deadline()].into_iter().flatten().min();
        let command = match wake {
            Some(at) => match inbox.commands.recv_timeout(at.saturating_duration_since(now)) {
                Ok(cmd) => Some(cmd),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => crate::wire::exit_now(0),
            },
            None => match inbox.commands.recv() {
                Ok(cmd) => Some(cmd),
                Err(_) => crate::wire::exit_now(0),
            },
        };
        if let Some(cmd) = command {
            handle_command(context, cmd, inbox)?;
        }
    }
}

/// Acts on a command that arrived while the cell waits: tool replies and this cell's
/// interrupt now, anything else after the cell.
fn handle_command(
    context: &mut Context,
    cmd: HostFrame,
    inbox: &mut Inbox<'_>,
) -> Result<(), Stop> {
    match cmd {
        HostFrame::ToolResult { call_id, result, error } => {
            deliver_tool_result(context, call_id, result, error);
            Ok(())
        }
        HostFrame::Interrupt { id } if id == inbox.cell_id => Err(Stop::Interrupted),
        HostFrame::Interrupt { .. } => Ok(()),
        other => {
            inbox.deferred.push_back(other);
            Ok(())
        }
    }
}

fn run_due_timeout_job(context: &mut Context, now: Instant) -> JsResult<bool> {
    let ex = executor();
    let job = {
        let mut jobs = ex.timeout_jobs.borrow_mut();
        let pos = jobs.iter().position(|(due, _)| *due <= now);
        pos.map(|p| jobs.remove(p).1)
    };
    match job {
        Some(job) => job.call(context).map(|_| true),
        None => Ok(false),
    }
}

/// Resolves a tool call's promise with `{result}` or `{error}`; late replies are ignored.
pub fn deliver_tool_result(
    context: &mut Context,
    call_id: u64,
    result: Option<serde_json::Value>,
    error: Option<String>,
) {
    let Some(pending) = executor().tools.borrow_mut().remove(&call_id) else { return };
    let reply = match (error, result) {
        (Some(err), _) => json!({"error": err}),
        (None, Some(result)) => json!({"result": result}),
        (None, None) => json!({"result": {}}),
    };
    let value =
        JsValue::from_json(&reply, context).unwrap_or_else(|_| js_string!("bad reply").into());
    let _ = pending.resolve.call(&JsValue::undefined(), &[value], context);
}

/// A tool call without a reply by its deadline fails with `ToolError` (E41).
fn expire_tool_calls(context: &mut Context, now: Instant) -> bool {
    let expired: Vec<(u64, String)> = executor()
        .tools
        .borrow()
        .iter()
        .filter(|(_, t)| t.deadline <= now)
        .map(|(id, t)| (*id, t.name.clone()))
        .collect();
    for (call_id, name) in &expired {
        deliver_tool_result(
            context,
            *call_id,
            None,
            Some(format!("tool call {name} got no reply")),
        );
    }
    !expired.is_empty()
}

/// Sends `tool_cancel` for calls the cell no longer waits for and forgets them.
pub fn cancel_tool_calls() {
    let pending = std::mem::take(&mut *executor().tools.borrow_mut());
    for call_id in pending.keys() {
        emit(&KernelFrame::ToolCancel { call_id: *call_id });
    }
}
