//! The real `execkit-js-kernel` binary, driven over its protocol fds (no mocks).
// The harness in `common` is test code outside `#[test]` functions: it may unwrap.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Kernel, QUICK};
use serde_json::json;
use std::time::Duration;

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn ready_then_a_trivial_cell() {
    let dir = tmp();
    let mut k = Kernel::start(dir.path());
    assert_eq!(k.ready["protocol"], 1);
    assert_eq!(k.ready["language"], "javascript");
    assert_eq!(k.ready["pid"], k.child.id());
    let cell = k.run("1 + 1");
    assert_eq!(cell.frames[0]["type"], "started");
    assert_eq!(cell.frames[0]["execution_count"], 1);
    assert_eq!(cell.json(), Some(json!(2)));
    assert_eq!(cell.text().as_deref(), Some("2"));
    assert_eq!(cell.frames.last().unwrap()["execution_count"], 1);
    let empty = k.run("");
    empty.assert_ok();
    assert!(empty.of_type("result").is_empty());
    assert_eq!(empty.frames.last().unwrap()["execution_count"], 2);
}

#[test]
fn declarations_persist_and_can_be_declared_again() {
    let dir = tmp();
    let mut k = Kernel::start(dir.path());
    k.run("let a = 1\nconst b = 2\nclass K { v() { return 3 } }\nfunction f() { return 4 }")
        .assert_ok();
    assert_eq!(k.run("a + b + new K().v() + f()").json(), Some(json!(10)));
    k.run("let a = 10\nconst b = 20\nclass K { v() { return 30 } }").assert_ok();
    assert_eq!(k.run("a + b + new K().v()").json(), Some(json!(60)));
    k.run("const {x, y: [z]} = {x: 1, y: [2]}").assert_ok();
    assert_eq!(k.run("x + z").json(), Some(json!(3)));
}

#[test]
fn a_failed_let_can_be_declared_again() {
    let dir = tmp();
    let mut k = Kernel::start(dir.path());
    let failed = k.run("let v = 1\nthrow new Error('boom')");
    assert_eq!(failed.status(), "error");
    assert_eq!(failed.ename(), "Error");
    assert_eq!(k.run("let v = 2\nv").json(), Some(json!(2)));
}

#[test]
fn unsure_tokenizer_falls_back_and_hints_on_redeclaration() {
    let dir = tmp();
    let mut k = Kernel::start(dir.path());
    // `}` before `/` makes the tokenizer unsure: this cell runs unmodified, with a real `let`.
    k.run("let w = 1; if (w) {}\n/x/.test('x')").assert_ok();
    let again = k.run("let w = 2");
    assert_eq!(again.status(), "error", "{:#?}", again.frames);
    assert_eq!(again.ename(), "SyntaxError");
    let tb = again.error().unwrap()["traceback"].to_string();
    assert!(
        tb.contains("[hint: \\\"w\\\" was declared with let/const/class in an earlier cell"),
        "{tb}"
    );
    assert_eq!(k.run("w = 3; w").json(), Some(json!(3)));
}

#[test]
fn while_true_stops_at_the_loop_limit_with_globals_intact() {
    let dir = tmp();
    let mut k = Kernel::start(dir.path());
    k.run("let kept = 41; globalThis.other = 1").assert_ok();
    // The machine is shared, so the bound is on the kernel's CPU time, not the wall clock.
    let cpu_before = common::cpu_time(k.child.id());
    let cell = k.run_with_timeout("while(true){}", 5000);
    let cpu = common::cpu_time(k.child.id()) - cpu_before;
    assert!(cpu < Duration::from_secs(5), "the loop used {cpu:?} of CPU");
    assert_eq!(cell.status(), "error");
    let err = cell.error().unwrap();
    assert_eq!(err["ename"], "RuntimeLimitError");
    assert_eq!(
        err["evalue"],
        "loop ran more than 100000000 iterations (limit = 2e7 per second of cell timeout)"
    );
    assert_eq!(k.run("kept + other").json(), Some(json!(42)));
}

#[test]
fn the_limit_cannot_be_caught() {
    let dir = tmp();
    let mut k = Kernel::start(dir.path());
    let cell = k.run_with_timeout("try { while(true){} } catch (e) { 'caught' }", 1000);
    assert_eq!(cell.ename(), "RuntimeLimitError");
}

