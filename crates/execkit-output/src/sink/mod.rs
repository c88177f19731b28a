//! The streaming output sink (O11–O19): sanitise, window, count, spill.
//!
//! Bytes flow raw → [`sanitize`] → the window and the artifact. The first 8 KiB also decide,
//! once, whether the stream is binary (O14); until then nothing reaches the artifact file.

mod sanitize;
mod spill;
mod summary;
mod window;

use serde::Serialize;

use crate::artifact::{ArtifactId, ArtifactStore};
use crate::clamp::Limits;

use sanitize::Sanitizer;
use spill::Spiller;
use window::{Budget, Window};

/// How much of the stream decides whether it is binary (O14).
const PROBE_BYTES: usize = 8 * 1024;
/// Input handled per sanitising pass: one pipe buffer.
const CLEAN_SLICE: usize = 64 * 1024;
/// Progress snapshots (O19): enough to see what a command is doing, small enough for 10/s.
const SNAPSHOT_LINES: usize = 40;
const SNAPSHOT_BYTES: usize = 4 * 1024;

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
    /// The default window: head and tail sizes from the output knobs (O6).
    pub fn from_limits(limits: &Limits) -> SinkConfig {
        SinkConfig {
            head_bytes: limits.head_bytes,
            head_lines: limits.head_lines,
            tail_bytes: limits.tail_bytes,
            tail_lines: limits.tail_lines,
            line_bytes: limits.line_bytes,
            spill_from_start: false,
        }
    }

    /// bash `head`/`tail` (B3): replaces the default window; with both, the combined byte budget
    /// is split N : M. `(Some(0), Some(0))` shows no lines.
    pub fn with_line_window(self, head: Option<u64>, tail: Option<u64>) -> SinkConfig {
        let budget = self.head_bytes + self.tail_bytes;
        let (head_lines, head_bytes, tail_lines, tail_bytes) = match (head, tail) {
            (None, None) => return self,
            (Some(h), None) => (h, budget, 0, 0),
            (None, Some(t)) => (0, 0, t, budget),
            (Some(0), Some(0)) => (0, 0, 0, 0),
            (Some(h), Some(t)) => {
                let head_bytes = (u128::from(budget) * u128::from(h) / u128::from(h + t)) as u64;
                (h, head_bytes, t, budget - head_bytes)
            }
        };
        SinkConfig { head_lines, head_bytes, tail_lines, tail_bytes, ..self }
    }

    /// The byte budget named by `(byte limit …)` in the footer.
    fn byte_budget(&self) -> u64 {
        self.head_bytes + self.tail_bytes
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

impl SinkTotals {
    /// O16: no byte disappears uncounted.
    pub fn balanced(&self) -> bool {
        self.shown_bytes + self.omitted_bytes + self.cut_bytes + self.overwritten_bytes
            == self.total_bytes
            && self.shown_lines + self.omitted_lines == self.total_lines
    }
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

/// The parts of a sink's footer: what was omitted, cut or overwritten, and where the full
/// output is (or why it was not saved).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FooterParts {
    lead: Vec<String>,
    names_artifact: bool,
    outcome: Option<crate::artifact::WriteOutcome>,
    reason: String,
}

/// What a finished sink hands the tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SinkSummary {
    /// The window (head, the omitted-lines marker, tail; O20), or the binary-stream notice
    /// (O14). Empty when there was no output.
    pub body: String,
    /// The footer line saying what is not shown and where it is (O21), when something was
    /// omitted or cut (or an artifact failed).
    pub footer: Option<String>,
    /// What `footer` is made of, for a tool that moves the stream into an artifact of its own
    /// and must name that one instead (`footer_parts.render(Some(uri))`).
    pub footer_parts: FooterParts,
    pub binary: bool,
    pub totals: SinkTotals,
    pub truncation: Option<TruncationReport>,
    /// The artifact holding the whole stream, when one was written.
    pub artifact: Option<ArtifactId>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Undecided,
    Text,
    Binary,
}

/// One stream the model reads. Bounded memory whatever the input (O18).
#[derive(Debug)]
pub struct OutputSink {
    config: SinkConfig,
    kind: Kind,
    probe: Vec<u8>,
    sanitizer: Sanitizer,
    window: Window,
    spiller: Spiller,
    raw_bytes: u64,
    binary_lfs: u64,
    binary_last: Option<u8>,
    clean: Vec<u8>,
}

impl OutputSink {
    /// `spill: None` means artifacts are off: the footer then says `full output not saved (…)`
    /// with `disabled_reason`.
    pub fn new(config: SinkConfig, spill: Option<Spill>, disabled_reason: Option<String>) -> Self {
        let mut spiller = Spiller::new(spill, disabled_reason, config.byte_budget());
        if config.spill_from_start {
            spiller.open("text/plain; charset=utf-8");
        }
        OutputSink {
            window: Window::new(budget(&config)),
            config,
            kind: Kind::Undecided,
            probe: Vec::new(),
            sanitizer: Sanitizer::default(),
            spiller,
            raw_bytes: 0,
            binary_lfs: 0,
            binary_last: None,
            clean: Vec::new(),
        }
    }

