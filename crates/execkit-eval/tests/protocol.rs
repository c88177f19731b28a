//! The kernel protocol against a fixture kernel that misbehaves on purpose (spec-eval.md T6,
//! E30–E31), and the tool-call limits of E41. The fixture is a real Python process
//! (`tests/fixtures/bad_kernel.py`) started exactly like the real kernel; the session name
//! picks its misbehaviour.
#![allow(clippy::disallowed_methods)]

mod common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::*;
use execkit_protocol::ToolResult;
use execkit_protocol::eval::Language;
use pretty_assertions::assert_eq;
use serde_json::json;

fn fixture_kit() -> Kit {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bad_kernel.py");
    Kit::with(|c| {
        c.kernel_script = Some(script);
        c.ready_timeout = Duration::from_secs(1);
        c.interrupt_grace = Duration::from_secs(1);
    })
}

async fn run(kit: &Kit, mode: &str, timeout: u64) -> ToolResult {
    kit.call(
        json!({"session": mode, "cells": [{"language": "py", "code": "1", "timeout": timeout}]}),
    )
    .await
}

#[tokio::test]
async fn wrong_protocol_version_is_refused() {
    let kit = fixture_kit();
    let r = run(&kit, "wrong-protocol", 30).await;
    assert!(r.is_error);
    assert_eq!(
        r.text(),
        "Cell 1 failed: KernelStartError: Python kernel speaks protocol 2, execkit expects 1; \
         reinstall execkit.\nKernelStartError: Python kernel speaks protocol 2, execkit expects 1; \
         reinstall execkit"
    );
    assert_eq!(cell(&r, 0)["error"]["ename"], "KernelStartError");
    assert!(kit.runner.pool().live(Language::Py).await.is_empty());
    kit.runner.close().await;
}

#[tokio::test]
async fn a_silent_kernel_fails_to_start_with_its_diagnostics() {
    let kit = fixture_kit();
    let t = Instant::now();
    let r = run(&kit, "silent", 30).await;
    assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());
    assert!(r.is_error);
    assert_eq!(
        r.text(),
        "Cell 1 failed: KernelStartError: Python kernel failed to start: no ready frame within 1 s.\n\
         KernelStartError: Python kernel failed to start: no ready frame within 1 s\n\
         fixture kernel mode 'silent'"
    );
    // A failed start uses no restart allowance (E30): the next call tries again, the same way.
    let r = run(&kit, "silent", 30).await;
    assert!(r.text().contains("no ready frame within 1 s"), "{}", r.text());
    kit.runner.close().await;
}

#[tokio::test]
async fn an_early_exit_is_reported_with_the_diagnostic_tail() {
    let kit = fixture_kit();
    let r = run(&kit, "early-exit", 30).await;
    assert!(r.is_error);
    assert_eq!(
        r.text(),
        "Cell 1 failed: KernelStartError: Python kernel failed to start: exited with code 5.\n\
         KernelStartError: Python kernel failed to start: exited with code 5\n\
         fixture kernel mode 'early-exit'\nfixture: giving up before ready"
    );
    kit.runner.close().await;
}

#[tokio::test]
async fn a_frame_before_ready_is_a_protocol_violation() {
    let kit = fixture_kit();
    let r = run(&kit, "frame-before-ready", 30).await;
    assert!(r.is_error);
    assert_eq!(cell(&r, 0)["status"], "crashed");
    assert_eq!(cell(&r, 0)["kernel"]["state_lost"]["reason"], "protocol_error");
    assert_eq!(
        r.text(),
        "Cell 1 crashed: the Python kernel broke the protocol (sent stream before ready).\n\
         [the Python kernel broke the protocol (sent stream before ready) and was killed; its \
         variables are lost]"
    );
    assert!(kit.runner.pool().live(Language::Py).await.is_empty());
    kit.runner.close().await;
}

#[tokio::test]
async fn a_kernel_that_never_answers_is_killed_after_the_grace() {
    let kit = fixture_kit();
    let t = Instant::now();
    let r = run(&kit, "mute", 1).await;
    let took = t.elapsed();
    assert!(took >= Duration::from_secs(2) && took < Duration::from_secs(5), "{took:?}");
    let c = cell(&r, 0);
    assert_eq!(c["status"], "timeout");
    assert_eq!(c["kernel"]["killed"], true);
    assert_eq!(c["kernel"]["state_lost"]["reason"], "timeout_kill");
    let text = r.text();
    assert!(
        text.starts_with("Cell 1 timed out after 1 s; the Python kernel was restarted.\n[cell timed out after 1 s (CPU "),
        "{text}"
    );
    assert!(
        text.ends_with(
            " and ignored the interrupt for 1 s; the Python kernel was killed and its variables are lost]"
        ),
        "{text}"
    );
    let pid = c["kernel"]["pid"].as_u64().unwrap() as u32;
    assert!(gone_within(pid, Duration::from_secs(2)).await, "pid {pid} survived");
    kit.runner.close().await;
}

