//! JavaScript cells through the eval tool, on the real `execkit-js-kernel` binary.
//!
//! The kernel is found the way a host finds it: next to the running executable, which for
//! this test binary (`target/<profile>/deps/js-…`) means the profile directory where cargo
//! builds the workspace's binaries (`cargo build -p execkit-js`, or any workspace build).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::{Kit, cell, echo_callback, gone_within};
use execkit_protocol::eval::Language;
use serde_json::{Value, json};

fn structured(r: &execkit_protocol::ToolResult) -> &Value {
    r.structured_content.as_ref().unwrap()
}

fn pid(r: &execkit_protocol::ToolResult) -> u32 {
    cell(r, 0)["kernel"]["pid"].as_u64().unwrap() as u32
}

#[tokio::test]
async fn js_declarations_persist_and_await_works() {
    let kit = Kit::new();
    let r = kit.js("let x = 2\nconst times = (a) => a * x\nclass K { get v() { return 1 } }").await;
    assert!(!r.is_error, "{}", r.text());
    assert_eq!(r.text(), "(no output)");
    assert_eq!(cell(&r, 0)["language"], "js");
    // let/const/class declared again in a later cell, as in a REPL.
    let r = kit.js("let x = 5\nclass K { get v() { return 2 } }\ntimes(2) + new K().v").await;
    assert!(!r.is_error, "{}", r.text());
    assert_eq!(r.text(), "12");
    let r = kit.js("const v = await new Promise(r => setTimeout(() => r(41), 10))\nv + 1").await;
    assert_eq!(r.text(), "42", "{}", r.text());
    let r = kit.js("v * 2").await;
    assert_eq!(r.text(), "82");
    assert_eq!(cell(&r, 0)["execution_count"], 4);
    let r = kit.call(json!({"language": "javascript", "code": "({a: [1, 'b'], n: null})"})).await;
    assert_eq!(r.text(), "{\n  \"a\": [\n    1,\n    \"b\"\n  ],\n  \"n\": null\n}");
    kit.runner.close().await;
}

#[tokio::test]
async fn js_errors_output_and_displays() {
    let kit = Kit::new();
    let r = kit.js("function boom() {\n  throw new TypeError('bad thing')\n}\nboom()").await;
    assert!(r.is_error);
    assert_eq!(cell(&r, 0)["status"], "error");
    let text = r.text();
    assert!(text.starts_with("Cell 1 failed: TypeError: bad thing."), "{text}");
    assert!(text.contains("at boom (<cell-1>:2:9)"), "{text}");
    assert_eq!(cell(&r, 0)["error"]["ename"], "TypeError");
    let code = "console.log('out', 1)\nconsole.error('err')\ndisplay({k: true})\ndisplay('# T', 'text/markdown')";
    let r = kit.js(code).await;
    assert!(!r.is_error, "{}", r.text());
    assert_eq!(r.text(), "out 1\nerr\n{\n  \"k\": true\n}\n# T");
    assert_eq!(cell(&r, 0)["displays"][0]["data"], json!({"k": true}), "{}", cell(&r, 0));
    // B22: no Node.js; the kernel survives every one of these.
    let first = pid(&r);
    let r = kit.js("import _ from 'lodash'").await;
    assert!(
        r.text().contains("Cannot import \"lodash\": only file paths are supported"),
        "{}",
        r.text()
    );
    for code in ["process.exit(1)", "require('fs')"] {
        let r = kit.js(code).await;
        assert_eq!(cell(&r, 0)["error"]["ename"], "ReferenceError", "{}", r.text());
        assert_eq!(pid(&r), first);
    }
    kit.runner.close().await;
}

