//! Timeouts and numeric knobs, resolved in one place before anything runs (spec-output O1–O6).
//!
//! The knob type and its policy for bad values are `execkit_tool`'s.

use execkit_protocol::ArgError;
use execkit_protocol::args::describe_value;
use execkit_tool::{Knob, KnobError, Lookup, Notes};
use serde_json::Value;

use crate::notice;

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
    /// The notice saying the timeout was clamped or what 0 meant (O4), when one is due.
    pub notice: Option<String>,
}

/// Resolves the raw `timeout` argument: absent is the default, a non-number or a negative is an
/// error, 0 is the maximum (or no deadline for async jobs), other values are rounded up and
/// clamped into range (O2, O3). `max_override` is `EXECKIT_MAX_TIMEOUT`.
/// Errors name the field `timeout`.
pub fn resolve_timeout(
    raw: Option<&Value>,
    policy: TimeoutPolicy,
    max_override: Option<u64>,
) -> Result<ResolvedTimeout, ArgError> {
    let max = match max_override {
        Some(limit) => limit.clamp(policy.min_s, policy.max_s),
        None => policy.max_s,
    };
    let value = match raw {
        None | Some(Value::Null) => {
            let secs = policy.default_s.min(max);
            return Ok(ResolvedTimeout { secs: Some(secs), requested: None, notice: None });
        }
        Some(Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
        Some(other) => {
            return Err(ArgError::new(
                "timeout",
                notice::timeout_not_number(&describe_value(other)),
            ));
        }
    };
    resolve_seconds(value, policy, max, max_override.is_some())
}

fn resolve_seconds(
    value: f64,
    policy: TimeoutPolicy,
    max: u64,
    overridden: bool,
) -> Result<ResolvedTimeout, ArgError> {
    if !value.is_finite() || value < 0.0 {
        return Err(ArgError::new("timeout", notice::timeout_negative(value)));
    }
    if value == 0.0 {
        return Ok(match policy.zero {
            ZeroMeans::NoDeadline if !overridden => ResolvedTimeout {
                secs: None,
                requested: Some(0.0),
                notice: Some(notice::timeout_async_zero()),
            },
            _ => ResolvedTimeout {
                secs: Some(max),
                requested: Some(0.0),
                notice: Some(notice::timeout_zero(max)),
            },
        });
    }
    // Saturating float → int conversion: 1e308 becomes u64::MAX, then clamps to the maximum.
    let rounded = value.ceil() as u64;
    let secs = rounded.clamp(policy.min_s, max);
    let notice = (secs != rounded).then(|| notice::timeout_clamped(value, secs, policy.min_s, max));
    let requested = (value != secs as f64).then_some(value);
    Ok(ResolvedTimeout { secs: Some(secs), requested, notice })
}

/// The most lines a `head`/`tail` argument may ask for (O6).
pub const MAX_WINDOW_LINES: u64 = 100_000;

/// Clamps a `head`/`tail` line count to 0..=100000 (O6), with the notice when it was clamped.
pub fn clamp_lines(field: &str, lines: u64) -> (u64, Option<String>) {
    if lines > MAX_WINDOW_LINES {
        (MAX_WINDOW_LINES, Some(notice::lines_clamped(field, lines, MAX_WINDOW_LINES)))
    } else {
        (lines, None)
    }
}

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;
const GIB: u64 = 1024 * MIB;

/// The output, artifact and process limits with their defaults and ranges (O6).
pub const HEAD_BYTES: Knob =
    Knob { name: "EXECKIT_OUTPUT_HEAD_BYTES", default: 20 * KIB, min: 0, max: MIB };
pub const HEAD_LINES: Knob =
    Knob { name: "EXECKIT_OUTPUT_HEAD_LINES", default: 500, min: 0, max: 100_000 };
pub const TAIL_BYTES: Knob =
    Knob { name: "EXECKIT_OUTPUT_TAIL_BYTES", default: 50 * KIB, min: KIB, max: 4 * MIB };
pub const TAIL_LINES: Knob =
    Knob { name: "EXECKIT_OUTPUT_TAIL_LINES", default: 2500, min: 1, max: 100_000 };
pub const LINE_BYTES: Knob =
    Knob { name: "EXECKIT_OUTPUT_LINE_BYTES", default: 1024, min: 80, max: 65_536 };
pub const ARTIFACT_MAX_BYTES: Knob =
    Knob { name: "EXECKIT_ARTIFACT_MAX_BYTES", default: 100 * MIB, min: MIB, max: 16 * GIB };
pub const ARTIFACT_STORE_BYTES: Knob =
    Knob { name: "EXECKIT_ARTIFACT_STORE_BYTES", default: 2 * GIB, min: 16 * MIB, max: 1024 * GIB };
pub const ARTIFACT_MAX_AGE: Knob =
    Knob { name: "EXECKIT_ARTIFACT_MAX_AGE", default: 604_800, min: 3600, max: 31_536_000 };
pub const KILL_GRACE_MS: Knob =
    Knob { name: "EXECKIT_KILL_GRACE_MS", default: 2000, min: 0, max: 10_000 };
pub const DRAIN_IDLE_MS: Knob =
    Knob { name: "EXECKIT_DRAIN_IDLE_MS", default: 250, min: 10, max: 5000 };
pub const DRAIN_MAX_MS: Knob =
    Knob { name: "EXECKIT_DRAIN_MAX_MS", default: 2000, min: 100, max: 30_000 };
pub const PTY_COLS: Knob = Knob { name: "EXECKIT_PTY_COLS", default: 120, min: 20, max: 400 };
pub const PTY_ROWS: Knob = Knob { name: "EXECKIT_PTY_ROWS", default: 40, min: 5, max: 200 };
/// No tool allows more than an hour, so a larger value would change nothing.
pub const MAX_TIMEOUT: Knob =
    Knob { name: "EXECKIT_MAX_TIMEOUT", default: 3600, min: 1, max: 3600 };

/// Every output, artifact and process limit (O6), read once when the Toolkit is built.
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
        Limits {
            head_bytes: HEAD_BYTES.default,
            head_lines: HEAD_LINES.default,
            tail_bytes: TAIL_BYTES.default,
            tail_lines: TAIL_LINES.default,
            line_bytes: LINE_BYTES.default,
            artifact_max_bytes: ARTIFACT_MAX_BYTES.default,
            artifact_store_bytes: ARTIFACT_STORE_BYTES.default,
            artifact_max_age_s: ARTIFACT_MAX_AGE.default,
            kill_grace_ms: KILL_GRACE_MS.default,
            drain_idle_ms: DRAIN_IDLE_MS.default,
            drain_max_ms: DRAIN_MAX_MS.default,
            pty_cols: PTY_COLS.default,
            pty_rows: PTY_ROWS.default,
            max_timeout_s: None,
        }
    }
}

