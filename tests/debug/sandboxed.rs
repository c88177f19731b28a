//! A debug session under the sandbox (workspace-write, network off): debugpy's adapter and the
//! program it launches are confined like every other process, and the adapter still talks to
//! its debuggee over the Toolkit's private loopback.

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
