//! The line window (O13, O15): the current line with its CR/BS overwrite rule and per-line cut,
//! a head that fills first, and a tail of the newest lines. Everything pushed out is counted.

use std::collections::VecDeque;

use crate::notice;

/// One finished line as the window shows it.
#[derive(Debug, Default)]
pub(crate) struct Line {
    /// Rendered text, cut suffix and LF included.
    pub(crate) text: String,
    /// Bytes of the sanitised stream this line covers.
    pub(crate) stream: u64,
    /// Shown stream bytes (rendered text before any cut, plus the LF).
    pub(crate) shown: u64,
    pub(crate) cut: u64,
}

impl Line {
    fn overwritten(&self) -> u64 {
        self.stream - self.shown - self.cut
    }
}

/// The line being received.
#[derive(Debug, Default)]
struct Current {
    rendered: String,
    stream: u64,
    beyond: u64,
    pending_cr: bool,
}

#[derive(Debug)]
pub(crate) struct Budget {
    pub(crate) head_lines: u64,
    pub(crate) head_bytes: u64,
    pub(crate) tail_lines: u64,
    pub(crate) tail_bytes: u64,
    pub(crate) line_bytes: u64,
}

#[derive(Debug)]
pub(crate) struct Window {
    budget: Budget,
    cur: Current,
    pub(crate) head: Vec<Line>,
    head_used: u64,
    head_open: bool,
    pub(crate) head_byte_limited: bool,
    pub(crate) tail: VecDeque<Line>,
    tail_used: u64,
    pub(crate) lines: u64,
    pub(crate) bytes: u64,
    pub(crate) omitted_lines: u64,
    pub(crate) omitted_bytes: u64,
    /// Set once a line was cut or omitted: the stream then needs its artifact (O17).
    pub(crate) lossy: bool,
    /// Buffers of lines pushed out of the tail, reused for new lines.
    spare: Vec<String>,
    /// Capacity held in `spare`, kept within the tail budget (O18).
    spare_bytes: usize,
}

impl Window {
    pub(crate) fn new(budget: Budget) -> Window {
        let head_open = budget.head_lines > 0 && budget.head_bytes > 0;
        Window {
            budget,
            cur: Current::default(),
            head: Vec::new(),
            head_used: 0,
            head_open,
            head_byte_limited: false,
            tail: VecDeque::new(),
            tail_used: 0,
            lines: 0,
            bytes: 0,
            omitted_lines: 0,
            omitted_bytes: 0,
            lossy: false,
            spare: Vec::new(),
            spare_bytes: 0,
        }
    }

    /// Takes sanitised text (whole UTF-8 characters only).
    pub(crate) fn push(&mut self, text: &[u8]) {
        self.bytes += text.len() as u64;
        let mut pos = 0;
        // Checked until this chunk has too few lines left to skip any: once per chunk after
        // that, not once per line.
        let mut may_skip = true;
        while pos < text.len() {
            let Some(lf) = memchr::memchr(b'\n', &text[pos..]) else {
                self.feed(&text[pos..]);
                break;
            };
            self.feed(&text[pos..pos + lf]);
            self.cur.stream += 1;
            self.end_line(true);
            pos += lf + 1;
            if may_skip && !self.head_open {
                let skipped = self.skip_doomed(&text[pos..]);
                may_skip = skipped > 0;
                pos += skipped;
            }
        }
    }

    /// Completes the final unterminated line.
    pub(crate) fn finish(&mut self) {
        if self.cur.stream > 0 {
            self.end_line(false);
        }
    }

    /// Once the head is closed, whole lines that the newest `tail_lines` lines of this same
    /// chunk will push out of the tail are counted without being rendered.
    fn skip_doomed(&mut self, rest: &[u8]) -> usize {
        if self.head_open || rest.is_empty() {
            return 0;
        }
        let keep = self.budget.tail_lines as usize;
        let mut lfs = memchr::memrchr_iter(b'\n', rest);
        let Some(last) = lfs.next() else { return 0 };
        let end = if keep == 0 {
            last + 1
        } else {
            match lfs.nth(keep - 1) {
                Some(at) => at + 1,
                None => return 0,
            }
        };
        let doomed = &rest[..end];
        let count = memchr::memchr_iter(b'\n', doomed).count() as u64;
        while let Some(line) = self.tail.pop_front() {
            self.omit(line);
        }
        self.tail_used = 0;
        self.lines += count;
        self.omitted_lines += count;
        self.omitted_bytes += end as u64;
        self.lossy = true;
        end
    }

