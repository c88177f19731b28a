//! `execkit tools`: the tool list with JSON schemas, in the shape each agent API expects.

use std::path::Path;

use clap::{Args, ValueEnum};
use execkit::ToolSpec;
use serde_json::{Value, json};

use crate::run::{self, EXIT_OK};

#[derive(Debug, Args)]
pub struct ToolsArgs {
    /// The tool-definition format.
    #[arg(long, value_enum, default_value_t = Format::Mcp)]
    format: Format,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// `{name, description, inputSchema}`, as MCP tools/list returns it.
    Mcp,
    /// `{type: "function", function: {name, description, parameters}}`.
    Openai,
    /// `{name, description, input_schema}`.
    Anthropic,
}

pub async fn run(cwd: Option<&Path>, args: ToolsArgs) -> anyhow::Result<i32> {
    let toolkit = run::toolkit(cwd)?;
    let specs = toolkit.tools();
    toolkit.close().await;
    let list: Vec<Value> = specs.iter().map(|spec| render(spec, args.format)).collect();
    run::print_text(&serde_json::to_string_pretty(&list)?)?;
    Ok(EXIT_OK)
}

fn render(spec: &ToolSpec, format: Format) -> Value {
    match format {
        Format::Mcp => json!({
            "name": spec.name,
            "description": spec.description,
            "inputSchema": spec.input_schema,
        }),
        Format::Openai => json!({
            "type": "function",
            "function": {
                "name": spec.name,
                "description": spec.description,
                "parameters": spec.input_schema,
            },
        }),
        Format::Anthropic => json!({
            "name": spec.name,
            "description": spec.description,
            "input_schema": spec.input_schema,
        }),
    }
}
