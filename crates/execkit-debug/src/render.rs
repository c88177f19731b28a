//! The reply of one action and the texts shared by several: the session summary, the
//! snapshot after a start or a stop, paths shown relative to the session's directory.

use std::path::Path;
use std::time::UNIX_EPOCH;

use execkit_dap::wire::Capabilities;
use execkit_protocol::{Content, ToolResult};
use serde_json::{Map, Value, json};

use crate::redact::Redactor;
use crate::ring::{self, OutputRing};
use crate::session::{Session, StopInfo};

/// How much new output a snapshot quotes.
pub const SNAPSHOT_OUTPUT_BYTES: usize = 4096;

/// What an action produced, before the common parts (session, notices, ignored fields) are
/// added and it becomes the result.
#[derive(Debug, Clone, Default)]
pub struct Reply {
    pub lines: Vec<String>,
    pub fields: Map<String, Value>,
    pub is_error: bool,
}

impl Reply {
    pub fn text(text: impl Into<String>) -> Reply {
        Reply { lines: vec![text.into()], ..Reply::default() }
    }

    pub fn error(text: impl Into<String>) -> Reply {
        Reply { lines: vec![text.into()], is_error: true, ..Reply::default() }
    }

    pub fn field(mut self, name: &str, value: impl Into<Value>) -> Reply {
        self.fields.insert(name.to_string(), value.into());
        self
    }

    pub fn line(mut self, line: impl Into<String>) -> Reply {
        self.lines.push(line.into());
        self
    }

    pub fn into_result(mut self, action: &str, redacted: u64) -> ToolResult {
        self.fields.insert("action".into(), json!(action));
        if redacted > 0 {
            self.fields.insert("redacted".into(), json!(redacted));
        }
        let mut ordered = Map::new();
        ordered.insert("action".into(), json!(action));
        ordered.extend(self.fields.into_iter().filter(|(k, _)| k != "action"));
        ToolResult {
            content: vec![Content::text(self.lines.join("\n"))],
            structured_content: Some(Value::Object(ordered)),
            is_error: self.is_error,
        }
    }
}

/// `path` relative to `cwd` when it lies below it.
pub fn relative(path: &str, cwd: &Path) -> String {
    Path::new(path)
        .strip_prefix(cwd)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| path.to_string())
}

/// `Stopped at add (calc.py:3): breakpoint.`
pub fn stop_line(stop: &StopInfo, cwd: &Path) -> String {
    let frame = stop.frame_name.as_deref().unwrap_or("?");
    let place = match (&stop.path, stop.line) {
        (Some(path), Some(line)) => format!(" ({}:{line})", relative(path, cwd)),
        (None, Some(line)) if line > 0 => format!(" (line {line})"),
        _ => String::new(),
    };
    let reason = match &stop.description {
        Some(d) if !d.is_empty() && d != &stop.reason => format!("{} ({d})", stop.reason),
        _ => stop.reason.clone(),
    };
    format!("Stopped at {frame}{place}: {reason}.")
}

fn stop_json(stop: &StopInfo) -> Value {
    json!({
        "reason": stop.reason, "description": stop.description, "thread_id": stop.thread_id,
        "frame_id": stop.frame_id, "frame_name": stop.frame_name, "path": stop.path,
        "line": stop.line, "column": stop.column, "instruction_pointer": stop.instruction_pointer,
    })
}

/// The session summary (`sessions`, and `session` in every result).
pub fn summary(session: &Session) -> Value {
    let (out_bytes, out_dropped) = {
        let ring = session.ring.lock().unwrap_or_else(|e| e.into_inner());
        (ring.bytes_total, ring.bytes_dropped)
    };
    let stats = session.client.stats();
    let caps = session.capability_summary.clone();
    session.with(|s| {
        json!({
            "id": session.id, "adapter": session.def.name, "adapter_path": session.adapter_path,
            "adapter_pid": session.client.process().map(|p| p.pid()),
            "status": s.status.as_str(),
            "request": if session.attached { "attach" } else { "launch" },
            "program": session.program.as_ref().map(|p| p.display().to_string()),
            "cwd": session.cwd.display().to_string(), "pid": s.pid,
            "stop": s.stop.as_ref().map(stop_json), "exit_code": s.exit_code,
            "parent_id": session.parent_id, "child_ids": child_ids(session),
            "output_bytes": out_bytes, "output_dropped": out_dropped,
            "capabilities": caps,
            "dropped_messages": stats.dropped_bodies + stats.dropped_events,
            "resyncs": stats.resyncs,
            "started_at": s.started_at.duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
            "last_used_ms_ago": s.last_used.elapsed().as_millis() as u64,
        })
    })
}

