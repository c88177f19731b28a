//! `execkit eval --py '<code>'`: Python cells for people, readable text on stdout.

use std::path::Path;

use clap::Args;
use serde_json::{Value, json};

use crate::call::call_interruptible;
use crate::common::{self, EXIT_FAILURE, EXIT_OK};
use crate::live::Live;

#[derive(Debug, Args)]
#[command(long_about = "Run Python cells through the eval tool and print what the model would \
    read.\n\n\
    Each --py is one cell, run in order in one kernel; the first failing cell stops the rest. \
    `-` reads a cell from stdin. The kernel lives as long as this command, so state does not \
    carry over between invocations (use `execkit mcp` for a persistent session).\n\n\
    Exit status: 0 when every cell succeeded, 1 otherwise, 128+N when signal N cancelled the \
    call.")]
pub struct EvalArgs {
    /// Python source of one cell (repeatable; `-` reads the cell from stdin).
    #[arg(long = "py", value_name = "CODE", required = true)]
    pub(crate) cells: Vec<String>,
    /// Timeout in seconds for each cell (default 30, 1..600).
    #[arg(long, value_name = "S")]
    pub(crate) timeout: Option<f64>,
}

pub async fn run(cwd: Option<&Path>, args: EvalArgs) -> anyhow::Result<i32> {
    let mut cells = Vec::new();
    for code in args.cells {
        let code = if code == "-" { std::io::read_to_string(std::io::stdin())? } else { code };
        let mut cell = json!({"language": "py", "code": code});
        if let (Some(timeout), Some(object)) = (args.timeout, cell.as_object_mut()) {
            object.insert("timeout".into(), json!(timeout));
        }
        cells.push(cell);
    }
    let toolkit = common::cli_toolkit(cwd)?;
    // One cell's output streams as it arrives; several cells print their headed text at the end.
    let live = Live::new(cells.len() == 1);
    let args = json!({"cells": Value::Array(cells)});
    let outcome = call_interruptible(&toolkit, "eval", args, Some(&live), None).await;
    toolkit.close().await;
    let (result, interrupted) = outcome?;
    live.print_rest(&result.text())?;
    Ok(match interrupted {
        Some(signo) => common::signal_status(signo),
        None if result.is_error => EXIT_FAILURE,
        None => EXIT_OK,
    })
}