#[tokio::test]
async fn junk_foreign_ids_and_duplicates_are_counted_not_acted_on() {
    let kit = fixture_kit();
    let r = run(&kit, "junk", 30).await;
    let c = cell(&r, 0);
    assert_eq!(c["status"], "error", "{}", r.text());
    // Three malformed lines, a stream with a foreign id and a second `error`.
    assert_eq!(c["kernel"]["bad_frames"], 5);
    assert_eq!(c["error"]["evalue"], "first");
    assert_eq!(
        r.text(),
        "Cell 1 failed: FixtureError: first.\nfixture output\nFixtureError: first"
    );
    // The duplicate `done` of the first cell is dropped and counted by the next one.
    let r = run(&kit, "junk", 30).await;
    assert_eq!(cell(&r, 0)["kernel"]["bad_frames"], 6, "{}", r.text());
    assert_eq!(cell(&r, 0)["kernel"]["started"], false);
    kit.runner.close().await;
}

#[tokio::test]
async fn more_than_a_hundred_bad_lines_kill_the_kernel() {
    let kit = fixture_kit();
    let r = run(&kit, "many-bad", 30).await;
    let c = cell(&r, 0);
    assert_eq!(c["status"], "crashed");
    assert_eq!(c["kernel"]["state_lost"]["reason"], "protocol_error");
    assert_eq!(
        r.text(),
        "Cell 1 crashed: the Python kernel broke the protocol (more than 100 malformed lines in \
         one cell).\n[the Python kernel broke the protocol (more than 100 malformed lines in one \
         cell) and was killed; its variables are lost]"
    );
    let pid = c["kernel"]["pid"].as_u64().unwrap() as u32;
    assert!(gone_within(pid, Duration::from_secs(2)).await);
    let r = run(&kit, "many-bad", 30).await;
    assert!(
        r.text().contains("[Python kernel restarted: the previous kernel broke the protocol; variables from earlier cells are lost]"),
        "{}",
        r.text()
    );
    kit.runner.close().await;
}

#[tokio::test]
async fn a_flooding_kernel_is_windowed_and_saved_whole() {
    let kit = fixture_kit();
    let t = Instant::now();
    let r = run(&kit, "flood", 120).await;
    let took = t.elapsed();
    assert!(!r.is_error, "{}", &r.text()[..200.min(r.text().len())]);
    let text = r.text();
    assert!(text.len() <= 52 * 1024, "{}", text.len());
    let trunc = &cell(&r, 0)["truncation"];
    assert_eq!(trunc["total_bytes"], 20_000_000);
    assert_eq!(trunc["total_lines"], 200_000);
    let (id, query) =
        execkit_output::artifact::ArtifactId::parse(trunc["artifact"].as_str().unwrap()).unwrap();
    assert_eq!(query.as_deref(), Some("lines=2-200001"));
    // The call artifact: the header line, then every byte of the cell.
    let meta = kit.store.meta(&id).unwrap();
    assert_eq!(meta.total_lines, 200_001);
    assert!(meta.total_bytes > 20_000_000, "{}", meta.total_bytes);
    eprintln!("20 MB of stream frames took {took:?}");
    kit.runner.close().await;
}

#[tokio::test]
async fn a_ninth_outstanding_tool_call_is_refused() {
    let kit = Kit::with_callback(|_| {}, Some(echo_callback()));
    let code = "import threading\nres = []\ndef go():\n    try:\n        tool.bash(sleep_ms=1500)\n        res.append('ok')\n    except ToolError as e:\n        res.append(str(e))\nts = [threading.Thread(target=go) for _ in range(9)]\nfor t in ts: t.start()\nfor t in ts: t.join()\nprint(res.count('ok'))\nprint([r for r in res if r != 'ok'])";
    let r = kit.py(code).await;
    assert!(!r.is_error, "{}", r.text());
    assert_eq!(r.text(), "8\n['tool.bash: at most 8 tool calls may be outstanding per cell']");
    assert_eq!(cell(&r, 0)["tool_calls"].as_array().unwrap().len(), 8);
    kit.runner.close().await;
}
