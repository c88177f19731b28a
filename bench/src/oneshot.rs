//! One-shot CLI calls, a fresh `execkit` process each: `execkit call bash` against `bash -c
//! true`, and `execkit call eval` against the first result of a Toolkit started in-process (what
//! a server pays for its first eval call). Python runs on `EXECKIT_PYTHON` for both.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use execkit::{CallContext, Toolkit};
use serde_json::json;

use crate::mcp_client::execkit_binary;
use crate::stats::{ms, summarize};

const BASH_RUNS: usize = 40;
const EVAL_RUNS: usize = 15;

/// One fresh `execkit call <tool> <args>`, timed to its exit.
fn execkit_call(
    execkit: &std::path::Path,
    dir: &std::path::Path,
    tool: &str,
    args: &str,
) -> Option<Duration> {
    let started = Instant::now();
    let status = Command::new(execkit)
        .args(["call", tool, args])
        .current_dir(dir)
        .env("EXECKIT_ARTIFACT_DIR", dir.join("artifacts"))
        .stdout(Stdio::null())
        .status()
        .ok()?;
    status.success().then(|| started.elapsed())
}

pub fn bash() {
    let Some(execkit) = execkit_binary() else {
        return println!("oneshot: build the CLI first: cargo build --release -p execkit-cli");
    };
    let Ok(dir) = tempfile::tempdir() else { return println!("oneshot: no temp dir") };
    let args = json!({"command": "true"}).to_string();
    let (mut raw, mut tool) = (Vec::new(), Vec::new());
    // The first call writes the shell snapshot's disk cache; the rest read it.
    for i in 0..BASH_RUNS + 2 {
        let started = Instant::now();
        let _ = Command::new("bash").args(["-c", "true"]).status();
        let r = started.elapsed();
        let Some(t) = execkit_call(&execkit, dir.path(), "bash", &args) else {
            return println!("oneshot: execkit call bash failed");
        };
        if i >= 2 {
            raw.push(r);
            tool.push(t);
        }
    }
    let (raw, tool) = (summarize(raw).median, summarize(tool).median);
    println!(
        "oneshot bash ({BASH_RUNS} runs): `execkit call bash true` median {:.1} ms; `bash -c true` \
         {:.2} ms; ratio {:.0}x (target <= 10x)",
        ms(tool),
        ms(raw),
        tool.as_secs_f64() / raw.as_secs_f64()
    );
}

/// A Toolkit built in this process and its first `1+1` result: the in-process floor of a first
/// eval call, kernel start included.
async fn in_process_first_result(dir: &std::path::Path) -> Option<Duration> {
    let started = Instant::now();
    let toolkit = Toolkit::builder()
        .cwd(dir)
        .var("EXECKIT_ARTIFACT_DIR", dir.join("artifacts").to_string_lossy())
        .build()
        .ok()?;
    let args = json!({"cells": [{"language": "py", "code": "1+1"}]});
    let result = toolkit.call("eval", args, CallContext::default()).await;
    let elapsed = started.elapsed();
    toolkit.close().await;
    (!result.is_error).then_some(elapsed)
}

pub async fn eval() {
    let Some(execkit) = execkit_binary() else {
        return println!("oneshot: build the CLI first: cargo build --release -p execkit-cli");
    };
    let Ok(dir) = tempfile::tempdir() else { return println!("oneshot: no temp dir") };
    let args = json!({"cells": [{"language": "py", "code": "1+1"}]}).to_string();
    let (mut base, mut tool) = (Vec::new(), Vec::new());
    for i in 0..EVAL_RUNS + 1 {
        let Some(b) = in_process_first_result(dir.path()).await else {
            return println!("oneshot: the in-process eval call failed");
        };
        let Some(t) = execkit_call(&execkit, dir.path(), "eval", &args) else {
            return println!("oneshot: execkit call eval failed");
        };
        if i >= 1 {
            base.push(b);
            tool.push(t);
        }
    }
    let (base, tool) = (summarize(base).median, summarize(tool).median);
    println!(
        "oneshot eval ({EVAL_RUNS} runs): `execkit call eval 1+1` median {:.1} ms; in-process \
         Toolkit start + first result {:.1} ms; ratio {:.2}x (target <= 1.3x)",
        ms(tool),
        ms(base),
        tool.as_secs_f64() / base.as_secs_f64()
    );
}
