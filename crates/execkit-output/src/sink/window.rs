//! The line window (O13, O15): the current line with its CR/BS overwrite rule and per-line cut,
//! a head that fills first, and a tail of the newest lines. Everything pushed out is counted.

use std::collections::VecDeque;

use crate::notice;

/// Most raw bytes held unrendered (see [`Window::defer`]): one pipe buffer, a fixed cost per
/// sink like the artifact write buffer (O18).
const DEFER_BYTES: usize = 64 * 1024;
/// Block size of the backwards LF count that finds where the newest lines start.
const COUNT_BLOCK: usize = 512;

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
    /// A CR returned to the line start and more text overwrote it.
    pub(crate) restarted: bool,
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
    /// Where the next character goes after a CR returned to the line start (see
    /// [`crate::artifact::put_char`]); `None` at the end of the line.
    cursor: Option<usize>,
    /// Overwrite position inside the part past the cut, once the cursor passed the cut.
    beyond_cursor: Option<u64>,
    restarted: bool,
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
    /// Set once a CR returned to the start of a line that more text then overwrote: the
    /// stream is kept as an artifact even when it fits the window (O13).
    pub(crate) overwrote: bool,
    /// Buffers of lines pushed out of the tail, reused for new lines.
    spare: Vec<String>,
    /// Capacity held in `spare`, kept within the tail budget (O18).
    spare_bytes: usize,
    /// Raw lines after the tail, not rendered yet: in a flood the next chunk pushes them out
    /// by count before anyone looks. Starts at a line start; `cur` is empty while it holds
    /// bytes. Its complete lines are not in `lines` yet.
    deferred: Vec<u8>,
    deferred_lfs: u64,
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
            overwrote: false,
            spare: Vec::new(),
            spare_bytes: 0,
            deferred: Vec::new(),
            deferred_lfs: 0,
        }
    }

    /// Takes sanitised text (whole UTF-8 characters only).
    pub(crate) fn push(&mut self, text: &[u8]) {
        self.bytes += text.len() as u64;
        if !self.deferred.is_empty() {
            if self.defer(text) {
                return;
            }
            self.flush_deferred();
        }
        let Some(lf) = memchr::memchr(b'\n', text) else {
            return self.feed(text);
        };
        self.render(&text[..=lf]);
        let rest = &text[lf + 1..];
        // Checked once per chunk, not once per line.
        if self.head_open || !self.defer(rest) {
            self.render(rest);
        }
    }

    /// Renders every line of `text` into the window.
    fn render(&mut self, text: &[u8]) {
        let mut pos = 0;
        while pos < text.len() {
            let Some(lf) = memchr::memchr(b'\n', &text[pos..]) else {
                self.feed(&text[pos..]);
                break;
            };
            self.feed(&text[pos..pos + lf]);
            self.cur.stream += 1;
            self.end_line(true);
            pos += lf + 1;
        }
    }

    /// Completes the final unterminated line.
    pub(crate) fn finish(&mut self) {
        self.flush_deferred();
        if self.cur.stream > 0 {
            self.end_line(false);
        }
    }

    /// Once the head is closed, at a line start: counts the lines that the newest
    /// `tail_lines` lines push out of the tail without rendering them, and holds the newest
    /// ones raw, since the next chunk usually pushes them out too. False when `text` is left
    /// to the caller to render.
    fn defer(&mut self, text: &[u8]) -> bool {
        let keep = self.budget.tail_lines as usize;
        let lfs = match after_nth_lf_from_end(text, keep.saturating_add(1)) {
            Ok(start) => {
                let doomed = memchr::memchr_iter(b'\n', &text[..start]).count() as u64;
                self.omit_raw(self.deferred.len() + start, self.deferred_lfs + doomed);
                self.deferred.clear();
                // Exactly one buffer: later appends stay within it (O18).
                self.deferred.reserve_exact(DEFER_BYTES);
                self.deferred_lfs = 0;
                let newest = &text[start..];
                if newest.len() > DEFER_BYTES {
                    self.render(newest);
                } else {
                    self.deferred.extend_from_slice(newest);
                    self.deferred_lfs = keep as u64;
                }
                return true;
            }
            Err(lfs) => lfs as u64,
        };
        if self.deferred.is_empty() || self.deferred.len() + text.len() > DEFER_BYTES {
            return false;
        }
        self.deferred.extend_from_slice(text);
        self.deferred_lfs += lfs;
        if self.deferred_lfs > keep as u64
            && let Ok(start) = after_nth_lf_from_end(&self.deferred, keep.saturating_add(1))
        {
            self.omit_raw(start, self.deferred_lfs - keep as u64);
            self.deferred.drain(..start);
            self.deferred_lfs = keep as u64;
        }
        true
    }

    /// Everything before the deferred lines is pushed out: the whole tail, then `bytes`
    /// holding `lines` complete lines that were never rendered.
    fn omit_raw(&mut self, bytes: usize, lines: u64) {
        while let Some(line) = self.tail.pop_front() {
            self.omit(line);
        }
        self.tail_used = 0;
        self.lines += lines;
        self.omitted_lines += lines;
        self.omitted_bytes += bytes as u64;
        self.lossy = true;
    }

    fn flush_deferred(&mut self) {
        let deferred = std::mem::take(&mut self.deferred);
        self.deferred_lfs = 0;
        self.render(&deferred);
        self.deferred = deferred;
        self.deferred.clear();
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
        if std::mem::take(&mut cur.pending_cr) && (!cur.rendered.is_empty() || cur.beyond > 0) {
            self.overwrote = true;
            cur.restarted = true;
            cur.cursor = (!cur.rendered.is_empty()).then_some(0);
            cur.beyond_cursor = cur.rendered.is_empty().then_some(0);
        }
        // Sanitised text is valid UTF-8; `from_utf8` checks that far faster than the lossy scan.
        let text = match std::str::from_utf8(bytes) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(bytes),
        };
        let mut text: &str = &text;
        if cur.cursor.is_some() {
            let mut used = 0;
            for c in text.chars() {
                if cur.cursor.is_none() {
                    break;
                }
                crate::artifact::put_char(&mut cur.rendered, &mut cur.cursor, c);
                used += c.len_utf8();
            }
            text = &text[used..];
            if cur.beyond > 0 && cur.cursor.is_none() && cur.beyond_cursor.is_none() {
                cur.beyond_cursor = Some(0);
            }
        }
        if text.is_empty() {
            return;
        }
        if let Some(at) = cur.beyond_cursor {
            let end = at + text.len() as u64;
            cur.beyond = cur.beyond.max(end);
            cur.beyond_cursor = (end < cur.beyond).then_some(end);
            return;
        }
        if cur.beyond > 0 {
            cur.beyond += text.len() as u64;
            return;
        }
        let room = (self.budget.line_bytes as usize).saturating_sub(cur.rendered.len());
        if text.len() <= room {
            cur.rendered.push_str(text);
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

    /// BS erases the previous character at the end of the line (past the cut only a byte
    /// count is kept, so it erases one byte of that count) and moves back one inside it.
    fn backspace(&mut self) {
        let cur = &mut self.cur;
        if cur.pending_cr {
            return;
        }
        match cur.beyond_cursor {
            Some(0) => {
                cur.beyond_cursor = None;
                cur.cursor = cur.rendered.char_indices().next_back().map(|(i, _)| i);
            }
            Some(at) => cur.beyond_cursor = Some(at - 1),
            None if cur.cursor.is_none() && cur.beyond > 0 => cur.beyond -= 1,
            None => crate::artifact::back(&mut cur.rendered, &mut cur.cursor),
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
        let line =
            Line { text, stream: cur.stream, shown, cut: cur.beyond, restarted: cur.restarted };
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

    /// Something was cut, omitted or overwritten: only the artifact holds the whole stream.
    pub(crate) fn needs_artifact(&self) -> bool {
        self.lossy || self.overwrote
    }

    /// An unfinished line is being received.
    pub(crate) fn partial(&self) -> bool {
        self.cur.stream > 0 || self.deferred.last().is_some_and(|&b| b != b'\n')
    }

    /// Lines seen so far, a final unterminated one included.
    pub(crate) fn total_lines(&self) -> u64 {
        self.lines + self.deferred_lfs + u64::from(self.partial())
    }

    /// Lines shown in the tail were limited by bytes rather than by count.
    pub(crate) fn tail_byte_limited(&self) -> bool {
        self.omitted_lines > 0 && (self.tail.len() as u64) < self.budget.tail_lines
    }

    /// A line in the window was overwritten after a CR.
    pub(crate) fn shows_restart(&self) -> bool {
        self.head.iter().chain(self.tail.iter()).any(|line| line.restarted)
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
        let fresh = (!self.deferred.is_empty()).then(|| self.render_deferred(lines));
        let (cur, newest) = match &fresh {
            Some(w) => (&w.cur.rendered, Some(&w.tail)),
            None => (&self.cur.rendered, None),
        };
        // The tail as it will be once the deferred lines are rendered: the newest lines within
        // its budget, the newest one whatever its size.
        let (mut count, mut size) = (0, 0);
        let tail = newest.into_iter().flat_map(|t| t.iter().rev()).chain(self.tail.iter().rev());
        let tail = tail.take_while(|line| {
            count += 1;
            size += line.text.len() as u64;
            count <= self.budget.tail_lines && (count == 1 || size <= self.budget.tail_bytes)
        });
        let mut parts: Vec<&str> = Vec::new();
        let mut used = 0;
        if !cur.is_empty() {
            used += cur.len();
            parts.push(cur);
        }
        for line in tail.chain(self.head.iter().rev()) {
            if parts.len() >= lines || used + line.text.len() > bytes {
                break;
            }
            used += line.text.len();
            parts.push(&line.text);
        }
        parts.iter().rev().copied().collect()
    }

    /// The newest `lines` deferred lines and the unfinished one, rendered as the window would.
    fn render_deferred(&self, lines: usize) -> Window {
        let start = after_nth_lf_from_end(&self.deferred, lines.saturating_add(1)).unwrap_or(0);
        let mut window = Window::new(Budget {
            head_lines: 0,
            head_bytes: 0,
            tail_lines: lines as u64,
            tail_bytes: u64::MAX,
            line_bytes: self.budget.line_bytes,
        });
        window.render(&self.deferred[start..]);
        window
    }
}

/// The offset just past the `n`-th LF from the end of `bytes`, or the number of LFs when
/// there are fewer. Counts whole blocks first, so a flood of short lines costs a few vector
/// passes instead of one search per line.
fn after_nth_lf_from_end(bytes: &[u8], n: usize) -> Result<usize, usize> {
    if n == 0 {
        return Ok(bytes.len());
    }
    let mut end = bytes.len();
    let mut seen = 0;
    while end > 0 {
        let start = end.saturating_sub(COUNT_BLOCK);
        let block = &bytes[start..end];
        let count = memchr::memchr_iter(b'\n', block).count();
        if seen + count >= n {
            let at = memchr::memrchr_iter(b'\n', block).nth(n - seen - 1);
            return at.map(|at| start + at + 1).ok_or(seen + count);
        }
        seen += count;
        end = start;
    }
    Err(seen)
}