/// The children a session's adapter asked for (a root's; a child's own children).
fn child_ids(session: &Session) -> Vec<String> {
    let children = session.tree.children().into_iter();
    children.filter(|c| c.parent_id.as_deref() == Some(&session.id)).map(|c| c.id.clone()).collect()
}

/// `Session debug-1 (debugpy): stopped`; a child names its parent and process:
/// `Session debug-2 (debugpy, child of debug-1, pid 4242): stopped`.
pub fn session_line(session: &Session) -> String {
    let status = session.status();
    let origin = match &session.parent_id {
        Some(parent) => {
            let pid = session.with(|s| s.pid).map(|p| format!(", pid {p}")).unwrap_or_default();
            format!(", child of {parent}{pid}")
        }
        None => String::new(),
    };
    format!("Session {} ({}{origin}): {}", session.id, session.def.name, status.as_str())
}

/// The true capability flags, plus the exception filter ids. Computed once per session
/// ([`Session::capability_summary`]): every result's session summary carries it.
pub fn capability_summary(capabilities: &Capabilities) -> Value {
    let caps = serde_json::to_value(capabilities).unwrap_or(Value::Null);
    let mut flags: Vec<String> = caps
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(_, v)| v.as_bool() == Some(true))
        .map(|(k, _)| k.clone())
        .collect();
    flags.sort();
    let filters: Vec<String> = capabilities
        .exception_breakpoint_filters
        .iter()
        .flatten()
        .map(|f| f.filter.clone())
        .collect();
    json!({"flags": flags, "exception_filters": filters})
}

/// The session line, the program, the stop, and new output.
pub fn snapshot(session: &Session, shown: &mut u64, redactor: &mut Redactor) -> Vec<String> {
    let mut lines = vec![session_line(session)];
    if let Some(program) = &session.program {
        lines.push(format!("Program: {}", relative(&program.display().to_string(), &session.cwd)));
    }
    if let Some(stop) = session.with(|s| s.stop.clone()) {
        lines.push(stop_line(&stop, &session.cwd));
    }
    lines.extend(new_output(&session.ring, shown, redactor));
    lines
}

/// Output produced since the previous result, at most [`SNAPSHOT_OUTPUT_BYTES`].
pub fn new_output(
    ring: &std::sync::Mutex<OutputRing>,
    shown: &mut u64,
    redactor: &mut Redactor,
) -> Vec<String> {
    let ring = ring.lock().unwrap_or_else(|e| e.into_inner());
    let from = (*shown).max(ring.first_offset());
    let skipped_before = from - *shown;
    let chunks = ring.since(from, None);
    *shown = ring.bytes_total;
    if chunks.is_empty() {
        return Vec::new();
    }
    let text = redactor.text(&ring::render(&chunks));
    let cut = text.len().saturating_sub(SNAPSHOT_OUTPUT_BYTES);
    let earlier = skipped_before + cut as u64;
    let mut lines = vec!["Output:".to_string()];
    if earlier > 0 {
        lines.push(format!("[… {earlier} earlier bytes; use action \"output\"]"));
    }
    lines.push(ring::keep_tail(&text, SNAPSHOT_OUTPUT_BYTES).trim_end_matches('\n').to_string());
    lines
}

/// Values are cut at 512 characters.
pub fn cut_value(value: &str) -> String {
    const MAX: usize = 512;
    match value.char_indices().nth(MAX) {
        Some((at, _)) => format!("{}…", &value[..at]),
        None => value.to_string(),
    }
}
