//! Through `execkit mcp`, as a harness sees it: the first eval result after the server starts
//! against a bare NDJSON Python kernel; the warm `1+1` round trip against ipykernel driven by
//! jupyter_client (`bench/eval/jupyter_baseline.py`, same interpreter); bash `true` against a
//! raw `bash -c true` plus the server's own `ping` round trip (the client and transport floor).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::mcp_client::{McpServer, execkit_binary};
use crate::stats::{ms, summarize};

const FIRST_RUNS: usize = 10;
const WARMUP: usize = 50;
const WARM_RUNS: usize = 1000;
const BASH_RUNS: usize = 500;
const SPACED_RUNS: usize = 100;
const SPACING: Duration = Duration::from_millis(20);

/// The floor of a Python kernel: read a JSON line, evaluate, write a JSON line.
const BARE_KERNEL: &str = r#"
import json, sys
ns = {}
for line in sys.stdin:
    code = json.loads(line)["code"]
    value = eval(compile(code, "<cell>", "eval"), ns)
    sys.stdout.write(json.dumps({"repr": repr(value)}) + "\n")
    sys.stdout.flush()
"#;

fn python() -> String {
    std::env::var("EXECKIT_PYTHON").unwrap_or_else(|_| "python3".to_string())
}

fn vars(dir: &std::path::Path) -> Vec<(&'static str, String)> {
    vec![("EXECKIT_ARTIFACT_DIR", dir.join("artifacts").to_string_lossy().to_string())]
}

const PY_1_PLUS_1: fn() -> Value = || json!({"cells": [{"language": "py", "code": "1+1"}]});

/// Spawn → first reply of the bare kernel.
fn bare_kernel_first_reply() -> Option<Duration> {
    let started = Instant::now();
    let mut child = Command::new(python())
        .args(["-I", "-c", BARE_KERNEL])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .ok()?;
    let mut stdin = child.stdin.take()?;
    stdin.write_all(b"{\"code\": \"1+1\"}\n").ok()?;
    let mut line = String::new();
    BufReader::new(child.stdout.take()?).read_line(&mut line).ok()?;
    let elapsed = started.elapsed();
    drop(stdin);
    let _ = child.wait();
    line.contains("\"2\"").then_some(elapsed)
}

pub fn first_eval() {
    let Some(execkit) = execkit_binary() else {
        return println!("mcp: build the CLI first: cargo build --release -p execkit-cli");
    };
    let Ok(dir) = tempfile::tempdir() else { return println!("mcp: no temp dir") };
    let (mut bare, mut tool) = (Vec::new(), Vec::new());
    for i in 0..FIRST_RUNS + 1 {
        let Some(b) = bare_kernel_first_reply() else {
            return println!("mcp: the bare kernel failed on {}", python());
        };
        let started = Instant::now();
        // Timed to the result; the server's shutdown after it is not part of the figure.
        let first = McpServer::start(&execkit, dir.path(), &vars(dir.path())).and_then(|mut s| {
            let result = s.call("eval", PY_1_PLUS_1()).map(|_| started.elapsed());
            s.close();
            result
        });
        let t = match first {
            Ok(t) => t,
            Err(err) => return println!("mcp: {err}"),
        };
        if i >= 1 {
            bare.push(b);
            tool.push(t);
        }
    }
    let (bare, tool) = (summarize(bare).median, summarize(tool).median);
    println!(
        "mcp first eval ({FIRST_RUNS} runs): `execkit mcp` start → first `1+1` result median \
         {:.1} ms; bare NDJSON kernel spawn → first reply {:.1} ms; ratio {:.2}x (target <= 1.5x)",
        ms(tool),
        ms(bare),
        tool.as_secs_f64() / bare.as_secs_f64()
    );
}

/// The median of ipykernel's warm round trip from `bench/eval/jupyter_baseline.py`.
fn jupyter_warm_median() -> Option<Duration> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/eval/jupyter_baseline.py");
    let output =
        Command::new(python()).args([script, &WARM_RUNS.to_string(), "0"]).output().ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    let line = text.lines().find(|l| l.contains("ipykernel_warm_round_trip"))?;
    let value: Value = serde_json::from_str(line).ok()?;
    Some(Duration::from_secs_f64(value["median_us"].as_f64()? / 1e6))
}

