//! The result of one tool call, shaped exactly like an MCP `CallToolResult`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One block of what the model reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Content {
    Text {
        text: String,
    },
    Image {
        /// Base64 of the image bytes.
        data: String,
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
}

impl Content {
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into() }
    }
}

/// `{content, structuredContent, isError}`, as the MCP server, CLI and Python module return it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    pub content: Vec<Content>,
    #[serde(rename = "structuredContent", default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    #[serde(rename = "isError")]
    pub is_error: bool,
}

impl ToolResult {
    /// A failure the model must notice, with one line of text and no structured details.
    pub fn error(text: impl Into<String>) -> Self {
        ToolResult { content: vec![Content::text(text)], structured_content: None, is_error: true }
    }

    /// The concatenated text blocks, for people and tests.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for block in &self.content {
            if let Content::Text { text } = block {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(text);
            }
        }
        out
    }
}
