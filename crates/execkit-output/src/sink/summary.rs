//! Turning a finished sink into what the model reads (O20–O23).

use crate::artifact::WriteOutcome;
use crate::notice;

use super::{FooterParts, OutputSink, SinkSummary, SinkTotals, TruncationReport};

pub(super) fn text(sink: OutputSink) -> SinkSummary {
    let OutputSink { config, window, spiller, raw_bytes, sanitizer, .. } = sink;
    let (shown_lines, shown_bytes, cut_bytes, cut_lines, overwritten_bytes) = window.shown_totals();
    let totals = SinkTotals {
        raw_bytes,
        total_bytes: window.bytes,
        total_lines: window.lines,
        shown_bytes,
        shown_lines,
        omitted_bytes: window.omitted_bytes,
        omitted_lines: window.omitted_lines,
        cut_lines,
        cut_bytes,
        overwritten_bytes,
        stripped_bytes: sanitizer.stripped,
    };
    debug_assert!(totals.balanced(), "{totals:?}");

    let mut body: String = window.head.iter().map(|l| l.text.as_str()).collect();
    if totals.omitted_lines > 0 {
        body.push_str(&notice::omitted_marker(totals.omitted_lines, totals.omitted_bytes));
        body.push('\n');
    }
    body.extend(window.tail.iter().map(|l| l.text.as_str()));

    let head = window.head.len() as u64;
    let tail = window.tail.len() as u64;
    let n = totals.total_lines;
    let mut shown_ranges = Vec::new();
    if head > 0 {
        shown_ranges.push((1, head));
    }
    if tail > 0 {
        shown_ranges.push((n - tail + 1, n));
    }
    let byte_limited = window.head_byte_limited || window.tail_byte_limited();

    let reason = spiller.not_saved_reason();
    let outcome = spiller.finish();
    let artifact_failed = outcome.as_ref().is_some_and(|o| o.error.is_some());
    let lossy = totals.omitted_lines > 0 || totals.cut_lines > 0;
    let mut parts = Vec::new();
    if totals.omitted_lines > 0 {
        let window_part = match (head, tail) {
            (0, 0) => notice::showing_none(n),
            (h, 0) => notice::showing_range(1, h, n),
            (0, t) => notice::showing_range(n - t + 1, n, n),
            (h, t) => notice::showing_head_tail(h, n - t + 1, n, n),
        };
        let limit =
            if byte_limited { notice::byte_limit(config.byte_budget()) } else { String::new() };
        parts.push(window_part + &limit);
    }
    if totals.cut_lines > 0 {
        parts.push(notice::cut_part(totals.cut_lines, config.line_bytes, totals.cut_bytes));
    }
    // Overwritten text is only in the artifact, so it is named even when nothing was lost
    // to the window (O13).
    let overwrote = window.shows_restart() && totals.overwritten_bytes > 0;
    if overwrote {
        parts.push(notice::overwritten_part(totals.overwritten_bytes));
    }
    let artifact = outcome.as_ref().map(|o| o.id.clone());
    let footer_parts = FooterParts {
        lead: parts,
        names_artifact: lossy || artifact_failed || overwrote,
        outcome,
        reason,
    };
    let footer = footer_parts.render(None);
    let truncation = lossy.then(|| TruncationReport {
        totals: totals.clone(),
        shown_ranges,
        byte_limited,
        artifact: artifact.as_ref().map(|id| id.uri()),
    });
    SinkSummary { body, footer, footer_parts, binary: false, totals, truncation, artifact }
}

impl FooterParts {
    /// The footer, naming `uri` (when given) as the place of the full output instead of the
    /// sink's own artifact; `None` when nothing needs a footer.
    pub fn render(&self, uri: Option<&str>) -> Option<String> {
        let mut parts = self.lead.clone();
        if self.names_artifact {
            parts.push(artifact_part(self.outcome.as_ref(), &self.reason, uri));
        }
        (!parts.is_empty()).then(|| notice::footer(&parts))
    }
}

fn artifact_part(outcome: Option<&WriteOutcome>, reason: &str, uri: Option<&str>) -> String {
    match outcome {
        None => notice::full_output_not_saved(reason),
        Some(o) => {
            let uri = uri.map_or_else(|| o.id.uri(), str::to_string);
            match (&o.error, &o.gap) {
                (Some((error, at)), _) => notice::full_output_incomplete(error, *at, &uri),
                (None, Some(gap)) => {
                    notice::full_output_capped(&uri, o.cap, gap.first_line, gap.last_line)
                }
                (None, None) => notice::full_output(&uri),
            }
        }
    }
}

pub(super) fn binary(sink: OutputSink) -> SinkSummary {
    let OutputSink { spiller, raw_bytes, binary_lfs, binary_last, .. } = sink;
    let total_lines = binary_lfs + u64::from(binary_last.is_some_and(|b| b != b'\n'));
    let totals = SinkTotals {
        raw_bytes,
        total_bytes: raw_bytes,
        total_lines,
        omitted_bytes: raw_bytes,
        omitted_lines: total_lines,
        ..SinkTotals::default()
    };
    let reason = spiller.not_saved_reason();
    let outcome = spiller.finish();
    let uri = outcome.as_ref().map(|o| o.id.uri());
    let body =
        notice::binary_output(raw_bytes, uri.as_deref(), uri.is_none().then_some(reason.as_str()));
    // The body names the artifact; the footer speaks only of a write that failed.
    let names_artifact = outcome.as_ref().is_some_and(|o| o.error.is_some());
    let artifact = outcome.as_ref().map(|o| o.id.clone());
    let footer_parts = FooterParts { lead: Vec::new(), names_artifact, outcome, reason };
    let footer = footer_parts.render(None);
    SinkSummary {
        body,
        footer,
        footer_parts,
        binary: true,
        truncation: Some(TruncationReport {
            totals: totals.clone(),
            shown_ranges: Vec::new(),
            byte_limited: false,
            artifact: uri,
        }),
        totals,
        artifact,
    }
}
