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
        // A command found waiting for input was stopped by us: no exit code or signal.
        let waiting = self.input_wait.as_ref();
        let verdict =
            if waiting.is_some() { Verdict::stopped() } else { Verdict::of(&self.outcome) };
        let wait_texts = waiting.map(input_wait::texts);
        let (outcome_line, meaning) = self.outcome_line(&verdict, wait_texts.as_ref());
        let failed = outcome_line.is_some();
        let (body, hints) = take_hints(&self.summary.body);
        let image = (!self.summary.binary).then(|| self.full_text_for_image()).flatten();
        let oversized = image.as_ref().and_then(|found| oversized_notice(found, self.artifacts));
        let image = image.filter(|_| oversized.is_none());
        let mut text = match &image {
            Some(found) => image_notice(found),
            None if let Some(line) = &oversized => line.clone(),
            None if body.trim().is_empty() => "(no output)".to_string(),
            None => body.strip_suffix('\n').unwrap_or(&body).to_string(),
        };
        let final_cwd = self.final_cwd.clone().filter(|f| Path::new(f) != self.request.cwd);
        let mut lines =
            self.notice_lines(&verdict, meaning.is_some(), failed, final_cwd.as_deref());
        if let Some((advice, _)) = &wait_texts {
            lines.push(advice.clone());
        }
        lines.extend(outcome_line);
        // `head: 0, tail: 0` shows no lines at all: the footer says so (B3).
        let request = self.request;
        let show_nothing = request.head == Some(0) && request.tail == Some(0) && image.is_none();
        if show_nothing && self.summary.footer.is_some() {
            text.clear();
        }
        for line in lines {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&line);
        }
        let mut content = vec![Content::text(text)];
        if let Some(found) = image {
            content.push(Content::Image {
                data: STANDARD.encode(&found.bytes),
                mime_type: found.mime.to_string(),
            });
        }
        let structured = self.structured(&verdict, meaning.map(|m| m.0), final_cwd, hints);
        let result = ToolResult {
            content,
            structured_content: serde_json::to_value(&structured).ok(),
            is_error: failed,
        };
        Explained { result, verdict }
    }

    /// The last line of a call that did not exit with 0 (`None` when it did), and the exit
    /// code's meaning when one is known.
    fn outcome_line(
        &self,
        verdict: &Verdict,
        wait_texts: Option<&(String, String)>,
    ) -> (Option<String>, Option<(ExitMeaning, String)>) {
        let outcome = &self.outcome;
        if let Some((_, line)) = wait_texts {
            return (Some(line.clone()), None);
        }
        let line = match (verdict.ending, verdict.signal, verdict.exit_code) {
            (Ending::TimedOut, _, _) => {
                timed_out_line(self.request.timeout.secs.unwrap_or_default())
            }
            (Ending::Cancelled, _, _) => "[Command cancelled]".to_string(),
            _ if outcome.oom => {
                let peak = outcome.memory_peak_bytes.map(execkit_output::format::size);
                format!(
                    "Command was killed by the kernel OOM killer (memory peak {})",
                    peak.unwrap_or_else(|| "unknown".to_string())
                )
            }
            (_, Some(sig), _) => {
                format!("Command was killed by signal {sig} ({})", signal_name(sig))
            }
            (_, None, Some(0)) => return (None, None),
            (_, None, Some(code)) => {
                let meaning = exit_meaning(self.request.stages.as_deref(), code);
                let line = match &meaning {
                    Some((_, m)) => format!("Command exited with code {code} ({m})"),
                    None => format!("Command exited with code {code}"),
                };
                return (Some(line), meaning);
            }
            (_, None, None) => "Command ended without an exit status".to_string(),
        };
        (Some(line), None)
    }

    /// The footer, the request's notices and every bracketed line about the run, in the
    /// order they are shown before the outcome line.
    fn notice_lines(
        &self,
        verdict: &Verdict,
        has_meaning: bool,
        failed: bool,
        final_cwd: Option<&str>,
    ) -> Vec<String> {
        let request = self.request;
        let mut lines: Vec<String> = Vec::new();
        lines.extend(self.summary.footer.clone());
        lines.extend(request.notices.iter().cloned());
        let nonzero_exit = has_meaning || matches!(verdict.exit_code, Some(c) if c != 0);
        if let (Some(rewrite), true) =
            (&request.normalized, nonzero_exit && verdict.signal.is_none())
        {
            lines.push(format!(
                "[\"{}\" was applied by execkit, so the exit code is that of the command before it]",
                rewrite.removed
            ));
        }
        if let Some(final_cwd) = final_cwd {
            lines.push(format!(
                "[Working directory changed to {final_cwd}; it is not kept: the next call starts \
                 in {} unless you pass \"cwd\"]",
                self.base_cwd.display()
            ));
        }
        let ended_by_us = matches!(verdict.ending, Ending::TimedOut | Ending::Cancelled);
        if failed && !ended_by_us && wanted_terminal(&self.summary.body) {
            lines.push(
                "[The command wanted an interactive terminal; stdin is /dev/null here. Pipe the \
                 input in, use a non-interactive flag, or rerun with \"pty\": true to see the prompt]"
                    .to_string(),
            );
        }
        lines.extend(lingering_line(&self.outcome.lingering, &self.lingering));
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
        lines
    }

    /// `structuredContent` of the call.
    fn structured(
        &self,
        verdict: &Verdict,
        exit_meaning: Option<ExitMeaning>,
        final_cwd: Option<String>,
        hints: Vec<IndexMap<String, String>>,
    ) -> Structured<'_> {
        let (request, outcome, summary) = (self.request, &self.outcome, &self.summary);
        let state = match verdict.ending {
            Ending::Stopped => "waiting_for_input",
            Ending::TimedOut => "timed_out",
            Ending::Cancelled => "cancelled",
            Ending::Killed => "killed",
            Ending::Exited => "exited",
        };
        Structured {
            exit_code: verdict.exit_code,
            signal: verdict.signal.map(signal_name),
            state,
            exit_meaning,
            wall_ms: outcome.wall.as_millis() as u64,
            timeout_s: request.timeout.secs,
            requested_timeout_s: request.timeout.requested,
            cwd: request.cwd.display().to_string(),
            final_cwd,
            pty: self.pty,
            truncation: summary.truncation.clone(),
            artifact: summary.artifact.as_ref().map(|a| a.uri()),
            normalized: request.normalized.as_ref(),
            lingering: lingering_report(&outcome.lingering, &self.lingering),
            containment: self.containment,
            memory_peak_bytes: outcome.memory_peak_bytes,
            scrubbed_env: self.scrubbed.clone(),
            snapshot: self.snapshot_mode,
            command_kind: request.kind,
            hints,
            prefix: self.prefix.clone(),
            input_wait: self.input_wait.clone(),
            timed_out: verdict.ending == Ending::TimedOut,
            cancelled: verdict.ending == Ending::Cancelled,
            oom: outcome.oom,
        }
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