#[tokio::test]
async fn js_busy_cell_is_killed_and_state_restored() {
    let kit = Kit::new();
    let r =
        kit.js("var kept = {a: [1, 2]}\nfunction twice(n) { return 2 * n }\nlet counter = 3").await;
    assert!(!r.is_error, "{}", r.text());
    let old = pid(&r);
    let t = Instant::now();
    // B16: a busy loop of calls never reads the interrupt frame.
    let r = kit.js_t("function s() { for (let i = 0; i < 1e6; i++) {} }\nfor (;;) s()", 2).await;
    let took = t.elapsed();
    assert!(r.is_error);
    let c = cell(&r, 0);
    assert_eq!(c["status"], "timeout", "{}", r.text());
    assert_eq!(c["kernel"]["killed"], true);
    assert_eq!(c["kernel"]["state_lost"]["reason"], "timeout_kill");
    // Function sources are replayed first, then values.
    assert_eq!(c["kernel"]["restored"]["names"], json!(["twice", "kept", "counter"]), "{c}");
    let text = r.text();
    assert!(
        text.starts_with("Cell 1 timed out after 2 s; the JavaScript kernel was restarted."),
        "{text}"
    );
    assert!(
        text.contains("; the JavaScript kernel was busy and was restarted; restored 3 names (twice, kept, counter)]"),
        "{text}"
    );
    assert!(took < Duration::from_secs(12), "{took:?}");
    assert!(gone_within(old, Duration::from_secs(5)).await, "the busy kernel {old} survived");
    // The next cell runs on the replacement, announced, with the state of the last ok cell.
    let r = kit.js("twice(counter) + kept.a.length").await;
    assert!(!r.is_error, "{}", r.text());
    assert_eq!(
        r.text(),
        "[JavaScript kernel restarted: the previous kernel was killed after a timeout; restored 3 names (twice, kept, counter)]\n8"
    );
    assert_ne!(pid(&r), old);
    let r = kit.js("counter").await;
    assert_eq!(r.text(), "3", "announced once only");
    let live = kit.runner.pool().live(Language::Js).await;
    assert_eq!(live.len(), 1);
    let pids: Vec<u32> = live.iter().map(|k| k.pid).collect();
    kit.runner.close().await;
    for p in pids {
        assert!(gone_within(p, Duration::from_secs(5)).await, "kernel {p} left after close");
    }
}

#[tokio::test]
async fn js_waiting_cell_is_interrupted_and_keeps_state() {
    let kit = Kit::new();
    let r = kit.js("var y = 7").await;
    let first = pid(&r);
    let t = Instant::now();
    let r = kit.js_t("await new Promise(() => {})", 1).await;
    assert!(t.elapsed() < Duration::from_secs(6), "{:?}", t.elapsed());
    assert_eq!(cell(&r, 0)["status"], "timeout");
    assert_eq!(cell(&r, 0)["kernel"]["killed"], false);
    let text = r.text();
    assert!(
        text.starts_with("Cell 1 timed out after 1 s and was interrupted; variables are kept.")
    );
    assert!(
        text.ends_with("[cell timed out after 1 s while waiting; interrupted; variables are kept]"),
        "{text}"
    );
    let r = kit.js("y").await;
    assert_eq!(r.text(), "7");
    assert_eq!(pid(&r), first);
    kit.runner.close().await;
}

#[tokio::test]
async fn js_loop_limit_keeps_globals() {
    let kit = Kit::new();
    kit.js("var before = 'here'").await;
    // B15. The loop limit (2e7 iterations per second of timeout) normally ends the cell as an
    // error well inside its timeout; on a heavily loaded machine the timeout may come first,
    // and then the kill and the restore must keep the globals just the same.
    let r = kit.js_t("while (true) {}", 5).await;
    assert!(r.is_error);
    let c = cell(&r, 0);
    match c["status"].as_str() {
        Some("error") => {
            assert_eq!(c["error"]["ename"], "RuntimeLimitError");
            assert!(r.text().contains("loop ran more than 100000000 iterations"), "{}", r.text());
        }
        Some("timeout") => assert_eq!(c["kernel"]["killed"], true),
        other => panic!("unexpected status {other:?}: {}", r.text()),
    }
    let r = kit.js("before").await;
    assert!(r.text().ends_with("\"here\""), "{}", r.text());
    kit.runner.close().await;
}

#[tokio::test]
async fn js_kernel_death_is_a_crash_and_the_next_cell_restarts() {
    let kit = Kit::build(|_, deps| deps.lookup.set("EXECKIT_EVAL_JS_MEMORY_MB", "256"));
    kit.js("var lost = 1").await;
    let r = kit.js("new Array(1e9).fill(0)").await;
    assert!(r.is_error);
    assert_eq!(cell(&r, 0)["status"], "crashed", "{}", r.text());
    let text = r.text();
    assert!(
        text.starts_with(
            "Cell 1 crashed: the JavaScript kernel ran out of memory (limit 256 MiB)."
        ),
        "{text}"
    );
    assert!(
        text.contains("[the JavaScript kernel ran out of memory (limit 256 MiB); its variables are lost. The next cell starts a fresh kernel (automatic restart 1 of 1).]"),
        "{text}"
    );
    let r = kit.js("typeof lost").await;
    assert_eq!(
        r.text(),
        "[JavaScript kernel restarted: the previous kernel crashed (killed by SIGABRT); variables from earlier cells are lost]\n\"undefined\""
    );
    // A kernel killed from outside while its cell waits.
    let victim = pid(&r);
    let kill = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        // SAFETY: kill(2) on a pid this test started.
        unsafe { libc::kill(victim as i32, libc::SIGKILL) };
    });
    let r = kit.js("await new Promise(r => setTimeout(r, 20000))").await;
    kill.await.unwrap();
    assert_eq!(cell(&r, 0)["status"], "crashed");
    assert!(r.text().contains("the JavaScript kernel was killed by SIGKILL"), "{}", r.text());
    let r = kit.js("1").await;
    assert_eq!(cell(&r, 0)["error"]["ename"], "KernelUnavailable", "{}", r.text());
    let r = kit.call(json!({"cells": [{"language": "js", "code": "2", "reset": true}]})).await;
    assert_eq!(r.text(), "2");
    kit.runner.close().await;
}

