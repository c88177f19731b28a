//! Child sessions: a debugpy program whose Python subprocess is debugged in a child session
//! (stops, frames, values, the target switching back to the root when the child ends, the
//! tree ended as a whole), and a scripted fake adapter for the child limit and for children
//! that need another connection or another adapter instance.

use serde_json::{Value, json};

use super::fixtures::*;
use crate::support::{Kit, Outcome, gone_within};

/// Continues until the program stops in `file` (a child may first stop at its entry); the
/// stop's result.
async fn continue_until_stopped_in(kit: &Kit, file: &str) -> Outcome {
    for _ in 0..4 {
        let out = ok(kit, json!({"action": "continue", "timeout": 120})).await;
        assert_eq!(out.field("state"), "stopped", "{}", out.text());
        if out.field("stop")["path"].as_str().is_some_and(|p| p.ends_with(file)) {
            return out;
        }
    }
    panic!("the program never stopped in {file}");
}

/// Launches parent.py with a breakpoint in child.py and runs to it. With an entry stop the
/// root stops first; without one, the launch itself may already report the child's stop.
async fn stopped_in_child(kit: &Kit, stop_on_entry: bool) -> Outcome {
    write(kit, "parent.py", PARENT_PY);
    write(kit, "child.py", CHILD_PY);
    ok(kit, json!({"action": "set_breakpoint", "file": "child.py", "line": 2})).await;
    let launch =
        json!({"action": "launch", "program": "parent.py", "stop_on_entry": stop_on_entry});
    let launched = ok(kit, launch).await;
    assert_eq!(session_field(&launched, "id"), "debug-1", "{}", launched.text());
    if launched.text().contains("\nStopped at work (child.py:2): breakpoint.") {
        assert!(launched.text().contains("Session debug-2 (debugpy, child of debug-1, pid "));
        // Its `session` is the target: the stopped child.
        return ok(kit, json!({"action": "sessions"})).await;
    }
    continue_until_stopped_in(kit, "child.py").await
}

