//! Timeouts and numeric knobs, resolved in one place before anything runs (spec-output O1–O6).

use execkit_protocol::ArgError;
use serde_json::Value;

/// What `timeout: 0` means for a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZeroMeans {
    /// The tool's maximum, with a notice.
    Max,
    /// No deadline at all (async bash jobs).
    NoDeadline,
}

/// A tool's timeout range (O1), in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeoutPolicy {
    pub default_s: u64,
    pub min_s: u64,
    pub max_s: u64,
    pub zero: ZeroMeans,
}

impl TimeoutPolicy {
    pub const BASH: Self = Self { default_s: 300, min_s: 1, max_s: 3600, zero: ZeroMeans::Max };
    pub const BASH_ASYNC: Self =
        Self { default_s: 3600, min_s: 1, max_s: 3600, zero: ZeroMeans::NoDeadline };
    pub const EVAL_CELL: Self = Self { default_s: 30, min_s: 1, max_s: 600, zero: ZeroMeans::Max };
    pub const DEBUG: Self = Self { default_s: 30, min_s: 5, max_s: 300, zero: ZeroMeans::Max };
    pub const SSH: Self = Self { default_s: 60, min_s: 1, max_s: 3600, zero: ZeroMeans::Max };
}

/// A resolved timeout: what runs, and what the model is told about it.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedTimeout {
    /// Seconds to allow; `None` is no deadline.
    pub secs: Option<u64>,
    /// The request as sent, when it differed from `secs` (O5 `requested_timeout_s`).
    pub requested: Option<f64>,
    /// The O4 notice, when one is due.
    pub notice: Option<String>,
}

/// Resolves the raw `timeout` argument per O2/O3. `max_override` is `EXECKIT_MAX_TIMEOUT`.
/// Errors name the field `timeout`.
pub fn resolve_timeout(
    raw: Option<&Value>,
    policy: TimeoutPolicy,
    max_override: Option<u64>,
) -> Result<ResolvedTimeout, ArgError> {
    let _ = (raw, policy, max_override);
    todo!()
}

/// Clamps a `head`/`tail` line count to 0..=100000 (O6), with the notice when it was clamped.
pub fn clamp_lines(field: &str, lines: u64) -> (u64, Option<String>) {
    let _ = (field, lines);
    todo!()
}

/// One numeric knob read from the environment (`EXECKIT_<NAME>`).
#[derive(Debug, Clone, Copy)]
pub struct Knob {
    /// Full variable name, e.g. `EXECKIT_KILL_GRACE_MS`.
    pub name: &'static str,
    pub default: u64,
    pub min: u64,
    pub max: u64,
}

/// A knob value of the wrong type: fails Toolkit construction.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{name}={value:?} is not a whole number")]
pub struct KnobError {
    pub name: String,
    pub value: String,
}

impl Knob {
    /// Reads the knob through `lookup`. Out of range → clamped, plus the doctor line
    /// `EXECKIT_<NAME>=<v> is outside <range>; using <e>` pushed to `notes`.
    pub fn read(
        &self,
        lookup: &dyn Fn(&str) -> Option<String>,
        notes: &mut Vec<String>,
    ) -> Result<u64, KnobError> {
        let _ = (lookup, notes);
        todo!()
    }
}

/// Every O6 limit, read once when the Toolkit is built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    pub head_bytes: u64,
    pub head_lines: u64,
    pub tail_bytes: u64,
    pub tail_lines: u64,
    pub line_bytes: u64,
    pub artifact_max_bytes: u64,
    pub artifact_store_bytes: u64,
    pub artifact_max_age_s: u64,
    pub kill_grace_ms: u64,
    pub drain_idle_ms: u64,
    pub drain_max_ms: u64,
    pub pty_cols: u64,
    pub pty_rows: u64,
    /// `EXECKIT_MAX_TIMEOUT`, when set.
    pub max_timeout_s: Option<u64>,
}

impl Default for Limits {
    fn default() -> Self {
        todo!()
    }
}

impl Limits {
    /// Reads every knob through `lookup` (normally `std::env::var`), collecting doctor notes.
    pub fn from_lookup(
        lookup: &dyn Fn(&str) -> Option<String>,
        notes: &mut Vec<String>,
    ) -> Result<Limits, KnobError> {
        let _ = (lookup, notes);
        todo!()
    }
}