#[test]
fn deep_recursion_is_a_runtime_limit_error() {
    let dir = tmp();
    let mut k = Kernel::start(dir.path());
    let cell = k.run("function r(n) { return r(n + 1) + 1 }\nr(0)");
    let err = cell.error().unwrap();
    assert_eq!(err["ename"], "RuntimeLimitError");
    assert_eq!(err["evalue"], "recursion deeper than 4096 calls");
    assert_eq!(
        k.run("function d(n) { return n ? d(n - 1) + 1 : 0 }\nd(3000)").json(),
        Some(json!(3000))
    );
}

#[test]
fn top_level_await_with_timers() {
    let dir = tmp();
    let mut k = Kernel::start(dir.path());
    let cell = k.run("const v = await new Promise(r => setTimeout(() => r(7), 50))\nlet seen = []\nconst t = setInterval(() => seen.push(seen.length), 5)\nawait new Promise(r => setTimeout(r, 60))\nclearInterval(t)\nv * 6");
    assert_eq!(cell.json(), Some(json!(42)), "{:#?}", cell.frames);
    assert_eq!(k.run("v").json(), Some(json!(7)));
    let n = k.run("seen.length").json().unwrap().as_u64().unwrap();
    assert!(n >= 3, "interval ran {n} times");
}

#[test]
fn a_throwing_timer_fails_the_cell_and_strict_mode_is_kept() {
    let dir = tmp();
    let mut k = Kernel::start(dir.path());
    let cell =
        k.run("await new Promise(r => setTimeout(() => { throw new RangeError('in timer') }, 1))");
    assert_eq!(cell.ename(), "RangeError");
    assert_eq!(cell.error().unwrap()["evalue"], "in timer");
    let strict = k.run("'use strict'\nawait null\nundeclaredName = 1");
    assert_eq!(strict.ename(), "ReferenceError");
    k.run("sloppyName = 1; await null; sloppyName").assert_ok();
}

#[test]
fn pending_timers_are_cancelled_when_the_cell_ends() {
    let dir = tmp();
    let mut k = Kernel::start(dir.path());
    let cell =
        k.run("setTimeout(() => console.log('late'), 10000); setTimeout(() => {}, 20000); 1");
    cell.assert_ok();
    assert_eq!(cell.stderr(), "[2 pending timers cancelled when the cell ended]\n");
    let next = k.run("Promise.resolve(5).then(x => x + 1)");
    assert_eq!(next.json(), Some(json!(6)));
    assert!(!next.stdout().contains("late"));
}

#[test]
fn standalone_return_and_last_expression() {
    let dir = tmp();
    let mut k = Kernel::start(dir.path());
    assert_eq!(
        k.run("const q = 2\nif (q > 1) return 'big'\nreturn 'small'").json(),
        Some(json!("big"))
    );
    assert_eq!(k.run("let r = await Promise.resolve(3)\nr = r * 2").json(), Some(json!(6)));
    assert!(k.run("let unused = 1").of_type("result").is_empty());
}

#[test]
fn errors_have_cell_relative_stack_lines() {
    let dir = tmp();
    let mut k = Kernel::start(dir.path());
    k.run("1").assert_ok();
    let cell = k.run("function boom() {\n  throw new TypeError('bad thing')\n}\nboom()");
    let err = cell.error().unwrap();
    assert_eq!(err["ename"], "TypeError");
    assert_eq!(err["evalue"], "bad thing");
    let tb: Vec<String> = err["traceback"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().to_string())
        .collect();
    assert_eq!(tb[0], "TypeError: bad thing");
    assert!(tb.iter().any(|l| l.contains("boom (<cell-2>:2:")), "{tb:#?}");
    assert!(tb.iter().all(|l| !l.contains("prelude")), "{tb:#?}");
    let asynchronous = k.run("await null\nnull.x");
    assert_eq!(asynchronous.ename(), "TypeError");
}

#[test]
fn unhandled_rejection_fails_the_cell() {
    let dir = tmp();
    let mut k = Kernel::start(dir.path());
    let cell = k.run("Promise.reject(new Error('nope')); 1");
    let err = cell.error().unwrap();
    assert_eq!(err["ename"], "UnhandledRejection");
    assert_eq!(err["evalue"], "nope (missing await?)");
    k.run("Promise.reject(new Error('handled')).catch(() => {}); 1").assert_ok();
}

