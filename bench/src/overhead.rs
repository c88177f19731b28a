//! BBM1: per-call overhead of `true` through `Toolkit::call` against a raw `bash -c true`.

use std::process::Command;
use std::time::{Duration, Instant};

use execkit::{CallContext, Toolkit};
use serde_json::json;

use crate::stats::{ms, summarize};

const WARMUP: usize = 50;
const RUNS: usize = 1000;

pub async fn bash_overhead() {
    let dir = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(err) => return println!("bash-overhead: no temp dir: {err}"),
    };
    let toolkit = match Toolkit::builder()
        .cwd(dir.path())
        .var("EXECKIT_ARTIFACT_DIR", dir.path().join("artifacts").to_string_lossy())
        .build()
    {
        Ok(tk) => tk,
        Err(err) => return println!("bash-overhead: {err}"),
    };
    // EXECKIT_BENCH_BASH_ARGS replaces the call's arguments, to measure variants.
    let args = std::env::var("EXECKIT_BENCH_BASH_ARGS")
        .ok()
        .and_then(|a| serde_json::from_str(&a).ok())
        .unwrap_or_else(|| json!({"command": "true"}));
    let raw = || {
        let started = Instant::now();
        let _ = Command::new("bash").args(["-c", "true"]).status();
        started.elapsed()
    };
    let mut raw_samples = Vec::with_capacity(RUNS);
    let mut tool_samples = Vec::with_capacity(RUNS);
    for i in 0..WARMUP + RUNS {
        // Interleave the two so drift on the machine hits both alike.
        let r = raw();
        let started = Instant::now();
        let result = toolkit.call("bash", args.clone(), CallContext::default()).await;
        let t = started.elapsed();
        if result.is_error {
            return println!("bash-overhead: call failed: {}", result.text());
        }
        if i >= WARMUP {
            raw_samples.push(r);
            tool_samples.push(t);
        }
    }
    let raw = summarize(raw_samples);
    let tool = summarize(tool_samples);
    report("bash -c true", raw.median, raw.p99, tool.median, tool.p99);
    toolkit.close().await;
}

fn report(what: &str, raw_med: Duration, raw_p99: Duration, med: Duration, p99: Duration) {
    println!(
        "bash-overhead ({what}, {RUNS} runs): raw median {:.2} ms p99 {:.2} ms; execkit median \
         {:.2} ms p99 {:.2} ms; ratio {:.2}x (target <= 1.3x), added median {:.2} ms",
        ms(raw_med),
        ms(raw_p99),
        ms(med),
        ms(p99),
        med.as_secs_f64() / raw_med.as_secs_f64(),
        ms(med) - ms(raw_med),
    );
}
