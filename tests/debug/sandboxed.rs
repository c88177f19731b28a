//! Debug sessions under the sandbox (workspace-write, network off): the adapters and the
//! programs they launch are confined like every other process, the adapters still talk to their
//! debuggees over the Toolkit's private loopback, and execkit's own connections to them (dlv
//! dialling back, `attach` by port) are made inside that loopback, never to the host's.

use std::net::TcpListener;
use std::path::PathBuf;

use serde_json::json;

use super::fixtures::*;
use crate::support::Kit;

/// `add` on line 2 like the plain fixture; `main` then tries a write outside the roots and a
/// connection to the host's loopback, and says how each ended.
fn confined_program(outside: &std::path::Path, port: u16) -> String {
    format!(
        "\
def add(a, b):
    c = a + b
    return c


def main():
    import socket
    total = add(1, 2)
    print(\"total\", total)
    try:
        open({outside:?}, \"w\").write(\"x\")
        print(\"write allowed\")
    except OSError as e:
        print(\"write refused\", e.errno)
    try:
        socket.create_connection((\"127.0.0.1\", {port}), 3)
        print(\"host reached\")
    except OSError as e:
        print(\"connect refused\", e.errno)


main()
"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debugpy_under_workspace_write_and_network_off() {
    if !has_debugpy() {
        return skip("debugpy is not importable by python3");
    }
    let home = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("sandbox")
        .join(format!("debug-home-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    let home = std::fs::canonicalize(home).unwrap();
    let host = TcpListener::bind("127.0.0.1:0").unwrap();
    host.set_nonblocking(true).unwrap();
    let port = host.local_addr().unwrap().port();
    let kit = Kit::with_vars(&[
        ("EXECKIT_SANDBOX", "workspace-write"),
        ("EXECKIT_SANDBOX_NETWORK", "off"),
        ("HOME", home.to_str().unwrap()),
    ]);
    let target = home.join("from-debuggee.txt");
    let program = write(&kit, "calc.py", &confined_program(&target, port));
    ok(&kit, json!({"action": "set_breakpoint", "file": "calc.py", "line": 2})).await;
    let out = launch_to_breakpoint(
        &kit,
        json!({"action": "launch", "program": "calc.py", "stop_on_entry": false}),
    )
    .await;
    assert_eq!(session_field(&out, "stop")["reason"], "breakpoint", "{}", out.text());
    calc_session(&kit, &program, 2, false).await;
    let output = ok(&kit, json!({"action": "output"})).await;
    let text = output.text();
    assert!(text.contains("write refused"), "{text}");
    assert!(text.contains("connect refused"), "{text}");
    assert!(!target.exists(), "the debuggee wrote outside the roots");
    assert!(host.accept().is_err(), "the host listener saw a connection from the debuggee");
    kit.toolkit.close().await;
}

/// A Toolkit under workspace-write with `network`, its HOME outside the writable roots.
fn confined_kit(tag: &str, network: &str) -> Kit {
    confined_kit_with_adapters(tag, network, None)
}

/// [`confined_kit`] with `dap_json` as the user's `~/.execkit/dap.json`.
fn confined_kit_with_adapters(tag: &str, network: &str, dap_json: Option<&str>) -> Kit {
    let home = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("sandbox")
        .join(format!("debug-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(home.join(".execkit")).unwrap();
    let home = std::fs::canonicalize(home).unwrap();
    if let Some(text) = dap_json {
        std::fs::write(home.join(".execkit/dap.json"), text).unwrap();
    }
    Kit::with_vars(&[
        ("EXECKIT_SANDBOX", "workspace-write"),
        ("EXECKIT_SANDBOX_NETWORK", network),
        ("HOME", home.to_str().unwrap()),
    ])
}

/// delve dials back to a listener execkit keeps (`tcp-dial`): with network off that listener
/// must be inside the private loopback for the confined dlv to reach it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dlv_under_workspace_write_and_network_off() {
    let Some(binary) = go_binary() else {
        return skip("dlv or go is not installed, or the Go build failed");
    };
    let kit = confined_kit("dlv", "off");
    let out = ok(&kit, json!({"action": "launch", "program": binary, "timeout": 120})).await;
    assert!(out.text().starts_with("Session debug-1 (dlv): stopped"), "{}", out.text());
    calc_session(&kit, &go_source(), 6, true).await;
    ok(&kit, json!({"action": "terminate"})).await;
    kit.toolkit.close().await;
}

/// The `tcp` transport with a real adapter: dlv told to listen on `${port}` instead of dialling
/// back. The port is reserved and the connection retried inside the private loopback.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dlv_listening_on_a_port_under_network_off() {
    let Some(binary) = go_binary() else {
        return skip("dlv or go is not installed, or the Go build failed");
    };
    let listening = r#"{"adapters": {"dlv": {
        "command": [["dlv", "dap", "--listen=127.0.0.1:${port}"]], "transport": "tcp"}}}"#;
    let kit = confined_kit_with_adapters("dlv-tcp", "off", Some(listening));
    let out = ok(&kit, json!({"action": "launch", "program": binary, "timeout": 120})).await;
    assert!(out.text().starts_with("Session debug-1 (dlv): stopped"), "{}", out.text());
    let adapter =
        kit.bash(json!({"command": "ps -eo args | grep -c '[d]lv dap --listen=127'"})).await;
    assert_eq!(adapter.text().trim(), "1", "the adapter is not the listening dlv");
    calc_session(&kit, &go_source(), 6, true).await;
    ok(&kit, json!({"action": "terminate"})).await;
    kit.toolkit.close().await;
}

/// `add` runs every 50 ms once a client has attached to the `debugpy.listen()` server.
fn listening_program(port: u16) -> String {
    format!(
        "\
import time
import debugpy

debugpy.listen((\"127.0.0.1\", {port}))
open(\"ready\", \"w\").close()
debugpy.wait_for_client()


def add(a, b):
    c = a + b
    return c


for _ in range(6000):
    add(1, 2)
    time.sleep(0.05)
"
    )
}

const LISTENING_ADD_LINE: i64 = 11;

/// Waits for the file a confined program creates once it listens.
async fn wait_for_file(path: &std::path::Path) {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !path.exists() {
        assert!(std::time::Instant::now() < until, "{} did not appear in 120 s", path.display());
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// `attach` by port connects straight to the server an earlier confined call started: the
/// connection is made inside the private loopback, where the host sees nothing listening.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_by_port_reaches_a_debugpy_server_a_confined_call_started() {
    if !has_debugpy() {
        return skip("debugpy is not importable by python3");
    }
    let kit = confined_kit("attach", "off");
    let port = 20_000 + (std::process::id() % 20_000) as u16;
    write(&kit, "server.py", &listening_program(port));
    let job = kit.bash(json!({"command": "exec python3 server.py", "async": true})).await;
    assert!(!job.is_error(), "{}", job.text());
    wait_for_file(&kit.work().join("ready")).await;
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "the host reached the private server"
    );
    let file = "server.py";
    ok(&kit, json!({"action": "set_breakpoint", "file": file, "line": LISTENING_ADD_LINE})).await;
    let out =
        launch_to_breakpoint(&kit, json!({"action": "attach", "port": port, "timeout": 120})).await;
    assert_eq!(session_field(&out, "stop")["reason"], "breakpoint", "{}", out.text());
    let stack = ok(&kit, json!({"action": "stack_trace"})).await;
    assert!(
        stack.text().starts_with("#0 ") && stack.text().contains("add at "),
        "{}",
        stack.text()
    );
    let eval =
        ok(&kit, json!({"action": "evaluate", "expression": "a + b", "context": "watch"})).await;
    assert_eq!(eval.field("result"), "3", "{}", eval.text());
    ok(&kit, json!({"action": "terminate"})).await;
    kit.toolkit.close().await;
}

/// `attach` by port with `adapter: dlv` to a `dlv --headless` server an earlier confined call
/// started: DAP straight to it, with dlv's connect defaults (`mode: remote`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_by_port_reaches_a_headless_dlv_a_confined_call_started() {
    let Some(binary) = go_binary() else {
        return skip("dlv or go is not installed, or the Go build failed");
    };
    let kit = confined_kit("attach-dlv", "off");
    let port = 20_000 + (std::process::id() % 20_000) as u16 + 1;
    let server = format!(
        "exec dlv exec --headless --accept-multiclient --api-version=2 \
         --listen=127.0.0.1:{port} {} > dlv.log 2>&1",
        binary.display()
    );
    let job = kit.bash(json!({"command": server, "async": true})).await;
    assert!(!job.is_error(), "{}", job.text());
    let log = kit.work().join("dlv.log");
    let until = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !std::fs::read_to_string(&log).unwrap_or_default().contains("API server listening") {
        assert!(std::time::Instant::now() < until, "dlv did not listen within 120 s");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let source = go_source();
    ok(&kit, json!({"action": "set_breakpoint", "file": source, "line": 6})).await;
    let attach = json!({"action": "attach", "port": port, "adapter": "dlv", "timeout": 120});
    let out = ok(&kit, attach).await;
    assert!(out.text().starts_with("Session debug-1 (dlv): "), "{}", out.text());
    if session_field(&out, "status") != "stopped"
        || session_field(&out, "stop")["reason"] != "breakpoint"
    {
        let stop = ok(&kit, json!({"action": "continue", "timeout": 120})).await;
        assert_eq!(stop.field("stop")["line"], 6, "{}", stop.text());
    }
    let stack = ok(&kit, json!({"action": "stack_trace"})).await;
    assert!(
        stack.text().starts_with("#0 ") && stack.text().contains("add at "),
        "{}",
        stack.text()
    );
    ok(&kit, json!({"action": "terminate"})).await;
    kit.toolkit.close().await;
}

/// `attach` by port to a host loopback listener: with network off the connection never
/// arrives (the address is the private loopback's, where nothing listens); with network on it
/// does. The listener speaks no DAP, so both attaches fail.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_by_port_reaches_the_hosts_loopback_only_with_network_on() {
    if !has_debugpy() {
        return skip("debugpy is not importable by python3");
    }
    let host = TcpListener::bind("127.0.0.1:0").unwrap();
    host.set_nonblocking(true).unwrap();
    let port = host.local_addr().unwrap().port();
    let attach = json!({"action": "attach", "port": port, "timeout": 5});
    let off = confined_kit("host-off", "off");
    let out = debug(&off, attach.clone()).await;
    assert!(out.is_error(), "{}", out.text());
    assert!(out.text().contains("Connection refused"), "{}", out.text());
    assert!(host.accept().is_err(), "the host listener saw a connection with network off");
    off.toolkit.close().await;
    let on = confined_kit("host-on", "on");
    let out = debug(&on, attach).await;
    assert!(out.is_error(), "{}", out.text());
    assert!(host.accept().is_ok(), "the host listener saw no connection with network on");
    on.toolkit.close().await;
}
