//! Collecting a command's output: stdout and stderr in arrival order, bounded, with the pid
//! marker line removed (spec-ssh S30).
//!
//! Bytes are kept in memory (probes, ssh's own messages), or streamed into the call's
//! [`Observer`]: its OutputSink, artifact and progress events. A streamed collector still
//! keeps the first few KiB, because ssh's own error lines (a refused session, a dead socket)
//! come before any command output and decide a retry.

use execkit_output::sink::OutputSink;
use execkit_process::run::RunObserver;
use execkit_runkit::Observer;

use crate::wrap::{PID_MARKER, parse_pid_marker};

/// A pid marker is short; a first stderr line longer than this is ordinary output.
const MARKER_MAX: usize = 40;
/// What a streamed collector keeps in memory: enough for ssh's own error lines.
const STREAMED_KEPT: usize = 4096;

/// Makes a fresh sink when an attempt is retried (its output must not show).
pub type SinkFactory = Box<dyn FnMut() -> OutputSink + Send>;

/// Where a streamed collector sends what it keeps.
struct Stream {
    observer: Observer<()>,
    fresh_sink: SinkFactory,
}

/// Output bytes kept, exact totals, and the remote pid once its marker line has been seen.
#[derive(Debug)]
pub struct Collector {
    kept: Vec<u8>,
    total: u64,
    cap: usize,
    /// The first stderr line while it may still be the marker; `None` once decided.
    head: Option<Vec<u8>>,
    /// Merged streams (a local ssh process's one pipe): bytes held back because they may be
    /// the start of the marker; scanning ends once the marker is found.
    merged_line: Option<Vec<u8>>,
    scan_merged: bool,
    stream: Option<Stream>,
    pub pid: Option<u32>,
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream").finish_non_exhaustive()
    }
}

impl Collector {
    /// `expect_marker`: the wrapper prints its pid first on stderr.
    pub fn new(cap: usize, expect_marker: bool) -> Collector {
        Collector {
            kept: Vec::new(),
            total: 0,
            cap,
            head: expect_marker.then(Vec::new),
            merged_line: None,
            scan_merged: expect_marker,
            stream: None,
            pid: None,
        }
    }

    /// A collector that streams into `observer`; `fresh_sink` replaces its sink when an
    /// attempt that ran nothing is retried.
    pub fn streaming(observer: Observer<()>, fresh_sink: SinkFactory) -> Collector {
        let mut collector = Collector::new(STREAMED_KEPT, false);
        collector.stream = Some(Stream { observer, fresh_sink });
        collector
    }

    /// Whether the wrapped command prints its pid first (known once the shell is).
    pub fn expect_marker(&mut self, expect: bool) {
        self.head = expect.then(Vec::new);
        self.scan_merged = expect;
    }

    /// Lets the observer send a progress heartbeat while the command is silent.
    pub fn heartbeat(&mut self) {
        if let Some(stream) = &mut self.stream {
            stream.observer.tick();
        }
    }

    /// The observer of a streamed collector, after what was held back has been flushed.
    pub fn into_observer(mut self) -> Option<Observer<()>> {
        self.flush_held();
        self.stream.take().map(|s| s.observer)
    }

    /// stdout and stderr interleaved by ssh. ssh writes each stream as its data arrives, so
    /// the marker may follow any amount of stdout, even in the middle of a stdout line; it
    /// is one small write of its own, so it is contiguous. Its first occurrence is removed.
    pub fn merged(&mut self, bytes: &[u8]) {
        if !self.scan_merged {
            self.flush_merged_line();
            self.keep(bytes);
            return;
        }
        let mut buf = self.merged_line.take().unwrap_or_default();
        buf.extend_from_slice(bytes);
        let marker = PID_MARKER.as_bytes();
        let mut from = 0;
        while let Some(found) = find(&buf[from..], marker) {
            let at = from + found;
            let digits_from = at + marker.len();
            let digits = buf[digits_from..].iter().take_while(|b| b.is_ascii_digit()).count();
            let end = digits_from + digits;
            if end == buf.len() && digits <= PID_DIGITS_MAX {
                // Possibly a marker still arriving: hold it back.
                self.keep(&buf[..at]);
                self.merged_line = Some(buf[at..].to_vec());
                return;
            }
            if buf.get(end) == Some(&b'\n')
                && let Some(pid) = parse_pid_marker(&buf[at..end])
            {
                self.pid = Some(pid);
                self.scan_merged = false;
                self.keep(&buf[..at]);
                self.keep(&buf[end + 1..]);
                return;
            }
            from = at + 1;
        }
        // Hold back a tail that may be the start of a marker split across reads.
        let hold = (1..marker.len()).rev().find(|n| buf.ends_with(&marker[..*n])).unwrap_or(0);
        let split = buf.len() - hold;
        self.keep(&buf[..split]);
        if hold > 0 {
            self.merged_line = Some(buf[split..].to_vec());
        }
    }

