//! Drives the real `execkit-js-kernel` binary over its protocol fds.
//!
//! The kernel expects commands on fd 3 and events on fd 4. The test starts it through
//! `/bin/sh -c 'exec kernel 3<&0 4>&1 0</dev/null 1>&2'`, so the child's stdin pipe becomes
//! the command fd and its stdout pipe the event fd without any unsafe fd juggling; fds 1 and 2
//! share the diagnostic pipe, as E28 sets them.
#![allow(dead_code)]

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

pub const KERNEL: &str = env!("CARGO_BIN_EXE_execkit-js-kernel");
/// Generous bound for anything that should be quick.
pub const QUICK: Duration = Duration::from_secs(20);

pub struct Kernel {
    pub child: Child,
    stdin: Option<ChildStdin>,
    events: Receiver<Value>,
    diag: Receiver<String>,
    next_id: u64,
    pub ready: Value,
}

impl Kernel {
    pub fn start(cwd: &Path) -> Kernel {
        Self::start_with_env(cwd, &[])
    }

    // Tests may start processes directly: the one-spawn-path rule (clippy.toml) is for the
    // library crates, and this harness must control the kernel's fds itself.
    #[allow(clippy::disallowed_methods)]
    pub fn start_with_env(cwd: &Path, env: &[(&str, &str)]) -> Kernel {
        let script = format!("exec '{KERNEL}' 3<&0 4>&1 0</dev/null 1>&2");
        let mut cmd = std::process::Command::new("/bin/sh");
        cmd.arg("-c").arg(script).current_dir(cwd);
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn kernel");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout");
        let mut stderr = child.stderr.take().expect("stderr");
        let (tx, events) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("bad frame {line:?}: {e}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let (dtx, diag) = channel();
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = stderr.read_to_string(&mut s);
            let _ = dtx.send(s);
        });
        let mut k = Kernel { child, stdin, events, diag, next_id: 0, ready: Value::Null };
        k.ready = k.next_frame(QUICK).expect("ready frame");
        assert_eq!(k.ready["type"], "ready", "first frame: {}", k.ready);
        k
    }

    pub fn send(&mut self, frame: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        let mut line = serde_json::to_vec(frame).unwrap();
        line.push(b'\n');
        stdin.write_all(&line).unwrap();
        stdin.flush().unwrap();
    }

    pub fn close_commands(&mut self) {
        self.stdin = None;
    }

    pub fn next_frame(&self, within: Duration) -> Option<Value> {
        self.events.recv_timeout(within).ok()
    }

    /// Sends `execute` and returns its id.
    pub fn start_cell(&mut self, code: &str, timeout_ms: u64) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"type": "execute", "id": id, "code": code, "timeout_ms": timeout_ms,
                          "cell": {"index": 1, "title": null}, "tools": ["bash", "job"]}));
        id
    }

    /// Frames of `id` up to and including `done`.
    pub fn frames_until_done(&self, id: u64, within: Duration) -> Vec<Value> {
        let deadline = Instant::now() + within;
        let mut frames = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let f = self
                .next_frame(left)
                .unwrap_or_else(|| panic!("no done for cell {id}; got {frames:#?}"));
            let done = f["type"] == "done" && f["id"] == id;
            frames.push(f);
            if done {
                return frames;
            }
        }
    }

    pub fn run(&mut self, code: &str) -> Cell {
        self.run_with_timeout(code, 30_000)
    }

    pub fn run_with_timeout(&mut self, code: &str, timeout_ms: u64) -> Cell {
        let id = self.start_cell(code, timeout_ms);
        Cell { frames: self.frames_until_done(id, QUICK + Duration::from_millis(timeout_ms)) }
    }

    /// Waits for the process to exit; returns its status.
    pub fn wait_exit(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        None
    }

    pub fn diagnostics(&self, within: Duration) -> String {
        self.diag.recv_timeout(within).unwrap_or_default()
    }
}

impl Drop for Kernel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The frames of one cell.
#[derive(Debug)]
pub struct Cell {
    pub frames: Vec<Value>,
}

impl Cell {
    pub fn status(&self) -> &str {
        self.frames.last().and_then(|f| f["status"].as_str()).unwrap_or("")
    }

    pub fn of_type(&self, t: &str) -> Vec<&Value> {
        self.frames.iter().filter(|f| f["type"] == t).collect()
    }

    pub fn stdout(&self) -> String {
        self.stream("stdout")
    }

    pub fn stderr(&self) -> String {
        self.stream("stderr")
    }

    fn stream(&self, name: &str) -> String {
        self.of_type("stream")
            .iter()
            .filter(|f| f["name"] == name)
            .map(|f| f["text"].as_str().unwrap())
            .collect()
    }

    /// `text/plain` of the result, if any.
    pub fn text(&self) -> Option<String> {
        self.of_type("result")
            .first()
            .map(|f| f["data"]["text/plain"].as_str().unwrap().to_string())
    }

    pub fn json(&self) -> Option<Value> {
        self.of_type("result").first().and_then(|f| f["data"].get("application/json").cloned())
    }

    pub fn error(&self) -> Option<&Value> {
        self.of_type("error").first().copied()
    }

    pub fn ename(&self) -> String {
        self.error().map(|e| e["ename"].as_str().unwrap().to_string()).unwrap_or_default()
    }

    #[track_caller]
    pub fn assert_ok(&self) -> &Self {
        assert_eq!(self.status(), "ok", "cell failed: {:#?}", self.frames);
        self
    }
}

/// User plus system CPU time of a process, from /proc.
pub fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after_name = stat.rsplit(')').next().unwrap_or_default();
    let fields: Vec<u64> = after_name.split_whitespace().map(|f| f.parse().unwrap_or(0)).collect();
    // utime and stime are fields 14 and 15 of stat(5); `after_name` starts at field 3.
    let ticks = fields.get(11).copied().unwrap_or(0) + fields.get(12).copied().unwrap_or(0);
    // SAFETY: sysconf has no preconditions.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Duration::from_millis(ticks * 1000 / per_second)
}
