//! The `job` tool: cancel, poll and list (J10–J16).

use std::time::{Duration, Instant};

use execkit_output::truncate::truncate_tail;
use execkit_protocol::job::JobParams;
use execkit_protocol::{ArgError, Content, Progress, ProgressFn, ToolResult};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::render::{header, job_json, last_line, last_lines, list_lines, summary};
use crate::table::{JobState, JobTable};

/// At most this many ids in one list (J10).
const MAX_IDS: usize = 100;
/// Lines of a running job's output shown by a poll.
const RUNNING_TAIL_LINES: usize = 10;
/// When several jobs finish together, each result is cut to its end (J12).
const SHARED_RESULT_LINES: u64 = 200;
const SHARED_RESULT_BYTES: u64 = 16 * 1024;
/// Waiting progress cadence (J13).
const WAIT_PROGRESS_EVERY: Duration = Duration::from_secs(1);
/// A cancel waits this long beyond the kill grace for the job to end (J11).
const CANCEL_SLACK: Duration = Duration::from_millis(500);

/// A validated `job` call.
struct Request {
    poll: Option<Vec<u64>>,
    cancel: Vec<u64>,
    list: bool,
}

fn parse_ids(field: &str, ids: Option<Vec<String>>) -> Result<Option<Vec<u64>>, ArgError> {
    let Some(ids) = ids else { return Ok(None) };
    if ids.len() > MAX_IDS {
        return Err(ArgError::new(field, format!("at most {MAX_IDS} job ids (got {})", ids.len())));
    }
    let mut out: Vec<u64> = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let number = id
            .strip_prefix("bg_")
            .filter(|n| (1..=9).contains(&n.len()) && n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| {
                ArgError::new(
                    format!("{field}[{i}]"),
                    format!(
                        "{} is not a job id (expected bg_<n>)",
                        serde_json::Value::from(id.as_str())
                    ),
                )
            })?;
        if !out.contains(&number) {
            out.push(number);
        }
    }
    Ok(Some(out))
}

fn validate(params: JobParams) -> Result<Request, ArgError> {
    let list = params.list.unwrap_or(false);
    if list && (params.poll.is_some() || params.cancel.is_some()) {
        return Err(ArgError::new("list", "cannot be combined with \"poll\" or \"cancel\""));
    }
    let poll = parse_ids("poll", params.poll)?;
    let cancel = parse_ids("cancel", params.cancel)?.unwrap_or_default();
    Ok(Request { poll, cancel, list })
}

fn not_found(id: u64, table: &JobTable) -> String {
    format!("bg_{id}: not found (finished jobs are kept {} s)", table.config().retention.as_secs())
}

impl JobTable {
    /// Serves one `job` call.
    pub async fn call(
        &self,
        params: JobParams,
        progress: Option<ProgressFn>,
        cancel: CancellationToken,
    ) -> ToolResult {
        let request = match validate(params) {
            Ok(request) => request,
            Err(err) => return ToolResult::error(err.to_string()),
        };
        let started = Instant::now();
        if request.list {
            return self.list(started);
        }
        let mut text = Vec::new();
        let mut is_error = false;
        let mut cancelled_json = Vec::new();
        if !request.cancel.is_empty() {
            let report_now = request.poll.is_none();
            let (lines, outcomes, failed) = self.cancel_jobs(&request.cancel, report_now).await;
            is_error |= failed;
            text.push(format!("## Cancelled ({})", request.cancel.len()));
            text.extend(lines);
            cancelled_json = outcomes;
            if request.poll.is_none() {
                let jobs = self.jobs_json(&request.cancel);
                return finish(text, is_error, jobs, Some(cancelled_json), started);
            }
        }
        let (watched, unknown) = self.watched(request.poll.as_deref());
        if watched.is_empty() && unknown.is_empty() {
            text.push("No background jobs are running.".to_string());
            let cancelled = (!cancelled_json.is_empty()).then_some(cancelled_json);
            return finish(text, is_error, Vec::new(), cancelled, started);
        }
        let finished_any = self.wait_for(&watched, progress, &cancel, started).await;
        if !finished_any && !watched.is_empty() {
            let first = if cancel.is_cancelled() {
                format!("The wait was cancelled after {:.1} s.", started.elapsed().as_secs_f64())
            } else {
                format!("No watched job finished within {} s.", self.config().wait.as_secs())
            };
            text.insert(0, first);
        }
        is_error |= !unknown.is_empty();
        // An id also cancelled in this call already has its "not found" line.
        let unseen = unknown.iter().filter(|id| !request.cancel.contains(id));
        text.extend(unseen.map(|id| not_found(*id, self)));
        is_error |= self.render_poll(&watched, &mut text);
        let jobs = self.jobs_json(&watched);
        let cancelled = (!cancelled_json.is_empty()).then_some(cancelled_json);
        finish(text, is_error, jobs, cancelled, started)
    }

    fn list(&self, started: Instant) -> ToolResult {
        let state = self.lock();
        let jobs: Vec<_> = state.jobs.values().rev().collect();
        if jobs.is_empty() {
            return finish(
                vec!["No background jobs.".to_string()],
                false,
                Vec::new(),
                None,
                started,
            );
        }
        let mut text = vec![format!("## Jobs ({})", jobs.len())];
        text.extend(list_lines(&jobs));
        let json = jobs.iter().map(|j| job_json(j)).collect();
        drop(state);
        finish(text, false, json, None, started)
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
                    (not_found(*id, self), "not_found")
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
                        format!(
                            "bg_{id}: already finished ({})",
                            crate::render::outcome_words(job)
                        ),
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

fn finish(
    text: Vec<String>,
    is_error: bool,
    jobs: Vec<Value>,
    cancelled: Option<Vec<Value>>,
    started: Instant,
) -> ToolResult {
    let mut structured = json!({"jobs": jobs, "waited_ms": started.elapsed().as_millis() as u64});
    if let (Some(cancelled), Some(object)) = (cancelled, structured.as_object_mut()) {
        object.insert("cancelled".to_string(), Value::Array(cancelled));
    }
    ToolResult {
        content: vec![Content::text(text.join("\n"))],
        structured_content: Some(structured),
        is_error,
    }
}
