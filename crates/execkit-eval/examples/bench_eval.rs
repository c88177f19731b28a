//! BM1/BM2 (spec-eval.md): warm `1+1` round trip through `EvalRunner::call`, and cold start
//! (spawn → ready → first `1+1` result). Prints JSON lines; `bench/eval/run.sh` compares them
//! with ipykernel driven by jupyter_client.
//!
//! `cargo run --release -p execkit-eval --example bench_eval -- [warm_runs] [cold_runs]`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::time::{Duration, Instant};

use execkit_eval::{EvalConfig, EvalDeps, EvalRunner};
use execkit_output::artifact::{ArtifactStore, StoreLimits};
use execkit_output::clamp::Limits;
use execkit_process::{Supervisor, SupervisorConfig};
use execkit_protocol::parse_params;
use execkit_tool::{CallContext, Lookup, Notes};
use serde_json::json;

fn stats(name: &str, mut v: Vec<Duration>) {
    v.sort();
    let q = |p: f64| v[((v.len() as f64 - 1.0) * p).round() as usize].as_secs_f64() * 1e6;
    println!(
        "{}",
        json!({"bench": name, "runs": v.len(), "median_us": q(0.5), "p90_us": q(0.9), "p99_us": q(0.99)})
    );
}

#[tokio::main]
async fn main() {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let warm_runs = args.first().copied().unwrap_or(1000);
    let cold_runs = args.get(1).copied().unwrap_or(15);
    let dir = tempfile::tempdir().unwrap();
    let supervisor = Supervisor::start(SupervisorConfig::default()).unwrap();
    let store = ArtifactStore::open(&dir.path().join("a"), StoreLimits::default()).unwrap();
    // An example is a binary: it saves its own environment, as execkit's binary does.
    #[allow(clippy::disallowed_methods)]
    let lookup = Lookup::from_vars(std::env::vars_os());
    let mut cfg = EvalConfig::from_lookup(&lookup, &mut Notes::default()).unwrap();
    cfg.prewarm = false;
    cfg.max_kernels = 16;
    cfg.idle_timeout = None;
    let deps = EvalDeps {
        supervisor,
        artifacts: Ok(store),
        limits: Limits::default(),
        lookup,
        cwd: std::env::current_dir().unwrap(),
        tools: Vec::new(),
        tool_callback: None,
    };
    let runner = EvalRunner::new(cfg, deps);
    let call = |session: String| {
        let runner = runner.clone();
        async move {
            let p = parse_params(
                json!({"session": session, "cells": [{"language": "py", "code": "1+1"}]}),
            )
            .unwrap();
            let r = runner.call(p, &CallContext::default()).await;
            assert_eq!(r.text(), "2", "{}", r.text());
            r
        }
    };
    // Resolve the interpreter and write the kernel files outside the measurements.
    call("setup".into()).await;
    let mut cold = Vec::new();
    let mut start_ms = Vec::new();
    for i in 0..cold_runs.min(14) {
        let t = Instant::now();
        let r = call(format!("cold{i}")).await;
        cold.push(t.elapsed());
        start_ms.push(
            r.structured_content.unwrap()["cells"][0]["kernel"]["start_ms"].as_u64().unwrap(),
        );
    }
    stats("cold_start_to_first_result", cold);
    println!("{}", json!({"bench": "spawn_to_ready_ms", "values": start_ms}));
    for _ in 0..50 {
        call("warm".into()).await;
    }
    let mut warm = Vec::with_capacity(warm_runs);
    for _ in 0..warm_runs {
        let t = Instant::now();
        call("warm".into()).await;
        warm.push(t.elapsed());
    }
    stats("warm_round_trip", warm);
    runner.close().await;
}
