//! The debug tool's side: one Toolkit, the case's breakpoint set once, calls through
//! `Toolkit::call("debug", …)` as an agent makes them.

use std::path::Path;

use execkit::{CallContext, ToolResult, Toolkit};
use serde_json::{Value, json};

use super::programs::Case;

pub struct Tool {
    toolkit: Toolkit,
}

impl Tool {
    /// A Toolkit in `dir` with `vars` set, and the case's breakpoint in its breakpoint set.
    pub async fn new(dir: &Path, case: &Case, vars: &[(&str, &str)]) -> Result<Tool, String> {
        let mut builder = Toolkit::builder()
            .cwd(dir)
            .var("EXECKIT_ARTIFACT_DIR", dir.join("artifacts").to_string_lossy());
        for (name, value) in vars {
            builder = builder.var(*name, *value);
        }
        let tool = Tool { toolkit: builder.build()? };
        tool.call(json!({"action": "set_breakpoint", "file": case.source, "line": case.line}))
            .await?;
        Ok(tool)
    }

    async fn call(&self, args: Value) -> Result<ToolResult, String> {
        let result = self.toolkit.call("debug", args, CallContext::default()).await;
        match result.is_error {
            true => Err(result.text()),
            false => Ok(result),
        }
    }

    /// `launch` to the breakpoint: the launch result, plus a `continue` when the stop came
    /// after the launch's own first-stop wait.
    pub async fn launch_to_stop(&self, case: &Case) -> Result<(), String> {
        let args = json!({"action": "launch", "adapter": case.adapter, "program": case.program,
            "stop_on_entry": false, "timeout": 120});
        let launched = self.call(args).await?;
        if state(&launched, "session", "status") != "stopped" {
            let resumed = self.call(json!({"action": "continue", "timeout": 120})).await?;
            if state(&resumed, "state", "") != "stopped" {
                return Err(format!("launch did not stop: {}", resumed.text()));
            }
        }
        Ok(())
    }

    /// Clears the breakpoint in the live session (and so for the next launches too).
    pub async fn clear_breakpoints(&self, case: &Case) -> Result<(), String> {
        let args = json!({"action": "remove_breakpoint", "file": case.source, "line": case.line});
        self.call(args).await.map(drop)
    }

    pub async fn restore_breakpoint(&self, case: &Case) -> Result<(), String> {
        let args = json!({"action": "set_breakpoint", "file": case.source, "line": case.line});
        self.call(args).await.map(drop)
    }

    pub async fn step(&self) -> Result<(), String> {
        let step = self.call(json!({"action": "step_over", "timeout": 60})).await?;
        match state(&step, "state", "") {
            "stopped" => Ok(()),
            other => Err(format!("step ended {other}: {}", step.text())),
        }
    }

    /// A call that sends the adapter nothing (`output` with no new output): the tool's own
    /// fixed cost per result, parsing to rendering.
    pub async fn floor_call(&self) -> Result<(), String> {
        self.call(json!({"action": "output"})).await.map(drop)
    }

    pub async fn terminate(&self) {
        let _ = self.call(json!({"action": "terminate"})).await;
    }

    pub async fn close(self) {
        self.toolkit.close().await;
    }
}

/// `structuredContent[key]` (or `[key][inner]`) as text.
fn state<'a>(result: &'a ToolResult, key: &str, inner: &str) -> &'a str {
    let Some(fields) = result.structured_content.as_ref() else { return "" };
    let value = if inner.is_empty() { &fields[key] } else { &fields[key][inner] };
    value.as_str().unwrap_or("")
}
