//! Composing the result of a finished run (B32–B35, O23).

use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use execkit_jobs::JobEnd;
use execkit_output::artifact::ArtifactStore;
use execkit_output::sink::{SinkSummary, TruncationReport};
use execkit_process::run::{Lingering, RunOutcome};
use execkit_process::signal_name;
use execkit_protocol::{Content, ToolResult};
use execkit_runkit::{Ending, LingeringAction, Verdict};
use indexmap::IndexMap;
use serde::Serialize;
use serde_json::json;

use crate::extras::{MAX_IMAGE_BYTES, find_image, image_notice, oversized_notice, take_hints};
use crate::input_wait::{self, InputWait};
use crate::meaning::{CommandKind, ExitMeaning, exit_meaning, wanted_terminal};
use crate::normalize::TailRewrite;
use crate::request::Request;

/// How many lingering processes are named before `and <n> more` (B31).
const NAMED_LINGERING: usize = 3;

#[derive(Debug, Serialize)]
struct LingeringProcess {
    pid: u32,
    cmd: String,
    holds_output: bool,
}

#[derive(Debug, Serialize)]
struct LingeringReport {
    processes: Vec<LingeringProcess>,
    action: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    job_id: Option<String>,
}

/// `structuredContent` of a bash call (B35).
#[derive(Debug, Serialize)]
struct Structured<'a> {
    exit_code: Option<i32>,
    signal: Option<String>,
    state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    exit_meaning: Option<ExitMeaning>,
    wall_ms: u64,
    timeout_s: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    requested_timeout_s: Option<f64>,
    cwd: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    final_cwd: Option<String>,
    pty: bool,
    truncation: Option<TruncationReport>,
    artifact: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    normalized: Option<&'a TailRewrite>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lingering: Option<LingeringReport>,
    containment: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    memory_peak_bytes: Option<u64>,
    scrubbed_env: Vec<String>,
    snapshot: &'a str,
    command_kind: CommandKind,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    hints: Vec<IndexMap<String, String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prefix: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    input_wait: Option<InputWait>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    timed_out: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    cancelled: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    oom: bool,
}

/// A finished call's result, and the typed verdict it was rendered from (what a job's end
/// is made of).
pub(crate) struct Explained {
    pub result: ToolResult,
    pub verdict: Verdict,
}

impl Explained {
    /// The job's end when the call ran as a job: the same verdict, the result's text.
    pub fn job_end(self) -> JobEnd {
        let text = self.result.text();
        self.verdict.job_end(text)
    }
}

/// Everything known about a run once it ended.
pub(crate) struct Finished<'a> {
    pub request: &'a Request,
    pub outcome: RunOutcome,
    pub summary: SinkSummary,
    pub base_cwd: &'a Path,
    pub final_cwd: Option<String>,
    pub containment: &'a str,
    pub scrubbed: Vec<String>,
    pub snapshot_mode: &'a str,
    pub snapshot_notice: Option<String>,
    pub scrub_notice: Option<Vec<String>>,
    pub prefix: Option<String>,
    pub artifacts: Option<&'a ArtifactStore>,
    pub lingering: LingeringAction,
    pub pty: bool,
    pub pty_fallback: Option<String>,
    pub input_wait: Option<InputWait>,
}

