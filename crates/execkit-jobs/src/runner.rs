//! The `job` tool's runner: the job table serves cancel, poll and list (J10–J16).

use std::time::{Duration, Instant};

use execkit_output::truncate::truncate_tail;
use execkit_protocol::job::JobParams;
use execkit_protocol::{Progress, ProgressFn, ToolResult};
use execkit_tool::CallContext;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::job::JobState;
use crate::render::{
    header, job_json, last_line, last_lines, list_lines, not_found, outcome_words, summary,
};
use crate::request::{Request, validate};
use crate::result::JobOutcome;
use crate::table::JobTable;

/// Lines of a running job's output shown by a poll.
const RUNNING_TAIL_LINES: usize = 10;
/// When several jobs finish together, each result is cut to its end (J12).
const SHARED_RESULT_LINES: u64 = 200;
const SHARED_RESULT_BYTES: u64 = 16 * 1024;
/// Waiting progress cadence (J13).
const WAIT_PROGRESS_EVERY: Duration = Duration::from_secs(1);
/// A cancel waits this long beyond the kill grace for the job to end (J11).
const CANCEL_SLACK: Duration = Duration::from_millis(500);

impl JobTable {
    /// Serves one `job` call.
    pub async fn call(&self, params: JobParams, ctx: &CallContext) -> ToolResult {
        let request = match validate(params) {
            Ok(request) => request,
            Err(err) => return ToolResult::error(err.to_string()),
        };
        let started = Instant::now();
        let outcome = if request.list {
            self.list(started)
        } else {
            self.cancel_and_poll(request, ctx, started).await
        };
        outcome.into_result()
    }

    /// What `execkit doctor` shows about the job tool.
    pub fn doctor(&self) -> Vec<String> {
        let config = self.config();
        vec![
            format!("running: {} (at most {})", self.running(), config.max_running),
            format!("finished jobs kept: {} s", config.retention.as_secs()),
            format!("poll waits up to: {} s", config.wait.as_secs()),
        ]
    }

    /// Cancels the ids of `cancel`, then (unless only cancelling) waits for and shows the
    /// watched jobs.
    async fn cancel_and_poll(
        &self,
        request: Request,
        ctx: &CallContext,
        started: Instant,
    ) -> JobOutcome {
        let mut outcome = JobOutcome::new(started);
        if !request.cancel.is_empty() {
            let report_now = request.poll.is_none();
            let (lines, cancelled, failed) = self.cancel_jobs(&request.cancel, report_now).await;
            outcome.is_error |= failed;
            outcome.text.push(format!("## Cancelled ({})", request.cancel.len()));
            outcome.text.extend(lines);
            outcome.cancelled = cancelled;
            if request.poll.is_none() {
                outcome.jobs = self.jobs_json(&request.cancel);
                return outcome;
            }
        }
        let (watched, unknown) = self.watched(request.poll.as_deref());
        if watched.is_empty() && unknown.is_empty() {
            outcome.text.push("No background jobs are running.".to_string());
            return outcome;
        }
        let finished_any =
            self.wait_for(&watched, ctx.progress.clone(), &ctx.cancel, started).await;
        if !finished_any && !watched.is_empty() {
            let first = if ctx.cancel.is_cancelled() {
                format!("The wait was cancelled after {:.1} s.", started.elapsed().as_secs_f64())
            } else {
                format!("No watched job finished within {} s.", self.config().wait.as_secs())
            };
            outcome.text.insert(0, first);
        }
        outcome.is_error |= !unknown.is_empty();
        // An id also cancelled in this call already has its "not found" line.
        let unseen = unknown.iter().filter(|id| !request.cancel.contains(id));
        let retention = self.config().retention;
        outcome.text.extend(unseen.map(|id| not_found(*id, retention)));
        outcome.is_error |= self.render_poll(&watched, &mut outcome.text);
        outcome.jobs = self.jobs_json(&watched);
        outcome
    }

    fn list(&self, started: Instant) -> JobOutcome {
        let mut outcome = JobOutcome::new(started);
        let state = self.lock();
        let jobs: Vec<_> = state.jobs.values().rev().collect();
        if jobs.is_empty() {
            outcome.text.push("No background jobs.".to_string());
            return outcome;
        }
        outcome.text.push(format!("## Jobs ({})", jobs.len()));
        outcome.text.extend(list_lines(&jobs));
        outcome.jobs = jobs.iter().map(|j| job_json(j)).collect();
        outcome
    }

    /// Cancels each id, then waits for them to end (≤ grace + 0.5 s).
    /// `report_now`: the cancel line is the job's report (no poll follows in this call).
    async fn cancel_jobs(&self, ids: &[u64], report_now: bool) -> (Vec<String>, Vec<Value>, bool) {
        let tokens: Vec<_> = {
            let state = self.lock();
            ids.iter()
                .filter_map(|id| {
                    state.jobs.get(id).filter(|j| j.end.is_none()).map(|j| j.cancel.clone())
                })
                .collect()
        };
        let was_running: Vec<u64> = {
            let state = self.lock();
            ids.iter()
                .copied()
                .filter(|id| state.jobs.get(id).is_some_and(|j| j.end.is_none()))
                .collect()
        };
        for token in &tokens {
            token.cancel();
        }
        let deadline = Instant::now() + self.config().kill_grace + CANCEL_SLACK;
        loop {
            let wait = self.inner.finished.notified();
            let pending = {
                let state = self.lock();
                was_running.iter().any(|id| state.jobs.get(id).is_some_and(|j| j.end.is_none()))
            };
            if !pending || Instant::now() >= deadline {
                break;
            }
            let _ = tokio::time::timeout_at(deadline.into(), wait).await;
        }
        let mut lines = Vec::new();
        let mut outcomes = Vec::new();
        // Unknown ids, or finished jobs that did not complete: either makes the result an error.
        let mut is_error = false;
        let mut state = self.lock();
        for id in ids {
            let (line, outcome) = match state.jobs.get_mut(id) {
                None => {
                    is_error = true;
                    (not_found(*id, self.config().retention), "not_found")
                }
                Some(job) if was_running.contains(id) => {
                    job.reported |= report_now;
                    (
                        format!("bg_{id}: cancelled after {:.1} s", job.wall().as_secs_f64()),
                        "cancelled",
                    )
                }
                Some(job) => {
                    // Reporting a job that ended badly is an error result (J14).
                    is_error |= job.state() != JobState::Completed;
                    (
                        format!("bg_{id}: already finished ({})", outcome_words(job)),
                        "already_finished",
                    )
                }
            };
            lines.push(line);
            outcomes.push(json!({"id": format!("bg_{id}"), "outcome": outcome}));
        }
        (lines, outcomes, is_error)
    }

