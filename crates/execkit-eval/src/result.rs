//! The eval ToolResult (E12–E23): summary line, per-cell headers, text blocks followed by
//! their images, the shared text window, and `structuredContent`.

use execkit_output::artifact::ArtifactStore;
use execkit_output::truncate::truncate_middle;
use execkit_protocol::{Content, ToolResult};
use serde_json::{Value, json};

use crate::collect::{WINDOW_BYTES, WINDOW_LINES};
use crate::report::{CellReport, Status, header};

/// `evalue` cut to its first line and 200 chars (E13).
pub fn short_evalue(evalue: &str) -> String {
    let first = evalue.lines().next().unwrap_or("");
    let cut: String = first.chars().take(200).collect();
    if cut.len() < first.len() { format!("{cut}…") } else { cut }
}

/// Byte shares of the shared window (E22): a failing cell gets up to half, the rest share
/// evenly, and a share one cell does not use goes to cells that need more.
pub fn shares(sizes: &[usize], failing: Option<usize>, budget: usize) -> Vec<usize> {
    let mut out = vec![0usize; sizes.len()];
    let mut left = budget;
    if let Some(f) = failing {
        out[f] = sizes[f].min(budget / 2);
        left -= out[f];
    }
    let mut open: Vec<usize> = (0..sizes.len()).filter(|&i| Some(i) != failing).collect();
    while !open.is_empty() && left > 0 {
        let each = left / open.len();
        if each == 0 {
            break;
        }
        let mut still = Vec::new();
        for &i in &open {
            let give = (sizes[i] - out[i]).min(each);
            out[i] += give;
            left -= give;
            if out[i] < sizes[i] {
                still.push(i);
            }
        }
        if still.len() == open.len() {
            break;
        }
        open = still;
    }
    if let Some(f) = failing {
        let give = (sizes[f] - out[f]).min(left);
        out[f] += give;
    }
    out
}

/// Assembles the ToolResult of one call. `store` receives the call's artifact when anything
/// was cut (E23).
pub fn build(
    session: &str,
    mut cells: Vec<CellReport>,
    wall_ms: u64,
    preface: Vec<String>,
    store: Option<&ArtifactStore>,
) -> ToolResult {
    let failed = cells.iter().position(|c| !matches!(c.status, Status::Ok | Status::Skipped));
    let full = share_window(&mut cells, failed);
    let cut = full.iter().any(Option::is_some) || cells.iter().any(|c| c.truncation.is_some());
    match (cut, store) {
        (true, Some(store)) => crate::callart::attach(store, &mut cells, &full),
        (true, None) => {
            for (cell, full) in cells.iter_mut().zip(&full) {
                if full.is_some() {
                    cell.footer = Some(crate::callart::window_footer("full output not saved"));
                }
            }
        }
        (false, _) => {}
    }
    for cell in &mut cells {
        if let Some(footer) = cell.footer.take() {
            let kept = cell.body.trim_end_matches('\n').len();
            cell.body.truncate(kept);
            cell.body.push('\n');
            cell.body.push_str(&footer);
        }
    }
    let mut content = Vec::new();
    for (i, cell) in cells.iter().enumerate() {
        let mut text = String::new();
        if i == 0 {
            if let Some(f) = failed {
                text.push_str(&summary_line(&cells, f));
                text.push('\n');
            }
            for line in &preface {
                text.push_str(line);
                text.push('\n');
            }
        }
        text.push_str(&cell_text(cell, cells.len()));
        content.push(Content::text(text.trim_end_matches('\n')));
        content.extend(cell.images.iter().cloned());
    }
    let structured = json!({
        "session": session,
        "failed_cell": failed.map(|f| cells[f].index),
        "wall_ms": wall_ms,
        "cells": cells.iter().map(cell_json).collect::<Vec<_>>(),
    });
    ToolResult { content, structured_content: Some(structured), is_error: failed.is_some() }
}

/// The shared window over all cell bodies (spec E22): cuts bodies to their shares and returns,
/// per cell, the text from before the cut when there was one.
fn share_window(cells: &mut [CellReport], failed: Option<usize>) -> Vec<Option<String>> {
    let n = cells.len();
    let mut full: Vec<Option<String>> = vec![None; n];
    let sizes: Vec<usize> = cells.iter().map(|c| c.body.len()).collect();
    if sizes.iter().sum::<usize>() <= WINDOW_BYTES as usize {
        return full;
    }
    let budget = shares(&sizes, failed, WINDOW_BYTES as usize);
    for ((cell, share), full) in cells.iter_mut().zip(budget).zip(full.iter_mut()) {
        if cell.body.len() > share {
            let share = share as u64;
            let lines = WINDOW_LINES / n as u64;
            let (text, _) =
                truncate_middle(&cell.body, lines / 2, share * 2 / 5, lines / 2, share * 3 / 5);
            *full = Some(std::mem::replace(&mut cell.body, text));
        }
    }
    full
}