#[test]
fn typescript_gets_a_hint() {
    let dir = tmp();
    let mut k = Kernel::start(dir.path());
    let cell = k.run("let name: string = 'x'");
    assert_eq!(cell.ename(), "SyntaxError");
    let tb = cell.error().unwrap()["traceback"].to_string();
    assert!(
        tb.contains("[hint: TypeScript syntax is not supported; write plain JavaScript]"),
        "{tb}"
    );
}

#[test]
fn node_apis_and_packages_are_refused_and_the_kernel_survives() {
    let dir = tmp();
    let mut k = Kernel::start(dir.path());
    let lodash = k.run("import _ from 'lodash'");
    assert_eq!(lodash.status(), "error");
    assert_eq!(
        lodash.error().unwrap()["evalue"],
        "Cannot import \"lodash\": only file paths are supported (no Node.js, no npm packages); use tool.bash for anything that needs the OS"
    );
    let node = k.run("await import('node:fs')");
    assert!(
        node.error().unwrap()["evalue"].as_str().unwrap().starts_with("Cannot import \"node:fs\"")
    );
    assert_eq!(k.run("process.exit(1)").ename(), "ReferenceError");
    assert_eq!(k.run("require('fs')").ename(), "ReferenceError");
    for name in ["Buffer", "fetch", "setImmediate", "WebAssembly", "__dirname", "module"] {
        assert_eq!(k.run(&format!("typeof {name}")).json(), Some(json!("undefined")), "{name}");
    }
    assert_eq!(k.run("1").json(), Some(json!(1)));
}

#[test]
fn modules_reload_when_edited_between_cells() {
    let dir = tmp();
    let p = dir.path();
    std::fs::write(
        p.join("dep.mjs"),
        "globalThis.depLoads = (globalThis.depLoads || 0) + 1\nexport const base = 10\n",
    )
    .unwrap();
    std::fs::write(p.join("m.js"), "import {base} from './dep.mjs'\nexport const v = base + 1\n")
        .unwrap();
    std::fs::create_dir(p.join("lib")).unwrap();
    std::fs::write(p.join("lib/index.js"), "export default 'idx'\n").unwrap();
    std::fs::write(p.join("data.json"), "{\"k\": [1, 2]}").unwrap();
    let mut k = Kernel::start(p);
    assert_eq!(k.run("import {v} from './m.js'\nv").json(), Some(json!(11)));
    assert_eq!(
        k.run("import {v as w} from './m';\n[v, w, depLoads]").json(),
        Some(json!([11, 11, 1]))
    );
    std::fs::write(
        p.join("dep.mjs"),
        "globalThis.depLoads = (globalThis.depLoads || 0) + 1\nexport const base = 100\n",
    )
    .unwrap();
    assert_eq!(k.run("import {v} from './m.js';\n[v, depLoads]").json(), Some(json!([101, 2])));
    assert_eq!(
        k.run("import lib from './lib'\nimport data from './data.json';\n[lib, data.k]").json(),
        Some(json!(["idx", [1, 2]]))
    );
    let missing = k.run("import './nope.js'");
    assert!(
        missing.error().unwrap()["evalue"]
            .as_str()
            .unwrap()
            .starts_with("Cannot find module \"./nope.js\"")
    );
}

#[test]
fn ten_megabytes_of_console_log_arrive_whole_in_bounded_frames() {
    let dir = tmp();
    let mut k = Kernel::start(dir.path());
    let cell = k.run("console.log('x'.repeat(10 * 1024 * 1024))");
    cell.assert_ok();
    let streams = cell.of_type("stream");
    assert!(streams.iter().all(|f| f["text"].as_str().unwrap().len() <= 64 * 1024));
    let total: usize = streams.iter().map(|f| f["text"].as_str().unwrap().len()).sum();
    assert_eq!(total, 10 * 1024 * 1024 + 1);
    assert!(cell.stdout().ends_with("x\n"));
}

