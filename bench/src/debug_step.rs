//! Per-step round trip of the debug tool on debugpy: `step_over` through `Toolkit::call`
//! (`next` → `stopped` → `stackTrace {levels:1}`), with the TCP_NODELAY fix on and off, against
//! a minimal raw DAP driver on stock debugpy sending the same messages.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use execkit::{CallContext, Toolkit};
use serde_json::{Value, json};

use crate::stats::{ms, summarize};

const STEPS: usize = 200;

const PROGRAM: &str = "\
total = 0
for i in range(100000):
    total += i
    total -= 1
print(total)
";

pub async fn debugpy_step() {
    let Ok(dir) = tempfile::tempdir() else { return println!("debug-step: no temp dir") };
    let program = dir.path().join("steps.py");
    if std::fs::write(&program, PROGRAM).is_err() {
        return println!("debug-step: cannot write the program");
    }
    let raw = match raw_steps(&program, None) {
        Ok(samples) => samples,
        Err(err) => return println!("debug-step: raw driver: {err}"),
    };
    let fix = dir.path().join("nodelay");
    let _ = std::fs::create_dir_all(&fix);
    let _ = std::fs::write(
        fix.join("sitecustomize.py"),
        include_str!("../../python/debug/sitecustomize.py"),
    );
    let raw_fixed = raw_steps(&program, Some(&fix));
    let on = toolkit_steps(dir.path(), &program, "1").await;
    let off = toolkit_steps(dir.path(), &program, "0").await;
    let raw = summarize(raw);
    println!("debugpy step round trip, median of {STEPS} steps (p99):");
    println!("  raw DAP driver, stock debugpy: {:.2} ms ({:.2} ms)", ms(raw.median), ms(raw.p99));
    if let Ok(fixed) = raw_fixed {
        let fixed = summarize(fixed);
        println!(
            "  raw DAP driver, same sitecustomize: {:.2} ms ({:.2} ms)",
            ms(fixed.median),
            ms(fixed.p99)
        );
    }
    for (label, samples) in
        [("execkit, TCP_NODELAY fix on", on), ("execkit, EXECKIT_DEBUGPY_NODELAY=0", off)]
    {
        match samples {
            Ok(samples) => {
                let s = summarize(samples);
                let speedup = raw.median.as_secs_f64() / s.median.as_secs_f64();
                println!(
                    "  {label}: {:.2} ms ({:.2} ms), {speedup:.1}x faster than raw",
                    ms(s.median),
                    ms(s.p99)
                );
            }
            Err(err) => println!("  {label}: {err}"),
        }
    }
}

async fn toolkit_steps(
    dir: &std::path::Path,
    program: &std::path::Path,
    nodelay: &str,
) -> Result<Vec<Duration>, String> {
    let toolkit = Toolkit::builder()
        .cwd(dir)
        .var("EXECKIT_ARTIFACT_DIR", dir.join("artifacts").to_string_lossy())
        .var("EXECKIT_DEBUGPY_NODELAY", nodelay)
        .build()?;
    let call = |args: Value| toolkit.call("debug", args, CallContext::default());
    call(json!({"action": "set_breakpoint", "file": program, "line": 3})).await;
    let launched = call(
        json!({"action": "launch", "program": program, "stop_on_entry": false, "timeout": 120}),
    )
    .await;
    if launched.is_error {
        return Err(launched.text());
    }
    let stopped = launched
        .structured_content
        .as_ref()
        .and_then(|s| s["session"]["status"].as_str().map(str::to_string));
    if stopped.as_deref() != Some("stopped") {
        call(json!({"action": "continue", "timeout": 120})).await;
    }
    call(json!({"action": "remove_breakpoint", "file": program, "line": 3})).await;
    let mut samples = Vec::with_capacity(STEPS);
    for _ in 0..STEPS {
        let started = Instant::now();
        let step = call(json!({"action": "step_over"})).await;
        samples.push(started.elapsed());
        if step.is_error {
            return Err(step.text());
        }
    }
    call(json!({"action": "terminate"})).await;
    toolkit.close().await;
    Ok(samples)
}

