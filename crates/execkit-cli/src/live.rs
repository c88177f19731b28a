//! What a person sees while a CLI call runs: the output as it arrives on stdout (from the
//! progress events an MCP client gets), and on a terminal a one-line status on stderr (elapsed
//! time, lines so far), redrawn while the call runs and cleared at its end. When stderr is not
//! a terminal no status is written at all.

use std::io::{IsTerminal as _, Write as _};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use execkit::Progress;
use tokio_util::sync::CancellationToken;

use crate::common;

/// How often the status line is redrawn.
const STATUS_EVERY: Duration = Duration::from_millis(200);
/// Clears the terminal line the cursor is on.
const CLEAR_LINE: &str = "\r\x1b[2K";

/// What has been streamed so far.
#[derive(Default)]
struct Shown {
    /// Complete lines written to stdout.
    lines: u64,
    /// The text written, for matching against the result at the end.
    text: String,
    /// The newest lines of the call's output, from the last event.
    total_lines: u64,
    /// A status line is on the terminal now.
    status_drawn: bool,
}

/// The live view of one call.
#[derive(Clone)]
pub struct Live {
    shown: Arc<Mutex<Shown>>,
    /// Stream output to stdout (`execkit bash`), or only keep the status (`execkit call`).
    stream: bool,
    status: bool,
    started: Instant,
}

impl Live {
    /// `stream`: write the output to stdout as it arrives. The status line is on when stderr
    /// is a terminal.
    pub fn new(stream: bool) -> Live {
        Live {
            shown: Arc::default(),
            stream,
            status: std::io::stderr().is_terminal(),
            started: Instant::now(),
        }
    }

    /// The same, never drawing the status line.
    pub fn without_status(mut self) -> Live {
        self.status = false;
        self
    }

    /// The progress callback for the call's context.
    pub fn progress(&self) -> execkit::ProgressFn {
        let live = self.clone();
        Arc::new(move |event: Progress| live.on_progress(&event))
    }

    fn on_progress(&self, event: &Progress) {
        let Ok(mut shown) = self.shown.lock() else { return };
        shown.total_lines = event.total_lines;
        if !self.stream {
            return;
        }
        let fresh = new_lines(&mut shown, event);
        if fresh.is_empty() {
            return;
        }
        self.clear_status(&mut shown);
        let _ = common::write_stdout(fresh.as_bytes());
        shown.text.push_str(&fresh);
        self.draw_status(&mut shown);
    }

    /// Redraws the status line until `done` is cancelled, then clears it.
    pub async fn run_status(&self, done: CancellationToken) {
        if !self.status {
            return;
        }
        // The first draw waits one period: a call that ends sooner shows no status at all.
        let first = tokio::time::Instant::now() + STATUS_EVERY;
        let mut ticks = tokio::time::interval_at(first, STATUS_EVERY);
        loop {
            tokio::select! {
                _ = ticks.tick() => {
                    if let Ok(mut shown) = self.shown.lock() {
                        self.draw_status(&mut shown);
                    }
                }
                _ = done.cancelled() => break,
            }
        }
        if let Ok(mut shown) = self.shown.lock() {
            self.clear_status(&mut shown);
        }
    }

    fn draw_status(&self, shown: &mut Shown) {
        if !self.status {
            return;
        }
        let line = status_text(self.started.elapsed(), shown.total_lines);
        let mut stderr = std::io::stderr().lock();
        let _ = write!(stderr, "{CLEAR_LINE}{line}").and_then(|()| stderr.flush());
        shown.status_drawn = true;
    }

    fn clear_status(&self, shown: &mut Shown) {
        if shown.status_drawn {
            let mut stderr = std::io::stderr().lock();
            let _ = write!(stderr, "{CLEAR_LINE}").and_then(|()| stderr.flush());
            shown.status_drawn = false;
        }
    }

    /// Prints what of the result's text is still to print: all of it when nothing was
    /// streamed, else what follows the streamed lines (the rest of the output and the footer).
    pub fn print_rest(&self, text: &str) -> anyhow::Result<()> {
        let streamed = self.shown.lock().map(|shown| shown.text.clone()).unwrap_or_default();
        let rest = remaining_after(&streamed, text);
        if rest.is_empty() && !streamed.is_empty() {
            return Ok(());
        }
        common::print_text(rest)
    }
}

/// `running 3.2 s, 120 lines`.
fn status_text(elapsed: Duration, lines: u64) -> String {
    let unit = if lines == 1 { "line" } else { "lines" };
    format!("running {:.1} s, {lines} {unit}", elapsed.as_secs_f64())
}

