//! The echo tool's runner.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use execkit_protocol::ToolResult;
use execkit_tool::CallContext;

use super::config::EchoConfig;
use super::request::{EchoParams, resolve};
use super::result::EchoOutcome;

/// What the Toolkit hands the echo tool. A real tool takes its supervisor, artifact store,
/// limits, lookup, base directory or job table from here.
#[derive(Debug, Clone)]
pub struct EchoDeps {
    pub cwd: std::path::PathBuf,
}

#[derive(Debug, Clone)]
pub struct EchoRunner {
    config: EchoConfig,
    deps: EchoDeps,
    calls: Arc<AtomicU64>,
}

impl EchoRunner {
    pub fn new(config: EchoConfig, deps: EchoDeps) -> EchoRunner {
        EchoRunner { config, deps, calls: Arc::default() }
    }

    pub async fn call(&self, params: EchoParams, ctx: &CallContext) -> ToolResult {
        let request = match resolve(params, &self.config) {
            Ok(request) => request,
            Err(err) => return ToolResult::error(err.to_string()),
        };
        self.calls.fetch_add(1, Ordering::Relaxed);
        let outcome = if ctx.cancel.is_cancelled() {
            EchoOutcome::Cancelled
        } else {
            EchoOutcome::Echoed(vec![request.text; request.repeat as usize])
        };
        outcome.into_result()
    }

    pub fn doctor(&self) -> Vec<String> {
        vec![
            format!("max repeat: {}", self.config.max_repeat),
            format!("calls: {}", self.calls.load(Ordering::Relaxed)),
            format!("directory: {}", self.deps.cwd.display()),
        ]
    }

    pub async fn close(&self) {}
}
