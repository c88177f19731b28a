//! Running one cell on a kernel: the frame loop, timeouts, cancellation and tool calls.
//!
//! The loop races the kernel's frames against the cell deadline, the caller's cancellation,
//! finished tool calls and a 100 ms progress tick. On timeout or cancellation the kernel's
//! process group gets SIGINT (P16); if no `done` follows within the grace the group is
//! SIGKILLed (P17). Frames with a foreign id, a second `error`, unknown types and unparsable
//! lines are counted in `bad_frames` and otherwise ignored (E31).

use std::collections::HashMap;
use std::time::Duration;

use execkit_process::{CancellationToken, ExitStatus};
use execkit_protocol::ToolResult;
use serde_json::{Map, Value};
use tokio::task::JoinSet;
use tokio::time::{Instant, sleep_until};

use crate::ToolCallback;
use crate::backend::Interruption;
use crate::frame::{CellRef, DoneStatus, HostFrame, KernelFrame, StreamName};
use crate::kernel::{Event, Kernel};

/// More malformed lines than this in one cell is a protocol violation (E31).
const MAX_BAD_LINES: u32 = 100;
/// At most this many tool calls may be outstanding per cell (E41).
const MAX_TOOL_CALLS: usize = 8;
/// Largest `args` object a cell may send to a tool (E41).
const MAX_TOOL_ARGS: usize = 1024 * 1024;

/// Receives a cell's output in the order the kernel produced it.
pub trait CellObserver: Send {
    fn stream(&mut self, name: StreamName, text: &str);
    /// A `display` (or, with `result`, the cell's value). `metadata` is the frame's own
    /// (`{"json": value}` carries a built-in value's JSON copy for programs, P10).
    fn display(&mut self, data: Map<String, Value>, metadata: Option<Value>, result: bool);
    fn error(&mut self, ename: &str, evalue: &str, traceback: &[String]);
    /// Every 100 ms while the cell runs.
    fn tick(&mut self, _elapsed: Duration) {}
}

/// Why the host stopped a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    Timeout,
    Cancel,
}

/// How a cell ended, host side.
#[derive(Debug, Clone, PartialEq)]
pub enum CellEnd {
    Ok,
    Error,
    /// The kernel reported `done: interrupted` after our SIGINT: variables are kept.
    Interrupted(Stop),
    /// The interrupt was ignored for the grace: the kernel was killed.
    Killed(Stop),
    /// The kernel died during the cell.
    Crashed(Option<ExitStatus>),
    /// The kernel broke the protocol and was killed.
    ProtocolError(String),
}

/// One tool call made by the cell (E42).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallRecord {
    pub name: String,
    pub is_error: bool,
    pub duration_ms: u64,
}

#[derive(Debug, Clone)]
pub struct CellOutcome {
    pub end: CellEnd,
    pub execution_count: Option<u64>,
    pub bad_frames: u32,
    pub duration: Duration,
    /// CPU time of the kernel during the cell (E20 `cpu_ms`), where the platform reports it.
    pub cpu_ms: Option<u64>,
    pub tool_calls: Vec<ToolCallRecord>,
}

/// What to run.
pub struct CellRun<'a> {
    pub code: &'a str,
    pub timeout: Duration,
    pub index: usize,
    pub title: Option<String>,
    pub tools: Vec<String>,
    pub callback: Option<ToolCallback>,
    pub cancel: CancellationToken,
    /// How the cell is stopped; with [`Interruption::Signal`], the grace before SIGKILL.
    pub interruption: Interruption,
    pub interrupt_grace: Duration,
}

type ToolJoin = (u64, String, ToolResult, Duration);

/// A tool call the cell is waiting for: how to abort it, its name, when it began.
type Pending = (tokio::task::AbortHandle, String, Instant);

/// What the loop does after handling one thing.
enum Flow {
    Continue,
    End(CellEnd),
}