#[tokio::test]
async fn js_hostile_output_is_bounded() {
    let kit = Kit::new();
    let t = Instant::now();
    let r = kit.js("console.log('x'.repeat(10 * 1024 * 1024))").await;
    assert!(!r.is_error, "{}", &r.text()[..200.min(r.text().len())]);
    assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
    let text = r.text();
    assert!(text.len() < 60 * 1024, "{}", text.len());
    let trunc = &cell(&r, 0)["truncation"];
    assert_eq!(trunc["total_bytes"], 10 * 1024 * 1024 + 1, "{trunc}");
    let r = kit.js("'a\\ud800b'").await;
    assert_eq!(r.text(), "\"a\u{fffd}b\"");
    let r = kit.js("console.log('\\x1b[31mred\\x1b[0m')").await;
    assert_eq!(r.text(), "red");
    kit.runner.close().await;
}

#[tokio::test]
async fn js_tool_calls_reach_the_dispatcher() {
    let kit = Kit::with_callback(|_| {}, Some(echo_callback()));
    let r = kit.js("const r = await tool.bash({command: 'ls'})\nr.text").await;
    assert!(!r.is_error, "{}", r.text());
    assert_eq!(r.text(), r#""bash says {\"command\":\"ls\"}""#);
    assert_eq!(cell(&r, 0)["tool_calls"][0]["name"], "bash");
    let r = kit.js("await tool.nope()").await;
    assert!(r.is_error);
    assert!(
        r.text().contains("unknown tool \"nope\"; callable: bash, debug, job, ssh"),
        "{}",
        r.text()
    );
    let r = kit.js("await tool.eval({})").await;
    assert!(r.text().contains("tool.eval cannot be called from an eval cell"), "{}", r.text());
    // A call still running at the timeout is cancelled with the waiting cell.
    let r = kit.js_t("await tool.bash({sleep_ms: 60000})", 1).await;
    assert_eq!(cell(&r, 0)["status"], "timeout", "{}", r.text());
    assert_eq!(cell(&r, 0)["kernel"]["killed"], false);
    kit.runner.close().await;
}

#[tokio::test]
async fn python_and_javascript_cells_mix_with_separate_state() {
    let kit = Kit::new();
    let r = kit
        .call(json!({"cells": [
            {"language": "py", "code": "x = 'py'"},
            {"language": "js", "code": "var x = 'js'", "title": "js side"},
            {"language": "py", "code": "print(x)"},
            {"language": "js", "code": "x"},
        ]}))
        .await;
    assert!(!r.is_error, "{}", r.text());
    let text = r.text();
    assert!(text.contains("--- Cell 2/4 (js side) [js] ok in "), "{text}");
    assert!(text.contains("---\npy\n"), "{text}");
    assert!(text.ends_with("---\n\"js\""), "{text}");
    let langs: Vec<&str> = structured(&r)["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["language"].as_str().unwrap())
        .collect();
    assert_eq!(langs, ["py", "js", "py", "js"]);
    kit.runner.close().await;
}

#[tokio::test]
async fn js_kernel_lookup_is_reported() {
    let kit = Kit::new();
    let doctor = kit.runner.doctor();
    let line = doctor.iter().find(|l| l.starts_with("javascript: ")).unwrap();
    assert!(line.contains("/execkit-js-kernel (from next to "), "{line}");
    let kit = Kit::build(|_, deps| deps.lookup.set("EXECKIT_JS_KERNEL", "/nonexistent/kernel"));
    let r = kit.js("1").await;
    assert!(r.is_error);
    assert_eq!(
        r.text(),
        "EXECKIT_JS_KERNEL=/nonexistent/kernel is not an executable file; point it at an \
         execkit-js-kernel binary or unset it"
    );
    let doctor = kit.runner.doctor();
    assert!(doctor.iter().any(|l| l.starts_with("javascript: EXECKIT_JS_KERNEL=")), "{doctor:?}");
}
