//! Waiting-for-input detection on a PTY (B25–B27).
//!
//! A command blocked reading its terminal would otherwise sit until its timeout. After a
//! stretch of silence the detector samples the process tree through `/proc`: every member
//! asleep with no CPU used since the last sample, twice in a row, and at least one member
//! reading the terminal. Then the run is stopped and the result says what it was waiting for.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use execkit_output::sink::OutputSink;
use execkit_process::{CancellationToken, ProcessTree, PtyHandle, procfs};
use execkit_runkit::Watcher;
use serde::Serialize;

/// Samples are this far apart once the terminal is silent.
const SAMPLE_EVERY: Duration = Duration::from_millis(250);
/// Full-screen programs (test (c)) need this much silence: a quiet `ssh -t` must not be flagged.
const POLL_SILENCE: Duration = Duration::from_secs(5);

/// How the wait was recognised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DetectedBy {
    Syscall,
    Wchan,
    Poll,
}

/// `structuredContent.input_wait`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct InputWait {
    pub prompt: String,
    pub input_hidden: bool,
    pub pid: u32,
    pub cmd: String,
    pub detected_by: DetectedBy,
    /// Seconds of silence before the run was stopped.
    #[serde(skip)]
    pub silent_for: Duration,
}

/// One member's state at a sample.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Sample {
    state: char,
    cpu: u64,
    io: Option<(u64, u64)>,
}

pub(crate) struct Detector {
    pty: PtyHandle,
    tree: ProcessTree,
    stop: CancellationToken,
    silence: Duration,
    last_output: Instant,
    last_sample: Instant,
    previous: Option<HashMap<u32, Sample>>,
    quiet_samples: u32,
    pub found: Option<InputWait>,
}

impl Detector {
    /// `silence`: `EXECKIT_BASH_INPUT_WAIT_MS`. `stop` ends the run on detection.
    pub fn new(
        pty: PtyHandle,
        tree: ProcessTree,
        stop: CancellationToken,
        silence: Duration,
    ) -> Self {
        let now = Instant::now();
        Detector {
            pty,
            tree,
            stop,
            silence,
            last_output: now,
            last_sample: now,
            previous: None,
            quiet_samples: 0,
            found: None,
        }
    }

    /// Called on every run tick; `prompt` gives the last non-empty output line when needed.
    fn check(&mut self, prompt: impl FnOnce() -> String) {
        let silent = self.last_output.elapsed();
        // One baseline sample a step before the threshold, so the first sample after it can
        // already compare CPU time.
        if self.found.is_some() || silent + SAMPLE_EVERY < self.silence {
            return;
        }
        if self.last_sample.elapsed() < SAMPLE_EVERY {
            return;
        }
        self.last_sample = Instant::now();
        // No foreground group (or the kernel's) means nothing to attribute a read to.
        if self.pty.fg_pgrp().is_none_or(|pg| pg <= 1) {
            self.previous = None;
            return;
        }
        let members = self.tree.members();
        let samples: HashMap<u32, Sample> =
            members.iter().filter_map(|&pid| sample(pid).map(|s| (pid, s))).collect();
        let settled = !samples.is_empty()
            && samples.values().all(|s| matches!(s.state, 'S' | 'T' | 't'))
            && self.previous.as_ref().is_some_and(|prev| {
                samples.iter().all(|(pid, s)| prev.get(pid).is_some_and(|p| p.cpu == s.cpu))
            });
        let io_unchanged = self.previous.as_ref().is_some_and(|prev| {
            samples.iter().all(|(pid, s)| prev.get(pid).is_some_and(|p| p.io == s.io))
        });
        self.previous = Some(samples);
        if !settled {
            self.quiet_samples = 0;
            return;
        }
        if silent < self.silence {
            return;
        }
        self.quiet_samples += 1;
        // "The state must hold in two consecutive samples."
        if self.quiet_samples < 2 {
            return;
        }
        let tty = self.pty.tty().to_path_buf();
        let mode = self.pty.termios();
        let full_screen = mode.is_some_and(|m| !m.icanon);
        let long_silence = self.last_output.elapsed() >= POLL_SILENCE;
        for pid in members {
            let detected = reads_terminal(pid, &tty).or_else(|| {
                (full_screen && long_silence && io_unchanged && polls(pid))
                    .then_some(DetectedBy::Poll)
            });
            if let Some(detected_by) = detected {
                self.found = Some(InputWait {
                    prompt: cut_prompt(&prompt()),
                    // Echo off in line mode is a password prompt; full-screen programs turn off
                    // both echo and line mode and show what they read themselves.
                    input_hidden: mode.is_some_and(|m| !m.echo && m.icanon),
                    pid,
                    cmd: cmdline(pid),
                    detected_by,
                    silent_for: self.last_output.elapsed(),
                });
                self.stop.cancel();
                return;
            }
        }
    }
}

