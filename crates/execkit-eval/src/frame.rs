//! The kernel protocol (spec-eval.md E28–E31): NDJSON frames in both directions.
//!
//! Frames from a kernel are untrusted input. They are parsed by serde into [`KernelFrame`], a
//! tagged enum whose catch-all variant absorbs unknown types; a line that does not parse is
//! counted, never acted on. Lines are read with a hard length bound so a kernel cannot make
//! the host buffer more than [`MAX_LINE`] bytes.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

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

/// One line read from the event pipe.
#[derive(Debug, PartialEq)]
pub enum Line {
    /// A parsed frame.
    Frame(KernelFrame),
    /// A line that is not a valid frame (bad JSON, missing field, …): dropped and counted.
    Bad(String),
    /// A line over [`MAX_LINE`]: a protocol violation.
    TooLong,
    Eof,
}

/// Parses one line as an untrusted frame.
pub fn parse_line(bytes: &[u8]) -> Line {
    match serde_json::from_slice::<KernelFrame>(bytes) {
        Ok(frame) => Line::Frame(frame),
        Err(err) => Line::Bad(err.to_string()),
    }
}

/// Reads the next line, holding at most `max` bytes of it in memory.
pub async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Line> {
    buf.clear();
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(if buf.is_empty() { Line::Eof } else { parse_line(buf) });
        }
        match available.iter().position(|&b| b == b'\n') {
            Some(pos) => {
                if buf.len() + pos > max {
                    return Ok(Line::TooLong);
                }
                buf.extend_from_slice(&available[..pos]);
                reader.consume(pos + 1);
                let line = buf.strip_suffix(b"\r").unwrap_or(buf);
                if line.iter().all(u8::is_ascii_whitespace) {
                    buf.clear();
                    continue;
                }
                return Ok(parse_line(line));
            }
            None => {
                let n = available.len();
                if buf.len() + n > max {
                    return Ok(Line::TooLong);
                }
                buf.extend_from_slice(available);
                reader.consume(n);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_known_unknown_and_bad_frames() {
        let line = br#"{"type":"started","id":3,"execution_count":1}"#;
        assert_eq!(
            parse_line(line),
            Line::Frame(KernelFrame::Started { id: 3, execution_count: 1 })
        );
        assert_eq!(parse_line(br#"{"type":"weird","x":1}"#), Line::Frame(KernelFrame::Unknown));
        assert!(matches!(parse_line(b"not json"), Line::Bad(_)));
        assert!(matches!(parse_line(br#"{"type":"done","id":"x"}"#), Line::Bad(_)));
        assert!(matches!(parse_line(b"[1,2]"), Line::Bad(_)));
    }

    #[test]
    fn host_frames_serialise_with_type_tags() {
        let f = HostFrame::ToolResult { call_id: 2, result: None, error: Some("no".into()) };
        let v: Value = serde_json::from_slice(&f.to_line()).unwrap();
        assert_eq!(v, json!({"type": "tool_result", "call_id": 2, "error": "no"}));
        let v: Value = serde_json::from_slice(&HostFrame::Shutdown.to_line()).unwrap();
        assert_eq!(v, json!({"type": "shutdown"}));
    }

    #[tokio::test]
    async fn bounded_lines() {
        let data = b"{\"type\":\"ready\",\"protocol\":1,\"language\":\"python\",\"pid\":1}\n\nxxxxxxxxxxxxxxxxxxxx\n";
        let mut reader = tokio::io::BufReader::with_capacity(8, &data[..]);
        let mut buf = Vec::new();
        assert!(matches!(
            read_line(&mut reader, &mut buf, 100).await.unwrap(),
            Line::Frame(KernelFrame::Ready { .. })
        ));
        assert_eq!(read_line(&mut reader, &mut buf, 10).await.unwrap(), Line::TooLong);
    }
}