#[test]
fn a_huge_result_is_cut_to_fit_a_frame() {
    let dir = tmp();
    let mut k = Kernel::start(dir.path());
    let cell = k.run("'x'.repeat(20 * 1024 * 1024)");
    cell.assert_ok();
    let text = cell.text().unwrap();
    assert!(text.len() < 70_000, "{}", text.len());
    assert!(text.ends_with("… [20905984 more characters]"), "{}", &text[text.len() - 40..]);
    assert!(cell.json().is_none());
    let list = k.run("Array.from({length: 20000}, (_, i) => 'item' + i)");
    assert_eq!(list.json().unwrap().as_array().unwrap().len(), 20000);
}

#[test]
fn lone_surrogates_never_reach_the_wire() {
    let dir = tmp();
    let mut k = Kernel::start(dir.path());
    let cell = k.run("console.log('a\\ud800b'); '\\udc00'");
    assert_eq!(cell.stdout(), "a\u{fffd}b\n");
    assert_eq!(cell.json(), Some(json!("\u{fffd}")));
}

#[test]
fn console_streams_and_inspector() {
    let dir = tmp();
    let mut k = Kernel::start(dir.path());
    let cell = k.run("console.log('a', 1, {b: [1, 'two']}, null)\nconsole.error('oops')\nconsole.warn(new Map([[1, 2]]))");
    assert_eq!(cell.stdout(), "a 1 { b: [1, \"two\"] } null\n");
    assert_eq!(cell.stderr(), "oops\nMap(1) { 1 => 2 }\n");
    assert_eq!(k.run("10n").text().as_deref(), Some("10n"));
    let float = k.run("0.1 + 0.2");
    assert_eq!(float.text().as_deref(), Some("0.30000000000000004"));
    assert_eq!(float.json(), Some(json!(0.30000000000000004)));
    assert_eq!(k.run("'abc'").text().as_deref(), Some("abc"));
    assert_eq!(k.run("'abc'").json(), Some(json!("abc")));
    assert_eq!(
        k.run("[true, null, 2 ** 60]").json(),
        k.run("[true, null, 2 ** 60].map(x => x)").json()
    );
    assert_eq!(k.run("2 ** 60").json(), Some(json!(1152921504606847000u64)));
    assert_eq!(k.run("1e21").text().as_deref(), Some("1e+21"));
    assert_eq!(k.run("-0").text().as_deref(), Some("-0"));
    assert_eq!(k.run("NaN").text().as_deref(), Some("NaN"));
    assert!(k.run("NaN").json().is_none());
    assert_eq!(
        k.run("const o = {}; o.self = o; o").text().as_deref(),
        Some("{ self: [Circular] }")
    );
    assert_eq!(k.run("(function named() {})").text().as_deref(), Some("[Function: named]"));
    assert_eq!(k.run("Promise.resolve(1).then(() => new Promise(() => {})); new Promise(() => {}).constructor.name").json(), Some(json!("Promise")));
    assert_eq!(
        k.run("Array.from({length: 101}, (_, i) => i)").json().unwrap().as_array().unwrap().len(),
        101
    );
    assert!(k.run("[undefined, () => 1]").json().is_none());
}

#[test]
fn display_files_and_env() {
    let dir = tmp();
    let mut k = Kernel::start(dir.path());
    let cell = k.run("display({a: 1})\ndisplay('iVBORw0KGgo=', 'image/png')\ndisplay(new Uint8Array([104, 105]), 'image/gif')");
    let displays = cell.of_type("display");
    assert_eq!(
        displays[0]["data"],
        json!({"application/json": {"a": 1}, "text/plain": "{ a: 1 }"})
    );
    assert_eq!(displays[1]["data"], json!({"image/png": "iVBORw0KGgo="}));
    assert_eq!(displays[2]["data"], json!({"image/gif": "aGk="}));
    let files = k.run("write('sub/f.txt', 'one\\ntwo\\n')\nappend('sub/f.txt', 'three\\n');\n[read('sub/f.txt'), read('sub/f.txt', {offset: 2, limit: 1})]");
    assert_eq!(files.json(), Some(json!(["one\ntwo\nthree\n", "two\n"])));
    assert!(dir.path().join("sub/f.txt").exists());
    assert_eq!(k.run("read('sub')").error().unwrap()["evalue"], "sub is a directory");
    assert_eq!(k.run("env('EXECKIT_JS_TEST_NOPE')").of_type("result").len(), 0);
    assert_eq!(k.run("env('X_SET', 'v'); env('X_SET')").json(), Some(json!("v")));
    assert_eq!(
        k.run("new TextDecoder().decode(new TextEncoder().encode('héllo ✓'))").json(),
        Some(json!("héllo ✓"))
    );
    assert_eq!(k.run("[btoa('hi'), atob('aGk=')]").json(), Some(json!(["aGk=", "hi"])));
}