/// The state of one cell's frame loop.
struct CellLoop<'k, 'r> {
    kernel: &'k Kernel,
    run: &'r CellRun<'r>,
    /// The execute id: frames with another id are not this cell's.
    id: u64,
    start: Instant,
    deadline: Instant,
    out: CellOutcome,
    /// Why and until when the host waits for `done` after its SIGINT.
    stopping: Option<(Stop, Instant)>,
    got_error: bool,
    tools: JoinSet<ToolJoin>,
    pending: HashMap<u64, Pending>,
    cpu_before: Option<u64>,
}

impl Kernel {
    /// Runs one cell to its end. Never panics on kernel input.
    pub async fn run_cell(&self, run: CellRun<'_>, obs: &mut dyn CellObserver) -> CellOutcome {
        let mut events = self.events.lock().await;
        let mut lp = CellLoop::new(self, &run);
        if self.cmd.send(lp.execute_frame()).await.is_err() {
            // Nothing ran: no duration, no CPU time, no tool calls to end.
            lp.out.end = CellEnd::Crashed(self.wait_exit(Duration::from_secs(1)).await);
            return lp.out;
        }
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let far = lp.start + Duration::from_secs(86_400 * 365);
        loop {
            let kill_at = lp.stopping.map_or(far, |(_, at)| at);
            let stopping = lp.stopping.is_some();
            let flow = tokio::select! {
                biased;
                event = events.recv() => lp.on_event(event, obs).await,
                Some(joined) = lp.tools.join_next(), if !lp.tools.is_empty() => {
                    lp.on_tool_done(joined).await
                }
                _ = sleep_until(lp.deadline), if !stopping => lp.begin_stop(Stop::Timeout),
                _ = run.cancel.cancelled(), if !stopping => lp.begin_stop(Stop::Cancel),
                _ = sleep_until(kill_at), if stopping => {
                    self.kill().await;
                    Flow::End(CellEnd::Killed(lp.stopping.map_or(Stop::Timeout, |(s, _)| s)))
                }
                _ = tick.tick() => {
                    obs.tick(lp.start.elapsed());
                    Flow::Continue
                }
            };
            if let Flow::End(end) = flow {
                return lp.finish(end);
            }
        }
    }
}

impl<'k, 'r> CellLoop<'k, 'r> {
    fn new(kernel: &'k Kernel, run: &'r CellRun<'r>) -> CellLoop<'k, 'r> {
        let start = Instant::now();
        CellLoop {
            kernel,
            run,
            id: kernel.next_id(),
            start,
            deadline: start + run.timeout,
            out: CellOutcome {
                end: CellEnd::Ok,
                execution_count: None,
                bad_frames: 0,
                duration: Duration::ZERO,
                cpu_ms: None,
                tool_calls: Vec::new(),
            },
            stopping: None,
            got_error: false,
            tools: JoinSet::new(),
            pending: HashMap::new(),
            cpu_before: kernel.cpu.as_ref().and_then(|c| c.with_children_ms()),
        }
    }

    fn execute_frame(&self) -> HostFrame {
        HostFrame::Execute {
            id: self.id,
            code: self.run.code.to_string(),
            timeout_ms: self.run.timeout.as_millis() as u64,
            cell: CellRef { index: self.run.index, title: self.run.title.clone() },
            tools: self.run.tools.clone(),
        }
    }

    /// The kernel's CPU time since the cell began, where the platform reports it.
    fn cpu_since_start(&self) -> Option<u64> {
        let (before, after) =
            (self.cpu_before?, self.kernel.cpu.as_ref().and_then(|c| c.with_children_ms())?);
        Some(after.saturating_sub(before))
    }

    /// One thing from the event reader: a frame, a bad line, or the end of the pipe.
    async fn on_event(&mut self, event: Option<Event>, obs: &mut dyn CellObserver) -> Flow {
        match event {
            Some(Event::Frame(frame)) => {
                if self.kernel.trace {
                    trace_frame(&frame);
                }
                self.on_frame(frame, obs).await
            }
            Some(Event::Bad(_)) => {
                self.out.bad_frames += 1;
                if self.out.bad_frames <= MAX_BAD_LINES {
                    return Flow::Continue;
                }
                self.kernel.kill().await;
                Flow::End(CellEnd::ProtocolError(
                    "more than 100 malformed lines in one cell".into(),
                ))
            }
            Some(Event::TooLong) => {
                self.kernel.kill().await;
                Flow::End(CellEnd::ProtocolError("a frame line over 16 MiB".into()))
            }
            Some(Event::Closed) | None => {
                let status = self.kernel.wait_exit(Duration::from_secs(2)).await;
                Flow::End(match self.stopping {
                    Some((stop, _)) => CellEnd::Killed(stop),
                    None => CellEnd::Crashed(status),
                })
            }
        }
    }