impl Limits {
    /// Reads every knob through the Toolkit's lookup, collecting the clamp notes.
    pub fn from_lookup(lookup: &Lookup, notes: &mut Notes) -> Result<Limits, KnobError> {
        let max_timeout_s = MAX_TIMEOUT.read_set(lookup, notes)?;
        Ok(Limits {
            head_bytes: HEAD_BYTES.read(lookup, notes)?,
            head_lines: HEAD_LINES.read(lookup, notes)?,
            tail_bytes: TAIL_BYTES.read(lookup, notes)?,
            tail_lines: TAIL_LINES.read(lookup, notes)?,
            line_bytes: LINE_BYTES.read(lookup, notes)?,
            artifact_max_bytes: ARTIFACT_MAX_BYTES.read(lookup, notes)?,
            artifact_store_bytes: ARTIFACT_STORE_BYTES.read(lookup, notes)?,
            artifact_max_age_s: ARTIFACT_MAX_AGE.read(lookup, notes)?,
            kill_grace_ms: KILL_GRACE_MS.read(lookup, notes)?,
            drain_idle_ms: DRAIN_IDLE_MS.read(lookup, notes)?,
            drain_max_ms: DRAIN_MAX_MS.read(lookup, notes)?,
            pty_cols: PTY_COLS.read(lookup, notes)?,
            pty_rows: PTY_ROWS.read(lookup, notes)?,
            max_timeout_s,
        })
    }
}

#[cfg(test)]
#[path = "clamp_tests.rs"]
mod tests;
