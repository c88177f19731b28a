//! execkit benchmarks. Each case measures execkit and a baseline in the same run and prints
//! the ratio, because absolute times drift on shared machines.
//!
//! `cargo run --release -p execkit-bench -- [all|bash-overhead|sink|flood-rss|spawn|input-wait|js]`

// Benchmarks print their results, start their baselines with `std::process::Command`, and read
// `EXECKIT_BENCH_*` variables directly.
#![allow(clippy::print_stdout, clippy::disallowed_methods)]

mod input_wait;
mod js;
mod overhead;
mod rss;
mod sink;
mod spawn;
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
    if run_all || which == "input-wait" {
        runtime.block_on(input_wait::latency());
    }
    if run_all || which == "js" {
        js::kernel_vs_node();
    }
    let known = ["bash-overhead", "sink", "flood-rss", "spawn", "input-wait", "js"];
    if !run_all && !known.contains(&which.as_str()) {
        println!("unknown benchmark {which:?}; expected all or one of {}", known.join(", "));
        std::process::exit(2);
    }
}
