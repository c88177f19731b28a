//! Grep over a whole stored text (O29, OBM6): the regex searches the buffer once, in
//! multi-line mode, and only candidate lines are split out and checked one by one, so a
//! 100 MiB artifact is not cut into millions of strings.

use regex::Regex;

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
        let line = super::read::display_line(&self.text[start..end]);
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
