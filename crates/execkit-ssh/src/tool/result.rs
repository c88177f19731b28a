//! The ssh tool's typed outcome, and the one place it becomes the ToolResult: the output
//! window, the footer naming the artifact, the notices, then the line saying how the command
//! ended (spec-ssh S32–S35, S37).

use execkit_output::sink::SinkSummary;
use execkit_protocol::{Content, ToolResult};
use serde_json::{Value, json};

use crate::error::SshError;
use crate::group::{HostResult, group_summary};
use crate::run::{RunEnd, RunOutcome};

/// One host's part of a call: what ran, and its sink's summary.
#[derive(Debug)]
pub(crate) struct HostRun {
    pub host: String,
    pub result: Result<RunOutcome, SshError>,
    pub summary: SinkSummary,
    pub timeout_s: u64,
}

/// How a call ended, before any text exists.
#[derive(Debug)]
pub(crate) enum SshOutcome {
    One {
        run: Box<HostRun>,
        notices: Vec<String>,
    },
    Group {
        runs: Vec<HostRun>,
        notices: Vec<String>,
    },
    /// Nothing ran: an argument or a name was refused for the whole call.
    Refused(String),
}

impl HostRun {
    fn succeeded(&self) -> bool {
        self.result.as_ref().is_ok_and(RunOutcome::success)
    }

    /// The last line, for anything but exit 0.
    fn outcome_line(&self) -> Option<String> {
        let name = &self.host;
        let out = match &self.result {
            Err(err) => return Some(err.to_string()),
            Ok(out) => out,
        };
        let stopped = if out.remote_killed {
            " The remote process group was terminated."
        } else {
            " The remote command may still be running."
        };
        match out.end {
            RunEnd::Exited(0) => None,
            RunEnd::Exited(code) => Some(format!("Command exited with code {code}")),
            RunEnd::NoStatus => Some(format!(
                "Command ended without an exit status on {name} (killed by a signal or the connection dropped)."
            )),
            RunEnd::TimedOut => {
                Some(format!("Command timed out after {} s on {name}.{stopped}", self.timeout_s))
            }
            RunEnd::Cancelled => Some(format!("Command cancelled on {name}.{stopped}")),
        }
    }

    /// The output window and its footer; `(no output)` for a silent command that succeeded
    /// (otherwise the outcome line says enough).
    fn output_lines(&self) -> Vec<String> {
        let body = &self.summary.body;
        let mut lines = Vec::new();
        if !body.trim().is_empty() {
            lines.push(body.strip_suffix('\n').unwrap_or(body).to_string());
        } else if self.succeeded() {
            lines.push("(no output)".to_string());
        }
        lines.extend(self.summary.footer.clone());
        lines
    }

    /// The S35 fields of this host.
    fn structured(&self) -> Value {
        let truncation = serde_json::to_value(&self.summary.truncation).unwrap_or(Value::Null);
        match &self.result {
            Ok(out) => json!({
                "host": self.host,
                "exit_code": match out.end { RunEnd::Exited(code) => Some(code), _ => None },
                "timed_out": out.end == RunEnd::TimedOut,
                "wall_ms": out.wall.as_millis() as u64,
                "connect_ms": out.connect.as_millis() as u64,
                "queued_ms": out.queued.as_millis() as u64,
                "mux": out.mux.as_str(),
                "os": out.info.os,
                "shell": out.info.shell,
                "probe": out.info.source.as_str(),
                "remote_killed": out.remote_killed,
                "truncation": truncation,
            }),
            Err(err) => json!({
                "host": self.host,
                "exit_code": null,
                "timed_out": false,
                "error": err.to_string(),
                "truncation": truncation,
            }),
        }
    }
}

impl SshOutcome {
    pub(crate) fn into_result(self) -> ToolResult {
        match self {
            SshOutcome::Refused(text) => ToolResult::error(text),
            SshOutcome::One { run, notices } => one_result(&run, &notices),
            SshOutcome::Group { runs, notices } => group_result(&runs, &notices),
        }
    }
}

fn one_result(run: &HostRun, notices: &[String]) -> ToolResult {
    let mut lines = run.output_lines();
    lines.extend(notices.iter().cloned());
    if let Some(last) = run.outcome_line() {
        if !lines.is_empty() {
            lines.push(String::new());
        }
        lines.push(last);
    }
    ToolResult {
        content: vec![Content::text(lines.join("\n"))],
        structured_content: Some(run.structured()),
        is_error: !run.succeeded(),
    }
}

/// One section per host (`=== <name>: exit <n>, <ms> ms ===`), then the notices and the
/// summary line.
fn group_result(runs: &[HostRun], notices: &[String]) -> ToolResult {
    let mut sections = Vec::new();
    let mut summaries = Vec::new();
    for run in runs {
        let header = HostResult { host: run.host.clone(), result: run.result.clone() };
        let mut lines = vec![header.section_header()];
        lines.extend(run.output_lines());
        lines.extend(run.outcome_line());
        sections.push(lines.join("\n"));
        summaries.push(header);
    }
    let mut tail: Vec<String> = notices.to_vec();
    tail.push(group_summary(&summaries));
    sections.push(tail.join("\n"));
    let failed: Vec<&str> =
        runs.iter().filter(|r| !r.succeeded()).map(|r| r.host.as_str()).collect();
    let results: Vec<Value> = runs.iter().map(HostRun::structured).collect();
    ToolResult {
        content: vec![Content::text(sections.join("\n\n"))],
        structured_content: Some(json!({
            "results": results,
            "succeeded": runs.len() - failed.len(),
            "failed": failed,
        })),
        is_error: !failed.is_empty(),
    }
}