#[test]
fn tool_calls_go_through_the_host() {
    let dir = tmp();
    let mut k = Kernel::start(dir.path());
    let id = k.start_cell(
        "const r = await tool.bash({command: 'ls'});\n[r.text, r.isError, Object.keys(tool)]",
        10_000,
    );
    let started = k.next_frame(QUICK).unwrap();
    assert_eq!(started["type"], "started");
    let call = k.next_frame(QUICK).unwrap();
    assert_eq!(call["type"], "tool_call");
    assert_eq!(call["id"], id);
    assert_eq!(call["name"], "bash");
    assert_eq!(call["args"], json!({"command": "ls"}));
    k.send(&json!({"type": "tool_result", "call_id": call["call_id"],
                   "result": {"content": [{"type": "text", "text": "a.txt"}], "isError": false}}));
    let cell = common::Cell { frames: k.frames_until_done(id, QUICK) };
    assert_eq!(cell.json(), Some(json!(["a.txt", false, ["bash", "job"]])));

    let id = k.start_cell("await tool.nope()", 10_000);
    let _started = k.next_frame(QUICK).unwrap();
    let call = k.next_frame(QUICK).unwrap();
    k.send(&json!({"type": "tool_result", "call_id": call["call_id"], "error": "unknown tool \"nope\"; callable: bash, job"}));
    let cell = common::Cell { frames: k.frames_until_done(id, QUICK) };
    let err = cell.error().unwrap();
    assert_eq!(err["ename"], "ToolError");
    assert_eq!(err["evalue"], "unknown tool \"nope\"; callable: bash, job");
}

#[test]
fn a_withheld_tool_reply_becomes_a_tool_error() {
    let dir = tmp();
    let mut k = Kernel::start(dir.path());
    let started = std::time::Instant::now();
    let cell = k.run_with_timeout("await tool.bash({command: 'true'})", 1000);
    assert_eq!(cell.ename(), "ToolError");
    assert_eq!(cell.error().unwrap()["evalue"], "tool call bash got no reply");
    assert!(started.elapsed() >= Duration::from_secs(6), "{:?}", started.elapsed());
}

#[test]
fn a_tool_call_that_outlives_its_cell_is_cancelled() {
    let dir = tmp();
    let mut k = Kernel::start(dir.path());
    let id = k.start_cell("tool.bash({command: 'sleep 100'}); 'left'", 10_000);
    let cell = common::Cell { frames: k.frames_until_done(id, QUICK) };
    cell.assert_ok();
    let call = cell.of_type("tool_call")[0].clone();
    let cancel = cell.of_type("tool_cancel");
    assert_eq!(cancel.len(), 1);
    assert_eq!(cancel[0]["call_id"], call["call_id"]);
    // The late reply is ignored and the kernel goes on.
    k.send(&json!({"type": "tool_result", "call_id": call["call_id"], "error": "cancelled: the cell ended"}));
    assert_eq!(k.run("2").json(), Some(json!(2)));
}

#[test]
fn a_waiting_cell_is_interrupted_and_keeps_state() {
    let dir = tmp();
    let mut k = Kernel::start(dir.path());
    k.run("let kept = 'yes'").assert_ok();
    let id = k.start_cell("await new Promise(() => {})", 1000);
    assert_eq!(k.next_frame(QUICK).unwrap()["type"], "started");
    assert!(k.next_frame(Duration::from_millis(300)).is_none(), "the cell should be waiting");
    k.send(&json!({"type": "interrupt", "id": id}));
    let cell = common::Cell { frames: k.frames_until_done(id, Duration::from_secs(2)) };
    assert_eq!(cell.status(), "interrupted");
    assert_eq!(cell.ename(), "Interrupted");
    assert_eq!(k.run("kept").json(), Some(json!("yes")));
}

