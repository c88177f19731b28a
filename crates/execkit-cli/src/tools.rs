//! `execkit tools`: the tool list with JSON schemas, in the shape each agent API expects.

use std::path::Path;

use clap::{Args, ValueEnum};
use execkit::ToolFormat;
use serde_json::Value;

use crate::common::{self, EXIT_OK};

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

impl From<Format> for ToolFormat {
    fn from(format: Format) -> ToolFormat {
        match format {
            Format::Mcp => ToolFormat::Mcp,
            Format::Openai => ToolFormat::Openai,
            Format::Gemini => ToolFormat::Gemini,
            Format::Anthropic => ToolFormat::Anthropic,
        }
    }
}

pub async fn run(cwd: Option<&Path>, args: ToolsArgs) -> anyhow::Result<i32> {
    let toolkit = common::cli_toolkit(cwd)?;
    let specs = toolkit.tools();
    for (name, why) in toolkit.unlisted_tools() {
        eprintln!("execkit: {name} is not listed: {why}");
    }
    toolkit.close().await;
    let list: Vec<Value> = specs.iter().map(|spec| spec.render(args.format.into())).collect();
    common::print_text(&serde_json::to_string_pretty(&list)?)?;
    Ok(EXIT_OK)
}