    fn flush_merged_line(&mut self) {
        if let Some(line) = self.merged_line.take() {
            self.keep(&line);
        }
    }

    pub fn stdout(&mut self, bytes: &[u8]) {
        self.keep(bytes);
    }

    /// Stderr, or a merged stream whose first line the wrapper wrote.
    pub fn stderr(&mut self, bytes: &[u8]) {
        let Some(head) = self.head.as_mut() else {
            self.keep(bytes);
            return;
        };
        head.extend_from_slice(bytes);
        if let Some(newline) = head.iter().position(|b| *b == b'\n') {
            let head = self.head.take().unwrap_or_default();
            match parse_pid_marker(&head[..newline]) {
                Some(pid) => {
                    self.pid = Some(pid);
                    self.keep(&head[newline + 1..]);
                }
                None => self.keep(&head),
            }
        } else if head.len() > MARKER_MAX {
            let head = self.head.take().unwrap_or_default();
            self.keep(&head);
        }
    }

    /// True when the kept output contains `needle` (ssh's own error lines in a merged
    /// stream).
    pub fn contains(&self, needle: &[u8]) -> bool {
        self.kept.windows(needle.len()).any(|w| w == needle)
    }

    /// Forgets the output so far (a retried attempt starts afresh).
    pub fn clear(&mut self) {
        self.kept.clear();
        self.total = 0;
        if let Some(stream) = &mut self.stream {
            stream.observer.sink = (stream.fresh_sink)();
        }
    }

    fn keep(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        self.total += bytes.len() as u64;
        let room = self.cap.saturating_sub(self.kept.len());
        self.kept.extend_from_slice(&bytes[..bytes.len().min(room)]);
        if let Some(stream) = &mut self.stream {
            stream.observer.output(bytes);
        }
    }

    /// An unfinished first line is output, not a marker.
    fn flush_held(&mut self) {
        if let Some(head) = self.head.take() {
            self.keep(&head);
        }
        self.flush_merged_line();
    }

    /// Every byte the command wrote so far.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// (kept bytes, total bytes).
    pub fn finish(mut self) -> (Vec<u8>, u64) {
        self.flush_held();
        (self.kept, self.total)
    }
}

/// Pids have at most 10 digits (2^32).
const PID_DIGITS_MAX: usize = 10;

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

impl RunObserver for Collector {
    fn output(&mut self, chunk: &[u8]) {
        self.merged(chunk);
    }

    fn tick(&mut self) {
        self.heartbeat();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_removed_only_as_first_stderr_line() {
        let mut c = Collector::new(1024, true);
        c.stdout(b"out\n");
        c.stderr(b"__EXECKIT_");
        c.stderr(b"PID__=77\nerr\n");
        c.stderr(b"__EXECKIT_PID__=88\n");
        assert_eq!(c.pid, Some(77));
        assert_eq!(c.finish(), (b"out\nerr\n__EXECKIT_PID__=88\n".to_vec(), 27));
    }

    #[test]
    fn marker_found_after_stdout_in_a_merged_stream() {
        let mut c = Collector::new(1024, true);
        c.merged(b"direct\n__EXECKIT_P");
        c.merged(b"ID__=9\nerr\n__EXECKIT_PID__=10\n");
        assert_eq!(c.pid, Some(9));
        assert_eq!(c.finish().0, b"direct\nerr\n__EXECKIT_PID__=10\n".to_vec());
        let mut late = Collector::new(1 << 20, true);
        late.merged(&vec![0u8; 100_000]);
        late.merged(b"__EXECKIT_PID__=5\n");
        assert_eq!((late.pid, late.finish().1), (Some(5), 100_000));
        let mut split = Collector::new(1024, true);
        for piece in [&b"ab__EXEC"[..], b"KIT_PID__", b"=12", b"3", b"\ncd"] {
            split.merged(piece);
        }
        assert_eq!((split.pid, split.finish().0), (Some(123), b"abcd".to_vec()));
        let mut long = Collector::new(1024, true);
        long.merged(b"__EXECKIT_PID__=123456789012345");
        assert_eq!((long.pid, long.finish().1), (None, 31));
        let mut plain = Collector::new(1024, true);
        plain.merged(b"__EXECKIT_no\nab");
        plain.merged(b"c\n");
        assert_eq!(plain.pid, None);
        assert_eq!(plain.finish(), (b"__EXECKIT_no\nabc\n".to_vec(), 17));
    }

    #[test]
    fn no_marker_and_bounded() {
        let mut c = Collector::new(4, true);
        c.stderr(b"hello world\n");
        assert_eq!(c.pid, None);
        assert_eq!(c.finish(), (b"hell".to_vec(), 12));
    }
}
