//! Wording of summaries, crash notes and announcements (spec-eval.md E13, E34, P18) and the
//! session name rule (E1).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::{Kit, cell};
use execkit_process::CancellationToken;
use serde_json::json;

#[tokio::test]
async fn an_exception_without_a_message_has_no_dangling_colon() {
    let kit = Kit::new();
    let r = kit.py("raise KeyboardInterrupt").await;
    let first = r.text().lines().next().unwrap().to_string();
    assert_eq!(first, "Cell 1 failed: KeyboardInterrupt.");
    let r = kit.py("raise ValueError()").await;
    assert_eq!(r.text().lines().next().unwrap(), "Cell 1 failed: ValueError.");
    kit.runner.close().await;
}

#[tokio::test]
async fn a_kernel_killed_by_a_signal_is_described_grammatically() {
    let kit = Kit::new();
    let r = kit.py("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)").await;
    let text = r.text();
    assert!(text.starts_with("Cell 1 crashed: the Python kernel was killed by SIGKILL."), "{text}");
    assert!(text.contains("[the Python kernel was killed by SIGKILL during this cell;"), "{text}");
    kit.runner.close().await;
}

#[tokio::test]
async fn a_cancelled_cell_that_ignored_the_interrupt_is_announced_as_cancelled() {
    let kit = Kit::with(|c| c.interrupt_grace = Duration::from_secs(1));
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        trigger.cancel();
    });
    let code = "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('ready')\ntime.sleep(100)";
    let r = kit.call_cancel(json!({"cells": [{"language": "py", "code": code}]}), cancel).await;
    assert_eq!(cell(&r, 0)["status"], "cancelled", "{}", r.text());
    let r = kit.py("print('fresh')").await;
    let text = r.text();
    assert!(!text.contains("after a timeout"), "{text}");
    assert!(
        text.starts_with("[Python kernel restarted: the previous kernel was killed after its cell was cancelled and ignored the interrupt;"),
        "{text}"
    );
    kit.runner.close().await;
}

#[tokio::test]
async fn an_empty_session_name_is_rejected() {
    let kit = Kit::new();
    let r = kit.call(json!({"session": "", "cells": [{"language": "py", "code": "1"}]})).await;
    assert!(r.is_error);
    assert_eq!(r.text(), "session: must match ^[A-Za-z0-9._-]{1,64}$");
    kit.runner.close().await;
}
