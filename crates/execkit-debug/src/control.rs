//! Running the program: `continue`, the steps and `pause`, each waiting for the first stop or
//! end anywhere in the session tree that arrived after its request (a subprocess may stop
//! while its parent was continued). A wait that outlives the budget is reported as still
//! running (not an error); `pause` or `terminate` from another call ends the wait early.

use std::sync::{Arc, Mutex};

use execkit_dap::RequestError;
use execkit_dap::wire::StackTraceResponse;
use execkit_protocol::debug::DebugAction;
use serde_json::{Value, json};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use execkit_tool::CallContext;

use crate::progress;
use crate::render::{self, Reply};
use crate::runner::{Call, Waiter};
use crate::session::{Halt, Session, Status};

/// How a wait for the program ended.
pub(crate) enum WaitEnd {
    /// This session of the tree stopped or ended.
    Halted(Arc<Session>, Halt),
    TimedOut,
    Interrupted(&'static str),
}

/// Where each session's messages stood when a request was sent: a halt counts when it arrived
/// later. Arrival numbers are per connection, so each session has its own mark; a child that
/// opened after the request has none, and any of its halts counts.
pub(crate) struct Marks {
    root: Arc<Session>,
    marks: Vec<(String, u64)>,
}

impl Marks {
    /// `target`'s mark is `sent_after` (its request's own position); the others are their
    /// latest arrival.
    pub(crate) fn new(root: &Arc<Session>, target: &Session, sent_after: u64) -> Marks {
        let marks = crate::tree::members(root)
            .iter()
            .map(|s| {
                let mark = if s.id == target.id { sent_after } else { s.client.arrivals() };
                (s.id.clone(), mark)
            })
            .collect();
        Marks { root: root.clone(), marks }
    }

    fn mark_of(&self, id: &str) -> u64 {
        self.marks.iter().find(|(known, _)| known == id).map_or(0, |m| m.1)
    }

