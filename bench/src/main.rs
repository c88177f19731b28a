//! execkit benchmarks. Each case measures execkit and a baseline in the same run and prints
//! the ratio, because absolute times drift on shared machines.
//!
//! `cargo run --release -p execkit-bench -- [all|bash-overhead|sink|flood-rss]`

#![allow(clippy::print_stdout, clippy::disallowed_methods)]

mod overhead;
mod rss;
mod sink;
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
    if !run_all && !["bash-overhead", "sink", "flood-rss"].contains(&which.as_str()) {
        println!("unknown benchmark {which:?}; expected all, bash-overhead, sink or flood-rss");
        std::process::exit(2);
    }
}
