//! User-visible texts, snapshotted with insta (durations, CPU times, pids and artifact ids
//! redacted), and the one artifact per call of E23.
#![allow(clippy::disallowed_methods)]

mod common;

use std::io::Read;

use common::*;
use execkit_output::artifact::ArtifactId;
use serde_json::{Value, json};

/// Redactions for everything that changes from run to run.
fn filters() -> Vec<(&'static str, &'static str)> {
    vec![
        (r" in \d+ ms ---", " in [ms] ms ---"),
        (r"\(CPU \d+\.\d s\)", "(CPU [s] s)"),
        (r"artifact://[0-9a-f]{8}", "artifact://[id]"),
        // Caret lines under a traceback line exist on Python ≥ 3.11 only.
        (r"(?m)^ +[~^]+ *\n", ""),
        (r#""(duration_ms|cpu_ms|wall_ms|pid|start_ms)": \d+"#, r#""$1": "[redacted]""#),
    ]
}

macro_rules! snap {
    ($name:expr, $value:expr) => {
        insta::with_settings!({filters => filters()}, {
            insta::assert_snapshot!($name, $value);
        })
    };
}

#[tokio::test]
async fn multi_cell_failure_text_and_structure() {
    let kit = Kit::new();
    let r = kit
        .call(json!({"cells": [
            {"language": "py", "code": "cfg = {}\nprint('loaded', len(cfg))", "title": "setup"},
            {"language": "py", "code": "name = 'x'\nraise KeyError('name')", "title": "load config"},
            {"language": "py", "code": "print(name)"},
            {"language": "py", "code": "print(cfg)", "title": "summary"}
        ]}))
        .await;
    assert!(r.is_error);
    snap!("multi_cell_failure_text", r.text());
    let structured = serde_json::to_string_pretty(r.structured_content.as_ref().unwrap()).unwrap();
    snap!("multi_cell_failure_structured", structured);
    kit.runner.close().await;
}

#[tokio::test]
async fn state_loss_notice_after_a_crash() {
    let kit = Kit::new();
    let r = kit.py("x = 1\nimport os\nos._exit(3)").await;
    snap!("crash_text", r.text());
    let r = kit
        .call(json!({"cells": [
            {"language": "py", "code": "print('fresh')", "title": "after"},
            {"language": "py", "code": "x"}
        ]}))
        .await;
    snap!("state_loss_notice", r.text());
    kit.runner.close().await;
}

#[tokio::test]
async fn timeout_texts() {
    let kit = Kit::new();
    let r = kit.py_t("import time\nprint('waiting')\ntime.sleep(100)", 1).await;
    snap!("timeout_interrupted", r.text());
    kit.runner.close().await;
    let kit = Kit::with(|c| c.interrupt_grace = std::time::Duration::from_secs(1));
    let code = "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(100)";
    let r = kit.py_t(code, 1).await;
    snap!("timeout_killed", r.text());
    let r = kit.py("print('fresh')").await;
    snap!("timeout_killed_next_cell", r.text());
    kit.runner.close().await;
}

/// Three cells of 100 KiB (spec T5) where the last fails: ≤ 52 KiB inline, the traceback visible,
/// and one artifact holding every cell under its header.
#[tokio::test]
async fn three_large_cells_share_the_window_and_one_artifact() {
    let kit = Kit::new();
    let big = "for i in range(1000):\n    print(f'{i:05d} ' + 'y' * 96)";
    let r = kit
        .call(json!({"cells": [
            {"language": "py", "code": big},
            {"language": "py", "code": big, "title": "second"},
            {"language": "py", "code": format!("{big}\nraise ValueError('late failure')")}
        ]}))
        .await;
    assert!(r.is_error);
    let text = r.text();
    assert!(text.len() <= 52 * 1024, "{}", text.len());
    assert!(text.starts_with("Cell 3 failed: ValueError: late failure.\n"), "{}", &text[..200]);
    assert!(text.contains("ValueError: late failure\n["), "{}", &text[text.len() - 700..]);
    let uris: Vec<String> = (0..3)
        .map(|i| cell(&r, i)["truncation"]["artifact"].as_str().unwrap().to_string())
        .collect();
    let parsed: Vec<(ArtifactId, Option<String>)> =
        uris.iter().map(|u| ArtifactId::parse(u).unwrap()).collect();
    assert!(parsed.iter().all(|(id, _)| *id == parsed[0].0), "{uris:?}");
    assert_eq!(kit.store.list(100).len(), 1);
    for uri in &uris {
        assert!(text.contains(&format!("full output: {uri}")), "{uri} not in the text");
    }
    let mut all = String::new();
    kit.store.open_raw(&parsed[0].0).unwrap().read_to_string(&mut all).unwrap();
    let lines: Vec<&str> = all.lines().collect();
    assert!(lines[0].starts_with("--- Cell 1/3 [py] ok in "), "{}", lines[0]);
    // Each range holds exactly that cell's 1000 lines (plus the traceback for the last).
    let range = |q: &Option<String>| -> (usize, usize) {
        let (a, b) = q.as_deref().unwrap().strip_prefix("lines=").unwrap().split_once('-').unwrap();
        (a.parse().unwrap(), b.parse().unwrap())
    };
    let (a, b) = range(&parsed[1].1);
    assert_eq!(b - a + 1, 1000);
    assert!(lines[a - 2].starts_with("--- Cell 2/3 (second) [py] ok in "), "{}", lines[a - 2]);
    assert!(lines[a - 1].starts_with("00000 y"));
    let (a, b) = range(&parsed[2].1);
    assert!(lines[a - 1].starts_with("00000 y"));
    assert_eq!(lines[b - 1], "ValueError: late failure");
    let total: Value = cell(&r, 2)["truncation"]["total_bytes"].clone();
    assert!(total.as_u64().unwrap() > 100_000, "{total}");
    kit.runner.close().await;
}

/// Nothing cut: no artifact at all.
#[tokio::test]
async fn small_calls_write_no_artifact() {
    let kit = Kit::new();
    let r = kit
        .call(json!({"cells": [{"language": "py", "code": "print(1)"}, {"language": "py", "code": "2"}]}))
        .await;
    assert!(!r.is_error);
    assert_eq!(cell(&r, 0)["truncation"], Value::Null);
    assert!(kit.store.list(10).is_empty());
    kit.runner.close().await;
}
