//! Grep over a whole stored text (O29, OBM6): the regex searches the buffer once, in
//! multi-line mode, and only candidate lines are split out and checked one by one, so a
//! 100 MiB artifact is not cut into millions of strings. Text with overwrites or a gap is
//! searched line by line, each line rendered only when the search reaches it.

use std::borrow::Cow;
use std::collections::VecDeque;

use regex::Regex;

use crate::clamp::LINE_BYTES;
use crate::truncate::cut_line;

/// Grep output before paging: the `<n>:` / `<n>-` / `--` lines, and the match count.
pub(super) struct Found {
    pub(super) out: String,
    pub(super) matches: u64,
    pub(super) stopped: bool,
}

struct Emitter<'a> {
    text: &'a str,
    out: String,
    context: usize,
    /// Line number and end offset of the last line written.
    last: Option<(u64, usize)>,
}

impl Emitter<'_> {
    fn emit(&mut self, number: u64, sep: char, start: usize, end: usize) {
        if self.context > 0 && self.last.is_some_and(|(n, _)| n + 1 < number) {
            self.out.push_str("--\n");
        }
        let line = super::render::display_line(&self.text[start..end]).0;
        self.out.push_str(&number.to_string());
        self.out.push(sep);
        self.out.push_str(&line);
        if !line.ends_with('\n') {
            self.out.push('\n');
        }
        self.last = Some((number, end));
    }
}

fn line_end(bytes: &[u8], from: usize) -> usize {
    memchr::memchr(b'\n', &bytes[from..]).map_or(bytes.len(), |i| from + i + 1)
}

fn content(line: &str) -> &str {
    line.strip_suffix('\n').unwrap_or(line)
}

/// `text` has no gap line, CR or BS, so each stored line is what the reader shows.
pub(super) fn grep_text(text: &str, re: &Regex, multi: &Regex, context: u64, max: u64) -> Found {
    let bytes = text.as_bytes();
    let context = context as usize;
    let mut em = Emitter { text, out: String::new(), context, last: None };
    let (mut matches, mut stopped) = (0u64, false);
    // Line number of the line that starts at `counted`.
    let (mut counted, mut number) = (0usize, 1u64);
    let mut pos = 0usize;
    while !stopped && pos < bytes.len() {
        let Some(m) = multi.find_at(text, pos) else { break };
        let p = m.start();
        if p >= bytes.len() {
            break;
        }
        let start = memchr::memrchr(b'\n', &bytes[..p]).map_or(0, |i| i + 1).max(pos);
        let end = line_end(bytes, start);
        number += memchr::memchr_iter(b'\n', &bytes[counted..start]).count() as u64;
        counted = start;
        if !re.is_match(content(&text[start..end])) {
            pos = end;
            continue;
        }
        // Context before: up to `context` lines, not repeating what was written.
        let floor = em.last.map_or(0, |(_, e)| e);
        let mut starts = Vec::with_capacity(context);
        let mut s = start;
        while starts.len() < context && s > floor {
            s = memchr::memrchr(b'\n', &bytes[..s - 1]).map_or(0, |i| i + 1).max(floor);
            starts.push(s);
        }
        for (k, &s) in starts.iter().enumerate().rev() {
            em.emit(number - 1 - k as u64, '-', s, line_end(bytes, s));
        }
        em.emit(number, ':', start, end);
        matches += 1;
        stopped = matches >= max;
        // Context after; a matching line there is a match of its own.
        let (mut left, mut at, mut n) = (context, end, number);
        while left > 0 && at < bytes.len() {
            let e = line_end(bytes, at);
            n += 1;
            if !stopped && re.is_match(content(&text[at..e])) {
                em.emit(n, ':', at, e);
                matches += 1;
                stopped = matches >= max;
                left = context;
            } else {
                em.emit(n, '-', at, e);
                left -= 1;
            }
            at = e;
        }
        counted = at;
        number = n + 1;
        pos = at;
    }
    Found { out: em.out, matches, stopped }
}

/// One stored line as readers show it, without its LF: the overwrite rule (O13), then the
/// per-line cut. Borrowed unless a BS or the cut changes the text.
pub(super) fn shown_content(raw: &str) -> Cow<'_, str> {
    let content = raw.strip_suffix('\n').unwrap_or(raw);
    let bytes = content.as_bytes();
    let rendered = match memchr::memchr2(b'\r', 0x08, bytes) {
        None => Cow::Borrowed(content),
        Some(_) => super::render_line(content),
    };
    let max = LINE_BYTES.default as usize;
    if rendered.len() <= max { rendered } else { Cow::Owned(cut_line(&rendered, max).0) }
}

/// Grep over shown lines `(number, content)` in stream order; the gap line has no number and
/// is skipped. Stops reading lines once `max` matches and their context are written.
pub(super) fn grep_lines<'a>(
    lines: impl Iterator<Item = (Option<u64>, Cow<'a, str>)>,
    re: &Regex,
    context: u64,
    max: u64,
) -> Found {
    let context = context as usize;
    let mut out = String::new();
    let mut before: VecDeque<(u64, Cow<'a, str>)> = VecDeque::new();
    let mut last_emitted: Option<u64> = None;
    let mut after_left = 0usize;
    let mut matches = 0u64;
    let mut stopped = false;
    let emit = |out: &mut String, number: u64, sep: char, text: &str, last: &mut Option<u64>| {
        if context > 0 && last.is_some_and(|l| l + 1 < number) {
            out.push_str("--\n");
        }
        out.push_str(&format!("{number}{sep}{text}\n"));
        *last = Some(number);
    };
    for (number, content) in lines {
        let Some(number) = number else { continue };
        if !stopped && re.is_match(&content) {
            for (k, text) in before.drain(..) {
                emit(&mut out, k, '-', &text, &mut last_emitted);
            }
            emit(&mut out, number, ':', &content, &mut last_emitted);
            matches += 1;
            after_left = context;
            stopped = matches >= max;
        } else if after_left > 0 {
            emit(&mut out, number, '-', &content, &mut last_emitted);
            after_left -= 1;
        } else if stopped {
            break;
        } else if context > 0 {
            before.push_back((number, content));
            if before.len() > context {
                before.pop_front();
            }
        }
    }
    Found { out, matches, stopped }
}
