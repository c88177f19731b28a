//! The streaming output sink (O11–O19): sanitise, window, count, spill.

use serde::Serialize;

use crate::artifact::{ArtifactId, ArtifactStore};
use crate::clamp::Limits;

/// Window sizes and spill behaviour for one stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SinkConfig {
    pub head_bytes: u64,
    pub head_lines: u64,
    pub tail_bytes: u64,
    pub tail_lines: u64,
    pub line_bytes: u64,
    /// Create the artifact at byte one (background jobs), not at the first omission.
    pub spill_from_start: bool,
}

impl SinkConfig {
    /// The default window from the O6 knobs.
    pub fn from_limits(limits: &Limits) -> SinkConfig {
        let _ = limits;
        todo!()
    }

    /// bash `head`/`tail` (B3): replaces the default window; with both, the combined byte budget
    /// is split N : M. `(Some(0), Some(0))` shows no lines.
    pub fn with_line_window(self, head: Option<u64>, tail: Option<u64>) -> SinkConfig {
        let _ = (head, tail);
        todo!()
    }
}

/// Where a sink spills: the store plus the artifact's metadata.
#[derive(Debug, Clone)]
pub struct Spill {
    pub store: ArtifactStore,
    pub tool: String,
    pub label: String,
}

/// Exact totals of a finished stream (O16). Invariant:
/// `shown_bytes + omitted_bytes + cut_bytes + overwritten_bytes == total_bytes`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SinkTotals {
    pub raw_bytes: u64,
    pub total_bytes: u64,
    pub total_lines: u64,
    pub shown_bytes: u64,
    pub shown_lines: u64,
    pub omitted_bytes: u64,
    pub omitted_lines: u64,
    pub cut_lines: u64,
    pub cut_bytes: u64,
    pub overwritten_bytes: u64,
    pub stripped_bytes: u64,
}

/// `structuredContent.truncation` (O23): present only when something was omitted or cut.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TruncationReport {
    #[serde(flatten)]
    pub totals: SinkTotals,
    pub shown_ranges: Vec<(u64, u64)>,
    pub byte_limited: bool,
    pub artifact: Option<String>,
}

/// What a finished sink hands the tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SinkSummary {
    /// The window (head, O20 marker, tail), or the O14 binary notice. Empty when no output.
    pub body: String,
    /// The O21 footer line, when something was omitted or cut (or an artifact failed).
    pub footer: Option<String>,
    pub binary: bool,
    pub totals: SinkTotals,
    pub truncation: Option<TruncationReport>,
    /// The artifact holding the whole stream, when one was written.
    pub artifact: Option<ArtifactId>,
}

/// One stream the model reads. Bounded memory whatever the input (O18).
#[derive(Debug)]
pub struct OutputSink {
    _private: (),
}

impl OutputSink {
    /// `spill: None` means artifacts are off: the footer then says `full output not saved (…)`
    /// with `disabled_reason`.
    pub fn new(config: SinkConfig, spill: Option<Spill>, disabled_reason: Option<String>) -> Self {
        let _ = (config, spill, disabled_reason);
        todo!()
    }

    /// Accepts a chunk of any size and split point.
    pub fn push(&mut self, chunk: &[u8]) {
        let _ = chunk;
        todo!()
    }

    /// The last 40 lines / 4 KiB of the window, for progress events. O(snapshot).
    pub fn snapshot(&self) -> String {
        todo!()
    }

    /// Lines seen so far (a final unterminated line counts).
    pub fn total_lines(&self) -> u64 {
        todo!()
    }

    /// Sanitised bytes seen so far.
    pub fn total_bytes(&self) -> u64 {
        todo!()
    }

    /// The artifact, once one exists (from the start with `spill_from_start`).
    pub fn artifact(&self) -> Option<&ArtifactId> {
        todo!()
    }

    /// Switches a running sink to spilling now (auto-background, J17).
    pub fn spill_now(&mut self) {
        todo!()
    }

    pub fn finish(self) -> SinkSummary {
        todo!()
    }
}
