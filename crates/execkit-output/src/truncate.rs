//! Pure, UTF-8-safe truncation with exact accounting (O7–O10).

use serde::Serialize;

use crate::notice;

/// What a truncation kept and dropped. Invariant:
/// `shown_bytes + omitted_bytes + cut_bytes == total_bytes`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Truncation {
    pub total_lines: u64,
    pub total_bytes: u64,
    pub shown_lines: u64,
    pub shown_bytes: u64,
    pub omitted_lines: u64,
    pub omitted_bytes: u64,
    pub cut_lines: u64,
    pub cut_bytes: u64,
    /// 1-based inclusive line ranges shown.
    pub shown_ranges: Vec<(u64, u64)>,
    pub byte_limited: bool,
}

/// Lines of `text`, each with its LF; a final run without LF is a line when non-empty.
pub(crate) fn split_lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// Whole lines that fit `lines`/`bytes`, taken in `order`; returns the count and whether the
/// byte budget stopped it.
fn fit<'a>(order: impl Iterator<Item = &'a str>, lines: u64, bytes: u64) -> (usize, bool) {
    let mut count = 0usize;
    let mut used = 0u64;
    for line in order {
        if count as u64 >= lines {
            return (count, false);
        }
        if used + line.len() as u64 > bytes {
            return (count, true);
        }
        used += line.len() as u64;
        count += 1;
    }
    (count, false)
}

struct Shown {
    text: String,
    bytes: u64,
    cut: u64,
}

/// A line over the budget, shown cut (O8: never an empty window for non-empty input).
fn cut_whole(line: &str, bytes: u64) -> Shown {
    let (text, cut) = cut_line(line, usize::try_from(bytes).unwrap_or(usize::MAX));
    Shown { text, bytes: line.len() as u64 - cut, cut }
}

fn finish(t: &mut Truncation) {
    t.omitted_bytes = t.total_bytes - t.shown_bytes - t.cut_bytes;
    t.omitted_lines = t.total_lines - t.shown_lines;
    debug_assert_eq!(t.shown_bytes + t.omitted_bytes + t.cut_bytes, t.total_bytes);
}

fn base(text: &str, lines: &[&str]) -> Truncation {
    Truncation {
        total_lines: lines.len() as u64,
        total_bytes: text.len() as u64,
        ..Truncation::default()
    }
}

pub fn truncate_head(text: &str, lines: u64, bytes: u64) -> (String, Truncation) {
    let all = split_lines(text);
    let mut t = base(text, &all);
    let (count, by_bytes) = fit(all.iter().copied(), lines, bytes);
    if count == 0 && !all.is_empty() {
        let shown = cut_whole(all[0], bytes);
        t.shown_lines = 1;
        t.shown_bytes = shown.bytes;
        t.cut_bytes = shown.cut;
        t.cut_lines = u64::from(shown.cut > 0);
        t.byte_limited = shown.cut > 0;
        t.shown_ranges = vec![(1, 1)];
        finish(&mut t);
        return (shown.text, t);
    }
    let out: String = all[..count].concat();
    t.shown_lines = count as u64;
    t.shown_bytes = out.len() as u64;
    t.byte_limited = by_bytes;
    if count > 0 {
        t.shown_ranges = vec![(1, count as u64)];
    }
    finish(&mut t);
    (out, t)
}

pub fn truncate_tail(text: &str, lines: u64, bytes: u64) -> (String, Truncation) {
    let all = split_lines(text);
    let mut t = base(text, &all);
    let n = all.len();
    let (count, by_bytes) = fit(all.iter().rev().copied(), lines, bytes);
    if count == 0 && n > 0 {
        let shown = cut_whole(all[n - 1], bytes);
        t.shown_lines = 1;
        t.shown_bytes = shown.bytes;
        t.cut_bytes = shown.cut;
        t.cut_lines = u64::from(shown.cut > 0);
        t.byte_limited = shown.cut > 0;
        t.shown_ranges = vec![(n as u64, n as u64)];
        finish(&mut t);
        return (shown.text, t);
    }
    let out: String = all[n - count..].concat();
    t.shown_lines = count as u64;
    t.shown_bytes = out.len() as u64;
    t.byte_limited = by_bytes;
    if count > 0 {
        t.shown_ranges = vec![((n - count + 1) as u64, n as u64)];
    }
    finish(&mut t);
    (out, t)
}

/// Head and tail with the omitted-lines marker between (O20); unchanged when the windows meet.
pub fn truncate_middle(
    text: &str,
    head_lines: u64,
    head_bytes: u64,
    tail_lines: u64,
    tail_bytes: u64,
) -> (String, Truncation) {
    let all = split_lines(text);
    let n = all.len();
    let mut t = base(text, &all);
    let (head, head_by_bytes) = fit(all.iter().copied(), head_lines, head_bytes);
    let (tail, tail_by_bytes) = fit(all[head..].iter().rev().copied(), tail_lines, tail_bytes);
    if head + tail == n {
        t.shown_lines = n as u64;
        t.shown_bytes = t.total_bytes;
        if n > 0 {
            t.shown_ranges = vec![(1, n as u64)];
        }
        return (text.to_string(), t);
    }
    t.byte_limited = head_by_bytes || tail_by_bytes;
    let mut out = String::new();
    if head == 0 && tail == 0 {
        // Neither window holds a whole line: show the first line cut, as truncate_head would.
        let budget = if head_lines > 0 { head_bytes } else { tail_bytes };
        let shown = cut_whole(all[0], budget);
        out.push_str(&shown.text);
        if !shown.text.ends_with('\n') {
            out.push('\n');
        }
        t.shown_lines = 1;
        t.shown_bytes = shown.bytes;
        t.cut_bytes = shown.cut;
        t.cut_lines = u64::from(shown.cut > 0);
        t.byte_limited = true;
        t.shown_ranges = vec![(1, 1)];
        finish(&mut t);
        if t.omitted_lines > 0 {
            out.push_str(&notice::omitted_marker(t.omitted_lines, t.omitted_bytes));
            out.push('\n');
        }
        return (out, t);
    }
    let head_text: String = all[..head].concat();
    let tail_text: String = all[n - tail..].concat();
    t.shown_lines = (head + tail) as u64;
    t.shown_bytes = (head_text.len() + tail_text.len()) as u64;
    if head > 0 {
        t.shown_ranges.push((1, head as u64));
    }
    if tail > 0 {
        t.shown_ranges.push(((n - tail + 1) as u64, n as u64));
    }
    finish(&mut t);
    out.push_str(&head_text);
    out.push_str(&notice::omitted_marker(t.omitted_lines, t.omitted_bytes));
    out.push('\n');
    out.push_str(&tail_text);
    (out, t)
}

/// Longest char-boundary prefix of ≤ `max_bytes`, then ` [... +<n> bytes]`. Returns the cut
/// line and the number of bytes dropped (0 when it fit and is returned unchanged).
pub fn cut_line(line: &str, max_bytes: usize) -> (String, u64) {
    let (content, lf) = match line.strip_suffix('\n') {
        Some(content) => (content, "\n"),
        None => (line, ""),
    };
    if content.len() <= max_bytes {
        return (line.to_string(), 0);
    }
    let mut end = max_bytes;
    while !content.is_char_boundary(end) {
        end -= 1;
    }
    let dropped = (content.len() - end) as u64;
    let mut out = String::with_capacity(end + 24);
    out.push_str(&content[..end]);
    out.push_str(&notice::cut_suffix(dropped));
    out.push_str(lf);
    (out, dropped)
}

#[cfg(test)]
#[path = "truncate_tests.rs"]
mod tests;