impl Finished<'_> {
    pub fn into_result(self) -> Explained {
        let request = self.request;
        let outcome = &self.outcome;
        let summary = &self.summary;
        let waiting = self.input_wait.as_ref();
        // A command found waiting for input was stopped by us: no exit code or signal.
        let verdict = if waiting.is_some() { Verdict::stopped() } else { Verdict::of(outcome) };
        let timed_out = verdict.ending == Ending::TimedOut;
        let cancelled = verdict.ending == Ending::Cancelled;
        let signal = verdict.signal;
        let exit_code = verdict.exit_code;

        let (body, hints) = take_hints(&summary.body);
        let mut content = Vec::new();
        let mut text = String::new();
        let image = (!summary.binary).then(|| self.full_text_for_image()).flatten();
        let oversized = image.as_ref().and_then(|found| oversized_notice(found, self.artifacts));
        let image = image.filter(|_| oversized.is_none());
        match &image {
            Some(found) => text.push_str(&image_notice(found)),
            None if let Some(line) = &oversized => text.push_str(line),
            None if body.trim().is_empty() => text.push_str("(no output)"),
            None => text.push_str(body.strip_suffix('\n').unwrap_or(&body)),
        }
        let mut lines: Vec<String> = Vec::new();
        lines.extend(summary.footer.clone());
        lines.extend(request.notices.iter().cloned());

        let mut meaning = None;
        let wait_texts = waiting.map(input_wait::texts);
        let outcome_line = if let Some((_, line)) = &wait_texts {
            Some(line.clone())
        } else if timed_out {
            Some(timed_out_line(request.timeout.secs.unwrap_or_default()))
        } else if cancelled {
            Some("[Command cancelled]".to_string())
        } else if outcome.oom {
            let peak = outcome.memory_peak_bytes.map(execkit_output::format::size);
            Some(format!(
                "Command was killed by the kernel OOM killer (memory peak {})",
                peak.unwrap_or_else(|| "unknown".to_string())
            ))
        } else if let Some(sig) = signal {
            Some(format!("Command was killed by signal {sig} ({})", signal_name(sig)))
        } else {
            match exit_code {
                Some(0) => None,
                Some(code) => {
                    meaning = exit_meaning(request.stages.as_deref(), code);
                    Some(match &meaning {
                        Some((_, m)) => format!("Command exited with code {code} ({m})"),
                        None => format!("Command exited with code {code}"),
                    })
                }
                None => Some("Command ended without an exit status".to_string()),
            }
        };
        let failed = outcome_line.is_some();

        let nonzero_exit = meaning.is_some() || matches!(exit_code, Some(c) if c != 0);
        if let (Some(rewrite), true) = (&request.normalized, nonzero_exit && signal.is_none()) {
            lines.push(format!(
                "[\"{}\" was applied by execkit, so the exit code is that of the command before it]",
                rewrite.removed
            ));
        }
        let final_cwd = self.final_cwd.clone().filter(|f| Path::new(f) != request.cwd);
        if let Some(final_cwd) = &final_cwd {
            lines.push(format!(
                "[Working directory changed to {final_cwd}; it is not kept: the next call starts \
                 in {} unless you pass \"cwd\"]",
                self.base_cwd.display()
            ));
        }
        if failed && !timed_out && !cancelled && wanted_terminal(&summary.body) {
            lines.push(
                "[The command wanted an interactive terminal; stdin is /dev/null here. Pipe the \
                 input in, use a non-interactive flag, or rerun with \"pty\": true to see the prompt]"
                    .to_string(),
            );
        }
        let lingering = lingering_report(&outcome.lingering, &self.lingering);
        if let Some(line) = lingering_line(&outcome.lingering, &self.lingering) {
            lines.push(line);
        }
        if let Some(reason) = &self.pty_fallback {
            lines.push(format!("[pty unavailable ({reason}); ran without a terminal]"));
        }
        lines.extend(self.snapshot_notice.clone());
        if let Some(names) = &self.scrub_notice {
            lines.push(format!(
                "[Removed {} credential-like environment variables: {} (set EXECKIT_ENV_KEEP to \
                 pass them through)]",
                names.len(),
                names.join(", ")
            ));
        }
        if let Some((advice, _)) = &wait_texts {
            lines.push(advice.clone());
        }
        lines.extend(outcome_line);
        // `head: 0, tail: 0` shows no lines at all: the footer says so (B3).
        let show_nothing = request.head == Some(0) && request.tail == Some(0) && image.is_none();
        if show_nothing && summary.footer.is_some() {
            text.clear();
        }
        for line in lines {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&line);
        }
        content.push(Content::text(text));
        if let Some(found) = image {
            content.push(Content::Image {
                data: STANDARD.encode(&found.bytes),
                mime_type: found.mime.to_string(),
            });
        }

        let state = match verdict.ending {
            Ending::Stopped => "waiting_for_input",
            Ending::TimedOut => "timed_out",
            Ending::Cancelled => "cancelled",
            Ending::Killed => "killed",
            Ending::Exited => "exited",
        };
        let structured = Structured {
            exit_code,
            signal: signal.map(signal_name),
            state,
            exit_meaning: meaning.map(|m| m.0),
            wall_ms: outcome.wall.as_millis() as u64,
            timeout_s: request.timeout.secs,
            requested_timeout_s: request.timeout.requested,
            cwd: request.cwd.display().to_string(),
            final_cwd,
            pty: self.pty,
            truncation: summary.truncation.clone(),
            artifact: summary.artifact.as_ref().map(|a| a.uri()),
            normalized: request.normalized.as_ref(),
            lingering,
            containment: self.containment,
            memory_peak_bytes: outcome.memory_peak_bytes,
            scrubbed_env: self.scrubbed.clone(),
            snapshot: self.snapshot_mode,
            command_kind: request.kind,
            hints,
            prefix: self.prefix.clone(),
            input_wait: self.input_wait.clone(),
            timed_out,
            cancelled,
            oom: outcome.oom,
        };
        let result = ToolResult {
            content,
            structured_content: serde_json::to_value(&structured).ok(),
            is_error: failed,
        };
        Explained { result, verdict }
    }

    /// The whole output when it may be one image: from the window when nothing was cut, else
    /// from the artifact while it is small enough.
    fn full_text_for_image(&self) -> Option<crate::extras::FoundImage> {
        let summary = &self.summary;
        let head = summary.body.trim_start();
        let plausible = head.starts_with("data:image/")
            || head.starts_with("iVBOR")
            || head.starts_with("/9j/")
            || head.starts_with("R0lGOD")
            || head.starts_with("UklGR");
        if !plausible {
            return None;
        }
        if summary.truncation.is_none() {
            return find_image(&summary.body);
        }
        if summary.totals.total_bytes as usize > MAX_IMAGE_BYTES / 3 * 4 + 1024 {
            return None;
        }
        let path = self.artifacts?.out_path(summary.artifact.as_ref()?).ok()?;
        let text = std::fs::read_to_string(path).ok()?;
        find_image(&text)
    }
}

