//! The tool list in the shape each agent API expects: MCP, OpenAI, Anthropic and Gemini.
//!
//! Every front end (the CLI's `execkit tools --format`, the Python module's `tools(format=)`)
//! renders through here, so a tool definition reads the same wherever it is handed to a model.

mod gemini;
mod openai;

use serde_json::{Value, json};

use crate::tools::ToolSpec;

/// A tool-definition format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolFormat {
    /// `{name, description, inputSchema}`, as MCP tools/list returns it.
    Mcp,
    /// `{type: "function", function: {name, description, parameters, strict}}`; `strict` is
    /// true only for a schema that meets strict mode's rules.
    Openai,
    /// `{name, description, input_schema}`.
    Anthropic,
    /// `{name, description, parameters}` function declarations in Gemini's schema subset.
    Gemini,
}

impl ToolFormat {
    pub const ALL: [ToolFormat; 4] =
        [ToolFormat::Mcp, ToolFormat::Openai, ToolFormat::Anthropic, ToolFormat::Gemini];

    pub fn name(self) -> &'static str {
        match self {
            ToolFormat::Mcp => "mcp",
            ToolFormat::Openai => "openai",
            ToolFormat::Anthropic => "anthropic",
            ToolFormat::Gemini => "gemini",
        }
    }

    /// The format called `name`, or a one-line error listing the formats.
    pub fn from_name(name: &str) -> Result<ToolFormat, String> {
        ToolFormat::ALL.into_iter().find(|f| f.name() == name).ok_or_else(|| {
            let known: Vec<&str> = ToolFormat::ALL.iter().map(|f| f.name()).collect();
            format!("unknown tool format \"{name}\"; one of {}", known.join(", "))
        })
    }
}

impl ToolSpec {
    /// This tool's definition in `format`.
    pub fn render(&self, format: ToolFormat) -> Value {
        match format {
            ToolFormat::Mcp => json!({
                "name": self.name,
                "description": self.description,
                "inputSchema": self.input_schema,
            }),
            ToolFormat::Openai => {
                openai::definition(&self.name, &self.description, &self.input_schema)
            }
            ToolFormat::Anthropic => json!({
                "name": self.name,
                "description": self.description,
                "input_schema": self.input_schema,
            }),
            ToolFormat::Gemini => {
                gemini::declaration(&self.name, &self.description, &self.input_schema)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_lists_the_formats() {
        for format in ToolFormat::ALL {
            assert_eq!(ToolFormat::from_name(format.name()), Ok(format));
        }
        let err = ToolFormat::from_name("xml").unwrap_err();
        assert_eq!(err, "unknown tool format \"xml\"; one of mcp, openai, anthropic, gemini");
    }
}
