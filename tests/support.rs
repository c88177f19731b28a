//! Shared helpers for the integration tests: a Toolkit per test with its own artifact store.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use execkit::{CallContext, Progress, ToolResult, Toolkit};
use serde_json::Value;
use tempfile::TempDir;

/// A Toolkit whose artifacts and working directory live in temporary directories.
pub struct Kit {
    pub toolkit: Toolkit,
    pub dir: TempDir,
}

impl Kit {
    pub fn new() -> Kit {
        Kit::with_vars(&[])
    }

    pub fn with_vars(vars: &[(&str, &str)]) -> Kit {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("work")).expect("work dir");
        let mut builder = Toolkit::builder()
            .cwd(dir.path().join("work"))
            .var("EXECKIT_ARTIFACT_DIR", dir.path().join("artifacts").to_string_lossy())
            .var("EXECKIT_BASH_SNAPSHOT", "off")
            .var("EXECKIT_AUDIT", "0");
        for (name, value) in vars {
            builder = builder.var(*name, *value);
        }
        let toolkit = builder.build().expect("toolkit");
        Kit { toolkit, dir }
    }

    pub fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    pub async fn call(&self, tool: &str, args: Value) -> ToolResult {
        self.toolkit.call(tool, args, CallContext::default()).await
    }

    pub async fn bash(&self, args: Value) -> Outcome {
        Outcome(self.call("bash", args).await)
    }

    /// Runs a call and collects its progress events.
    pub async fn bash_with_progress(&self, args: Value) -> (Outcome, Vec<Progress>) {
        let events = Arc::new(Mutex::new(Vec::new()));
        let sink = events.clone();
        let ctx = CallContext {
            progress: Some(Arc::new(move |p| sink.lock().expect("lock").push(p))),
            ..CallContext::default()
        };
        let result = self.toolkit.call("bash", args, ctx).await;
        let events = events.lock().expect("lock").clone();
        (Outcome(result), events)
    }

    /// The bytes stored for an artifact URI.
    pub fn artifact_bytes(&self, uri: &str) -> Vec<u8> {
        let store = self.toolkit.artifacts().expect("artifacts on");
        let (id, _) = execkit::ArtifactId::parse(uri).expect("artifact uri");
        std::fs::read(store.out_path(&id).expect("artifact path")).expect("artifact read")
    }
}

/// A ToolResult with accessors for tests.
#[derive(Debug)]
pub struct Outcome(pub ToolResult);

impl Outcome {
    pub fn text(&self) -> String {
        self.0.text()
    }

    pub fn is_error(&self) -> bool {
        self.0.is_error
    }

    pub fn field(&self, name: &str) -> Value {
        self.0.structured_content.as_ref().and_then(|s| s.get(name)).cloned().unwrap_or(Value::Null)
    }
}

/// True while `pid` names a live (non-zombie) process.
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// Waits up to `secs` for `pid` to be gone.
pub async fn gone_within(pid: u32, secs: u64) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while std::time::Instant::now() < deadline {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    !alive(pid)
}

/// Pids of live processes whose command line starts with `marker`.
pub fn pids_with(marker: &str) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else { return out };
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else { continue };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.starts_with(marker) && alive(pid) {
            out.push(pid);
        }
    }
    out
}
