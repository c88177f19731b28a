//! `EXECKIT_DAP_TRACE=<file>`: every message in both directions appended as NDJSON with its
//! arrival number and a timestamp (milliseconds and microseconds since the epoch). Off by
//! default; a trace that cannot be written is dropped rather than failing the session.

use std::io::Write;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

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

    /// An outgoing message; its arrival number is that of the last message received.
    pub(crate) fn record(&mut self, dir: &str, arrival: u64, message: &Message) {
        let value = serde_json::to_value(message).unwrap_or_default();
        self.write(dir, arrival, value);
    }

    /// An incoming message exactly as the adapter sent it (not as execkit parsed it).
    pub(crate) fn record_raw(&mut self, dir: &str, arrival: u64, body: &[u8]) {
        let value = serde_json::from_slice(body).unwrap_or_default();
        self.write(dir, arrival, value);
    }

    fn write(&mut self, dir: &str, arrival: u64, message: Value) {
        // Microseconds as well: a step round trip is a few milliseconds, so the gaps between
        // messages that profiling looks at are below `ts_ms`'s resolution.
        let since_epoch = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        let (ts_ms, ts_us) = (since_epoch.as_millis(), since_epoch.as_micros());
        let line = serde_json::json!({"dir": dir, "arrival": arrival, "ts_ms": ts_ms,
            "ts_us": ts_us, "message": message});
        let _ = writeln!(self.file, "{line}");
    }
}