/// One cell's text block: its header (with two cells or more), announcements, body, notes.
fn cell_text(cell: &CellReport, n: usize) -> String {
    let mut text = String::new();
    if n >= 2 {
        text.push_str(&header(cell, n));
        text.push('\n');
    }
    for a in &cell.announcements {
        text.push_str(a);
        text.push('\n');
    }
    if cell.status != Status::Skipped {
        if cell.body.trim().is_empty() {
            if cell.status == Status::Ok {
                text.push_str("(no output)\n");
            }
        } else {
            text.push_str(&cell.body);
            if !cell.body.ends_with('\n') {
                text.push('\n');
            }
        }
    }
    for note in &cell.notes {
        text.push_str(note);
        text.push('\n');
    }
    text
}

fn summary_line(cells: &[CellReport], f: usize) -> String {
    let cell = &cells[f];
    let mut line = format!("{} {}", cell.label(), cell.summary.clone().unwrap_or_default());
    let skipped: Vec<usize> =
        cells.iter().filter(|c| c.status == Status::Skipped).map(|c| c.index).collect();
    match skipped.as_slice() {
        [] => {}
        [one] => line.push_str(&format!(" Cell {one} was not run.")),
        [first, .., last] => line.push_str(&format!(" Cells {first}-{last} were not run.")),
    }
    line
}

fn cell_json(c: &CellReport) -> Value {
    if c.status == Status::Skipped {
        return json!({"index": c.index, "title": c.title, "language": c.language.as_str(),
                      "status": "skipped"});
    }
    json!({
        "index": c.index,
        "title": c.title,
        "language": c.language.as_str(),
        "status": c.status.as_str(),
        "duration_ms": c.duration_ms,
        "cpu_ms": c.cpu_ms,
        "timeout_s": c.timeout_s,
        "execution_count": c.execution_count,
        "error": c.error.as_ref().map(|e| json!({
            "ename": e.ename, "evalue": e.evalue, "traceback": e.traceback})),
        "displays": c.displays,
        "images": c.image_count,
        "tool_calls": c.tool_calls.iter().map(|t| json!({
            "name": t.name, "is_error": t.is_error, "duration_ms": t.duration_ms})).collect::<Vec<_>>(),
        "kernel": {
            "pid": c.kernel.pid,
            "started": c.kernel.started,
            "start_ms": c.kernel.start_ms,
            "killed": c.kernel.killed,
            "state_lost": c.kernel.state_lost.map(|r| json!({"reason": r})),
            "restored": c.restored.as_ref().map(|r| json!({
                "names": r.names,
                "not_restored": r.not_restored.iter()
                    .map(|n| json!({"name": n.name, "reason": n.reason})).collect::<Vec<_>>(),
            })),
            "bad_frames": c.kernel.bad_frames,
        },
        "truncation": c.truncation,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use execkit_protocol::eval::Language;

    #[test]
    fn shares_favour_the_failing_cell() {
        assert_eq!(shares(&[100, 100, 100], Some(2), 300), vec![100, 100, 100]);
        let s = shares(&[100_000, 100_000, 100_000], Some(2), 51_200);
        assert_eq!(s[2], 25_600);
        assert_eq!(s[0] + s[1] + s[2], 51_200);
        let s = shares(&[10, 100_000], None, 1000);
        assert_eq!(s, vec![10, 990]);
    }

    #[test]
    fn summary_and_headers() {
        let mut a = CellReport::skipped(1, Some("imports".into()), Language::Py);
        a.status = Status::Ok;
        let mut b = CellReport::skipped(2, Some("load config".into()), Language::Py);
        b.status = Status::Error;
        b.summary = Some("failed: KeyError: 'name'.".into());
        b.body = "Traceback…".into();
        let c = CellReport::skipped(3, None, Language::Py);
        let d = CellReport::skipped(4, None, Language::Py);
        let r = build("default", vec![a, b, c, d], 5, vec![], None);
        assert!(r.is_error);
        let text = r.text();
        assert!(text.starts_with(
            "Cell 2 (load config) failed: KeyError: 'name'. Cells 3-4 were not run.\n--- Cell 1/4 (imports) [py] ok in 0 ms ---\n(no output)"
        ), "{text}");
        assert!(text.contains("--- Cell 4/4 [py] not run ---"));
        assert_eq!(r.structured_content.unwrap()["failed_cell"], 2);
    }
}
