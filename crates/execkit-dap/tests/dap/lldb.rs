use execkit_dap::handshake::{self, HandshakeRequest, StartConfig};
use execkit_dap::wire::SourceBreakpoint;
use execkit_dap::{Client, ClientOptions, transport};
use std::time::Duration;

use serde_json::json;

use crate::common::*;

pub fn lldb_launch_config(program: &std::path::Path, dir: &std::path::Path) -> StartConfig {
    let args = json!({"program": program, "cwd": dir, "stopOnEntry": false});
    let mut config = StartConfig::new("lldb-dap", HandshakeRequest::Launch, args);
    let source = dir.join("calc.c").display().to_string();
    config.breakpoints.files =
        vec![(source, vec![SourceBreakpoint { line: 4, ..Default::default() }])];
    config.stop_wait = Duration::from_secs(30);
    config.deadline = deadline(60);
    config
}

/// The part of the session every lldb-dap transport shares: breakpoint hit, inspect, step,
/// run to the end.
pub async fn drive_lldb(client: &Client, outcome: handshake::HandshakeOutcome) {
    let stop = outcome.first_stop.expect("stopped at the breakpoint");
    let (reason, thread) = stopped_thread(&stop);
    assert_eq!(reason, "breakpoint");
    let view = inspect(client, thread).await;
    assert_eq!((view.function.as_str(), view.line), ("add", 4));
    assert!(has_var(&view, "a", "1") && has_var(&view, "b", "2"), "{:?}", view.variables);
    assert_eq!(evaluate(client, view.frame_id, "a*10").await, "10");
    assert_eq!(step_over(client, thread).await, 5);
    let (code, output) = continue_to_exit(client, thread).await;
    assert_eq!(code, Some(0));
    assert!(output.contains("total 3"), "{output}");
    shut_down(client).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lldb_dap_full_session() {
    let Some(lldb) = find_program(LLDB_DAP) else { return };
    let sup = supervisor();
    let dir = tempfile::tempdir().unwrap();
    let Some(program) = c_program(dir.path()) else { return };
    let (defs, _) = execkit_dap::adapters::builtin();
    let found = execkit_dap::detect::candidates(&defs, &program, dir.path()).unwrap();
    assert_eq!(found[0].def.name, "lldb-dap", "a C ELF binary picks lldb-dap");
    let path: Vec<_> = std::env::split_paths(&std::env::var_os("PATH").unwrap()).collect();
    let resolved = execkit_dap::resolve::resolve_command(found[0].def, &path);
    assert!(resolved.is_some(), "the lldb-dap definition resolves on this machine");
    let cmd = command("lldb-dap", &lldb, &[], dir.path());
    let (conn, process) = transport::spawn_stdio(&sup, &cmd).await.expect("start lldb-dap");
    let (client, reverse) = Client::start(conn, Some(process), ClientOptions::new("lldb-dap"));
    serve_reverse_requests(reverse);
    let outcome = handshake::start(&client, &lldb_launch_config(&program, dir.path()))
        .await
        .expect("handshake");
    // lldb-dap 19's order: the launch answer comes before `initialized`.
    let order = &outcome.order;
    eprintln!("lldb-dap order: {order:?}");
    if lldb.to_string_lossy().contains("19") {
        assert!(order.launch_response < order.initialized.unwrap(), "{order:?}");
    }
    // lldb-dap 19 misspells supportsTerminateDebuggee; its definition's alias fixes it.
    let lldb_def = defs.iter().find(|d| d.name == "lldb-dap").unwrap();
    assert!(!outcome.capabilities.flag("supportsTerminateDebuggee"));
    let caps = outcome.capabilities.clone().with_aliases(&lldb_def.quirks.capability_aliases);
    assert!(caps.flag("supportsTerminateDebuggee"));
    drive_lldb(&client, outcome).await;
}
