//! Instruction and data breakpoints on lldb-dap, which advertises both, and the capability
//! gate on debugpy, which has neither.

use serde_json::json;

use super::fixtures::*;
use crate::support::Kit;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lldb_dap_stops_at_a_data_write_and_gates_instruction_breakpoints() {
    if !has_lldb() {
        return skip("lldb-dap is not installed");
    }
    let Some(binary) = c_binary() else { return skip("gcc could not build the C fixture") };
    let kit = Kit::new();
    let out = ok(&kit, json!({"action": "launch", "program": binary})).await;
    let flags = out.field("capabilities")["flags"].clone();
    if !flags.as_array().is_some_and(|f| f.contains(&json!("supportsInstructionBreakpoints"))) {
        // lldb-dap 19 does not advertise instruction breakpoints: the gate answers.
        let gated = debug(
            &kit,
            json!({"action": "set_instruction_breakpoint", "instruction_reference": "0x1000"}),
        )
        .await;
        assert_eq!(
            gated.text(),
            "Adapter lldb-dap does not support instruction breakpoints (capability supportsInstructionBreakpoints is not set)."
        );
    }
    ok(&kit, json!({"action": "set_breakpoint", "file": c_source(), "line": 4})).await;
    let stop = ok(&kit, json!({"action": "continue", "timeout": 60})).await;
    assert!(stop.text().contains("add ("), "{}", stop.text());
    let scopes = ok(&kit, json!({"action": "scopes"})).await;
    let locals = scopes.field("scopes")[0]["variable_ref"].clone();
    let info =
        ok(&kit, json!({"action": "data_breakpoint_info", "name": "c", "variable_ref": locals}))
            .await;
    let data_id = info.field("data_id").as_str().expect("data_id").to_string();
    let watch = ok(&kit, json!({"action": "set_data_breakpoint", "data_id": data_id})).await;
    assert!(watch.text().contains("(verified)"), "{}", watch.text());
    let hit = ok(&kit, json!({"action": "continue", "timeout": 60})).await;
    assert_eq!(hit.field("state"), "stopped", "{}", hit.text());
    // lldb-dap 19 reports the write as reason "breakpoint", description "watchpoint 1".
    assert_eq!(hit.field("stop")["line"], 5, "{}", hit.text());
    assert!(hit.text().contains("watchpoint"), "{}", hit.text());
    ok(&kit, json!({"action": "remove_data_breakpoint", "data_id": data_id})).await;
    ok(&kit, json!({"action": "terminate"})).await;
    kit.toolkit.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debugpy_refuses_data_breakpoints_with_the_capability_text() {
    if !has_debugpy() {
        return skip("debugpy is not importable by python3");
    }
    let kit = Kit::new();
    write(&kit, "calc.py", CALC_PY);
    ok(&kit, json!({"action": "launch", "program": "calc.py"})).await;
    let out = debug(&kit, json!({"action": "data_breakpoint_info", "name": "a"})).await;
    assert!(out.is_error());
    assert_eq!(
        out.text(),
        "Adapter debugpy does not support data breakpoints (capability supportsDataBreakpoints is not set)."
    );
    ok(&kit, json!({"action": "terminate"})).await;
    kit.toolkit.close().await;
}
