//! The one artifact per call (spec-eval.md E23): when anything in a call was cut, one text
//! artifact holds the full text of every cell, each under its header, and every cut cell
//! points at its own line range in it (`artifact://<id>?lines=<a>-<b>`).
//!
//! While a cell runs, its `OutputSink` spills to a private artifact of its own, so host memory
//! stays bounded whatever the cell prints (E24). Once the call is over those spills are copied,
//! in 64 KiB chunks, into the call artifact and removed.

use std::io::Read;

use execkit_output::artifact::{ArtifactId, ArtifactStore, ArtifactWriter};
use serde_json::{Value, json};

use crate::report::{CellReport, Status, header};

/// Copy buffer for a cell's spill.
const COPY_CHUNK: usize = 64 * 1024;

/// Counts lines while bytes go into the call artifact.
struct Lines<'a> {
    writer: &'a mut ArtifactWriter,
    /// Lines written so far.
    done: u64,
    /// The last byte written, to end every cell on a line of its own.
    last: Option<u8>,
}

impl Lines<'_> {
    fn write(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        self.writer.write(bytes);
        self.done += bytes.iter().filter(|&&b| b == b'\n').count() as u64;
        self.last = bytes.last().copied();
    }

    fn line(&mut self, text: &str) {
        self.write(text.as_bytes());
        if !text.ends_with('\n') {
            self.write(b"\n");
        }
    }

    fn end_line(&mut self) {
        if !matches!(self.last, None | Some(b'\n')) {
            self.write(b"\n");
        }
    }
}

/// Writes the call artifact and points the cut cells at it. `full[i]` is cell i's text from
/// before the shared window cut it (E22), when that window did. Without a store nothing
/// changes: the sinks already said `full output not saved (…)`.
pub fn attach(store: &ArtifactStore, cells: &mut [CellReport], full: &[Option<String>]) {
    let n = cells.len();
    let label = format!("eval call ({n} cell{})", if n == 1 { "" } else { "s" });
    let Ok(mut writer) = store.create("eval", &label, "text/plain; charset=utf-8") else {
        return;
    };
    let uri = writer.id().uri();
    let mut ranges = Vec::with_capacity(n);
    {
        let mut out = Lines { writer: &mut writer, done: 0, last: None };
        for (cell, full) in cells.iter().zip(full) {
            out.line(&header(cell, n));
            let first = out.done + 1;
            if cell.status != Status::Skipped {
                for a in &cell.announcements {
                    out.line(a);
                }
                match (&cell.spill, full) {
                    (Some(id), _) => copy_spill(store, id, &mut out),
                    (None, Some(text)) => out.write(text.as_bytes()),
                    (None, None) => out.write(cell.body.as_bytes()),
                }
                out.end_line();
                for note in &cell.notes {
                    out.line(note);
                }
            }
            ranges.push((first, out.done.max(first)));
        }
    }
    writer.finish();
    for ((cell, full), (a, b)) in cells.iter_mut().zip(full).zip(ranges) {
        let cell_uri = format!("{uri}?lines={a}-{b}");
        if let Some(spill) = cell.spill.take() {
            if let Some(parts) = &cell.footer_parts {
                cell.footer = parts.render(Some(&cell_uri));
            }
            remove(store, &spill);
        }
        if let Some(text) = full {
            // The sink's line counts no longer describe what is shown.
            cell.footer = Some(window_footer(&format!("full output: {cell_uri}")));
            let t = cell.truncation.get_or_insert_with(
                || json!({"total_bytes": text.len(), "total_lines": text.lines().count()}),
            );
            if let Value::Object(t) = t {
                t.insert("shown_bytes".into(), json!(cell.body.len()));
                t.insert("shown_lines".into(), json!(cell.body.lines().count()));
            }
        }
        if let Some(Value::Object(t)) = &mut cell.truncation {
            t.insert("artifact".into(), Value::String(cell_uri));
        }
    }
}

/// The footer of a cell cut by the shared window (E22).
pub fn window_footer(artifact: &str) -> String {
    format!("[cell text cut to share the call's 50 KiB window; {artifact}]")
}

fn copy_spill(store: &ArtifactStore, id: &ArtifactId, out: &mut Lines<'_>) {
    let Ok(mut file) = store.open_raw(id) else {
        out.line(&format!("[the full text of this cell could not be read back from {}]", id.uri()));
        return;
    };
    let mut buf = vec![0u8; COPY_CHUNK];
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(k) => out.write(&buf[..k]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
}

/// Removes a cell's own spill once the call artifact holds its text.
fn remove(store: &ArtifactStore, id: &ArtifactId) {
    let _ = store.remove(id);
}
