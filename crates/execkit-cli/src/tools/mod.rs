//! `execkit tools`: the tool list with JSON schemas, in the shape each agent API expects.

use std::path::Path;

use clap::{Args, ValueEnum};
use execkit::ToolSpec;
use serde_json::{Value, json};

use crate::common::{self, EXIT_OK};

mod gemini;
mod openai;

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
    /// `{type: "function", function: {name, description, parameters, strict}}`; `strict` is
    /// true only for a schema that meets strict mode's rules.
    Openai,
    /// `{name, description, parameters}` function declarations in Gemini's schema subset.
    Gemini,
    /// `{name, description, input_schema}`.
    Anthropic,
}

pub async fn run(cwd: Option<&Path>, args: ToolsArgs) -> anyhow::Result<i32> {
    let toolkit = common::cli_toolkit(cwd)?;
    let specs = toolkit.tools();
    for (name, why) in toolkit.unlisted_tools() {
        eprintln!("execkit: {name} is not listed: {why}");
    }
    toolkit.close().await;
    let list: Vec<Value> = specs.iter().map(|spec| render(spec, args.format)).collect();
    common::print_text(&serde_json::to_string_pretty(&list)?)?;
    Ok(EXIT_OK)
}

fn render(spec: &ToolSpec, format: Format) -> Value {
    match format {
        Format::Mcp => json!({
            "name": spec.name,
            "description": spec.description,
            "inputSchema": spec.input_schema,
        }),
        Format::Openai => openai::definition(&spec.name, &spec.description, &spec.input_schema),
        Format::Gemini => gemini::declaration(&spec.name, &spec.description, &spec.input_schema),
        Format::Anthropic => json!({
            "name": spec.name,
            "description": spec.description,
            "input_schema": spec.input_schema,
        }),
    }
}