    async fn on_frame(&mut self, frame: KernelFrame, obs: &mut dyn CellObserver) -> Flow {
        let id = self.id;
        match frame {
            KernelFrame::Started { id: fid, execution_count } if fid == id => {
                self.out.execution_count = Some(execution_count);
            }
            KernelFrame::Stream { id: fid, name, text } if fid == id => obs.stream(name, &text),
            KernelFrame::Display { id: fid, data, metadata } if fid == id => {
                obs.display(data, metadata, false);
            }
            KernelFrame::Result { id: fid, data, metadata } if fid == id => {
                obs.display(data, metadata, true);
            }
            KernelFrame::Error { id: fid, ename, evalue, traceback }
                if fid == id && !self.got_error =>
            {
                self.got_error = true;
                obs.error(&ename, &evalue, &traceback);
            }
            KernelFrame::ToolCall { id: fid, call_id, name, args } => {
                self.on_tool_call(fid == id, call_id, name, args).await;
            }
            KernelFrame::ToolCancel { call_id } => self.on_tool_cancel(call_id).await,
            // The answer to the snapshot asked for after the previous cell (it queued first).
            KernelFrame::SnapshotDone { id: fid, skipped, .. } => {
                if !self.kernel.cell_snapshot_done(fid, skipped) {
                    self.out.bad_frames += 1;
                }
            }
            KernelFrame::Done { id: fid, status, execution_count } if fid == id => {
                self.out.execution_count = Some(execution_count);
                return Flow::End(match (status, self.stopping) {
                    (DoneStatus::Interrupted, Some((stop, _))) => CellEnd::Interrupted(stop),
                    (DoneStatus::Ok, _) => CellEnd::Ok,
                    _ => CellEnd::Error,
                });
            }
            _ => self.out.bad_frames += 1,
        }
        Flow::Continue
    }

    /// A `tool.<name>(args)` call from the cell: refused with a reason, or started with the
    /// cell's remaining time as its budget.
    async fn on_tool_call(&mut self, ours: bool, call_id: u64, name: String, args: Value) {
        let refusal = if ours {
            self.kernel.check_tool_call(self.run, &name, &args, self.pending.len())
        } else {
            Some("tool calls are only possible while a cell is running".into())
        };
        if let Some(error) = refusal {
            let reply = HostFrame::ToolResult { call_id, result: None, error: Some(error) };
            let _ = self.kernel.cmd.send(reply).await;
            return;
        }
        let Some(callback) = self.run.callback.clone() else { return };
        let remaining = self.deadline.saturating_duration_since(Instant::now());
        let began = Instant::now();
        let tool = name.clone();
        let handle = self.tools.spawn(async move {
            let fut = callback(tool.clone(), args);
            let result = match tokio::time::timeout(remaining, fut).await {
                Ok(result) => result,
                Err(_) => ToolResult::error(format!(
                    "tool.{tool} ran past the cell's remaining time and was cancelled"
                )),
            };
            (call_id, tool, result, began.elapsed())
        });
        self.pending.insert(call_id, (handle, name, began));
    }

    /// The cell gave up waiting for a tool call (its own timeout or interrupt).
    async fn on_tool_cancel(&mut self, call_id: u64) {
        let Some((handle, name, began)) = self.pending.remove(&call_id) else { return };
        handle.abort();
        self.record_cancelled(name, began);
        let reply = HostFrame::ToolResult {
            call_id,
            result: None,
            error: Some("cancelled: the cell was interrupted".into()),
        };
        let _ = self.kernel.cmd.send(reply).await;
    }