#[test]
fn snapshot_then_restore_into_a_fresh_kernel() {
    let dir = tmp();
    let snap = dir.path().join("snap.json");
    let mut k = Kernel::start(dir.path());
    k.run("let n = 5\nconst m = new Map([[1, 'a']])\nconst when = new Date(0)\nfunction times(x) { return x * n }\nclass K { get() { return n + 1 } }\nconst inst = new K()\nconst counter = (() => { let c = 0; return () => c++ })()\nglobalThis.extra = {u: undefined, big: 12n, nan: NaN, s: new Set([1]), bytes: new Uint8Array([1, 2])}").assert_ok();
    k.send(&json!({"type": "snapshot", "id": 1, "path": snap.to_str().unwrap()}));
    let done = k.next_frame(QUICK).unwrap();
    assert_eq!(done["type"], "snapshot_done", "{done}");
    let saved: Vec<&str> =
        done["saved"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(saved, ["times", "K", "n", "m", "when", "extra"]);
    let skipped: Vec<&str> =
        done["skipped"].as_array().unwrap().iter().map(|v| v["name"].as_str().unwrap()).collect();
    assert_eq!(skipped, ["inst", "counter"]);
    assert!(done["bytes"].as_u64().unwrap() > 0);
    let mtime = std::fs::metadata(&snap).unwrap().modified().unwrap();
    std::thread::sleep(Duration::from_millis(20));
    k.send(&json!({"type": "snapshot", "id": 2, "path": snap.to_str().unwrap()}));
    assert_eq!(k.next_frame(QUICK).unwrap()["type"], "snapshot_done");
    assert_eq!(
        std::fs::metadata(&snap).unwrap().modified().unwrap(),
        mtime,
        "unchanged state rewrote the file"
    );
    drop(k);

    let mut fresh = Kernel::start(dir.path());
    fresh.send(&json!({"type": "restore", "id": 1, "path": snap.to_str().unwrap()}));
    let restored = fresh.next_frame(QUICK).unwrap();
    assert_eq!(restored["type"], "restore_done", "{restored}");
    assert_eq!(restored["restored"], json!(["times", "K", "n", "m", "when", "extra"]));
    assert_eq!(restored["failed"], json!([]));
    let check = fresh.run("[times(2), new K().get(), m.get(1), when.getTime(), extra.u === undefined, extra.big, Number.isNaN(extra.nan), extra.s.has(1), extra.bytes[1]]");
    assert_eq!(
        check.text().as_deref(),
        Some("[10, 6, \"a\", 0, true, 12n, true, true, 2]"),
        "{:#?}",
        check.frames
    );
    assert_eq!(fresh.run("let n = 7\ntimes(2)").json(), Some(json!(14)));
}

#[test]
fn a_million_globals_hit_the_snapshot_budget() {
    let dir = tmp();
    let snap = dir.path().join("big.json");
    let mut k = Kernel::start(dir.path());
    k.run_with_timeout("for (let i = 0; i < 1e6; i++) globalThis['v' + i] = i", 60_000).assert_ok();
    k.send(&json!({"type": "snapshot", "id": 1, "path": snap.to_str().unwrap()}));
    let done = k.next_frame(Duration::from_secs(60)).unwrap();
    assert_eq!(done["type"], "snapshot_done");
    let skipped = done["skipped"].as_array().unwrap();
    assert!(skipped.len() <= 1001);
    assert!(skipped.iter().any(|s| s["reason"] == "snapshot budget"), "{:?}", &skipped[..3]);
    let last = skipped.last().unwrap()["name"].as_str().unwrap();
    assert!(last.starts_with('+') && last.ends_with(" more"), "{last}");
    assert_eq!(k.run("v999999").json(), Some(json!(999999)));
}

#[test]
fn shutdown_and_command_eof_end_the_kernel() {
    let dir = tmp();
    let mut k = Kernel::start(dir.path());
    let _ = k.start_cell("await new Promise(() => {})", 30_000);
    k.send(&json!({"type": "shutdown"}));
    let status = k.wait_exit(Duration::from_secs(1)).expect("exit within 1 s");
    assert!(status.success());
    let mut k = Kernel::start(dir.path());
    let _ = k.start_cell("await new Promise(() => {})", 30_000);
    k.close_commands();
    assert!(k.wait_exit(Duration::from_secs(1)).expect("exit within 1 s").success());
}

#[test]
fn the_memory_limit_kills_the_kernel() {
    let dir = tmp();
    let mut k = Kernel::start_with_env(dir.path(), &[("EXECKIT_EVAL_JS_MEMORY_MB", "256")]);
    k.run("let small = 1").assert_ok();
    let _ = k.start_cell("new Array(1e9).fill(0)", 30_000);
    let status = k.wait_exit(Duration::from_secs(120)).expect("the kernel should die");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGABRT), "{status:?}");
    let diag = k.diagnostics(QUICK);
    assert!(diag.contains("memory allocation of"), "{diag}");
}

