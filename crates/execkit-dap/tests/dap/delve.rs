use execkit_dap::handshake::{self, HandshakeRequest, StartConfig};
use execkit_dap::wire::SourceBreakpoint;
use execkit_dap::{Client, ClientOptions, transport};
use std::time::Duration;

use serde_json::json;

use crate::common::*;

pub fn dlv_config(
    program: &std::path::Path,
    dir: &std::path::Path,
    stop_on_entry: bool,
) -> StartConfig {
    let args =
        json!({"mode": "exec", "program": program, "cwd": dir, "stopOnEntry": stop_on_entry});
    let mut config = StartConfig::new("dlv", HandshakeRequest::Launch, args);
    let source = dir.join("calc.go").display().to_string();
    config.breakpoints.files =
        vec![(source, vec![SourceBreakpoint { line: 6, ..Default::default() }])];
    config.stop_wait = Duration::from_secs(30);
    config.deadline = deadline(90);
    config
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dlv_full_session_over_tcp_dial() {
    let Some(dlv) = find_program(&["dlv"]) else { return };
    let sup = supervisor();
    let dir = tempfile::tempdir().unwrap();
    let Some(program) = go_program(dir.path()) else { return };
    let (defs, _) = execkit_dap::adapters::builtin();
    let found = execkit_dap::detect::candidates(&defs, &program, dir.path()).unwrap();
    assert!(found[0].def.name == "dlv" && found[0].go_binary, "a Go binary picks dlv exec");
    let make = |addr: std::net::SocketAddr| {
        command("dlv", &dlv, &["dap", &format!("--client-addr={addr}")], dir.path())
    };
    let (conn, process) =
        transport::spawn_tcp_dial(&sup, make, deadline(20)).await.expect("start dlv");
    let (client, reverse) = Client::start(conn, Some(process), ClientOptions::new("dlv"));
    serve_reverse_requests(reverse);
    let outcome = handshake::start(&client, &dlv_config(&program, dir.path(), true))
        .await
        .expect("handshake");
    // delve's order: the entry stop arrives before the configurationDone answer.
    let order = &outcome.order;
    assert!(order.first_stop.unwrap() < order.configuration_done_response.unwrap(), "{order:?}");
    let entry = outcome.first_stop.expect("entry stop");
    let (_, thread) = stopped_thread(&entry);

    let pending = client.send("continue", Some(json!({"threadId": thread}))).await.unwrap();
    let after = pending.sent_after;
    pending.wait(deadline(20)).await.unwrap().into_result().unwrap();
    let stop = wait_stop(&client, after).await;
    let (reason, thread) = stopped_thread(&stop);
    assert_eq!(reason, "breakpoint");
    let view = inspect(&client, thread).await;
    assert_eq!((view.function.as_str(), view.line), ("main.add", 6));
    assert!(has_var(&view, "a", "1") && has_var(&view, "b", "2"), "{:?}", view.variables);
    assert_eq!(evaluate(&client, view.frame_id, "a*10").await, "10");
    assert_eq!(step_over(&client, thread).await, 7);
    // delve 1.20.2 ends a finished program with `terminated` alone (no `exited`, so no exit
    // code), and the debuggee's stdout goes to delve's own stdout: the adapter's output ring.
    let (code, _) = continue_to_exit(&client, thread).await;
    assert_eq!(code, None);
    let ring = client.process().unwrap().stderr_tail(4096);
    assert!(ring.contains("total 3"), "{ring}");
    shut_down(&client).await;
}