fn pid_of(out: &Outcome) -> u32 {
    session_field(out, "pid").as_u64().expect("a debuggee pid") as u32
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debugpy_subprocess_is_debugged_in_a_child_session() {
    if !has_debugpy() {
        return skip("debugpy is not importable by python3");
    }
    let kit = Kit::new();
    let stop = stopped_in_child(&kit, true).await;
    let text = stop.text();
    assert!(text.starts_with("Stopped at work (child.py:2): breakpoint."), "{text}");
    assert!(text.contains("Session debug-2 (debugpy, child of debug-1, pid "), "{text}");
    assert_eq!(session_field(&stop, "id"), "debug-2");
    assert_eq!(session_field(&stop, "parent_id"), "debug-1");
    assert_eq!(stop.field("stop")["session"], "debug-2");

    let stack = ok(&kit, json!({"action": "stack_trace"})).await;
    assert!(stack.text().starts_with("#0 work at child.py:2"), "{}", stack.text());
    let eval = ok(&kit, json!({"action": "evaluate", "expression": "n * 2"})).await;
    assert_eq!(eval.field("result"), "42", "{}", eval.text());
    let sessions = ok(&kit, json!({"action": "sessions"})).await;
    let list = sessions.field("sessions");
    assert_eq!(list[0]["child_ids"], json!(["debug-2"]), "{}", sessions.text());
    assert_eq!(list[1]["parent_id"], "debug-1", "{}", sessions.text());
    assert!(sessions.text().contains("* debug-2 (debugpy, child of debug-1): stopped"));

    ok(&kit, json!({"action": "remove_breakpoint", "file": "child.py"})).await;
    let child_end = ok(&kit, json!({"action": "continue", "timeout": 120})).await;
    // debugpy ends a subprocess session with `terminated` alone, without an exit code.
    let text = child_end.text();
    assert!(
        text.starts_with("Program terminated.") || text.starts_with("Program exited with code 0."),
        "{text}"
    );
    assert_eq!(session_field(&child_end, "id"), "debug-2", "{}", child_end.text());
    // The child ended: the root is the target again, and runs to its own end.
    let root_end = ok(&kit, json!({"action": "continue", "timeout": 120})).await;
    assert!(root_end.text().starts_with("Program exited with code 0."), "{}", root_end.text());
    assert_eq!(session_field(&root_end, "id"), "debug-1", "{}", root_end.text());
    let output = ok(&kit, json!({"action": "output"})).await;
    assert!(output.text().contains("child 42"), "{}", output.text());
    assert!(output.text().contains("parent done"), "{}", output.text());
    kit.toolkit.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminate_while_a_child_is_stopped_ends_both_programs() {
    if !has_debugpy() {
        return skip("debugpy is not importable by python3");
    }
    let kit = Kit::new();
    let stop = stopped_in_child(&kit, false).await;
    let child_pid = pid_of(&stop);
    let sessions = ok(&kit, json!({"action": "sessions"})).await;
    let root = &sessions.field("sessions")[0];
    let root_pid = root["pid"].as_u64().expect("the root's pid") as u32;
    let adapter_pid = root["adapter_pid"].as_u64().expect("the adapter's pid") as u32;
    let end = ok(&kit, json!({"action": "terminate"})).await;
    assert!(end.text().starts_with("Terminated debug-1 (debugpy)"), "{}", end.text());
    for (what, pid) in [("child", child_pid), ("root", root_pid), ("adapter", adapter_pid)] {
        assert!(gone_within(pid, 15).await, "the {what} process {pid} outlived terminate");
    }
    let after = ok(&kit, json!({"action": "sessions"})).await;
    assert_eq!(after.field("sessions"), json!([]), "{}", after.text());
    kit.toolkit.close().await;
}

/// A fake adapter (Python, stdio or TCP): the root asks for `FAKE_CHILDREN` children with
/// `startDebugging` (no `connect`, so execkit must open another connection or start another
/// instance), and reports each answer as an `output` event: `answer <n> <success>`. A child
/// connection answers its handshake and sends one `output` event, `child attached`.
const FAKE_ADAPTER: &str = r#"
import json, socket, sys, threading

def serve(rd, wr):
    def send(msg):
        body = json.dumps(msg).encode()
        wr.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        wr.flush()
    seq = [0]
    def out(message, **kw):
        seq[0] += 1
        send(dict(seq=seq[0], **message, **kw))
    def event(name, body):
        out({"type": "event", "event": name, "body": body})
    def read():
        length = None
        while True:
            line = rd.readline()
            if not line:
                return None
            line = line.strip()
            if not line:
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(rd.read(length))
    pending = {}
    while True:
        msg = read()
        if msg is None:
            return
        if msg["type"] == "response":
            event("output", {"category": "stdout",
                             "output": "answer %d %s\n" % (pending[msg["request_seq"]], msg["success"])})
            continue
        cmd = msg["command"]
        body = {"supportsConfigurationDoneRequest": True} if cmd == "initialize" else {}
        out({"type": "response", "request_seq": msg["seq"], "success": True, "command": cmd, "body": body})
        if cmd in ("launch", "attach"):
            event("initialized", {})
        if cmd == "configurationDone" and not child[0]:
            for n in range(int(sys.argv[2])):
                out({"type": "request", "command": "startDebugging",
                     "arguments": {"request": "attach", "configuration": {"n": n}}})
                pending[seq[0]] = n
        if cmd == "attach":
            event("output", {"category": "stdout", "output": "child attached\n"})
        if cmd == "disconnect":
            return

child = [False]
if sys.argv[1] == "stdio":
    # A second instance is a child: the root's instance runs first and marks the file.
    import os
    marker = sys.argv[3]
    child[0] = os.path.exists(marker)
    open(marker, "a").close()
    serve(sys.stdin.buffer, sys.stdout.buffer)
else:
    listener = socket.create_server(("127.0.0.1", int(sys.argv[1])))
    first = True
    while True:
        conn, _ = listener.accept()
        f = conn.makefile("rwb")
        child[0] = not first
        first = False
        threading.Thread(target=serve, args=(f, f), daemon=True).start()
"#;

fn fake_kit(transport: &str, children: usize) -> (Kit, tempfile::TempDir) {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join(".execkit")).unwrap();
    let script = home.path().join("fake_adapter.py");
    std::fs::write(&script, FAKE_ADAPTER).unwrap();
    let marker = home.path().join("started");
    let (mode, kind) = if transport == "tcp" { ("${port}", "tcp") } else { ("stdio", "stdio") };
    let dap = json!({"adapters": {"fake": {
        "command": [["python3", script, mode, children.to_string(), marker]],
        "transport": kind, "extensions": [".fake"], "install_hint": "none"}}});
    std::fs::write(home.path().join(".execkit/dap.json"), dap.to_string()).unwrap();
    let kit = Kit::with_vars(&[("HOME", home.path().to_str().unwrap())]);
    write(&kit, "prog.fake", "");
    (kit, home)
}

/// Waits (bounded) until the output holds `count` lines containing `needle`.
async fn output_with(kit: &Kit, needle: &str, count: usize) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let text = ok(kit, json!({"action": "output"})).await.text();
        if text.matches(needle).count() >= count || std::time::Instant::now() > deadline {
            return text;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

fn child_ids(kit_sessions: &Value) -> usize {
    kit_sessions[0]["child_ids"].as_array().map_or(0, Vec::len)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_seventeenth_child_is_refused() {
    let (kit, _home) = fake_kit("tcp", 17);
    ok(&kit, json!({"action": "launch", "program": "prog.fake"})).await;
    output_with(&kit, "child attached", 16).await;
    let text = output_with(&kit, "answer 16 False", 1).await;
    for n in 0..16 {
        assert!(text.contains(&format!("answer {n} True")), "{text}");
    }
    assert!(text.contains("answer 16 False"), "{text}");
    assert_eq!(text.matches("child attached").count(), 16, "{text}");
    let sessions = ok(&kit, json!({"action": "sessions"})).await;
    assert_eq!(child_ids(&sessions.field("sessions")), 16, "{}", sessions.text());
    ok(&kit, json!({"action": "terminate"})).await;
    kit.toolkit.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_without_connect_gets_another_connection_or_another_adapter() {
    for transport in ["tcp", "stdio"] {
        let (kit, _home) = fake_kit(transport, 1);
        ok(&kit, json!({"action": "launch", "program": "prog.fake"})).await;
        output_with(&kit, "child attached", 1).await;
        let text = output_with(&kit, "answer 0 True", 1).await;
        assert!(
            text.contains("answer 0 True") && text.contains("child attached"),
            "{transport}: {text}"
        );
        let sessions = ok(&kit, json!({"action": "sessions"})).await;
        let list = sessions.field("sessions");
        assert_eq!(list[1]["parent_id"], "debug-1", "{transport}: {}", sessions.text());
        // Over stdio the child has an adapter process of its own; over TCP it shares the root's.
        let own_adapter = list[1]["adapter_pid"].as_u64();
        assert_eq!(own_adapter.is_some(), transport == "stdio", "{}", sessions.text());
        ok(&kit, json!({"action": "terminate"})).await;
        if let Some(pid) = own_adapter {
            assert!(gone_within(pid as u32, 15).await, "the child's adapter outlived terminate");
        }
        kit.toolkit.close().await;
    }
}