    async fn on_tool_done(&mut self, joined: Result<ToolJoin, tokio::task::JoinError>) -> Flow {
        let Ok((call_id, name, result, took)) = joined else { return Flow::Continue };
        self.pending.remove(&call_id);
        self.out.tool_calls.push(ToolCallRecord {
            name,
            is_error: result.is_error,
            duration_ms: took.as_millis() as u64,
        });
        let value = serde_json::to_value(&result).unwrap_or(Value::Null);
        let reply = HostFrame::ToolResult { call_id, result: Some(value), error: None };
        let _ = self.kernel.cmd.send(reply).await;
        Flow::Continue
    }

    /// Timeout or cancellation: interrupt the cell and wait the grace for `done` — SIGINT to
    /// the kernel's group (spec P16–P17) or an `interrupt` frame (JS16). The CPU time is
    /// taken now, before the interrupt handler runs.
    fn begin_stop(&mut self, stop: Stop) -> Flow {
        if stop == Stop::Timeout {
            self.out.cpu_ms = self.cpu_since_start().or(self.out.cpu_ms);
        }
        let grace = match self.run.interruption {
            Interruption::Signal => {
                self.kernel.tree.signal(libc::SIGINT);
                self.run.interrupt_grace
            }
            Interruption::Frame { grace } => {
                // A full command queue means the kernel is not reading: the kill follows.
                let _ = self.kernel.cmd.try_send(HostFrame::Interrupt { id: self.id });
                grace
            }
        };
        self.stopping = Some((stop, Instant::now() + grace));
        Flow::Continue
    }

    fn record_cancelled(&mut self, name: String, began: Instant) {
        let duration_ms = began.elapsed().as_millis() as u64;
        self.out.tool_calls.push(ToolCallRecord { name, is_error: true, duration_ms });
    }

    /// Outstanding tool calls end with the cell (spec E41): their processes are killed and
    /// the kernel is told why.
    fn finish(mut self, end: CellEnd) -> CellOutcome {
        let why = match self.stopping {
            Some((Stop::Timeout, _)) => "cancelled: the cell timed out",
            _ => "cancelled: the cell was interrupted",
        };
        let pending: Vec<(u64, Pending)> = self.pending.drain().collect();
        for (call_id, (handle, name, began)) in pending {
            handle.abort();
            self.record_cancelled(name, began);
            let reply = HostFrame::ToolResult { call_id, result: None, error: Some(why.into()) };
            let _ = self.kernel.cmd.try_send(reply);
        }
        self.tools.abort_all();
        self.out.end = end;
        self.out.duration = self.start.elapsed();
        if self.out.cpu_ms.is_none() {
            self.out.cpu_ms = self.cpu_since_start();
        }
        self.out
    }
}

impl Kernel {
    fn check_tool_call(
        &self,
        run: &CellRun<'_>,
        name: &str,
        args: &Value,
        outstanding: usize,
    ) -> Option<String> {
        if name == "eval" {
            return Some("tool.eval cannot be called from an eval cell".into());
        }
        if !run.tools.iter().any(|t| t == name) || run.callback.is_none() {
            return Some(format!("unknown tool \"{name}\"; callable: {}", run.tools.join(", ")));
        }
        if !args.is_object() {
            return Some(format!("tool.{name}: args must be an object"));
        }
        if serde_json::to_vec(args).map_or(0, |v| v.len()) > MAX_TOOL_ARGS {
            return Some(format!("tool.{name}: args exceed 1 MiB"));
        }
        if outstanding >= MAX_TOOL_CALLS {
            return Some(format!(
                "tool.{name}: at most {MAX_TOOL_CALLS} tool calls may be outstanding per cell"
            ));
        }
        None
    }
}

fn trace_frame(frame: &KernelFrame) {
    let text = serde_json::to_string(frame).unwrap_or_default();
    let cut: String = text.chars().take(200).collect();
    // Tracing goes to the diagnostic log only when EXECKIT_EVAL_TRACE=1.
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        format!("eval frame: {cut}\n").as_bytes(),
    );
}
