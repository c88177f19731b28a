//! `EXECKIT_DAP_TRACE=<file>`: every message in both directions appended as NDJSON with its
//! arrival number and a timestamp. Off by default; a trace that cannot be written is dropped
//! rather than failing the session.

use std::io::Write;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::wire::Message;

/// The environment variable that names the trace file.
pub const TRACE_ENV: &str = "EXECKIT_DAP_TRACE";

#[derive(Debug)]
pub(crate) struct Trace {
    file: std::fs::File,
}

impl Trace {
    pub(crate) fn open(path: &Path) -> Option<Trace> {
        let file = std::fs::OpenOptions::new().create(true).append(true).open(path).ok()?;
        Some(Trace { file })
    }

    /// `dir` is `in` or `out`; for `out` the arrival number is the last one seen.
    pub(crate) fn record(&mut self, dir: &str, arrival: u64, message: &Message) {
        let ts_ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
        let line =
            serde_json::json!({"dir": dir, "arrival": arrival, "ts_ms": ts_ms, "message": message});
        let _ = writeln!(self.file, "{line}");
    }
}