/// The complete lines of `event.tail` not written yet, with a marker when more lines arrived
/// between two events than the tail holds.
fn new_lines(shown: &mut Shown, event: &Progress) -> String {
    let tail = &event.tail;
    // A last line without its newline is still growing: it is written once complete.
    let complete = match tail.rfind('\n') {
        Some(end) => &tail[..=end],
        None => "",
    };
    let partial = u64::from(!tail.is_empty() && !tail.ends_with('\n'));
    let complete_total = event.total_lines.saturating_sub(partial);
    let fresh = complete_total.saturating_sub(shown.lines);
    if fresh == 0 {
        return String::new();
    }
    let lines: Vec<&str> = complete.split_inclusive('\n').collect();
    let available = lines.len() as u64;
    let mut out = String::new();
    if fresh > available {
        let missed = fresh - available;
        out.push_str(&format!("[… {missed} lines not shown while streaming …]\n"));
    }
    let skip = lines.len().saturating_sub(fresh as usize);
    lines[skip..].iter().for_each(|line| out.push_str(line));
    shown.lines = complete_total;
    out
}

/// `text` after what was streamed: the result's text starts with the streamed output when the
/// whole output fit its window; else it resumes after the last streamed lines it contains.
fn remaining_after<'a>(streamed: &str, text: &'a str) -> &'a str {
    if streamed.is_empty() {
        return text;
    }
    // The result's text drops the output's final newline.
    let resume = |at: usize| text[at..].strip_prefix('\n').unwrap_or(&text[at..]);
    let streamed = streamed.strip_suffix('\n').unwrap_or(streamed);
    if text.starts_with(streamed) {
        return resume(streamed.len());
    }
    // Where the result's tail window repeats the last streamed lines (three, else fewer), the
    // rest follows.
    let streamed_lines: Vec<&str> = streamed.split('\n').collect();
    let text_lines: Vec<&str> = text.split('\n').collect();
    for k in (1..=streamed_lines.len().min(3)).rev() {
        let last = &streamed_lines[streamed_lines.len() - k..];
        if let Some(end) =
            (k..=text_lines.len()).rev().find(|&end| text_lines[end - k..end] == *last)
        {
            let offset: usize = text_lines[..end].iter().map(|l| l.len() + 1).sum();
            return text.get(offset..).unwrap_or("");
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(tail: &str, total_lines: u64) -> Progress {
        Progress {
            progress: 0.0,
            total: None,
            message: String::new(),
            elapsed_ms: 0,
            total_bytes: tail.len() as u64,
            total_lines,
            tail: tail.to_string(),
        }
    }

    #[test]
    fn complete_lines_are_written_once_and_a_growing_line_waits() {
        let mut shown = Shown::default();
        assert_eq!(new_lines(&mut shown, &event("a\nb", 2)), "a\n");
        assert_eq!(new_lines(&mut shown, &event("a\nb", 2)), "");
        assert_eq!(new_lines(&mut shown, &event("a\nbc\n", 2)), "bc\n");
        assert_eq!(new_lines(&mut shown, &event("bc\nd\ne\n", 4)), "d\ne\n");
    }

    #[test]
    fn lines_the_tail_no_longer_holds_are_counted() {
        let mut shown = Shown::default();
        assert_eq!(new_lines(&mut shown, &event("a\n", 1)), "a\n");
        let out = new_lines(&mut shown, &event("y\nz\n", 10));
        assert_eq!(out, "[… 7 lines not shown while streaming …]\ny\nz\n");
    }

    #[test]
    fn the_rest_of_the_result_follows_what_was_streamed() {
        assert_eq!(remaining_after("", "a\nb"), "a\nb");
        assert_eq!(remaining_after("a\n", "a\nb\n[exit 1]"), "b\n[exit 1]");
        assert_eq!(remaining_after("a\nb\n", "a\nb"), "");
        let text = "1\n[… 5 lines omitted …]\n7\n8\n[footer]";
        assert_eq!(remaining_after("1\n2\n7\n", text), "8\n[footer]");
        assert_eq!(remaining_after("x\n", "a\nb"), "a\nb");
    }

    #[test]
    fn the_status_counts_lines() {
        assert_eq!(status_text(Duration::from_millis(3240), 1), "running 3.2 s, 1 line");
        assert_eq!(status_text(Duration::ZERO, 12), "running 0.0 s, 12 lines");
    }
}
