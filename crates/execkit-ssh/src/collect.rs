//! Collecting a command's output: stdout and stderr in arrival order, bounded, with the pid
//! marker line removed (spec-ssh S30).

use execkit_process::run::RunObserver;

use crate::wrap::parse_pid_marker;

/// A pid marker is short; a first stderr line longer than this is ordinary output.
const MARKER_MAX: usize = 40;

/// Output bytes kept, exact totals, and the remote pid once its marker line has been seen.
#[derive(Debug)]
pub struct Collector {
    kept: Vec<u8>,
    total: u64,
    cap: usize,
    /// The first stderr line while it may still be the marker; `None` once decided.
    head: Option<Vec<u8>>,
    pub pid: Option<u32>,
}

impl Collector {
    /// `expect_marker`: the wrapper prints its pid first on stderr.
    pub fn new(cap: usize, expect_marker: bool) -> Collector {
        Collector { kept: Vec::new(), total: 0, cap, head: expect_marker.then(Vec::new), pid: None }
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

    fn keep(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = self.cap.saturating_sub(self.kept.len());
        self.kept.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    /// (kept bytes, total bytes); an unfinished first line is output, not a marker.
    pub fn finish(mut self) -> (Vec<u8>, u64) {
        if let Some(head) = self.head.take() {
            self.keep(&head);
        }
        (self.kept, self.total)
    }
}

impl RunObserver for Collector {
    fn output(&mut self, chunk: &[u8]) {
        self.stderr(chunk);
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
    fn no_marker_and_bounded() {
        let mut c = Collector::new(4, true);
        c.stderr(b"hello world\n");
        assert_eq!(c.pid, None);
        assert_eq!(c.finish(), (b"hell".to_vec(), 12));
    }
}
