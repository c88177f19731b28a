//! The eval kernel protocol (spec-eval.md E28–E31): the NDJSON frames a host and a kernel
//! exchange, as serde tagged enums. Both sides use these types — the host (`execkit-eval`)
//! and the JavaScript kernel (`execkit-js`) — so the two cannot drift apart; reading lines from
//! a pipe, with their length bound, is the host's business and lives there.
//!
//! Kernel frames are untrusted input on the host: [`KernelFrame`]'s catch-all variant absorbs
//! unknown types, and a line that does not parse is counted by the host, never acted on.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The protocol version every kernel must announce in `ready`.
pub const PROTOCOL: u32 = 1;
/// Longest frame line accepted (E29); a longer one is a protocol violation.
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// `stdout` or `stderr`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StreamName {
    Stdout,
    Stderr,
}

/// How a cell ended, as the kernel reports it in `done`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DoneStatus {
    Ok,
    Error,
    Interrupted,
}

/// A name with the reason it was skipped or failed (snapshots).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NameReason {
    pub name: String,
    pub reason: String,
}

/// Kernel → host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum KernelFrame {
    Ready {
        protocol: u32,
        language: String,
        #[serde(default)]
        version: String,
        pid: u32,
    },
    Started {
        id: u64,
        execution_count: u64,
    },
    Stream {
        id: u64,
        name: StreamName,
        text: String,
    },
    Display {
        id: u64,
        data: Map<String, Value>,
        #[serde(default)]
        metadata: Option<Value>,
    },
    Result {
        id: u64,
        data: Map<String, Value>,
        #[serde(default)]
        metadata: Option<Value>,
    },
    Error {
        id: u64,
        ename: String,
        evalue: String,
        #[serde(default)]
        traceback: Vec<String>,
    },
    ToolCall {
        id: u64,
        call_id: u64,
        name: String,
        args: Value,
    },
    ToolCancel {
        call_id: u64,
    },
    Done {
        id: u64,
        status: DoneStatus,
        execution_count: u64,
    },
    SnapshotDone {
        id: u64,
        saved: Vec<String>,
        skipped: Vec<NameReason>,
        bytes: u64,
    },
    RestoreDone {
        id: u64,
        restored: Vec<String>,
        failed: Vec<NameReason>,
    },
    /// Any other `type`: tolerated and counted.
    #[serde(other)]
    Unknown,
}

/// The cell reference carried by `execute`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellRef {
    pub index: usize,
    pub title: Option<String>,
}

/// Host → kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum HostFrame {
    Execute {
        id: u64,
        code: String,
        timeout_ms: u64,
        cell: CellRef,
        /// Tools the prelude's `tool` object lists (an execkit extension of the frame).
        #[serde(default)]
        tools: Vec<String>,
    },
    ToolResult {
        call_id: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    Interrupt {
        id: u64,
    },
    Snapshot {
        id: u64,
        path: String,
    },
    Restore {
        id: u64,
        path: String,
    },
    Shutdown,
}

impl HostFrame {
    /// The frame as one `\n`-terminated line.
    pub fn to_line(&self) -> Vec<u8> {
        // Serialising these plain structs cannot fail; fall back to an empty object if it did.
        let mut line = serde_json::to_vec(self).unwrap_or_else(|_| b"{}".to_vec());
        line.push(b'\n');
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn host_frames_serialise_with_type_tags() {
        let f = HostFrame::ToolResult { call_id: 2, result: None, error: Some("no".into()) };
        let v: Value = serde_json::from_slice(&f.to_line()).unwrap();
        assert_eq!(v, json!({"type": "tool_result", "call_id": 2, "error": "no"}));
        let v: Value = serde_json::from_slice(&HostFrame::Shutdown.to_line()).unwrap();
        assert_eq!(v, json!({"type": "shutdown"}));
    }

    #[test]
    fn kernel_frames_round_trip_and_unknown_types_are_absorbed() {
        let f = KernelFrame::Done { id: 3, status: DoneStatus::Interrupted, execution_count: 2 };
        let v = serde_json::to_value(&f).unwrap();
        assert_eq!(
            v,
            json!({"type": "done", "id": 3, "status": "interrupted", "execution_count": 2})
        );
        assert_eq!(serde_json::from_value::<KernelFrame>(v).unwrap(), f);
        let odd: KernelFrame = serde_json::from_value(json!({"type": "weird", "x": 1})).unwrap();
        assert_eq!(odd, KernelFrame::Unknown);
    }
}
