//! Auto-background (J17): a foreground call still running after a threshold becomes a job.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use execkit_jobs::{JobSlot, JobStart};
use execkit_process::CancellationToken;
use execkit_protocol::{Content, ToolResult};
use execkit_runkit::{BackgroundRun, Waited, job_label, mark_cancelled_kill};
use execkit_tool::CallContext;
use serde_json::json;

use crate::input_wait::Detector;
use crate::launch::LaunchedInfo;
use crate::request::Request;
use crate::runner::{BashExtras, BashRunner};

/// A foreground run in flight, as handed to a job.
struct Running {
    request: Request,
    info: LaunchedInfo,
    run: BackgroundRun<Detector>,
    started: Instant,
}

impl BashRunner {
    /// A foreground run that moves to the background after `after` (J17).
    pub(crate) async fn foreground_or_background(
        &self,
        request: Request,
        bash: PathBuf,
        extras: BashExtras,
        ctx: &CallContext,
        after: Duration,
    ) -> ToolResult {
        let launched = match self.launch(&request, bash, extras, false).await {
            Ok(launched) => launched,
            Err(result) => return result,
        };
        let run_cancel = CancellationToken::new();
        let input_wait = self.inner.config.input_wait;
        let (child, started, observer, info) =
            launched.into_run(ctx.progress.clone(), request.timeout.secs, input_wait, &run_cancel);
        let limits = self.run_limits(&request, started, run_cancel);
        let deadline = limits.deadline;
        // Dropping this call's future cancels the run, until a job owns it.
        let mut run = BackgroundRun::spawn(child, observer, limits);
        let threshold = match request.timeout.secs {
            Some(secs) => after.min(Duration::from_secs(secs.saturating_sub(1))),
            None => after,
        };
        let mut notices = Vec::new();
        let outcome = match run.wait(Some(started + threshold), &ctx.cancel).await {
            Waited::Ended(outcome) => outcome,
            Waited::Reached => {
                let start = JobStart {
                    label: job_label(&request.original),
                    timeout_s: request.timeout.secs,
                    artifact: None,
                    adopted: false,
                    began: Some(started),
                };
                match self.inner.deps.jobs.register(start) {
                    Ok(slot) => {
                        return self.hand_to_job(Running { request, info, run, started }, slot);
                    }
                    Err(full) => notices.push(format!(
                        "[not moved to the background: {} jobs already running]",
                        full.running
                    )),
                }
                match run.wait(None, &ctx.cancel).await {
                    Waited::Ended(outcome) => outcome,
                    Waited::Reached => None,
                }
            }
        };
        let Some(mut outcome) = outcome else {
            return ToolResult::error("The command's supervisor ended without a result");
        };
        mark_cancelled_kill(&mut outcome, &ctx.cancel);
        let lingering = self.handle_lingering(&mut outcome, deadline);
        let Some(observer) = run.into_observer() else {
            return ToolResult::error("The command's output was still in use after it ended");
        };
        let mut result = self.explain(&request, info, outcome, observer, lingering).result;
        append_before_outcome(&mut result, &notices);
        result
    }

    fn hand_to_job(&self, running: Running, slot: JobSlot) -> ToolResult {
        let Running { request, info, run, started } = running;
        let id = slot.id_text();
        let (body, artifact) = {
            let mut obs = run.observer();
            obs.sink.spill_now();
            let tail = slot.tail_handle();
            obs.set_progress(Some(Arc::new(move |p: execkit_protocol::Progress| tail.set(p.tail))));
            (obs.sink.snapshot(), obs.sink.artifact().map(|a| a.uri()))
        };
        if let Some(uri) = &artifact {
            slot.set_artifact(uri.clone());
        }
        let elapsed = started.elapsed().as_secs();
        let deadline = match request.timeout.secs {
            Some(secs) => format!("deadline in {} s", secs.saturating_sub(elapsed)),
            None => "no deadline".to_string(),
        };
        let notices = request.notices.clone();
        let runner = self.clone();
        tokio::spawn(async move {
            let Some((outcome, observer)) = run.detach(slot.cancel_token()).await else { return };
            let lingering = runner.kill_lingering(&outcome, None);
            let explained = runner.explain(&request, info, outcome, observer, lingering);
            slot.finish(explained.job_end());
        });
        let shown = if body.trim().is_empty() { "(no output yet)".to_string() } else { body };
        let mut text = shown.trim_end_matches('\n').to_string();
        if let Some(uri) = &artifact {
            text.push_str(&format!("\n[output so far: {uri}]"));
        }
        for notice in &notices {
            text.push('\n');
            text.push_str(notice);
        }
        text.push_str(&format!(
            "\n[Still running after {elapsed} s; continuing as background job {id} ({deadline}). \
             Wait for it with job {{\"poll\": [\"{id}\"]}}]"
        ));
        ToolResult {
            content: vec![Content::text(text)],
            structured_content: Some(
                json!({"job_id": id, "state": "running", "artifact": artifact}),
            ),
            is_error: false,
        }
    }
}

/// Adds notice lines before the outcome line (the last line of an error result).
fn append_before_outcome(result: &mut ToolResult, notices: &[String]) {
    if notices.is_empty() {
        return;
    }
    if let Some(Content::Text { text }) = result.content.first_mut() {
        let joined = notices.join("\n");
        match (result.is_error, text.rfind('\n')) {
            (true, Some(at)) => text.insert_str(at, &format!("\n{joined}")),
            _ => {
                text.push('\n');
                text.push_str(&joined);
            }
        }
    }
}
