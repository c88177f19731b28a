//! Auto-background (J17): a foreground call still running after a threshold becomes a job.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use execkit_jobs::{JobSlot, JobStart};
use execkit_process::CancellationToken;
use execkit_process::run::{RunObserver, RunOutcome};
use execkit_protocol::{Content, ToolResult};
use serde_json::json;
use tokio::sync::oneshot;

use crate::jobs::{job_end, label};
use crate::launch::LaunchedInfo;
use crate::progress::Observer;
use crate::request::Request;
use crate::runner::{BashExtras, BashRunner, mark_cancelled_kill};
use execkit_tool::CallContext;

/// A foreground run in flight, as handed to a job.
struct Running {
    request: Request,
    info: LaunchedInfo,
    observer: Arc<Mutex<Observer>>,
    rx: oneshot::Receiver<RunOutcome>,
    run_cancel: CancellationToken,
    started: Instant,
}

/// The observer shared between the running task and the call that may hand it to a job.
struct Shared(Arc<Mutex<Observer>>);

fn lock(observer: &Mutex<Observer>) -> MutexGuard<'_, Observer> {
    observer.lock().unwrap_or_else(|e| e.into_inner())
}

impl RunObserver for Shared {
    fn output(&mut self, chunk: &[u8]) {
        lock(&self.0).output(chunk);
    }

    fn tick(&mut self) {
        lock(&self.0).tick();
    }
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
        let observer = Arc::new(Mutex::new(observer));
        let limits = self.run_limits(&request, started, run_cancel.clone());
        let deadline = limits.deadline;
        let (tx, mut rx) = oneshot::channel();
        let runner = self.clone();
        let task_observer = observer.clone();
        tokio::spawn(async move {
            let mut shared = Shared(task_observer);
            let outcome = runner.drive(child, &mut shared, limits).await;
            // Let go of the observer before the outcome is seen, so the receiver owns it alone.
            drop(shared);
            let _ = tx.send(outcome);
        });
        // Dropping this call's future cancels the run, until a job owns it.
        let guard = run_cancel.clone().drop_guard();
        let threshold = match request.timeout.secs {
            Some(secs) => after.min(Duration::from_secs(secs.saturating_sub(1))),
            None => after,
        };
        let mut notices = Vec::new();
        let moved_at = started + threshold;
        let mut cancelled = false;
        let outcome = loop {
            tokio::select! {
                outcome = &mut rx => break outcome.ok(),
                _ = ctx.cancel.cancelled(), if !cancelled => {
                    cancelled = true;
                    run_cancel.cancel();
                }
                _ = tokio::time::sleep_until(moved_at.into()), if notices.is_empty() && !cancelled => {
                    let start = JobStart {
                        label: label(&request.original),
                        timeout_s: request.timeout.secs,
                        artifact: None,
                        adopted: false,
                        began: Some(started),
                    };
                    match self.inner.deps.jobs.register(start) {
                        Ok(slot) => {
                            guard.disarm();
                            let running = Running { request, info, observer, rx, run_cancel, started };
                            return self.hand_to_job(running, slot);
                        }
                        Err(full) => notices.push(format!(
                            "[not moved to the background: {} jobs already running]",
                            full.running
                        )),
                    }
                }
            }
        };
        guard.disarm();
        let Some(mut outcome) = outcome else {
            return ToolResult::error("The command's supervisor ended without a result");
        };
        mark_cancelled_kill(&mut outcome, &ctx.cancel);
        let lingering = self.handle_lingering(&mut outcome, deadline);
        let Some(observer) = Arc::try_unwrap(observer)
            .ok()
            .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
        else {
            return ToolResult::error("The command's output was still in use after it ended");
        };
        let mut result = self.explain(&request, info, outcome, observer, lingering);
        append_before_outcome(&mut result, &notices);
        result
    }

    fn hand_to_job(&self, running: Running, slot: JobSlot) -> ToolResult {
        let Running { request, info, observer, rx, run_cancel, started } = running;
        let id = slot.id_text();
        let (body, artifact) = {
            let mut obs = lock(&observer);
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
        let job_cancel = slot.cancel_token();
        tokio::spawn(async move {
            let watch = job_cancel.clone();
            let forward = run_cancel.clone();
            tokio::spawn(async move {
                tokio::select! {
                    _ = watch.cancelled() => forward.cancel(),
                    _ = forward.cancelled() => {}
                }
            });
            let outcome = rx.await;
            run_cancel.cancel();
            let Ok(mut outcome) = outcome else { return };
            mark_cancelled_kill(&mut outcome, &job_cancel);
            let lingering = runner.kill_lingering(&outcome, None);
            let Some(observer) = Arc::try_unwrap(observer).ok() else { return };
            let observer = observer.into_inner().unwrap_or_else(|e| e.into_inner());
            let result = runner.explain(&request, info, outcome, observer, lingering);
            slot.finish(job_end(&result));
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
