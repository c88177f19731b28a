//! Runs eval calls given as JSON arguments and prints each ToolResult as JSON: how a front end
//! builds an [`EvalRunner`] and calls it (the lead wires `execkit eval --py` the same way).
//!
//! `cargo run -p execkit-eval --example eval_demo -- '{"cells":[{"language":"py","code":"1+1"}]}'`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use execkit_eval::{EvalConfig, EvalRunner};
use execkit_output::artifact::{ArtifactStore, StoreLimits};
use execkit_output::clamp::Limits;
use execkit_process::{CancellationToken, Supervisor, SupervisorConfig};
use execkit_protocol::{ToolResult, parse_params};

#[tokio::main]
async fn main() {
    let supervisor = Supervisor::start(SupervisorConfig::default()).unwrap();
    let store = ArtifactStore::open(&ArtifactStore::default_dir(), StoreLimits::default())
        .map_err(|e| e.to_string());
    let lookup = |k: &str| std::env::var(k).ok();
    let mut notes = Vec::new();
    let limits = Limits::from_lookup(&lookup, &mut notes).unwrap();
    let config = EvalConfig::from_lookup(std::env::current_dir().unwrap(), &lookup);
    let runner = EvalRunner::new(supervisor.clone(), store, limits, config, None);
    for arg in std::env::args().skip(1) {
        let result = match parse_params(serde_json::from_str(&arg).unwrap()) {
            Ok(params) => runner.call(params, None, CancellationToken::new()).await,
            Err(e) => ToolResult::error(e.to_string()),
        };
        println!("{}", serde_json::to_string_pretty(&result).unwrap());
    }
    for line in runner.doctor() {
        println!("doctor: {line}");
    }
    runner.close().await;
    supervisor.close().await;
}
