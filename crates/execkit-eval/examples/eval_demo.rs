//! Runs eval calls given as JSON arguments and prints each ToolResult as JSON: how a front end
//! builds an [`EvalRunner`] and calls it (the lead wires `execkit eval --py` the same way).
//!
//! `cargo run -p execkit-eval --example eval_demo -- '{"cells":[{"language":"py","code":"1+1"}]}'`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use execkit_eval::{EvalConfig, EvalDeps, EvalRunner};
use execkit_output::artifact::{ArtifactStore, StoreLimits};
use execkit_output::clamp::Limits;
use execkit_process::{Supervisor, SupervisorConfig};
use execkit_protocol::{ToolResult, parse_params};
use execkit_tool::{CallContext, Lookup, Notes};

#[tokio::main]
async fn main() {
    let supervisor = Supervisor::start(SupervisorConfig::default()).unwrap();
    // An example is a binary: it saves its own environment, as execkit's binary does.
    #[allow(clippy::disallowed_methods)]
    let lookup = Lookup::from_vars(std::env::vars_os());
    let store = ArtifactStore::open(&ArtifactStore::default_dir(&lookup), StoreLimits::default())
        .map_err(|e| e.to_string());
    let limits = Limits::from_lookup(&lookup, &mut Notes::default()).unwrap();
    let config = EvalConfig::from_lookup(&lookup, &mut Notes::default()).unwrap();
    let deps = EvalDeps {
        supervisor: supervisor.clone(),
        artifacts: store,
        limits,
        lookup,
        cwd: std::env::current_dir().unwrap(),
        tools: Vec::new(),
        tool_callback: None,
    };
    let runner = EvalRunner::new(config, deps);
    for arg in std::env::args().skip(1) {
        let result = match parse_params(serde_json::from_str(&arg).unwrap()) {
            Ok(params) => runner.call(params, &CallContext::default()).await,
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