    /// Accepts a chunk of any size and split point.
    pub fn push(&mut self, chunk: &[u8]) {
        if chunk.is_empty() {
            return;
        }
        self.raw_bytes += chunk.len() as u64;
        let mut fresh = chunk;
        if self.kind == Kind::Undecided {
            let room = (PROBE_BYTES - self.probe.len()).min(chunk.len());
            self.probe.extend_from_slice(&chunk[..room]);
            if self.probe.len() == PROBE_BYTES {
                self.classify();
                // The start of this chunk is in the probe, which `binary` stores first.
                fresh = &chunk[room..];
            }
        }
        if self.kind == Kind::Binary {
            self.binary(fresh);
            return;
        }
        self.text(chunk);
    }

    fn text(&mut self, chunk: &[u8]) {
        let mut clean = std::mem::take(&mut self.clean);
        // Slices keep the clean buffer small whatever size of chunk the caller passes.
        for slice in chunk.chunks(CLEAN_SLICE) {
            clean.clear();
            self.sanitizer.push(slice, &mut clean);
            self.absorb(&clean);
        }
        self.clean = clean;
    }

    fn absorb(&mut self, clean: &[u8]) {
        self.window.push(clean);
        let decided = self.kind == Kind::Text;
        self.spiller.text(clean, self.window.needs_artifact(), decided);
    }

    fn binary(&mut self, bytes: &[u8]) {
        let probe = std::mem::take(&mut self.probe);
        for part in [&probe[..], bytes] {
            if part.is_empty() {
                continue;
            }
            self.binary_lfs += memchr::memchr_iter(b'\n', part).count() as u64;
            self.binary_last = part.last().copied();
            self.spiller.binary(part);
        }
    }

    /// O14: binary when more than 30 % of the probe is non-text, so one stray NUL or a
    /// Latin-1 name in pages of text stays readable.
    fn classify(&mut self) {
        let non_text = non_text_controls(&self.probe) + invalid_utf8(&self.probe);
        let binary = non_text * 10 > self.probe.len() * 3;
        if binary {
            self.kind = Kind::Binary;
            self.sanitizer = Sanitizer::default();
            self.window = Window::new(budget(&self.config));
        } else {
            self.kind = Kind::Text;
            self.probe = Vec::new();
            // Whatever the window already decided now applies to the artifact.
            self.spiller.text(&[], self.window.needs_artifact(), true);
        }
    }

    /// The last 40 lines / 4 KiB of the window, for progress events. O(snapshot).
    pub fn snapshot(&self) -> String {
        self.window.snapshot(SNAPSHOT_LINES, SNAPSHOT_BYTES)
    }

    /// Lines seen so far (a final unterminated line counts).
    pub fn total_lines(&self) -> u64 {
        self.window.total_lines()
    }

    /// Sanitised bytes seen so far.
    pub fn total_bytes(&self) -> u64 {
        self.window.bytes
    }

    /// The artifact, once one exists (from the start with `spill_from_start`).
    pub fn artifact(&self) -> Option<&ArtifactId> {
        self.spiller.writer().map(|w| w.id())
    }

    /// Switches a running sink to spilling now (auto-background, J17).
    pub fn spill_now(&mut self) {
        self.spiller.open("text/plain; charset=utf-8");
        if self.kind == Kind::Text {
            self.spiller.text(&[], true, true);
        }
    }

    pub fn finish(mut self) -> SinkSummary {
        if self.kind == Kind::Undecided {
            self.classify();
            if self.kind == Kind::Binary {
                self.binary(&[]);
            }
        }
        if self.kind == Kind::Binary {
            return summary::binary(self);
        }
        let mut tail = Vec::new();
        self.sanitizer.finish(&mut tail);
        self.absorb(&tail);
        self.window.finish();
        self.spiller.text(&[], self.window.needs_artifact(), true);
        summary::text(self)
    }
}

fn budget(config: &SinkConfig) -> Budget {
    Budget {
        head_lines: config.head_lines,
        head_bytes: config.head_bytes,
        tail_lines: config.tail_lines,
        tail_bytes: config.tail_bytes,
        line_bytes: config.line_bytes,
    }
}

/// Bytes of `probe` that no text holds: NUL and the C0 controls other than TAB, LF, CR, ESC,
/// BS and BEL (which terminal output uses).
fn non_text_controls(probe: &[u8]) -> usize {
    probe
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x1b | 0x08 | 0x07))
        .count()
}

/// Bytes of `probe` that are not valid UTF-8; an incomplete sequence at the end is not counted.
fn invalid_utf8(mut probe: &[u8]) -> usize {
    let mut invalid = 0;
    while let Err(err) = std::str::from_utf8(probe) {
        let Some(bad) = err.error_len() else { break };
        invalid += bad;
        probe = &probe[err.valid_up_to() + bad..];
    }
    invalid
}

#[cfg(test)]
mod tests;