    /// The first session with a halt after its mark, and that halt.
    fn halted(&self) -> Option<(Arc<Session>, Halt)> {
        crate::tree::members(&self.root).into_iter().find_map(|session| {
            let mark = self.mark_of(&session.id);
            let halt = session.with(|s| s.halt_after(mark))?.1;
            Some((session, halt))
        })
    }
}

/// The thread a thread-level action targets: the given one, the last stop's, the first cached,
/// else the adapter's first.
pub(crate) async fn thread_for(
    session: &Session,
    given: Option<i64>,
    deadline: Instant,
) -> Result<i64, String> {
    if let Some(id) = given {
        return Ok(id);
    }
    let known = session
        .with(|s| s.stop.as_ref().and_then(|st| st.thread_id).or(s.threads.first().map(|t| t.id)));
    if let Some(id) = known {
        return Ok(id);
    }
    let threads: execkit_dap::wire::ThreadsResponse =
        session.client.call("threads", None, deadline).await.map_err(|e| e.to_string())?;
    session.with(|s| s.threads = threads.threads.clone());
    threads
        .threads
        .first()
        .map(|t| t.id)
        .ok_or_else(|| "The adapter reported no threads.".to_string())
}

/// `stackTrace {levels:1}` after a stop: the frame becomes current and the stop gets its place.
pub(crate) async fn fetch_top_frame(
    session: &Session,
    thread: Option<i64>,
    deadline: Instant,
) -> Result<(), RequestError> {
    let thread = match thread {
        Some(id) => id,
        None => match thread_for(session, None, deadline).await {
            Ok(id) => id,
            Err(_) => return Ok(()),
        },
    };
    let args = json!({"threadId": thread, "levels": 1});
    let trace: StackTraceResponse = session.client.call("stackTrace", Some(args), deadline).await?;
    let Some(top) = trace.stack_frames.first() else { return Ok(()) };
    session.with(|s| {
        if let Some(stop) = s.stop.as_mut() {
            stop.thread_id = Some(thread);
            stop.frame_id = Some(top.id);
            stop.frame_name = Some(top.name.clone());
            stop.path = top.source.as_ref().and_then(|src| src.path.clone().or(src.name.clone()));
            stop.line = Some(top.line);
            stop.column = Some(top.column);
            stop.instruction_pointer = top.instruction_pointer_reference.clone();
        }
    });
    Ok(())
}

/// Waits for the first halt in the tree after the marks, the deadline, or an interrupt.
pub(crate) async fn wait_halt(marks: &Marks, deadline: Instant, interrupt: &Waiter) -> WaitEnd {
    let mut halts = marks.root.halts.clone();
    loop {
        halts.borrow_and_update();
        if let Some((session, halt)) = marks.halted() {
            return WaitEnd::Halted(session, halt);
        }
        tokio::select! {
            changed = halts.changed() => {
                if changed.is_err() {
                    return WaitEnd::Halted(marks.root.clone(), Halt::Terminated);
                }
            }
            _ = tokio::time::sleep_until(deadline) => return WaitEnd::TimedOut,
            _ = interrupt.token.cancelled() => {
                let by = interrupt.by.lock().ok().and_then(|b| *b).unwrap_or("pause");
                return WaitEnd::Interrupted(by);
            }
        }
    }
}

/// `continue`, `step_over`, `step_in`, `step_out`, on the target session.
pub(crate) async fn resume(call: &mut Call<'_>) -> Reply {
    let (Some(root), Some(session)) = (call.state.session.clone(), call.state.target()) else {
        return Reply::default();
    };
    let p = &call.request.params;
    let command = match call.request.action {
        DebugAction::StepOver => "next",
        DebugAction::StepIn => "stepIn",
        DebugAction::StepOut => "stepOut",
        _ => "continue",
    };
    // Read together: while the program runs, every halt recorded so far is older than the
    // run, and one applied after this (it may have arrived already) comes later in arrival
    // order, so it ends the wait below.
    let (status, last_halt) =
        session.with(|s| (s.status, s.halts.back().map_or(0, |(arrival, _)| *arrival)));
    if status == Status::Terminated {
        // The program ended after the last result (a short program, no breakpoint hit):
        // its end is the answer, not a request to an adapter that has gone.
        return outcome(call, WaitEnd::Halted(session, Halt::Terminated)).await;
    }
    let waiter = Waiter { token: CancellationToken::new(), by: Arc::new(Mutex::new(None)) };
    if let Ok(mut slot) = call.inner.waiter.lock() {
        *slot = Some(waiter.clone());
    }
    // A program already running is only waited for: adapters need not answer `continue` for
    // a thread that is not stopped (debugpy never does), and no thread is needed for it.
    let end = if command == "continue" && status == Status::Running {
        let marks = Marks::new(&root, &session, last_halt);
        Ok(wait_or_cancel(&marks, call.deadline, &waiter, call.ctx).await)
    } else {
        match thread_for(&session, p.thread_id, call.deadline).await {
            Ok(thread) => {
                let mut args = json!({"threadId": thread});
                if let Some(granularity) = p.granularity {
                    args["granularity"] = serde_json::to_value(granularity).unwrap_or(Value::Null);
                }
                run_and_wait(&root, &session, (command, args), &waiter, call).await
            }
            Err(text) => Err(text),
        }
    };
    if let Ok(mut slot) = call.inner.waiter.lock() {
        *slot = None;
    }
    match end {
        Ok(end) => outcome(call, end).await,
        Err(text) => Reply::error(text),
    }
}

/// Sends a request that lets the program run (or stops it) and waits for its answer; the
/// marks say where each session stood when it was sent.
async fn send_run_request(
    root: &Arc<Session>,
    session: &Session,
    (command, args): (&str, Value),
    deadline: Instant,
) -> Result<Marks, String> {
    let pending = session.client.send(command, Some(args)).await.map_err(|e| e.to_string())?;
    let marks = Marks::new(root, session, pending.sent_after);
    pending.wait(deadline).await.and_then(|a| a.into_result()).map_err(|e| e.to_string())?;
    Ok(marks)
}

async fn run_and_wait(
    root: &Arc<Session>,
    session: &Session,
    request: (&str, Value),
    waiter: &Waiter,
    call: &Call<'_>,
) -> Result<WaitEnd, String> {
    let marks = send_run_request(root, session, request, call.deadline).await?;
    // The stop may already be in: the pump applies events as they arrive.
    let mark = marks.mark_of(&session.id);
    session.with(|s| {
        if s.halt_after(mark).is_none() {
            s.status = Status::Running;
            s.stop = None;
        }
    });
    Ok(wait_or_cancel(&marks, call.deadline, waiter, call.ctx).await)
}

async fn wait_or_cancel(
    marks: &Marks,
    deadline: Instant,
    waiter: &Waiter,
    ctx: &CallContext,
) -> WaitEnd {
    let report = async {
        match ctx.progress.clone() {
            Some(sink) => progress::report(sink, marks.root.ring.clone(), deadline).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        end = wait_halt(marks, deadline, waiter) => end,
        _ = ctx.cancel.cancelled() => WaitEnd::Interrupted("cancel"),
        () = report => WaitEnd::TimedOut,
    }
}

/// The headline, `state` and `timed_out` for how a wait ended; a stop's top frame is fetched
/// first, so the headline can say where.
async fn headline(call: &Call<'_>, end: &WaitEnd) -> (String, &'static str, bool) {
    match end {
        WaitEnd::Halted(session, Halt::Stopped(body)) => {
            let until = Instant::now() + std::time::Duration::from_secs(10);
            let _ = fetch_top_frame(session, body.thread_id, until).await;
            let stop = session.with(|s| s.stop.clone()).unwrap_or_default();
            (render::stop_line(&stop, &session.cwd), "stopped", false)
        }
        WaitEnd::Halted(_, Halt::Exited(code)) => {
            (format!("Program exited with code {code}."), "exited", false)
        }
        WaitEnd::Halted(session, Halt::Terminated) => match session.with(|s| s.exit_code) {
            Some(code) => (format!("Program exited with code {code}."), "exited", false),
            None => ("Program terminated.".to_string(), "terminated", false),
        },
        WaitEnd::TimedOut => (
            format!(
                "Still running after {} s; nothing stopped it. Use \"pause\" to interrupt or \"continue\" to keep waiting.",
                call.request.timeout_s
            ),
            "running",
            true,
        ),
        WaitEnd::Interrupted(by) => (format!("Interrupted by {by}."), "running", false),
    }
}

/// The text and fields for how a wait ended, about the session that halted (a child that
/// stopped says so in its snapshot and in `session`).
pub(crate) async fn outcome(call: &mut Call<'_>, end: WaitEnd) -> Reply {
    let (headline, state, timed_out) = headline(call, &end).await;
    let session = match end {
        WaitEnd::Halted(session, _) => Some(session),
        _ => call.state.target(),
    };
    let Some(session) = session else { return Reply::default() };
    let stop = session.with(|s| s.stop.clone());
    let exit_code = session.with(|s| s.exit_code);
    let mut lines = render::snapshot(&session, &mut call.state.shown, &mut call.redactor);
    lines.retain(|l| !l.starts_with("Stopped at "));
    lines.insert(0, headline);
    let mut reply = Reply { lines, ..Reply::default() }
        .field("state", state)
        .field("timed_out", timed_out)
        .field("exit_code", json!(exit_code))
        .field("session", render::summary(&session));
    if let Some(stop) = stop {
        reply = reply.field(
            "stop",
            json!({"reason": stop.reason, "thread_id": stop.thread_id,
            "frame_id": stop.frame_id, "frame_name": stop.frame_name, "path": stop.path,
            "line": stop.line, "session": session.id}),
        );
    }
    reply
}

/// `pause`: at once when already stopped, else `pause` and wait for the stop.
pub(crate) async fn pause(call: &mut Call<'_>) -> Reply {
    let (Some(root), Some(session)) = (call.state.session.clone(), call.state.target()) else {
        return Reply::default();
    };
    if session.status() == Status::Stopped {
        let lines = render::snapshot(&session, &mut call.state.shown, &mut call.redactor);
        return Reply { lines, ..Reply::default() }.field("state", "stopped");
    }
    let thread = match thread_for(&session, call.request.params.thread_id, call.deadline).await {
        Ok(thread) => thread,
        Err(text) => return Reply::error(text),
    };
    let waiter = Waiter { token: CancellationToken::new(), by: Arc::new(Mutex::new(None)) };
    let request = ("pause", json!({"threadId": thread}));
    let marks = match send_run_request(&root, &session, request, call.deadline).await {
        Ok(marks) => marks,
        Err(text) => return Reply::error(text),
    };
    match wait_halt(&marks, call.deadline, &waiter).await {
        WaitEnd::TimedOut => Reply::error(format!(
            "Pause was sent but the program did not stop within {} s.",
            call.request.timeout_s
        )),
        end => outcome(call, end).await,
    }
}
