//! A `job` call's outcome and the result the model reads.

use std::time::Instant;

use execkit_protocol::{Content, ToolResult};
use serde_json::{Value, json};

/// What one `job` call found: the text lines, the per-job entries of `structuredContent` and,
/// for a cancel, what became of each id.
#[derive(Debug)]
pub(crate) struct JobOutcome {
    pub text: Vec<String>,
    pub is_error: bool,
    pub jobs: Vec<Value>,
    /// One `{"id", "outcome"}` per cancelled id; empty when the call cancelled nothing.
    pub cancelled: Vec<Value>,
    pub started: Instant,
}

impl JobOutcome {
    pub(crate) fn new(started: Instant) -> JobOutcome {
        JobOutcome {
            text: Vec::new(),
            is_error: false,
            jobs: Vec::new(),
            cancelled: Vec::new(),
            started,
        }
    }

    /// The text joined by lines; `structuredContent` holds `jobs`, `waited_ms` and, after a
    /// cancel, `cancelled`.
    pub(crate) fn into_result(self) -> ToolResult {
        let waited_ms = self.started.elapsed().as_millis() as u64;
        let mut structured = json!({"jobs": self.jobs, "waited_ms": waited_ms});
        if let (false, Some(object)) = (self.cancelled.is_empty(), structured.as_object_mut()) {
            object.insert("cancelled".to_string(), Value::Array(self.cancelled));
        }
        ToolResult {
            content: vec![Content::text(self.text.join("\n"))],
            structured_content: Some(structured),
            is_error: self.is_error,
        }
    }
}
