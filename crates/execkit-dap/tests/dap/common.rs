use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use execkit_dap::wire::{
    EvaluateResponse, KnownEvent, KnownReverseRequest, ScopesResponse, StackTraceResponse,
    VariablesResponse,
};
use execkit_dap::{AdapterCommand, Client, EventRecord, ReverseRequests};
use execkit_process::env::EnvBuilder;
use execkit_process::{ExitStatus, SpawnSpec, Supervisor, SupervisorConfig};
use serde_json::json;
use tokio::time::Instant;

pub use crate::programs::*;

pub fn supervisor() -> Supervisor {
    Supervisor::start(SupervisorConfig::default()).expect("supervisor")
}

pub fn deadline(secs: u64) -> Instant {
    Instant::now() + Duration::from_secs(secs)
}

pub fn env() -> Vec<(OsString, OsString)> {
    let mut env = EnvBuilder::inherited();
    env.harden();
    env.into_vars()
}

/// The first of `names` found on PATH (or as an absolute path), else a skip (or a failure
/// when adapters are required).
pub fn find_program(names: &[&str]) -> Option<PathBuf> {
    let found = names.iter().find_map(|name| on_path(name));
    if found.is_none() {
        skip(&format!("none of {names:?} is installed"));
    }
    found
}

/// The C fixture built in `dir`, else a skip.
pub fn c_program(dir: &Path) -> Option<PathBuf> {
    let built = build_c(dir);
    if built.is_none() {
        skip("gcc could not build the C fixture");
    }
    built
}

/// The Go fixture built in `dir`, else a skip.
pub fn go_program(dir: &Path) -> Option<PathBuf> {
    let built = build_go(dir);
    if built.is_none() {
        skip("go could not build the Go fixture");
    }
    built
}

pub fn command(name: &str, program: &Path, args: &[&str], cwd: &Path) -> AdapterCommand {
    AdapterCommand {
        name: name.to_string(),
        program: program.to_path_buf(),
        args: args.iter().map(OsString::from).collect(),
        cwd: cwd.to_path_buf(),
        env: env(),
    }
}

/// Runs a build tool to its end; returns its status and merged output.
pub async fn run_tool(
    sup: &Supervisor,
    program: &Path,
    args: &[&str],
    cwd: &Path,
) -> (ExitStatus, String) {
    let spec = SpawnSpec {
        program: program.to_path_buf(),
        args: args.iter().map(OsString::from).collect(),
        cwd: cwd.to_path_buf(),
        env: env(),
        ..SpawnSpec::default()
    };
    let mut child = sup.spawn(spec).await.expect("spawn build tool");
    let mut output = child.take_output().expect("output");
    let mut text = Vec::new();
    let mut buf = [0u8; 8192];
    while let Ok(n @ 1..) = output.read(&mut buf).await {
        text.extend_from_slice(&buf[..n]);
    }
    let status = child.wait().await.expect("wait");
    (status, String::from_utf8_lossy(&text).into_owned())
}

/// Serves reverse requests the way the debug tool will: `startDebugging` is acknowledged,
/// anything else refused.
pub fn serve_reverse_requests(mut reverse: ReverseRequests) {
    tokio::spawn(async move {
        while let Some(incoming) = reverse.recv().await {
            match incoming.request {
                KnownReverseRequest::StartDebugging(_) => incoming.responder.succeed(None),
                _ => incoming.responder.fail("not supported in this test"),
            }
        }
    });
}

/// The first stop/exit/termination that arrived after `after`.
pub async fn wait_stop(client: &Client, after: u64) -> EventRecord {
    client
        .wait_event(|r| r.arrival > after && r.is_stop_or_end(), deadline(30))
        .await
        .expect("connection alive")
        .expect("a stop within 30 s")
}

pub fn stopped_thread(record: &EventRecord) -> (String, i64) {
    match record.known() {
        Some(KnownEvent::Stopped(body)) => (body.reason.clone(), body.thread_id.unwrap_or(1)),
        other => panic!("expected stopped, got {other:?}"),
    }
}

