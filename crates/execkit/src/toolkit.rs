//! The Toolkit: configuration, runners and their long-lived state.

use std::path::PathBuf;
use std::sync::Arc;

use execkit_output::artifact::ArtifactStore;
use execkit_protocol::{Progress, ToolResult};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::tools::ToolSpec;

/// Receives progress events while a call runs (at most every 100 ms).
pub type ProgressFn = Arc<dyn Fn(Progress) + Send + Sync>;

/// Per-call context from the front end. Cancelling `cancel` (or dropping the call's future)
/// kills whatever the call started.
#[derive(Clone, Default)]
pub struct CallContext {
    pub progress: Option<ProgressFn>,
    pub cancel: CancellationToken,
}

/// Builds a [`Toolkit`].
#[derive(Debug, Default)]
pub struct ToolkitBuilder {
    cwd: Option<PathBuf>,
    subreaper: bool,
}

impl ToolkitBuilder {
    /// The base working directory (default: the process cwd).
    pub fn cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }

    /// Make this process a child subreaper (the `execkit` binary does).
    pub fn subreaper(mut self, on: bool) -> Self {
        self.subreaper = on;
        self
    }

    /// Reads the `EXECKIT_*` knobs and starts the supervisor. Must run inside a tokio runtime.
    pub fn build(self) -> Result<Toolkit, String> {
        todo!()
    }
}

/// One section of `execkit doctor`.
#[derive(Debug, Clone)]
pub struct DoctorSection {
    pub title: String,
    pub lines: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Doctor {
    pub sections: Vec<DoctorSection>,
}

/// The dispatcher. Cheap to clone; every clone serves the same state.
#[derive(Clone)]
pub struct Toolkit {
    _private: Arc<()>,
}

impl Toolkit {
    pub fn builder() -> ToolkitBuilder {
        ToolkitBuilder::default()
    }

    /// Runs one tool call. Never panics; invalid calls come back as `isError` results.
    pub async fn call(&self, name: &str, args: Value, ctx: CallContext) -> ToolResult {
        let _ = (name, args, ctx);
        todo!()
    }

    /// The tool list with JSON schemas.
    pub fn tools(&self) -> Vec<ToolSpec> {
        todo!()
    }

    /// The artifact store, or why artifacts are off.
    pub fn artifacts(&self) -> Result<&ArtifactStore, &str> {
        todo!()
    }

    pub fn doctor(&self) -> Doctor {
        todo!()
    }

    /// Kills every live process tree and job; returns within kill grace + 1 s.
    pub async fn close(&self) {
        todo!()
    }
}
