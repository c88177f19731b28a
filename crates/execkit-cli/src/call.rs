//! `execkit call <tool> '<json>'`: one tool call, the ToolResult JSON on stdout.

use std::io::Read as _;
use std::path::Path;

use anyhow::Context as _;
use clap::Args;
use execkit::{Approver, CallContext, ToolResult, Toolkit};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::common::{self, EXIT_FAILURE, EXIT_OK, ShutdownSignals};
use crate::live::Live;

#[derive(Debug, Args)]
#[command(long_about = "Run one tool call and print its result as JSON: \
    {content, structuredContent, isError}, exactly what the MCP server returns.\n\n\
    Exit status: 0 when isError is false, 1 when it is true, 2 on a usage error (bad JSON, \
    missing arguments), 128+N when signal N (SIGINT, SIGTERM, SIGHUP) cancelled the call.\n\n\
    Example: execkit call bash '{\"command\": \"ls -la\"}'")]
pub struct CallArgs {
    /// The tool to call (see `execkit tools`).
    tool: String,
    /// The arguments as a JSON object, or `-` to read them from stdin.
    #[arg(value_name = "JSON")]
    args: String,
}

pub async fn run(cwd: Option<&Path>, args: CallArgs) -> anyhow::Result<i32> {
    let json = if args.args == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("failed to read the arguments from stdin")?;
        text
    } else {
        args.args
    };
    let value: Value = match serde_json::from_str(&json) {
        Ok(value) => value,
        Err(err) => return common::usage(format!("the arguments are not valid JSON: {err}")),
    };
    let toolkit = one_shot_toolkit(cwd)?;
    // The JSON result alone goes to stdout; a terminal gets the status line on stderr.
    let live = Live::new(false);
    let outcome = call_interruptible(&toolkit, &args.tool, value, Some(&live), None).await;
    toolkit.close().await;
    let (result, interrupted) = outcome?;
    common::print_text(&serde_json::to_string_pretty(&result)?)?;
    Ok(match interrupted {
        Some(signo) => common::signal_status(signo),
        None if result.is_error => EXIT_FAILURE,
        None => EXIT_OK,
    })
}

/// The Toolkit of a front end whose process ends with its one call: as `common::toolkit`, but bash
/// refuses `async` and stops processes a command leaves running, saying why, instead of
/// promising a background job that would die with the process.
pub fn one_shot_toolkit(cwd: Option<&Path>) -> anyhow::Result<Toolkit> {
    common::build(Toolkit::builder().subreaper(true).one_shot(true).prewarm(false), cwd)
}

/// Runs one call; SIGINT, SIGTERM or SIGHUP cancels it (killing what it started) and the
/// cancelled result still comes back, with the signal number. With `live`, its progress goes
/// there and its status line runs until the call ends.
pub async fn call_interruptible(
    toolkit: &Toolkit,
    name: &str,
    args: Value,
    live: Option<&Live>,
    approver: Option<Approver>,
) -> anyhow::Result<(ToolResult, Option<i32>)> {
    let mut signals = ShutdownSignals::install()?;
    let cancel = CancellationToken::new();
    let progress = live.map(Live::progress);
    let ctx = CallContext { progress, cancel: cancel.clone() };
    let call = toolkit.call_with_approver(name, args, ctx, approver);
    let status_done = CancellationToken::new();
    let status = async {
        if let Some(live) = live {
            live.run_status(status_done.clone()).await;
        }
    };
    let (outcome, ()) = tokio::join!(
        async {
            let outcome = interruptible(call, &mut signals, &cancel).await;
            status_done.cancel();
            outcome
        },
        status
    );
    Ok(outcome)
}

/// Awaits `call`, cancelling it on the first shutdown signal.
async fn interruptible(
    call: impl std::future::Future<Output = ToolResult>,
    signals: &mut ShutdownSignals,
    cancel: &CancellationToken,
) -> (ToolResult, Option<i32>) {
    tokio::pin!(call);
    let mut interrupted = None;
    let result = loop {
        tokio::select! {
            result = &mut call => break result,
            signo = signals.recv(), if interrupted.is_none() => {
                interrupted = Some(signo);
                cancel.cancel();
            }
        }
    };
    (result, interrupted)
}
