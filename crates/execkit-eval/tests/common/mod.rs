//! Shared setup: a real Supervisor, a private artifact store, the real python3.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use execkit_eval::{EvalConfig, EvalDeps, EvalRunner, ToolCallback};
use execkit_output::artifact::{ArtifactStore, StoreLimits};
use execkit_output::clamp::Limits;
use execkit_process::{CancellationToken, Supervisor, SupervisorConfig};
use execkit_protocol::{ToolResult, parse_params};
use execkit_tool::{CallContext, Lookup, Notes};
use serde_json::{Value, json};

pub struct Kit {
    pub runner: EvalRunner,
    pub dir: tempfile::TempDir,
    pub store: ArtifactStore,
    pub supervisor: Supervisor,
}

/// The test process's environment, as the binary saves it at start.
#[allow(clippy::disallowed_methods)] // tests start from the real environment on purpose
pub fn process_lookup() -> Lookup {
    Lookup::from_vars(std::env::vars_os())
}

pub fn config(dir: &Path) -> EvalConfig {
    let mut cfg = EvalConfig::from_lookup(&process_lookup(), &mut Notes::default()).unwrap();
    cfg.prewarm = false;
    cfg.cache_dir = dir.join("cache");
    cfg
}

impl Kit {
    pub fn new() -> Kit {
        Kit::with(|_| {})
    }

    pub fn with(edit: impl FnOnce(&mut EvalConfig)) -> Kit {
        Kit::with_callback(edit, None)
    }

    pub fn with_callback(
        edit: impl FnOnce(&mut EvalConfig),
        callback: Option<ToolCallback>,
    ) -> Kit {
        Kit::build(|cfg, deps| {
            edit(cfg);
            deps.tool_callback = callback;
        })
    }

    /// A kit whose config and deps the test adjusts before the runner is built.
    pub fn build(edit: impl FnOnce(&mut EvalConfig, &mut EvalDeps)) -> Kit {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("work")).unwrap();
        let supervisor = Supervisor::start(SupervisorConfig::default()).unwrap();
        let store =
            ArtifactStore::open(&dir.path().join("artifacts"), StoreLimits::default()).unwrap();
        let mut cfg = config(dir.path());
        let mut deps = EvalDeps {
            supervisor: supervisor.clone(),
            artifacts: Ok(store.clone()),
            limits: Limits::default(),
            lookup: process_lookup(),
            cwd: dir.path().join("work"),
            tools: vec!["bash".into(), "debug".into(), "job".into(), "ssh".into()],
            tool_callback: None,
        };
        edit(&mut cfg, &mut deps);
        let runner = EvalRunner::new(cfg, deps);
        Kit { runner, dir, store, supervisor }
    }

    pub async fn call(&self, args: Value) -> ToolResult {
        self.call_cancel(args, CancellationToken::new()).await
    }

    pub async fn call_cancel(&self, args: Value, cancel: CancellationToken) -> ToolResult {
        match parse_params(args) {
            Ok(p) => self.runner.call(p, &CallContext { progress: None, cancel }).await,
            Err(e) => ToolResult::error(e.to_string()),
        }
    }

    pub async fn py(&self, code: &str) -> ToolResult {
        self.call(json!({"cells": [{"language": "py", "code": code}]})).await
    }

    pub async fn js(&self, code: &str) -> ToolResult {
        self.call(json!({"cells": [{"language": "js", "code": code}]})).await
    }

    pub async fn js_t(&self, code: &str, timeout: u64) -> ToolResult {
        self.call(json!({"cells": [{"language": "js", "code": code, "timeout": timeout}]})).await
    }

    pub async fn py_t(&self, code: &str, timeout: u64) -> ToolResult {
        self.call(json!({"cells": [{"language": "py", "code": code, "timeout": timeout}]})).await
    }
}

pub fn cell(r: &ToolResult, i: usize) -> Value {
    r.structured_content.as_ref().unwrap()["cells"][i].clone()
}

pub fn alive(pid: u32) -> bool {
    // A zombie still has a /proc entry; state Z counts as gone.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat.rsplit(") ").next().unwrap_or("").starts_with('Z'),
        Err(_) => false,
    }
}

pub async fn gone_within(pid: u32, limit: Duration) -> bool {
    let until = std::time::Instant::now() + limit;
    while std::time::Instant::now() < until {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    !alive(pid)
}

pub fn echo_callback() -> ToolCallback {
    Arc::new(|name, args| {
        Box::pin(async move {
            if args.get("fail").is_some() {
                return ToolResult::error(format!("{name} failed on purpose"));
            }
            if let Some(ms) = args.get("sleep_ms").and_then(Value::as_u64) {
                tokio::time::sleep(Duration::from_millis(ms)).await;
            }
            ToolResult {
                content: vec![execkit_protocol::Content::text(format!("{name} says {args}"))],
                structured_content: Some(json!({"ok": true})),
                is_error: false,
            }
        })
    })
}
