//! The echo tool's typed outcome, and the result the model reads.

use execkit_protocol::{Content, ToolResult};

pub(crate) enum EchoOutcome {
    Echoed(Vec<String>),
    Cancelled,
}

impl EchoOutcome {
    pub(crate) fn into_result(self) -> ToolResult {
        match self {
            EchoOutcome::Echoed(lines) => ToolResult {
                content: vec![Content::text(lines.join("\n"))],
                structured_content: None,
                is_error: false,
            },
            EchoOutcome::Cancelled => ToolResult::error("The call was cancelled"),
        }
    }
}
