//! The kernel cap (spec-eval.md E35) counted on real processes: kernels being started or
//! stopped count too, so concurrent calls on many sessions never overshoot it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use common::Kit;
use serde_json::json;

/// Live kernel processes started from this kit's cache directory (their runner lives there).
fn live_kernels(kit: &Kit) -> usize {
    let marker = kit.dir.path().join("cache").display().to_string();
    let Ok(dir) = std::fs::read_dir("/proc") else { return 0 };
    dir.filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().chars().all(|c| c.is_ascii_digit()))
        .filter(|e| {
            let pid: u32 = e.file_name().to_string_lossy().parse().unwrap_or(0);
            let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            String::from_utf8_lossy(&cmd).contains(&marker) && common::alive(pid)
        })
        .count()
}

/// Samples the live kernel count until `stop` is set; returns the highest count seen.
fn sampler(kit: Arc<Kit>, stop: Arc<AtomicBool>) -> tokio::task::JoinHandle<usize> {
    tokio::spawn(async move {
        let most = AtomicUsize::new(0);
        while !stop.load(Ordering::Relaxed) {
            most.fetch_max(live_kernels(&kit), Ordering::Relaxed);
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        most.fetch_max(live_kernels(&kit), Ordering::Relaxed);
        most.into_inner()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twelve_concurrent_sessions_never_exceed_the_cap() {
    let kit = Arc::new(Kit::new());
    let stop = Arc::new(AtomicBool::new(false));
    let most = sampler(kit.clone(), stop.clone());
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..12 {
        let kit = kit.clone();
        calls.spawn(async move {
            kit.call(json!({"session": format!("p{i}"),
                            "cells": [{"language": "py", "code": "import time\ntime.sleep(0.3)"}]}))
                .await
        });
    }
    let mut ok = 0;
    while let Some(r) = calls.join_next().await {
        let r = r.unwrap();
        if r.is_error {
            assert!(
                r.text().contains("all 4 Python kernels are busy; retry when a cell finishes"),
                "{}",
                r.text()
            );
        } else {
            ok += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let most = most.await.unwrap();
    assert!(ok >= 1, "no call succeeded");
    assert!(most <= 4, "{most} kernels were alive at once (cap 4)");
    assert!(kit.runner.pool().live(execkit_protocol::eval::Language::Py).await.len() <= 4);
    kit.runner.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cap_one_keeps_one_kernel_across_sessions_in_turn() {
    let kit = Arc::new(Kit::with(|c| {
        c.max_kernels = 1;
        // The pre-warmed default kernel races the first call for the only place.
        c.prewarm = true;
    }));
    let stop = Arc::new(AtomicBool::new(false));
    let most = sampler(kit.clone(), stop.clone());
    for (i, session) in ["A", "B", "A", "B", "A"].iter().enumerate() {
        let r = kit
            .call(json!({"session": session, "cells": [{"language": "py", "code": format!("v = {i}")}]}))
            .await;
        assert!(!r.is_error, "{}", r.text());
        assert_eq!(live_kernels(&kit), 1, "after call {i} on {session}");
    }
    stop.store(true, Ordering::Relaxed);
    assert_eq!(most.await.unwrap(), 1, "more than one kernel alive with cap 1");
    kit.runner.close().await;
}
