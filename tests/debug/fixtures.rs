//! The shared programs (crates/execkit-dap/tests/support/programs.rs), built once per test
//! binary, and helpers that call the debug tool.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::{Value, json};

use crate::support::{Kit, Outcome};

pub use super::programs::*;

fn fixture_dir() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("fixture dir")).path()
}

/// The C program, built once per test binary.
pub fn c_binary() -> Option<PathBuf> {
    static BIN: OnceLock<Option<PathBuf>> = OnceLock::new();
    BIN.get_or_init(|| {
        let dir = fixture_dir().join("c");
        std::fs::create_dir_all(&dir).ok()?;
        build_c(&dir)
    })
    .clone()
}

/// The Go program, built once per test binary; none without dlv.
pub fn go_binary() -> Option<PathBuf> {
    static BIN: OnceLock<Option<PathBuf>> = OnceLock::new();
    BIN.get_or_init(|| {
        on_path("dlv")?;
        let dir = fixture_dir().join("go");
        std::fs::create_dir_all(&dir).ok()?;
        build_go(&dir)
    })
    .clone()
}

/// The Go source next to its binary.
pub fn go_source() -> PathBuf {
    fixture_dir().join("go/calc.go")
}

pub fn c_source() -> PathBuf {
    fixture_dir().join("c/calc.c")
}

pub async fn debug(kit: &Kit, args: Value) -> Outcome {
    Outcome(kit.call("debug", args).await)
}

/// `debug` must succeed; its text otherwise.
pub async fn ok(kit: &Kit, args: Value) -> Outcome {
    let out = debug(kit, args.clone()).await;
    assert!(!out.is_error(), "{args} failed: {}", out.text());
    out
}

/// Launches without an entry stop; when the breakpoint is not hit within the launch's own
/// first-stop wait (a loaded machine), `continue` waits for it.
pub async fn launch_to_breakpoint(kit: &Kit, args: Value) -> Outcome {
    let out = ok(kit, args).await;
    if session_field(&out, "status") == "running" {
        let stop = ok(kit, json!({"action": "continue", "timeout": 120})).await;
        assert_eq!(stop.field("state"), "stopped", "{}", stop.text());
        return stop;
    }
    out
}

pub fn session_field(out: &Outcome, name: &str) -> Value {
    out.field("session").get(name).cloned().unwrap_or(Value::Null)
}

pub fn write(kit: &Kit, name: &str, text: &str) -> PathBuf {
    let path = kit.work().join(name);
    std::fs::write(&path, text).expect("write program");
    path
}

/// One pass over a stopped program: a breakpoint in `add`, continue to it, Locals hold
/// `a = 1` and `b = 2`, `a*10` is 10, a step moves on, continue runs to the end.
pub async fn calc_session(kit: &Kit, file: &Path, add_line: i64, entry: bool) {
    let bp = ok(kit, json!({"action": "set_breakpoint", "file": file, "line": add_line})).await;
    assert!(bp.text().starts_with("Breakpoint at "), "{}", bp.text());
    if entry {
        let out = ok(kit, json!({"action": "continue"})).await;
        assert!(
            out.text().starts_with("Stopped at ") && out.text().contains("add ("),
            "{}",
            out.text()
        );
        assert_eq!(out.field("state"), "stopped");
        assert_eq!(out.field("stop")["line"], add_line, "{}", out.text());
    }
    let scopes = ok(kit, json!({"action": "scopes"})).await;
    let locals = scopes.field("scopes")[0]["variable_ref"].as_i64().expect("a scope");
    let vars = ok(kit, json!({"action": "variables", "variable_ref": locals})).await;
    let text = vars.text();
    assert!(text.contains("a = 1") && text.contains("b = 2"), "{text}");
    let eval =
        ok(kit, json!({"action": "evaluate", "expression": "a*10", "context": "watch"})).await;
    assert_eq!(eval.field("result"), "10", "{}", eval.text());
    let stack = ok(kit, json!({"action": "stack_trace"})).await;
    assert!(
        stack.text().starts_with("#0 ") && stack.text().contains("add at "),
        "{}",
        stack.text()
    );
    let step = ok(kit, json!({"action": "step_over"})).await;
    assert_eq!(step.field("state"), "stopped", "{}", step.text());
    assert_ne!(step.field("stop")["line"], add_line, "{}", step.text());
    ok(kit, json!({"action": "remove_breakpoint", "file": file, "line": add_line})).await;
    let end = ok(kit, json!({"action": "continue"})).await;
    // dlv ends with `terminated` and no exit code; the others say the code.
    let text = end.text();
    assert!(
        text.starts_with("Program exited with code 0.") || text.starts_with("Program terminated."),
        "{text}"
    );
    let output = ok(kit, json!({"action": "output"})).await;
    // dlv writes the program's stdout to its own, not as output events.
    if file.extension().is_none_or(|e| e != "go") {
        assert!(output.text().contains("total 3"), "{}", output.text());
    }
}
