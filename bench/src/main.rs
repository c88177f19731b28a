//! execkit benchmarks. Each case measures execkit and a baseline in the same run and prints
//! the ratio, because absolute times drift on shared machines.
//!
//! `cargo run --release -p execkit-bench -- [all|bash-overhead|sink|flood-rss|spawn|cgroup-join|
//! input-wait|ssh|oneshot-bash|oneshot-eval|mcp-first-eval|mcp-warm-eval|mcp-bash|sandbox|
//! debug|js]`

// Benchmarks print their results, start their baselines with `std::process::Command`, and read
// `EXECKIT_BENCH_*` variables directly.
#![allow(clippy::print_stdout, clippy::disallowed_methods)]

mod debug;
mod input_wait;
mod js;
mod mcp;
mod mcp_client;
mod oneshot;
mod overhead;
mod rss;
mod sandbox;
mod sink;
mod spawn;
mod ssh;
mod stats;

fn main() {
    let which = std::env::args().nth(1).unwrap_or_else(|| "all".to_string());
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(err) => {
            println!("cannot start the runtime: {err}");
            std::process::exit(2);
        }
    };
    let run_all = which == "all";
    if run_all || which == "bash-overhead" {
        runtime.block_on(overhead::bash_overhead());
    }
    if run_all || which == "sink" {
        sink::throughput();
    }
    if run_all || which == "flood-rss" {
        rss::flood();
    }
    if run_all || which == "spawn" {
        runtime.block_on(spawn::supervised());
    }
    if run_all || which == "cgroup-join" {
        runtime.block_on(spawn::cgroup_join());
    }
    if run_all || which == "input-wait" {
        runtime.block_on(input_wait::latency());
    }
    if run_all || which == "ssh" {
        runtime.block_on(ssh::latency());
    }
    if run_all || which == "oneshot-bash" {
        oneshot::bash();
    }
    if run_all || which == "oneshot-eval" {
        runtime.block_on(oneshot::eval());
    }
    if run_all || which == "mcp-first-eval" {
        mcp::first_eval();
    }
    if run_all || which == "mcp-warm-eval" {
        mcp::warm_eval();
    }
    if run_all || which == "mcp-bash" {
        mcp::bash();
    }
    if run_all || which == "sandbox" {
        runtime.block_on(sandbox::overhead());
    }
    if run_all || which == "debug" || which == "debug-step" {
        runtime.block_on(debug::run());
    }
    if run_all || which == "js" {
        js::kernel_vs_node();
    }
    let known = [
        "bash-overhead",
        "sink",
        "flood-rss",
        "spawn",
        "cgroup-join",
        "input-wait",
        "ssh",
        "oneshot-bash",
        "oneshot-eval",
        "mcp-first-eval",
        "mcp-warm-eval",
        "mcp-bash",
        "sandbox",
        "debug",
        "debug-step",
        "js",
    ];
    if !run_all && !known.contains(&which.as_str()) {
        println!("unknown benchmark {which:?}; expected all or one of {}", known.join(", "));
        std::process::exit(2);
    }
}