    /// The ids to watch (known ones) and the unknown ones.
    fn watched(&self, poll: Option<&[u64]>) -> (Vec<u64>, Vec<u64>) {
        let state = self.lock();
        match poll {
            Some(ids) if !ids.is_empty() => {
                ids.iter().copied().partition(|id| state.jobs.contains_key(id))
            }
            _ => (
                state
                    .jobs
                    .values()
                    .filter(|j| j.end.is_none() || !j.reported)
                    .map(|j| j.id)
                    .collect(),
                Vec::new(),
            ),
        }
    }

    /// Waits until a watched job has an unreported result, the wait window ends, or `cancel`.
    async fn wait_for(
        &self,
        watched: &[u64],
        progress: Option<ProgressFn>,
        cancel: &CancellationToken,
        started: Instant,
    ) -> bool {
        let deadline = started + self.config().wait;
        loop {
            let wait = self.inner.finished.notified();
            let (ready, running_line) = {
                let state = self.lock();
                let ready = watched
                    .iter()
                    .filter_map(|id| state.jobs.get(id))
                    .any(|j| j.end.is_some() && !j.reported);
                let all_done =
                    watched.iter().filter_map(|id| state.jobs.get(id)).all(|j| j.end.is_some());
                let line = watched
                    .iter()
                    .filter_map(|id| state.jobs.get(id))
                    .find(|j| j.end.is_none())
                    .map(|j| format!("{} running: \"{}\"", j.id_text(), last_line(&j.tail)));
                (ready || all_done, line)
            };
            if ready {
                return true;
            }
            if Instant::now() >= deadline || cancel.is_cancelled() {
                return false;
            }
            let tick = (Instant::now() + WAIT_PROGRESS_EVERY).min(deadline);
            tokio::select! {
                _ = wait => {}
                _ = cancel.cancelled() => {}
                _ = tokio::time::sleep_until(tick.into()) => {
                    if let (Some(progress), Some(line)) = (&progress, running_line) {
                        let elapsed = started.elapsed();
                        let message = format!("waiting {} s; {line}", elapsed.as_secs());
                        progress(Progress {
                            progress: elapsed.as_millis() as f64,
                            total: Some(self.config().wait.as_millis() as f64),
                            message: message.clone(),
                            elapsed_ms: elapsed.as_millis() as u64,
                            total_bytes: 0,
                            total_lines: 0,
                            tail: message,
                        });
                    }
                }
            }
        }
    }

    /// Finished jobs (full result the first time), then running ones. Marks them reported.
    /// Returns whether a finished job failed.
    fn render_poll(&self, watched: &[u64], text: &mut Vec<String>) -> bool {
        let mut state = self.lock();
        let mut failed = false;
        let fresh: Vec<u64> = watched
            .iter()
            .copied()
            .filter(|id| state.jobs.get(id).is_some_and(|j| j.end.is_some() && !j.reported))
            .collect();
        let finished: Vec<u64> = watched
            .iter()
            .copied()
            .filter(|id| state.jobs.get(id).is_some_and(|j| j.end.is_some()))
            .collect();
        let running: Vec<u64> = watched
            .iter()
            .copied()
            .filter(|id| state.jobs.get(id).is_some_and(|j| j.end.is_none()))
            .collect();
        if !finished.is_empty() {
            text.push(format!("## Finished ({})", finished.len()));
        }
        for id in &finished {
            let Some(job) = state.jobs.get_mut(id) else { continue };
            failed |= job.state() != JobState::Completed;
            if !fresh.contains(id) {
                text.push(summary(job));
                continue;
            }
            text.push(header(job));
            let result = job.end.as_ref().map(|e| e.text.clone()).unwrap_or_default();
            if fresh.len() > 1 {
                let (cut, _) = truncate_tail(&result, SHARED_RESULT_LINES, SHARED_RESULT_BYTES);
                text.push(cut.trim_end_matches('\n').to_string());
                if let Some(artifact) = &job.start.artifact {
                    text.push(format!("[full output: {artifact}]"));
                }
            } else {
                text.push(result);
            }
            job.reported = true;
        }
        if !running.is_empty() {
            text.push(format!("## Still running ({})", running.len()));
        }
        for id in &running {
            let Some(job) = state.jobs.get(id) else { continue };
            text.push(header(job));
            let tail = last_lines(&job.tail, RUNNING_TAIL_LINES);
            if !tail.trim().is_empty() {
                text.push(tail);
            }
            if let Some(artifact) = &job.start.artifact {
                text.push(format!("[output so far: {artifact}]"));
            }
        }
        failed
    }

    fn jobs_json(&self, ids: &[u64]) -> Vec<Value> {
        let state = self.lock();
        ids.iter().filter_map(|id| state.jobs.get(id)).map(job_json).collect()
    }
}
