//! `execkit bash <command...>`: the bash tool for people, readable text on stdout.

use std::path::Path;

use clap::Args;
use execkit::{ToolResult, Toolkit};
use serde_json::{Map, Value, json};

use crate::call::{call_interruptible, one_shot_toolkit};
use crate::common::{self, EXIT_FAILURE, EXIT_OK};
use crate::live::Live;

#[derive(Debug, Args)]
#[command(long_about = "Run a bash command through the bash tool and print what the model \
    would read: the output window, notices and the outcome line.\n\n\
    Several words are joined with spaces: `execkit bash ls /tmp` runs `ls /tmp`. Quote a \
    command with words starting with `-` (`execkit bash 'ls -la' --timeout 10`) or put it \
    after `--` (`execkit bash --timeout 10 -- ls -la`).\n\n\
    Exit status: the command's own exit code when it failed with one (1..255), otherwise 0 on \
    success and 1 on any other failure (timeout, signal, waiting for input, invalid argument); \
    128+N when signal N (SIGINT, SIGTERM, SIGHUP) cancelled the call.\n\n\
    With --async the command starts as a background job: its id and live artifact are printed \
    at once, then execkit waits for the job and prints its result (it stops the job if execkit \
    itself is stopped).\n\n\
    With --escalate REASON the command asks to run outside the sandbox (when execkit is \
    confined): the request is shown on stderr and runs only if the person at the terminal \
    answers y. Without a terminal on stdin it is refused and nothing runs.")]
pub struct BashArgs {
    /// The command to run.
    #[arg(required = true, num_args = 1.., value_name = "COMMAND")]
    pub(crate) command: Vec<String>,
    /// Timeout in seconds (default 300, 1..3600).
    #[arg(long, value_name = "S")]
    pub(crate) timeout: Option<f64>,
    /// Run under a pseudo-terminal.
    #[arg(long)]
    pub(crate) pty: bool,
    /// Start as a background job, print its id and artifact, then wait for it.
    #[arg(long = "async")]
    pub(crate) background: bool,
    /// Ask to run outside the sandbox for this reason; a person at the terminal approves.
    #[arg(long, value_name = "REASON")]
    pub(crate) escalate: Option<String>,
}

impl BashArgs {
    /// The words of the command joined with spaces.
    fn command_line(&self) -> String {
        self.command.join(" ")
    }
}

pub async fn run(cwd: Option<&Path>, args: BashArgs) -> anyhow::Result<i32> {
    let mut params = Map::new();
    params.insert("command".into(), Value::String(args.command_line()));
    if let Some(timeout) = args.timeout {
        params.insert("timeout".into(), json!(timeout));
    }
    if args.pty {
        params.insert("pty".into(), Value::Bool(true));
    }
    if args.background {
        params.insert("async".into(), Value::Bool(true));
    }
    if let Some(reason) = &args.escalate {
        params.insert("sandbox_permissions".into(), json!("require_escalated"));
        params.insert("justification".into(), json!(reason));
    }
    let escalating = args.escalate.is_some();
    // With --async this process waits for the job itself, so the job can live; otherwise the
    // call is one-shot and processes left running are stopped with the reason said.
    let toolkit = if args.background { common::cli_toolkit(cwd)? } else { one_shot_toolkit(cwd)? };
    let outcome = run_and_print(&toolkit, Value::Object(params), escalating).await;
    toolkit.close().await;
    outcome
}

async fn run_and_print(toolkit: &Toolkit, params: Value, escalating: bool) -> anyhow::Result<i32> {
    // The output is printed as it arrives, then the rest of the result (its footer). A call
    // that may ask the person draws no status line: it would overwrite the question.
    let live = if escalating { Live::new(true).without_status() } else { Live::new(true) };
    let approver = if escalating { crate::tty_approve::approver() } else { None };
    let (result, interrupted) =
        call_interruptible(toolkit, "bash", params, Some(&live), approver).await?;
    live.print_rest(&result.text())?;
    if let Some(signo) = interrupted {
        return Ok(common::signal_status(signo));
    }
    let job_id = structured_str(&result, "job_id");
    match job_id {
        Some(job_id) if !result.is_error => wait_for_job(toolkit, &job_id).await,
        _ => Ok(exit_status(&result, result.structured_content.as_ref())),
    }
}

/// Polls the job until it is no longer running, then prints its result.
async fn wait_for_job(toolkit: &Toolkit, job_id: &str) -> anyhow::Result<i32> {
    loop {
        let poll = json!({"poll": [job_id]});
        let (result, interrupted) = call_interruptible(toolkit, "job", poll, None, None).await?;
        if let Some(signo) = interrupted {
            return Ok(common::signal_status(signo));
        }
        let job = result
            .structured_content
            .as_ref()
            .and_then(|s| s.get("jobs"))
            .and_then(Value::as_array)
            .and_then(|jobs| {
                jobs.iter().find(|j| j.get("id").and_then(Value::as_str) == Some(job_id))
            })
            .cloned();
        let Some(job) = job else {
            // The job is unknown (a bad id or already forgotten): show why and stop.
            print_text(&result)?;
            return Ok(EXIT_FAILURE);
        };
        if job.get("state").and_then(Value::as_str) != Some("running") {
            print_text(&result)?;
            return Ok(exit_status(&result, Some(&job)));
        }
    }
}

/// 0 without `isError`; else the command's exit code when it is 1..255; else 1.
fn exit_status(result: &ToolResult, details: Option<&Value>) -> i32 {
    if !result.is_error {
        return EXIT_OK;
    }
    details
        .and_then(|d| d.get("exit_code"))
        .and_then(Value::as_i64)
        .and_then(|code| i32::try_from(code).ok())
        .filter(|code| (1..=255).contains(code))
        .unwrap_or(EXIT_FAILURE)
}

fn structured_str(result: &ToolResult, key: &str) -> Option<String> {
    let value = result.structured_content.as_ref()?.get(key)?;
    value.as_str().map(str::to_owned)
}

fn print_text(result: &ToolResult) -> anyhow::Result<()> {
    common::print_text(&result.text())
}
