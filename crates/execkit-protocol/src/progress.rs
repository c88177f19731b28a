//! Progress events sent while a call runs (MCP progress notifications, library callbacks).

use serde::{Deserialize, Serialize};

/// One progress report. `progress`/`total`/`message` map onto an MCP progress notification;
/// the other fields are what library and Python callers get in their callback.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    /// Elapsed milliseconds.
    pub progress: f64,
    /// The deadline in milliseconds, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    pub message: String,
    pub elapsed_ms: u64,
    pub total_bytes: u64,
    pub total_lines: u64,
    /// The growing tail of output (at most 40 lines / 4 KiB).
    pub tail: String,
}

/// Receives progress events while a call runs.
pub type ProgressFn = std::sync::Arc<dyn Fn(Progress) + Send + Sync>;
