//! One full session per verified adapter, the adapter detected from the program.

use serde_json::json;

use super::fixtures::*;
use crate::support::Kit;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debugpy_launch_breakpoint_inspect_step_and_exit() {
    if !has_debugpy() {
        return skip("debugpy is not importable by python3");
    }
    let kit = Kit::new();
    let program = write(&kit, "calc.py", CALC_PY);
    ok(&kit, json!({"action": "set_breakpoint", "file": "calc.py", "line": 2})).await;
    let out = launch_to_breakpoint(
        &kit,
        json!({"action": "launch", "program": "calc.py", "stop_on_entry": false}),
    )
    .await;
    assert_eq!(session_field(&out, "stop")["reason"], "breakpoint", "{}", out.text());
    let modules = ok(&kit, json!({"action": "modules"})).await;
    assert!(modules.field("modules").as_array().is_some(), "{}", modules.text());
    calc_session(&kit, &program, 2, false).await;
    let end = ok(&kit, json!({"action": "terminate"})).await;
    // The program has exited: its session is either still there to end or already disposed.
    let text = end.text();
    assert!(
        text == "No debug session to terminate."
            || text.starts_with("Terminated debug-1 (debugpy)"),
        "{text}"
    );
    kit.toolkit.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lldb_dap_on_a_c_program() {
    if !has_lldb() {
        return skip("lldb-dap is not installed");
    }
    let Some(binary) = c_binary() else { return skip("gcc could not build the C fixture") };
    let kit = Kit::new();
    let out = ok(&kit, json!({"action": "launch", "program": binary})).await;
    assert!(out.text().starts_with("Session debug-1 (lldb-dap): stopped"), "{}", out.text());
    assert_eq!(session_field(&out, "stop")["reason"], "entry", "{}", out.text());
    let gated = debug(&kit, json!({"action": "modules", "start_module": 0})).await;
    assert!(!gated.is_error() || gated.text().contains("does not support"), "{}", gated.text());
    calc_session(&kit, &c_source(), 4, true).await;
    ok(&kit, json!({"action": "terminate"})).await;
    kit.toolkit.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dlv_on_a_go_binary() {
    let Some(binary) = go_binary() else {
        return skip("dlv or go is not installed, or the Go build failed");
    };
    let kit = Kit::new();
    let out = ok(&kit, json!({"action": "launch", "program": binary, "timeout": 120})).await;
    assert!(out.text().starts_with("Session debug-1 (dlv): stopped"), "{}", out.text());
    let gated = debug(&kit, json!({"action": "loaded_sources"})).await;
    assert!(
        gated.is_error() && gated.text().contains("capability supportsLoadedSourcesRequest"),
        "{}",
        gated.text()
    );
    calc_session(&kit, &go_source(), 6, true).await;
    ok(&kit, json!({"action": "terminate"})).await;
    kit.toolkit.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debugpy_launch_with_the_default_stops_at_the_first_line() {
    if !has_debugpy() {
        return skip("debugpy is not importable by python3");
    }
    let kit = Kit::new();
    let program = write(&kit, "calc.py", CALC_PY);
    let out = ok(&kit, json!({"action": "launch", "program": "calc.py"})).await;
    assert_eq!(
        out.text(),
        "Session debug-1 (debugpy): stopped\nProgram: calc.py\nStopped at <module> (calc.py:1): entry.",
    );
    let stop = session_field(&out, "stop");
    assert_eq!((stop["reason"].clone(), stop["line"].clone()), (json!("entry"), json!(1)));
    calc_session(&kit, &program, 2, true).await;
    ok(&kit, json!({"action": "terminate"})).await;
    kit.toolkit.close().await;
}
