//! Sessions as a whole: bad arguments, one root at a time, a program that outlives the
//! timeout, an adapter that dies, idle disposal, breakpoints set before a session.

use std::sync::{Arc, Mutex};

use execkit::CallContext;
use serde_json::json;

use super::fixtures::*;
use crate::support::{Kit, Outcome, gone_within};

#[tokio::test]
async fn bad_arguments_are_one_line_errors_and_nothing_starts() {
    let kit = Kit::new();
    let cases = [
        (json!({}), "Invalid argument \"action\": missing"),
        (json!({"action": "explode"}), "Invalid argument \"action\""),
        (
            json!({"action": "set_breakpoint", "file": "a.py", "line": "ten"}),
            "Invalid argument \"line\"",
        ),
        (json!({"action": "launch"}), "action \"launch\" requires \"program\"."),
        (
            json!({"action": "continue"}),
            "No debug session. Start one with action \"launch\" or \"attach\".",
        ),
        (
            json!({"action": "launch", "program": "python app.py"}),
            "(\"program\" is a path; put arguments in \"args\")",
        ),
        (
            json!({"action": "launch", "program": "x.py", "adapter": "nope"}),
            "Unknown debug adapter 'nope'. Known adapters: debugpy, ",
        ),
    ];
    for (args, expected) in cases {
        let out = debug(&kit, args.clone()).await;
        assert!(out.is_error(), "{args}");
        assert!(out.text().contains(expected), "{args}: {}", out.text());
        assert!(!out.text().contains('\n'), "{args}: {}", out.text());
    }
    let none = debug(&kit, json!({"action": "terminate"})).await;
    assert_eq!((none.text().as_str(), none.is_error()), ("No debug session to terminate.", false));
    let recorded =
        debug(&kit, json!({"action": "set_breakpoint", "file": "a.py", "line": 3})).await;
    assert_eq!(
        recorded.text(),
        "Breakpoint recorded; it will be sent when a session starts. (file does not exist locally)"
    );
    let ignored = debug(&kit, json!({"action": "sessions", "line": 3})).await;
    assert!(ignored.text().ends_with("(ignored: line)"), "{}", ignored.text());
    kit.toolkit.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_launch_is_refused_and_terminate_allows_the_next() {
    if !has_debugpy() {
        return skip("debugpy is not importable by python3");
    }
    let kit = Kit::new();
    write(&kit, "calc.py", CALC_PY);
    ok(&kit, json!({"action": "launch", "program": "calc.py"})).await;
    let second = debug(&kit, json!({"action": "launch", "program": "calc.py"})).await;
    assert!(second.is_error());
    let text = second.text();
    assert!(text.starts_with("Debug session debug-1 is still active ("), "{text}");
    assert!(text.ends_with("). Terminate it before starting another."), "{text}");
    let still = ok(&kit, json!({"action": "threads"})).await;
    assert!(still.text().contains("MainThread"), "{}", still.text());
    ok(&kit, json!({"action": "terminate"})).await;
    let next = ok(&kit, json!({"action": "launch", "program": "calc.py"})).await;
    assert!(next.text().starts_with("Session debug-2 (debugpy)"), "{}", next.text());
    kit.toolkit.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_that_outlives_the_timeout_is_running_then_paused() {
    if !has_debugpy() {
        return skip("debugpy is not importable by python3");
    }
    let kit = Kit::new();
    write(&kit, "loop.py", LOOP_PY);
    ok(&kit, json!({"action": "launch", "program": "loop.py", "stop_on_entry": false})).await;
    let started = std::time::Instant::now();
    let out = debug(&kit, json!({"action": "continue", "timeout": 5})).await;
    assert!(!out.is_error(), "{}", out.text());
    assert!(started.elapsed() < std::time::Duration::from_secs(12), "{:?}", started.elapsed());
    assert!(
        out.text().starts_with("Still running after 5 s; nothing stopped it."),
        "{}",
        out.text()
    );
    assert_eq!((out.field("state"), out.field("timed_out")), (json!("running"), json!(true)));
    let paused = ok(&kit, json!({"action": "pause"})).await;
    assert!(paused.text().starts_with("Stopped at "), "{}", paused.text());
    let n = ok(&kit, json!({"action": "evaluate", "expression": "n > 0"})).await;
    assert_eq!(n.field("result"), "True");
    let pid = session_field(&paused, "pid").as_u64().map(|p| p as u32);
    ok(&kit, json!({"action": "terminate"})).await;
    if let Some(pid) = pid {
        assert!(gone_within(pid, 10).await, "debuggee {pid} outlived terminate");
    }
    kit.toolkit.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pause_ends_the_wait_of_a_continue_in_flight() {
    if !has_debugpy() {
        return skip("debugpy is not importable by python3");
    }
    let kit = Kit::new();
    write(&kit, "loop.py", LOOP_PY);
    ok(&kit, json!({"action": "launch", "program": "loop.py", "stop_on_entry": false})).await;
    let waiting = {
        let toolkit = kit.toolkit.clone();
        tokio::spawn(async move {
            toolkit
                .call("debug", json!({"action": "continue", "timeout": 60}), Default::default())
                .await
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let paused = ok(&kit, json!({"action": "pause"})).await;
    let continued = waiting.await.unwrap();
    assert!(continued.text().starts_with("Interrupted by pause."), "{}", continued.text());
    assert!(
        paused.text().contains("Stopped at ") || paused.text().contains(": stopped"),
        "{}",
        paused.text()
    );
    kit.toolkit.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_adapter_that_dies_is_reported_and_the_next_launch_works() {
    if !has_debugpy() {
        return skip("debugpy is not importable by python3");
    }
    let kit = Kit::new();
    write(&kit, "calc.py", CALC_PY);
    let out = ok(&kit, json!({"action": "launch", "program": "calc.py"})).await;
    let adapter = session_field(&out, "adapter_pid").as_u64().expect("adapter pid") as i32;
    unsafe { libc::kill(adapter, libc::SIGKILL) };
    let failed = debug(&kit, json!({"action": "stack_trace"})).await;
    assert!(failed.is_error(), "{}", failed.text());
    assert!(
        failed.text().contains("Debug adapter debugpy exited")
            || failed.text().contains("The last session (debug-1) ended"),
        "{}",
        failed.text()
    );
    let next = ok(&kit, json!({"action": "launch", "program": "calc.py"})).await;
    assert!(next.text().starts_with("Session debug-2"), "{}", next.text());
    kit.toolkit.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_session_is_disposed_of_and_the_next_call_says_why() {
    if !has_debugpy() {
        return skip("debugpy is not importable by python3");
    }
    let kit = Kit::with_vars(&[("EXECKIT_DEBUG_IDLE_SECS", "2")]);
    write(&kit, "calc.py", CALC_PY);
    let out = ok(&kit, json!({"action": "launch", "program": "calc.py"})).await;
    let adapter = session_field(&out, "adapter_pid").as_u64().expect("adapter pid") as u32;
    assert!(gone_within(adapter, 20).await, "the idle adapter is still running");
    let next = debug(&kit, json!({"action": "stack_trace"})).await;
    assert!(
        next.text().contains("The last session (debug-1) ended: idle for 2 s."),
        "{}",
        next.text()
    );
    kit.toolkit.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn breakpoints_set_before_launch_are_hit_without_an_entry_stop() {
    if !has_debugpy() {
        return skip("debugpy is not importable by python3");
    }
    let kit = Kit::new();
    let program = write(&kit, "calc.py", CALC_PY);
    let recorded =
        ok(&kit, json!({"action": "set_breakpoint", "file": "calc.py", "line": 2})).await;
    assert_eq!(recorded.text(), "Breakpoint recorded; it will be sent when a session starts.");
    let out = launch_to_breakpoint(
        &kit,
        json!({"action": "launch", "program": program, "stop_on_entry": false}),
    )
    .await;
    assert!(out.text().contains("Stopped at add (calc.py:2): breakpoint."), "{}", out.text());
    let sessions = ok(&kit, json!({"action": "sessions"})).await;
    assert!(sessions.text().contains("Breakpoint at calc.py:2 (verified)"), "{}", sessions.text());
    ok(&kit, json!({"action": "terminate"})).await;
    kit.toolkit.close().await;
}

const SECRETS_PY: &str = "\
def work():
    api_token = \"ghp_\" + \"a\" * 36
    password = \"x\"
    print(\"token=\" + api_token)
    return password


work()
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credential_looking_values_are_redacted_unless_turned_off() {
    if !has_debugpy() {
        return skip("debugpy is not importable by python3");
    }
    for (redact, masked) in [("1", true), ("0", false)] {
        let kit = Kit::with_vars(&[("EXECKIT_DEBUG_REDACT", redact)]);
        write(&kit, "secrets.py", SECRETS_PY);
        ok(&kit, json!({"action": "set_breakpoint", "file": "secrets.py", "line": 5})).await;
        let args = json!({"action": "launch", "program": "secrets.py", "stop_on_entry": false});
        launch_to_breakpoint(&kit, args).await;
        let scopes = ok(&kit, json!({"action": "scopes"})).await;
        let locals = scopes.field("scopes")[0]["variable_ref"].clone();
        let vars = ok(&kit, json!({"action": "variables", "variable_ref": locals})).await;
        let eval = ok(&kit, json!({"action": "evaluate", "expression": "api_token"})).await;
        let output = ok(&kit, json!({"action": "output"})).await;
        let texts = [vars.text(), eval.text(), output.text()];
        for text in &texts {
            assert_eq!(text.contains(&"a".repeat(36)), !masked, "{text}");
        }
        if masked {
            assert!(texts[0].contains("password = [redacted:name]"), "{}", texts[0]);
            assert!(texts[0].contains("api_token = [redacted:name]"), "{}", texts[0]);
            assert!(texts[2].contains("token=[redacted:github-token]"), "{}", texts[2]);
            assert_eq!(vars.field("redacted"), 2, "{}", texts[0]);
        }
        ok(&kit, json!({"action": "terminate"})).await;
        kit.toolkit.close().await;
    }
}

#[tokio::test]
async fn doctor_lists_adapters_found_and_missing() {
    let kit = Kit::with_vars(&[("PATH", "/nonexistent")]);
    let doctor = kit.toolkit.doctor_probed().await;
    let section = doctor.sections.iter().find(|s| s.title == "debug").expect("a debug section");
    let dlv = section.lines.iter().find(|l| l.starts_with("dlv: ")).expect("dlv listed");
    assert_eq!(
        dlv,
        "dlv: missing: dlv not found on PATH. Install: go install github.com/go-delve/delve/cmd/dlv@latest"
    );
    assert!(
        section.lines.iter().any(|l| l.starts_with("debugpy: missing: ")),
        "{:?}",
        section.lines
    );
    kit.toolkit.close().await;
    if !has_lldb() {
        return;
    }
    let kit = Kit::new();
    let doctor = kit.toolkit.doctor_probed().await;
    let section = doctor.sections.iter().find(|s| s.title == "debug").expect("a debug section");
    let lldb = section.lines.iter().find(|l| l.starts_with("lldb-dap: ")).expect("lldb-dap listed");
    assert!(lldb.contains("/lldb-dap"), "{lldb}");
    kit.toolkit.close().await;
}

#[tokio::test]
async fn a_user_dap_json_adapter_that_dies_is_reported_with_its_stderr() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join(".execkit")).unwrap();
    let dap = r#"{"adapters": {
        "broken": {"command": [["sh", "-c", "echo boom >&2; exit 3"]], "extensions": [".brk"],
                   "install_hint": "none"},
        "nocmd": {"extensions": [".x"]}
    }}"#;
    std::fs::write(home.path().join(".execkit/dap.json"), dap).unwrap();
    let kit = Kit::with_vars(&[("HOME", home.path().to_str().unwrap())]);
    write(&kit, "prog.brk", "");
    let started = std::time::Instant::now();
    let out = debug(&kit, json!({"action": "launch", "program": "prog.brk"})).await;
    assert!(out.is_error(), "{}", out.text());
    let text = out.text();
    assert!(text.contains("Debug adapter broken exited (code 3)"), "{text}");
    assert!(text.contains("boom"), "{text}");
    assert!(text.contains("adapter \"nocmd\": a new adapter needs \"command\""), "{text}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10), "{:?}", started.elapsed());
    let again = debug(&kit, json!({"action": "sessions"})).await;
    assert!(!again.text().contains("nocmd"), "the warning is said once: {}", again.text());
    kit.toolkit.close().await;
}

const LAUNCH_JSON: &str = r#"{
    // A JSONC file, as editors write it.
    "configurations": [
        {
            "name": "Run calc",
            "type": "debugpy",
            "request": "launch",
            "program": "${workspaceFolder}/calc.py", /* the program */
            "stopOnEntry": false,
            "preLaunchTask": "build",
        },
        {"name": "Ask", "type": "debugpy", "request": "launch", "program": "${input:x}"},
    ],
}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_launch_json_configuration_launches_by_name() {
    if !has_debugpy() {
        return skip("debugpy is not importable by python3");
    }
    let kit = Kit::new();
    write(&kit, "calc.py", CALC_PY);
    std::fs::create_dir(kit.work().join(".vscode")).unwrap();
    std::fs::write(kit.work().join(".vscode/launch.json"), LAUNCH_JSON).unwrap();
    let ask = debug(&kit, json!({"action": "launch", "launch_config": "Ask"})).await;
    assert!(ask.is_error());
    assert_eq!(
        ask.text(),
        "launch.json configuration \"Ask\" uses ${input:x}, which execkit cannot resolve."
    );
    ok(&kit, json!({"action": "set_breakpoint", "file": "calc.py", "line": 2})).await;
    let out =
        launch_to_breakpoint(&kit, json!({"action": "launch", "launch_config": "Run calc"})).await;
    assert_eq!(session_field(&out, "adapter"), "debugpy");
    assert_eq!(session_field(&out, "stop")["reason"], "breakpoint", "{}", out.text());
    ok(&kit, json!({"action": "terminate"})).await;
    kit.toolkit.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_continue_that_waits_reports_progress_with_the_new_output() {
    if !has_debugpy() {
        return skip("debugpy is not importable by python3");
    }
    let kit = Kit::new();
    write(
        &kit,
        "ticks.py",
        "import time\nwhile True:\n    print('tick', flush=True)\n    time.sleep(0.05)\n",
    );
    ok(&kit, json!({"action": "launch", "program": "ticks.py", "stop_on_entry": false})).await;
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let ctx = CallContext {
        progress: Some(Arc::new(move |p| sink.lock().expect("lock").push(p))),
        ..CallContext::default()
    };
    let args = json!({"action": "continue", "timeout": 5});
    let out = Outcome(kit.toolkit.call("debug", args, ctx).await);
    assert_eq!(out.field("timed_out"), true, "{}", out.text());
    let events = events.lock().expect("lock").clone();
    assert!(events.len() >= 2, "{} progress events", events.len());
    let last = events.last().expect("an event");
    assert!(last.message.starts_with("Program running "), "{}", last.message);
    assert!(last.tail.contains("tick"), "{}", last.tail);
    ok(&kit, json!({"action": "terminate"})).await;
    kit.toolkit.close().await;
}

/// With `console:"integratedTerminal"` debugpy asks for `runInTerminal`; the program runs in a
/// process execkit started, and its prints reach the output ring as `stdout`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_in_terminal_output_reaches_the_ring() {
    if !has_debugpy() {
        return skip("debugpy is not importable by python3");
    }
    let kit = Kit::new();
    write(&kit, "calc.py", CALC_PY);
    std::fs::create_dir(kit.work().join(".vscode")).unwrap();
    let config = r#"{"configurations": [{"name": "term", "type": "debugpy", "request": "launch",
        "program": "${workspaceFolder}/calc.py", "console": "integratedTerminal",
        "stopOnEntry": false}]}"#;
    std::fs::write(kit.work().join(".vscode/launch.json"), config).unwrap();
    let out = ok(&kit, json!({"action": "launch", "launch_config": "term"})).await;
    if session_field(&out, "status") != "terminated" {
        // The program may end between the two calls; then the session is gone and says so.
        let end = debug(&kit, json!({"action": "continue", "timeout": 120})).await;
        let text = end.text();
        let exited = text.starts_with("Program exited with code 0.")
            || text.ends_with("ended: the program exited with code 0.");
        assert!(exited, "{text}");
    }
    let output = ok(&kit, json!({"action": "output", "category": "stdout"})).await;
    assert!(output.text().contains("total 3"), "{}", output.text());
    kit.toolkit.close().await;
}