#[test]
fn sigint_does_not_kill_the_kernel() {
    let dir = tmp();
    let mut k = Kernel::start(dir.path());
    k.run("let alive = 'yes'").assert_ok();
    // SAFETY: kill(2) on the kernel's own pid; no memory is involved.
    assert_eq!(unsafe { libc::kill(k.child.id() as i32, libc::SIGINT) }, 0);
    assert_eq!(k.run("alive").json(), Some(json!("yes")));
}

#[test]
fn junk_commands_are_ignored() {
    let dir = tmp();
    let mut k = Kernel::start(dir.path());
    k.send(&json!({"type": "weird"}));
    k.send(&json!([1, 2]));
    k.send(&json!({"type": "interrupt", "id": 99}));
    k.send(&json!({"type": "tool_result", "call_id": 99, "result": {}}));
    assert_eq!(k.run("'fine'").json(), Some(json!("fine")));
}

#[test]
fn a_busy_cell_ignores_interrupt_and_a_fresh_kernel_restores_its_snapshot() {
    let dir = tmp();
    let snap = dir.path().join("busy.json");
    let mut k = Kernel::start(dir.path());
    k.run("let total = 3\nfunction s() { for (let i = 0; i < 1e6; i++) {} return total }")
        .assert_ok();
    k.send(&json!({"type": "snapshot", "id": 1, "path": snap.to_str().unwrap()}));
    assert_eq!(k.next_frame(QUICK).unwrap()["saved"], json!(["s", "total"]));
    // B16: each call's loop stays under the per-frame limit, so only a kill stops this cell.
    let id = k.start_cell("for (;;) s()", 2000);
    assert_eq!(k.next_frame(QUICK).unwrap()["type"], "started");
    std::thread::sleep(Duration::from_millis(200));
    k.send(&json!({"type": "interrupt", "id": id}));
    assert!(
        k.next_frame(Duration::from_millis(500)).is_none(),
        "a busy cell cannot answer an interrupt"
    );
    drop(k);
    let mut fresh = Kernel::start(dir.path());
    fresh.send(&json!({"type": "restore", "id": 1, "path": snap.to_str().unwrap()}));
    let restored = fresh.next_frame(QUICK).unwrap();
    assert_eq!(restored["restored"], json!(["s", "total"]));
    assert_eq!(fresh.run("s() + total").json(), Some(json!(6)));
}

#[test]
fn restore_names_what_failed() {
    let dir = tmp();
    let snap = dir.path().join("bad.json");
    std::fs::write(&snap, r#"{"entries": [{"name": "ok", "value": 1}, {"name": "broken", "source": "function ("}, {"name": "odd", "value": {"t": "NoSuchArray", "v": []}}]}"#).unwrap();
    let mut k = Kernel::start(dir.path());
    k.send(&json!({"type": "restore", "id": 4, "path": snap.to_str().unwrap()}));
    let done = k.next_frame(QUICK).unwrap();
    assert_eq!(done["restored"], json!(["ok"]));
    let failed: Vec<&str> =
        done["failed"].as_array().unwrap().iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert_eq!(failed, ["broken", "odd"]);
    k.send(&json!({"type": "restore", "id": 5, "path": dir.path().join("missing.json").to_str().unwrap()}));
    let missing = k.next_frame(QUICK).unwrap();
    assert!(
        missing["failed"][0]["reason"].as_str().unwrap().starts_with("cannot read the snapshot")
    );
    assert_eq!(k.run("ok").json(), Some(json!(1)));
}
