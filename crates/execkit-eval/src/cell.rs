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
    pub interrupt_grace: Duration,
}

type ToolJoin = (u64, String, ToolResult, Duration);

impl Kernel {
    /// Runs one cell to its end. Never panics on kernel input.
    pub async fn run_cell(&self, run: CellRun<'_>, obs: &mut dyn CellObserver) -> CellOutcome {
        let id = self.next_id();
        let mut events = self.events.lock().await;
        let start = Instant::now();
        let mut out = CellOutcome {
            end: CellEnd::Ok,
            execution_count: None,
            bad_frames: 0,
            duration: Duration::ZERO,
            cpu_ms: None,
            tool_calls: Vec::new(),
        };
        let cpu_before = crate::kernel::cpu_ms(self.pid);
        let execute = HostFrame::Execute {
            id,
            code: run.code.to_string(),
            timeout_ms: run.timeout.as_millis() as u64,
            cell: CellRef { index: run.index, title: run.title.clone() },
            tools: run.tools.clone(),
        };
        if self.cmd.send(execute).await.is_err() {
            out.end = CellEnd::Crashed(self.wait_exit(Duration::from_secs(1)).await);
            return out;
        }
        let deadline = start + run.timeout;
        let mut stopping: Option<(Stop, Instant)> = None;
        let mut got_error = false;
        let mut tools: JoinSet<ToolJoin> = JoinSet::new();
        let mut pending: HashMap<u64, (tokio::task::AbortHandle, String, Instant)> = HashMap::new();
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let far = start + Duration::from_secs(86_400 * 365);
        loop {
            let kill_at = stopping.map_or(far, |(_, at)| at);
            tokio::select! {
                biased;
                event = events.recv() => {
                    let frame = match event {
                        Some(Event::Frame(frame)) => frame,
                        Some(Event::Bad(_)) => {
                            out.bad_frames += 1;
                            if out.bad_frames > MAX_BAD_LINES {
                                self.kill().await;
                                out.end = CellEnd::ProtocolError(
                                    "more than 100 malformed lines in one cell".into());
                                break;
                            }
                            continue;
                        }
                        Some(Event::TooLong) => {
                            self.kill().await;
                            out.end = CellEnd::ProtocolError("a frame line over 16 MiB".into());
                            break;
                        }
                        Some(Event::Closed) | None => {
                            let status = self.wait_exit(Duration::from_secs(2)).await;
                            out.end = match stopping {
                                Some((stop, _)) => CellEnd::Killed(stop),
                                None => CellEnd::Crashed(status),
                            };
                            break;
                        }
                    };
                    if self.trace {
                        trace_frame(&frame);
                    }
                    match frame {
                        KernelFrame::Started { id: fid, execution_count } if fid == id => {
                            out.execution_count = Some(execution_count);
                        }
                        KernelFrame::Stream { id: fid, name, text } if fid == id => {
                            obs.stream(name, &text);
                        }
                        KernelFrame::Display { id: fid, data, metadata } if fid == id => {
                            obs.display(data, metadata, false);
                        }
                        KernelFrame::Result { id: fid, data, metadata } if fid == id => {
                            obs.display(data, metadata, true);
                        }
                        KernelFrame::Error { id: fid, ename, evalue, traceback }
                            if fid == id && !got_error =>
                        {
                            got_error = true;
                            obs.error(&ename, &evalue, &traceback);
                        }
                        KernelFrame::ToolCall { id: fid, call_id, name, args } => {
                            let refusal = if fid != id {
                                Some("tool calls are only possible while a cell is running".into())
                            } else {
                                self.check_tool_call(&run, &name, &args, pending.len())
                            };
                            if let Some(error) = refusal {
                                let reply = HostFrame::ToolResult { call_id, result: None, error: Some(error) };
                                let _ = self.cmd.send(reply).await;
                                continue;
                            }
                            if let Some(callback) = run.callback.clone() {
                                let remaining = deadline.saturating_duration_since(Instant::now());
                                let began = Instant::now();
                                let tool = name.clone();
                                let handle = tools.spawn(async move {
                                    let fut = callback(tool.clone(), args);
                                    let result = match tokio::time::timeout(remaining, fut).await {
                                        Ok(result) => result,
                                        Err(_) => ToolResult::error(format!(
                                            "tool.{tool} ran past the cell's remaining time and was cancelled"
                                        )),
                                    };
                                    (call_id, tool, result, began.elapsed())
                                });
                                pending.insert(call_id, (handle, name, began));
                            }
                        }
                        KernelFrame::ToolCancel { call_id } => {
                            if let Some((handle, name, began)) = pending.remove(&call_id) {
                                handle.abort();
                                out.tool_calls.push(ToolCallRecord {
                                    name, is_error: true, duration_ms: began.elapsed().as_millis() as u64,
                                });
                                let reply = HostFrame::ToolResult {
                                    call_id, result: None,
                                    error: Some("cancelled: the cell was interrupted".into()),
                                };
                                let _ = self.cmd.send(reply).await;
                            }
                        }
                        KernelFrame::Done { id: fid, status, execution_count } if fid == id => {
                            out.execution_count = Some(execution_count);
                            out.end = match (status, stopping) {
                                (DoneStatus::Interrupted, Some((stop, _))) => CellEnd::Interrupted(stop),
                                (DoneStatus::Ok, _) => CellEnd::Ok,
                                _ => CellEnd::Error,
                            };
                            break;
                        }
                        _ => out.bad_frames += 1,
                    }
                }
                Some(joined) = tools.join_next(), if !tools.is_empty() => {
                    let Ok((call_id, name, result, took)) = joined else { continue };
                    pending.remove(&call_id);
                    out.tool_calls.push(ToolCallRecord {
                        name, is_error: result.is_error, duration_ms: took.as_millis() as u64,
                    });
                    let value = serde_json::to_value(&result).unwrap_or(Value::Null);
                    let reply = HostFrame::ToolResult { call_id, result: Some(value), error: None };
                    let _ = self.cmd.send(reply).await;
                }
                _ = sleep_until(deadline), if stopping.is_none() => {
                    if let (Some(b), Some(a)) = (cpu_before, crate::kernel::cpu_ms(self.pid)) {
                        out.cpu_ms = Some(a.saturating_sub(b));
                    }
                    self.tree.signal(libc::SIGINT);
                    stopping = Some((Stop::Timeout, Instant::now() + run.interrupt_grace));
                }
                _ = run.cancel.cancelled(), if stopping.is_none() => {
                    self.tree.signal(libc::SIGINT);
                    stopping = Some((Stop::Cancel, Instant::now() + run.interrupt_grace));
                }
                _ = sleep_until(kill_at), if stopping.is_some() => {
                    self.kill().await;
                    out.end = CellEnd::Killed(stopping.map_or(Stop::Timeout, |(s, _)| s));
                    break;
                }
                _ = tick.tick() => obs.tick(start.elapsed()),
            }
        }
        // Outstanding tool calls end with the cell (E41): their processes are killed.
        let why = match stopping {
            Some((Stop::Timeout, _)) => "cancelled: the cell timed out",
            _ => "cancelled: the cell was interrupted",
        };
        for (call_id, (handle, name, began)) in pending.drain() {
            handle.abort();
            out.tool_calls.push(ToolCallRecord {
                name,
                is_error: true,
                duration_ms: began.elapsed().as_millis() as u64,
            });
            let reply = HostFrame::ToolResult { call_id, result: None, error: Some(why.into()) };
            let _ = self.cmd.try_send(reply);
        }
        tools.abort_all();
        out.duration = start.elapsed();
        if let (None, Some(before), Some(after)) =
            (out.cpu_ms, cpu_before, crate::kernel::cpu_ms(self.pid))
        {
            out.cpu_ms = Some(after.saturating_sub(before));
        }
        out
    }

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
