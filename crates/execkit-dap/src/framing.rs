//! Content-Length framing of incoming bytes, resynchronising on garbage.
//!
//! Adapters print banners before their first frame, and a broken peer can send anything, so
//! the decoder never trusts the stream: bytes before a `Content-Length:` header are skipped
//! (one resync per run of skipped bytes), header names match case-insensitively, bare `\n`
//! line ends are accepted and other headers are ignored. A header block over 8 KiB, a length
//! over the limit or a malformed header is dropped with a resync, and the scan goes on right
//! after the bad header, so a valid frame that follows is still found. Lengths are never
//! pre-allocated: the buffer only grows as bytes actually arrive.

const HEADER: &[u8] = b"content-length:";

/// A header block longer than this is not a DAP header (real ones are ~25 bytes).
pub const MAX_HEADER_BYTES: usize = 8 * 1024;

/// The largest body accepted by default: a big `variables` or `readMemory` answer is a few MiB.
pub const DEFAULT_MAX_BODY: usize = 64 * 1024 * 1024;

/// Counters the session summary reports (`resyncs`, dropped bytes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FrameStats {
    pub resyncs: u64,
    pub skipped_bytes: u64,
    pub frames: u64,
}

#[derive(Debug)]
pub struct FrameDecoder {
    buf: Vec<u8>,
    /// Where unexamined bytes start in `buf`.
    start: usize,
    /// Length of the body being collected, once its header was parsed.
    body_len: Option<usize>,
    max_body: usize,
    /// Bytes skipped since the last good header (a resync is counted when a header is found
    /// or a bad one is dropped).
    pending_skip: u64,
    /// The current run of skipped bytes was already counted as a resync (a bad header counts
    /// at once, so a stream that ends in garbage still shows it).
    run_counted: bool,
    stats: FrameStats,
}

impl Default for FrameDecoder {
    fn default() -> Self {
        FrameDecoder::new(DEFAULT_MAX_BODY)
    }
}

enum Header {
    /// A complete header block of this many bytes announcing this body length.
    Complete { header_len: usize, body_len: usize },
    /// The header block is not complete yet.
    Partial,
    /// A bad header: skip this many bytes and scan again.
    Bad { skip: usize },
}

impl FrameDecoder {
    pub fn new(max_body: usize) -> FrameDecoder {
        FrameDecoder {
            buf: Vec::new(),
            start: 0,
            body_len: None,
            max_body,
            pending_skip: 0,
            run_counted: false,
            stats: FrameStats::default(),
        }
    }

    pub fn stats(&self) -> FrameStats {
        self.stats
    }

    pub fn push(&mut self, bytes: &[u8]) {
        if self.start > 0 && self.start >= self.buf.len() / 2 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete body, if the bytes so far hold one.
    pub fn next_frame(&mut self) -> Option<Vec<u8>> {
        loop {
            if let Some(len) = self.body_len {
                let available = self.buf.len() - self.start;
                if available < len {
                    return None;
                }
                let body = self.buf[self.start..self.start + len].to_vec();
                self.start += len;
                self.body_len = None;
                self.stats.frames += 1;
                return Some(body);
            }
            if !self.find_header_start() {
                return None;
            }
            match self.parse_header() {
                Header::Complete { header_len, body_len } => {
                    self.finish_skip();
                    self.start += header_len;
                    self.body_len = Some(body_len);
                }
                Header::Partial => return None,
                Header::Bad { skip } => {
                    self.pending_skip += skip as u64;
                    self.start += skip;
                    if !self.run_counted {
                        self.stats.resyncs += 1;
                        self.run_counted = true;
                    }
                }
            }
        }
    }

    fn finish_skip(&mut self) {
        if self.pending_skip > 0 && !self.run_counted {
            self.stats.resyncs += 1;
        }
        self.stats.skipped_bytes += self.pending_skip;
        self.pending_skip = 0;
        self.run_counted = false;
    }

    /// Moves `start` to the next `Content-Length:` (or a possible split prefix of it at the
    /// end of the buffer). False when the buffer holds no candidate yet.
    fn find_header_start(&mut self) -> bool {
        let hay = &self.buf[self.start..];
        match find_ignore_case(hay, HEADER) {
            Some(at) => {
                self.pending_skip += at as u64;
                self.start += at;
                true
            }
            None => {
                // Keep a tail that may be the first bytes of a header split across reads.
                let keep = partial_prefix_len(hay, HEADER);
                let skip = hay.len() - keep;
                self.pending_skip += skip as u64;
                self.start += skip;
                false
            }
        }
    }

    /// Parses the header block at `start`, which begins with `Content-Length:`.
    fn parse_header(&self) -> Header {
        let hay = &self.buf[self.start..];
        let window = &hay[..hay.len().min(MAX_HEADER_BYTES)];
        let Some((header_len, block)) = header_block(window) else {
            return if hay.len() >= MAX_HEADER_BYTES {
                Header::Bad { skip: HEADER.len() }
            } else {
                Header::Partial
            };
        };
        match content_length(block) {
            Some(len) if len <= self.max_body => Header::Complete { header_len, body_len: len },
            _ => Header::Bad { skip: HEADER.len() },
        }
    }
}

/// The header block up to and including its blank line: (length with terminator, lines).
fn header_block(window: &[u8]) -> Option<(usize, &[u8])> {
    let mut line_start = 0;
    while let Some(nl) = window[line_start..].iter().position(|&b| b == b'\n') {
        let line = &window[line_start..line_start + nl];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            return Some((line_start + nl + 1, &window[..line_start]));
        }
        line_start += nl + 1;
    }
    None
}

/// The Content-Length value of a header block; `None` when any line is not `Name: value` or
/// the length is missing, repeated differently or not a number.
fn content_length(block: &[u8]) -> Option<usize> {
    let text = std::str::from_utf8(block).ok()?;
    let mut length = None;
    for line in text.lines() {
        let (name, value) = line.split_once(':')?;
        if name.trim().eq_ignore_ascii_case("content-length") {
            let value = value.trim();
            if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let parsed: usize = value.parse().ok()?;
            if length.is_some_and(|seen| seen != parsed) {
                return None;
            }
            length = Some(parsed);
        }
    }
    length
}

fn find_ignore_case(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if hay.len() < needle.len() {
        return None;
    }
    (0..=hay.len() - needle.len()).find(|&i| hay[i..i + needle.len()].eq_ignore_ascii_case(needle))
}

/// Length of the longest suffix of `hay` that is a proper prefix of `needle`.
fn partial_prefix_len(hay: &[u8], needle: &[u8]) -> usize {
    (1..needle.len().min(hay.len() + 1))
        .rev()
        .find(|&n| hay[hay.len() - n..].eq_ignore_ascii_case(&needle[..n]))
        .unwrap_or(0)
}

#[cfg(test)]
#[path = "framing_tests.rs"]
mod tests;