fn lingering_report(procs: &[Lingering], action: &LingeringAction) -> Option<LingeringReport> {
    let (action, job_id) = match action {
        LingeringAction::None => return None,
        LingeringAction::Killed { .. } => ("killed", None),
        LingeringAction::Adopted { id, .. } => ("adopted", Some(id.clone())),
    };
    Some(LingeringReport {
        processes: procs
            .iter()
            .map(|p| LingeringProcess {
                pid: p.pid,
                cmd: p.cmd.clone(),
                holds_output: p.holds_output,
            })
            .collect(),
        action,
        job_id,
    })
}

/// B31's text for processes left running after the command exited.
fn lingering_line(procs: &[Lingering], action: &LingeringAction) -> Option<String> {
    if procs.is_empty() || *action == LingeringAction::None {
        return None;
    }
    let total = action.total().max(procs.len());
    let count =
        if total == 1 { "1 process is".to_string() } else { format!("{total} processes are") };
    let named: Vec<String> = procs
        .iter()
        .take(NAMED_LINGERING)
        .map(|p| {
            let holds = if p.holds_output { " (holds the output pipe)" } else { "" };
            format!("pid {} \"{}\"{holds}", p.pid, p.cmd)
        })
        .collect();
    let mut list = named.join(", ");
    if total > named.len() {
        list.push_str(&format!(" and {} more", total - named.len()));
    }
    let it = if total == 1 { "it" } else { "them" };
    let what = match action {
        LingeringAction::Adopted { id, .. } => {
            format!("Adopted as background job {id}; stop {it} with job {{\"cancel\": [\"{id}\"]}}")
        }
        LingeringAction::Killed { why: Some(why), .. } => {
            format!("Stopped {it} (TERM, then KILL after 2 s), because {why}.")
        }
        _ => format!("Stopped {it} (TERM, then KILL after 2 s)."),
    };
    Some(format!("[{count} still running after the command exited: {list}. {what}]"))
}

/// `[Command timed out after 1 second]`, `[Command timed out after 300 seconds]`.
fn timed_out_line(secs: u64) -> String {
    let unit = if secs == 1 { "second" } else { "seconds" };
    format!("[Command timed out after {secs} {unit}]")
}

/// A call blocked by a rule (B12).
pub(crate) fn blocked_result(rule_id: &str, text: String) -> ToolResult {
    ToolResult {
        content: vec![Content::text(text)],
        structured_content: Some(json!({"state": "blocked", "blocked_by": rule_id})),
        is_error: true,
    }
}

/// `Failed to start bash: <os error>` (B33).
pub(crate) fn start_failed_result(text: &str) -> ToolResult {
    ToolResult {
        content: vec![Content::text(text)],
        structured_content: Some(json!({"state": "start_failed", "exit_code": null})),
        is_error: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_second_is_singular() {
        assert_eq!(timed_out_line(1), "[Command timed out after 1 second]");
        assert_eq!(timed_out_line(300), "[Command timed out after 300 seconds]");
    }
}