/// The detector plugs into the run: output resets the silence, each tick may sample.
impl Watcher for Detector {
    fn saw_output(&mut self) {
        self.last_output = Instant::now();
        self.previous = None;
        self.quiet_samples = 0;
    }

    fn tick(&mut self, sink: &OutputSink) {
        self.check(|| last_line(&sink.snapshot()));
    }
}

fn sample(pid: u32) -> Option<Sample> {
    let (state, cpu) = procfs::state_and_cpu_ticks(pid)?;
    Some(Sample { state, cpu, io: procfs::io_chars(pid) })
}

/// Tests (a) and (b): a read on the terminal, or a tty wait channel with the terminal open.
fn reads_terminal(pid: u32, tty: &Path) -> Option<DetectedBy> {
    match procfs::syscall(pid) {
        Ok(text) => {
            let mut fields = text.split_whitespace();
            let nr: i64 = fields.next()?.parse().ok()?;
            let fd = i64::from_str_radix(fields.next()?.trim_start_matches("0x"), 16).ok()?;
            let is_read = [libc::SYS_read, libc::SYS_readv, libc::SYS_pread64].contains(&nr);
            (is_read && fd_is(pid, fd, tty)).then_some(DetectedBy::Syscall)
        }
        Err(_) => {
            let wchan = procfs::wchan(pid)?;
            let waiting = matches!(wchan.trim(), "n_tty_read" | "wait_woken");
            (waiting && has_open(pid, tty)).then_some(DetectedBy::Wchan)
        }
    }
}

/// Test (c)'s syscalls: waiting for any of several fds.
fn polls(pid: u32) -> bool {
    let Ok(text) = procfs::syscall(pid) else { return false };
    let Some(nr) = text.split_whitespace().next().and_then(|n| n.parse::<i64>().ok()) else {
        return false;
    };
    poll_syscalls().contains(&nr)
}

#[cfg(target_arch = "x86_64")]
fn poll_syscalls() -> Vec<i64> {
    vec![
        libc::SYS_poll,
        libc::SYS_select,
        libc::SYS_pselect6,
        libc::SYS_ppoll,
        libc::SYS_epoll_wait,
        libc::SYS_epoll_pwait,
    ]
}

#[cfg(not(target_arch = "x86_64"))]
fn poll_syscalls() -> Vec<i64> {
    vec![libc::SYS_pselect6, libc::SYS_ppoll, libc::SYS_epoll_pwait]
}

/// The fd is our slave, directly or through `/dev/tty` (which members of our session, whose
/// controlling terminal is the slave, open, as `less` does for its commands).
fn fd_is(pid: u32, fd: i64, tty: &Path) -> bool {
    procfs::fd_link(pid, fd).is_some_and(|link| is_terminal(&link, tty))
}

fn has_open(pid: u32, tty: &Path) -> bool {
    procfs::fd_links(pid).iter().any(|link| is_terminal(link, tty))
}

fn is_terminal(link: &Path, tty: &Path) -> bool {
    link == tty || link == Path::new("/dev/tty")
}

fn cmdline(pid: u32) -> String {
    let raw = procfs::cmdline_bytes(pid);
    let text = String::from_utf8_lossy(&raw).replace('\0', " ");
    text.trim().chars().take(120).collect()
}

/// The last non-empty line, at most 200 bytes on a char boundary.
pub(crate) fn last_line(text: &str) -> String {
    text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim_end().to_string()
}

fn cut_prompt(line: &str) -> String {
    let mut end = line.len().min(200);
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    line[..end].to_string()
}

/// The two texts of a detected wait (B26).
pub(crate) fn texts(wait: &InputWait) -> (String, String) {
    let advice = "[Supply the answer in the command (printf 'y\\n' | cmd), use a non-interactive \
                  flag, or ask the user; never guess passwords]"
        .to_string();
    let what = if wait.input_hidden {
        "waiting for hidden terminal input (likely a password)"
    } else {
        "waiting for terminal input"
    };
    let outcome = format!(
        "[Command stopped: {what} after {:.1} s without output. Last output: \"{}\"]",
        wait.silent_for.as_secs_f64(),
        wait.prompt
    );
    (advice, outcome)
}