/// The baseline: Content-Length framing, a backlog of unclaimed messages, nothing else.
struct Raw {
    child: Child,
    stdin: ChildStdin,
    incoming: mpsc::Receiver<Value>,
    backlog: Vec<Value>,
    seq: i64,
}

impl Raw {
    fn start(pythonpath: Option<&std::path::Path>) -> Result<Raw, String> {
        let mut command = Command::new("python3");
        if let Some(dir) = pythonpath {
            command.env("PYTHONPATH", dir);
        }
        let mut child = command
            .args(["-m", "debugpy.adapter"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| e.to_string())?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (tx, incoming) = mpsc::channel();
        std::thread::spawn(move || read_frames(BufReader::new(stdout), tx));
        Ok(Raw { child, stdin, incoming, backlog: Vec::new(), seq: 0 })
    }

    fn send(&mut self, command: &str, arguments: Value) -> i64 {
        self.seq += 1;
        let body =
            json!({"seq": self.seq, "type": "request", "command": command, "arguments": arguments})
                .to_string();
        let _ = write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len());
        let _ = self.stdin.flush();
        self.seq
    }

    fn wait(&mut self, pred: impl Fn(&Value) -> bool) -> Result<Value, String> {
        if let Some(at) = self.backlog.iter().position(&pred) {
            return Ok(self.backlog.remove(at));
        }
        loop {
            let message =
                self.incoming.recv_timeout(Duration::from_secs(60)).map_err(|e| e.to_string())?;
            if pred(&message) {
                return Ok(message);
            }
            self.backlog.push(message);
        }
    }

    fn response(&mut self, seq: i64) -> Result<Value, String> {
        self.wait(|m| m["type"] == "response" && m["request_seq"] == seq)
    }

    fn event(&mut self, name: &str) -> Result<Value, String> {
        self.wait(|m| m["type"] == "event" && m["event"] == name)
    }
}

fn read_frames(mut reader: BufReader<std::process::ChildStdout>, tx: mpsc::Sender<Value>) {
    loop {
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let line = line.trim();
            if line.is_empty() {
                break;
            }
            if let Some(n) = line.strip_prefix("Content-Length:") {
                length = n.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0u8; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let Ok(value) = serde_json::from_slice::<Value>(&body) else { continue };
        if tx.send(value).is_err() {
            return;
        }
    }
}

fn raw_steps(
    program: &std::path::Path,
    pythonpath: Option<&std::path::Path>,
) -> Result<Vec<Duration>, String> {
    let mut raw = Raw::start(pythonpath)?;
    let init = raw.send("initialize", json!({"clientID": "raw", "adapterID": "debugpy", "linesStartAt1": true, "columnsStartAt1": true, "pathFormat": "path"}));
    raw.response(init)?;
    let cwd = program.parent().map(|p| p.display().to_string()).unwrap_or_default();
    raw.send(
        "launch",
        json!({"program": program, "cwd": cwd, "console": "internalConsole", "justMyCode": false}),
    );
    raw.event("initialized")?;
    let bp = raw
        .send("setBreakpoints", json!({"source": {"path": program}, "breakpoints": [{"line": 3}]}));
    raw.response(bp)?;
    let done = raw.send("configurationDone", json!({}));
    raw.response(done)?;
    let stop = raw.event("stopped")?;
    let thread = stop["body"]["threadId"].as_i64().unwrap_or(1);
    let clear = raw.send("setBreakpoints", json!({"source": {"path": program}, "breakpoints": []}));
    raw.response(clear)?;
    let mut samples = Vec::with_capacity(STEPS);
    for _ in 0..STEPS {
        let started = Instant::now();
        let next = raw.send("next", json!({"threadId": thread}));
        raw.response(next)?;
        raw.event("stopped")?;
        let trace = raw.send("stackTrace", json!({"threadId": thread, "levels": 1}));
        raw.response(trace)?;
        samples.push(started.elapsed());
        raw.backlog.clear();
    }
    let bye = raw.send("disconnect", json!({"terminateDebuggee": true}));
    let _ = raw.response(bye);
    drop(raw.stdin);
    let _ = raw.child.wait();
    Ok(samples)
}