/// Starts a server and runs `WARMUP` unmeasured rounds, then `runs` measured ones; a round
/// times `N` things (interleaved, so drift on the machine hits them alike) and returns them.
fn warm_rounds<const N: usize>(
    runs: usize,
    mut round: impl FnMut(&mut McpServer) -> std::io::Result<[Duration; N]>,
) -> Result<[Vec<Duration>; N], String> {
    let execkit = execkit_binary()
        .ok_or("build the CLI first: cargo build --release -p execkit-cli".to_string())?;
    let dir = tempfile::tempdir().map_err(|e| format!("no temp dir: {e}"))?;
    let mut server =
        McpServer::start(&execkit, dir.path(), &vars(dir.path())).map_err(|e| e.to_string())?;
    let mut samples: [Vec<Duration>; N] = std::array::from_fn(|_| Vec::with_capacity(runs));
    for i in 0..WARMUP + runs {
        let times = round(&mut server).map_err(|e| e.to_string())?;
        if i >= WARMUP {
            for (all, t) in samples.iter_mut().zip(times) {
                all.push(t);
            }
        }
    }
    server.close();
    Ok(samples)
}

/// The time `f` takes, and what it returned.
fn timed<T>(f: impl FnOnce() -> T) -> (Duration, T) {
    let started = Instant::now();
    let value = f();
    (started.elapsed(), value)
}

pub fn warm_eval() {
    let rounds = warm_rounds(WARM_RUNS, |server| {
        let (t, called) = timed(|| server.call("eval", PY_1_PLUS_1()));
        called.map(|_| [t])
    });
    let [samples] = match rounds {
        Ok(samples) => samples,
        Err(err) => return println!("mcp: {err}"),
    };
    let tool = summarize(samples);
    let Some(jupyter) = jupyter_warm_median() else {
        return println!(
            "mcp warm eval: median {:.0} µs p99 {:.0} µs; no Jupyter baseline (needs \
             jupyter_client and ipykernel on {})",
            ms(tool.median) * 1000.0,
            ms(tool.p99) * 1000.0,
            python()
        );
    };
    println!(
        "mcp warm eval ({WARM_RUNS} runs): `1+1` through MCP median {:.0} µs p99 {:.0} µs; \
         ipykernel + jupyter_client {:.2} ms; {:.1}x faster (target >= 10x)",
        ms(tool.median) * 1000.0,
        ms(tool.p99) * 1000.0,
        ms(jupyter),
        jupyter.as_secs_f64() / tool.median.as_secs_f64()
    );
}

pub fn bash() {
    // `true` is a builtin; `/bin/true` is a program, which bash can `exec` in place of itself.
    for command in ["true", "/bin/true"] {
        bash_back_to_back(command);
    }
    bash_spaced();
}

fn bash_back_to_back(command: &str) {
    let rounds = warm_rounds(BASH_RUNS, |server| {
        let (r, _) = timed(|| Command::new("bash").args(["-c", command]).status());
        let (p, pinged) = timed(|| server.request("ping", json!({})));
        let (t, called) = timed(|| server.call("bash", json!({"command": command})));
        pinged.and(called).map(|_| [r, p, t])
    });
    let [raw, ping, tool] = match rounds {
        Ok(samples) => samples.map(|s| summarize(s).median),
        Err(err) => return println!("mcp: {err}"),
    };
    println!(
        "mcp bash ({BASH_RUNS} runs): `{command}` through MCP median {:.2} ms; raw `bash -c \
         {command}` {:.2} ms; MCP ping {:.3} ms; added beyond raw + ping {:+.2} ms (target <= \
         +0.4 ms)",
        ms(tool),
        ms(raw),
        ms(ping),
        ms(tool) - ms(raw) - ms(ping)
    );
}

/// Calls as far apart as an agent's: 20 ms of nothing before each measured step.
fn bash_spaced() {
    let rounds = warm_rounds(SPACED_RUNS, |server| {
        std::thread::sleep(SPACING);
        let (r, _) = timed(|| Command::new("bash").args(["-c", "true"]).status());
        std::thread::sleep(SPACING);
        let (t, called) = timed(|| server.call("bash", json!({"command": "true"})));
        called.map(|_| [r, t])
    });
    let [raw, tool] = match rounds {
        Ok(samples) => samples.map(|s| summarize(s).median),
        Err(err) => return println!("mcp: {err}"),
    };
    println!(
        "mcp bash, calls {} ms apart ({SPACED_RUNS} runs): `true` through MCP median {:.2} ms; \
         raw `bash -c true` {:.2} ms; added {:+.2} ms",
        SPACING.as_millis(),
        ms(tool),
        ms(raw),
        ms(tool) - ms(raw)
    );
}