    fn feed(&mut self, mut seg: &[u8]) {
        self.cur.stream += seg.len() as u64;
        while !seg.is_empty() {
            let special = memchr::memchr2(b'\r', 0x08, seg).unwrap_or(seg.len());
            if special > 0 {
                self.append(&seg[..special]);
            }
            match seg.get(special) {
                Some(b'\r') => self.cur.pending_cr = true,
                Some(_) => self.backspace(),
                None => break,
            }
            seg = &seg[special + 1..];
        }
    }

    fn append(&mut self, bytes: &[u8]) {
        let cur = &mut self.cur;
        if std::mem::take(&mut cur.pending_cr) {
            cur.rendered.clear();
            cur.beyond = 0;
        }
        if cur.beyond > 0 {
            cur.beyond += bytes.len() as u64;
            return;
        }
        let text = String::from_utf8_lossy(bytes);
        let room = (self.budget.line_bytes as usize).saturating_sub(cur.rendered.len());
        if text.len() <= room {
            cur.rendered.push_str(&text);
            return;
        }
        let mut end = room;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        cur.rendered.push_str(&text[..end]);
        cur.beyond = (text.len() - end) as u64;
        self.lossy = true;
    }

    /// BS erases the previous character; past the cut only a byte count is kept, so it
    /// erases one byte of that count.
    fn backspace(&mut self) {
        let cur = &mut self.cur;
        if cur.pending_cr {
            return;
        }
        if cur.beyond > 0 {
            cur.beyond -= 1;
        } else {
            cur.rendered.pop();
        }
    }

    fn end_line(&mut self, lf: bool) {
        let cur = std::mem::take(&mut self.cur);
        self.cur.rendered = self.spare.pop().unwrap_or_default();
        self.spare_bytes -= self.cur.rendered.capacity();
        let mut text = cur.rendered;
        let shown = text.len() as u64 + u64::from(lf);
        if cur.beyond > 0 {
            text.push_str(&notice::cut_suffix(cur.beyond));
        }
        if lf {
            text.push('\n');
        }
        let line = Line { text, stream: cur.stream, shown, cut: cur.beyond };
        debug_assert!(line.stream >= line.shown + line.cut);
        self.lines += 1;
        let size = line.text.len() as u64;
        if self.head_open {
            if self.head.len() as u64 >= self.budget.head_lines {
                self.head_open = false;
            } else if self.head_used + size > self.budget.head_bytes {
                self.head_open = false;
                self.head_byte_limited = true;
            } else {
                self.head_used += size;
                self.head.push(line);
                return;
            }
        }
        self.tail_used += size;
        self.tail.push_back(line);
        while self.tail.len() as u64 > self.budget.tail_lines
            || (self.tail_used > self.budget.tail_bytes && self.tail.len() > 1)
        {
            let Some(old) = self.tail.pop_front() else { break };
            self.tail_used -= old.text.len() as u64;
            self.omit(old);
        }
    }

    fn omit(&mut self, line: Line) {
        self.omitted_lines += 1;
        self.omitted_bytes += line.stream;
        self.lossy = true;
        let room = usize::try_from(self.budget.tail_bytes).unwrap_or(usize::MAX);
        if self.spare_bytes + line.text.capacity() <= room {
            let mut text = line.text;
            text.clear();
            self.spare_bytes += text.capacity();
            self.spare.push(text);
        }
    }

    /// An unfinished line is being received.
    pub(crate) fn partial(&self) -> bool {
        self.cur.stream > 0
    }

    /// Lines shown in the tail were limited by bytes rather than by count.
    pub(crate) fn tail_byte_limited(&self) -> bool {
        self.omitted_lines > 0 && (self.tail.len() as u64) < self.budget.tail_lines
    }

    /// Shown, cut and overwritten bytes, and the cut line count, of the lines in the window.
    pub(crate) fn shown_totals(&self) -> (u64, u64, u64, u64, u64) {
        let (mut lines, mut shown, mut cut, mut cut_lines, mut over) = (0, 0, 0, 0, 0);
        for line in self.head.iter().chain(self.tail.iter()) {
            lines += 1;
            shown += line.shown;
            cut += line.cut;
            cut_lines += u64::from(line.cut > 0);
            over += line.overwritten();
        }
        (lines, shown, cut, cut_lines, over)
    }

    /// The last `lines` lines / `bytes` bytes, the unfinished line included.
    pub(crate) fn snapshot(&self, lines: usize, bytes: usize) -> String {
        let mut parts: Vec<&str> = Vec::new();
        let mut used = 0;
        if !self.cur.rendered.is_empty() {
            used += self.cur.rendered.len();
            parts.push(&self.cur.rendered);
        }
        for line in self.tail.iter().rev().chain(self.head.iter().rev()) {
            if parts.len() >= lines || used + line.text.len() > bytes {
                break;
            }
            used += line.text.len();
            parts.push(&line.text);
        }
        parts.iter().rev().copied().collect()
    }
}