/// What one stop looks like from the client: the top frame and the first scope's variables.
pub struct StopView {
    pub frame_id: i64,
    pub function: String,
    pub line: i64,
    pub variables: Vec<(String, String)>,
}

pub async fn inspect(client: &Client, thread_id: i64) -> StopView {
    let trace: StackTraceResponse = client
        .call("stackTrace", Some(json!({"threadId": thread_id, "levels": 20})), deadline(20))
        .await
        .expect("stackTrace");
    let top = trace.stack_frames.first().expect("a frame").clone();
    let scopes: ScopesResponse = client
        .call("scopes", Some(json!({"frameId": top.id})), deadline(20))
        .await
        .expect("scopes");
    let locals = scopes.scopes.first().expect("a scope").variables_reference;
    let vars: VariablesResponse = client
        .call("variables", Some(json!({"variablesReference": locals})), deadline(20))
        .await
        .expect("variables");
    StopView {
        frame_id: top.id,
        function: top.name,
        line: top.line,
        variables: vars.variables.into_iter().map(|v| (v.name, v.value)).collect(),
    }
}

/// `evaluate` in the `watch` context (lldb-dap 19 renders `repl` results as `(int) $0 = 10`).
pub async fn evaluate(client: &Client, frame_id: i64, expression: &str) -> String {
    let args = json!({"expression": expression, "frameId": frame_id, "context": "watch"});
    let result: EvaluateResponse =
        client.call("evaluate", Some(args), deadline(20)).await.expect("evaluate");
    result.result
}

/// `next`, then the stop it caused; returns the new top line.
pub async fn step_over(client: &Client, thread_id: i64) -> i64 {
    let pending =
        client.send("next", Some(json!({"threadId": thread_id}))).await.expect("send next");
    let after = pending.sent_after;
    pending.wait(deadline(20)).await.expect("next answered").into_result().expect("next ok");
    let stop = wait_stop(client, after).await;
    let (_, thread) = stopped_thread(&stop);
    let trace: StackTraceResponse = client
        .call("stackTrace", Some(json!({"threadId": thread, "levels": 1})), deadline(20))
        .await
        .expect("stackTrace");
    trace.stack_frames[0].line
}

/// `continue`, then the program's end; returns the exit code and all output text seen.
pub async fn continue_to_exit(client: &Client, thread_id: i64) -> (Option<i64>, String) {
    let pending =
        client.send("continue", Some(json!({"threadId": thread_id}))).await.expect("send continue");
    pending.wait(deadline(20)).await.expect("continue answered");
    let mut exit_code = None;
    let end = deadline(30);
    while exit_code.is_none() {
        let Ok(Some(record)) = client.wait_event(EventRecord::is_stop_or_end, end).await else {
            break;
        };
        match record.known() {
            Some(KnownEvent::Exited(body)) => exit_code = Some(body.exit_code),
            Some(KnownEvent::Terminated(_)) => break,
            _ => {}
        }
    }
    // Output can trail the exit; give it a moment to arrive before collecting it.
    let _ = client
        .wait_event(|r| matches!(r.known(), Some(KnownEvent::Terminated(_))), deadline(5))
        .await;
    (exit_code, output_text(client))
}

pub fn output_text(client: &Client) -> String {
    client
        .drain_events()
        .iter()
        .filter_map(|r| match r.known() {
            Some(KnownEvent::Output(body)) => Some(body.output.clone()),
            _ => None,
        })
        .collect()
}

/// `disconnect`, close the connection, then wait for the adapter to exit (killing it if it
/// lingers); asserts nothing of it is left.
pub async fn shut_down(client: &Client) {
    let args = json!({"terminateDebuggee": true});
    let _ = client.request("disconnect", Some(args), deadline(10)).await;
    client.close().await;
    if let Some(process) = client.process() {
        if process.wait_exit(deadline(10)).await.is_none() {
            process.kill(Duration::from_secs(2)).await;
        }
        assert!(process.exit_status().is_some(), "adapter {} still running", process.name());
    }
}

pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write program");
    path
}

pub fn has_var(view: &StopView, name: &str, value: &str) -> bool {
    view.variables.iter().any(|(n, v)| n == name && v == value)
}
