//! The closed set of tools and their published schemas.

use serde::Serialize;
use serde_json::Value;

/// Every tool execkit serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    Bash,
    Job,
}

impl Tool {
    pub const ALL: [Tool; 2] = [Tool::Bash, Tool::Job];

    pub fn name(self) -> &'static str {
        match self {
            Tool::Bash => "bash",
            Tool::Job => "job",
        }
    }

    pub fn from_name(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|t| t.name() == name)
    }
}

/// A tool as listed to clients: name, description, JSON schema of its arguments.
#[derive(Debug, Clone, Serialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    #[serde(rename = "inputSchema")]
    pub input_schema: Value,
}
