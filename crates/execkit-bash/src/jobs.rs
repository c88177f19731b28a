//! Background work of the bash tool: `async` jobs (J1–J6) and adopted processes (B31).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use execkit_jobs::{JobEnd, JobSlot, JobStart, JobState};
use execkit_output::sink::{OutputSink, SinkConfig};
use execkit_process::run::RunOutcome;
use execkit_process::{OutputPipe, ProcessTree};
use execkit_protocol::{Content, ToolResult};
use serde_json::json;

use crate::config::LingeringPolicy;
use crate::request::Request;
use crate::result::{LingeringAction, summary_text};
use crate::runner::{BashExtras, BashRunner};

/// Labels are the command's first line, cut at this many characters (J1).
const LABEL_CHARS: usize = 80;
/// How many lingering processes a run outcome lists at most (execkit-process's cap).
const LINGERING_NAMED_MAX: usize = 64;
/// Why a one-shot front end stops what a command leaves running.
const ONE_SHOT_REASON: &str = "this one-shot call ends with the command (keep processes running \
     through the MCP server, execkit mcp, and the job tool)";
/// How often an adopted job checks whether its processes are gone.
const ADOPTED_POLL: Duration = Duration::from_millis(250);

pub(crate) fn label(command: &str) -> String {
    let first = command.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    if first.chars().count() > LABEL_CHARS {
        let cut: String = first.chars().take(LABEL_CHARS - 1).collect();
        format!("{cut}…")
    } else {
        first.to_string()
    }
}

impl BashRunner {
    /// J1: validates, registers, spawns and returns at once; the run continues in a task.
    pub(crate) async fn start_job(
        &self,
        request: Request,
        bash: PathBuf,
        extras: BashExtras,
    ) -> ToolResult {
        let start = JobStart {
            label: label(&request.original),
            timeout_s: request.timeout.secs,
            artifact: None,
            adopted: false,
            began: None,
        };
        let slot = match self.inner.deps.jobs.register(start) {
            Ok(slot) => slot,
            Err(full) => return ToolResult::error(full.to_string()),
        };
        let launched = match self.launch(&request, bash, extras, true).await {
            Ok(launched) => launched,
            Err(result) => {
                slot.finish(JobEnd {
                    state: JobState::Failed,
                    exit_code: None,
                    signal: None,
                    text: result.text(),
                });
                return result;
            }
        };
        let cancel = slot.cancel_token();
        let run_cancel = cancel.child_token();
        let tail = slot.tail_handle();
        let progress: execkit_protocol::ProgressFn =
            Arc::new(move |p: execkit_protocol::Progress| tail.set(p.tail));
        let input_wait = self.inner.config.input_wait;
        let (child, started, mut observer, info) =
            launched.into_run(Some(progress), request.timeout.secs, input_wait, &run_cancel);
        let artifact = observer.sink.artifact().map(|a| a.uri());
        if let Some(uri) = &artifact {
            slot.set_artifact(uri.clone());
        }
        let id = slot.id_text();
        let pid = child.pid();
        let text = start_text(&id, &request, artifact.as_deref());
        let timeout_s = request.timeout.secs;
        let runner = self.clone();
        tokio::spawn(async move {
            let limits = runner.run_limits(&request, started, run_cancel);
            let mut outcome = runner.drive(child, &mut observer, limits).await;
            crate::runner::mark_cancelled_kill(&mut outcome, &cancel);
            let lingering = runner.kill_lingering(&outcome, None);
            outcome.output = None;
            let result = runner.explain(&request, info, outcome, observer, lingering);
            slot.finish(job_end(&result));
        });
        ToolResult {
            content: vec![Content::text(text)],
            structured_content: Some(json!({
                "job_id": id,
                "state": "running",
                "pid": pid,
                "artifact": artifact,
                "timeout_s": timeout_s,
            })),
            is_error: false,
        }
    }

    /// B31 for a foreground call: adopt what is left as a job, or kill it. The job keeps the
    /// call's deadline, so a fork bomb whose leader exits at once still ends on time.
    pub(crate) fn handle_lingering(
        &self,
        outcome: &mut RunOutcome,
        deadline: Option<Instant>,
    ) -> LingeringAction {
        if outcome.lingering.is_empty() {
            return LingeringAction::None;
        }
        if self.inner.config.lingering == LingeringPolicy::Kill {
            return self.kill_lingering(outcome, None);
        }
        if self.inner.config.one_shot {
            return self.kill_lingering(outcome, Some(ONE_SHOT_REASON.to_string()));
        }
        let first = &outcome.lingering[0];
        let start = JobStart {
            label: label(&first.cmd),
            timeout_s: deadline
                .map(|d| d.saturating_duration_since(Instant::now()).as_secs_f64().ceil() as u64),
            artifact: None,
            adopted: true,
            began: None,
        };
        let slot = match self.inner.deps.jobs.register(start) {
            Ok(slot) => slot,
            Err(full) => {
                let why = format!("the background job limit is reached ({} running)", full.running);
                return self.kill_lingering(outcome, Some(why));
            }
        };
        let mut config = SinkConfig::from_limits(&self.inner.deps.limits);
        config.spill_from_start = true;
        let sink = self.new_sink(config, label(&first.cmd));
        if let Some(uri) = sink.artifact().map(|a| a.uri()) {
            slot.set_artifact(uri);
        }
        let id = slot.id_text();
        let tree = outcome.tree.clone();
        let pipe = outcome.output.take();
        let grace = self.kill_grace();
        let total = lingering_total(outcome);
        tokio::spawn(watch_adopted(Adopted { tree, pipe, sink, slot, grace, deadline }));
        LingeringAction::Adopted { id, total }
    }

    /// Kills lingering members in the background; the call never waits on them. `why` is said
    /// in the result when the caller did not ask for the kill.
    pub(crate) fn kill_lingering(
        &self,
        outcome: &RunOutcome,
        why: Option<String>,
    ) -> LingeringAction {
        if outcome.lingering.is_empty() {
            return LingeringAction::None;
        }
        let total = lingering_total(outcome);
        let tree = outcome.tree.clone();
        let grace = self.kill_grace();
        tokio::spawn(async move { tree.kill(grace).await });
        LingeringAction::Killed { total, why }
    }
}

/// Every lingering process: the outcome names at most 64, so beyond that the tree is counted.
fn lingering_total(outcome: &RunOutcome) -> usize {
    let named = outcome.lingering.len();
    if named < LINGERING_NAMED_MAX {
        return named;
    }
    let leader = outcome.tree.leader_pid();
    let alive = outcome.tree.members().into_iter().filter(|pid| *pid != leader).count();
    alive.max(named)
}

fn start_text(id: &str, request: &Request, artifact: Option<&str>) -> String {
    let deadline = match request.timeout.secs {
        Some(secs) => format!("deadline {secs} s"),
        None => "no deadline".to_string(),
    };
    let mut text =
        format!("Started background job {id} ({deadline}): {}", label(&request.original));
    match artifact {
        Some(uri) => text.push_str(&format!(
            "\nOutput so far: {uri} (grows live). Wait for it with job {{\"poll\": [\"{id}\"]}}."
        )),
        None => text.push_str(&format!(
            "\nOutput is not saved (artifacts are off). Wait for it with job {{\"poll\": [\"{id}\"]}}."
        )),
    }
    for notice in &request.notices {
        text.push('\n');
        text.push_str(notice);
    }
    text
}

/// A job's end, read off the result a foreground call would have given (J5).
pub(crate) fn job_end(result: &ToolResult) -> JobEnd {
    let field = |name: &str| result.structured_content.as_ref().and_then(|s| s.get(name).cloned());
    let flag = |name: &str| field(name).and_then(|v| v.as_bool()).unwrap_or(false);
    let state = if flag("timed_out") {
        JobState::TimedOut
    } else if flag("cancelled") {
        JobState::Cancelled
    } else if result.is_error {
        JobState::Failed
    } else {
        JobState::Completed
    };
    JobEnd {
        state,
        exit_code: field("exit_code").and_then(|v| v.as_i64()).map(|c| c as i32),
        signal: field("signal").and_then(|v| v.as_str().map(str::to_string)),
        text: result.text(),
    }
}

/// Processes a foreground call left behind, and what follows them.
struct Adopted {
    tree: ProcessTree,
    pipe: Option<OutputPipe>,
    sink: OutputSink,
    slot: JobSlot,
    grace: Duration,
    deadline: Option<Instant>,
}

async fn sleep_until_opt(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

/// Follows adopted processes until they are gone, the deadline passes, or the job is cancelled.
async fn watch_adopted(adopted: Adopted) {
    let Adopted { tree, mut pipe, mut sink, slot, grace, deadline } = adopted;
    let cancel = slot.cancel_token();
    let tail = slot.tail_handle();
    let mut buf = vec![0u8; 64 << 10];
    let mut ticker = tokio::time::interval(ADOPTED_POLL);
    let state = loop {
        let read = async {
            match pipe.as_mut() {
                Some(p) => p.read(&mut buf).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            result = read => match result {
                Ok(0) | Err(_) => pipe = None,
                Ok(n) => sink.push(&buf[..n]),
            },
            _ = ticker.tick() => {
                tail.set(sink.snapshot());
                if pipe.is_none() && tree.members().is_empty() {
                    break JobState::Completed;
                }
            }
            _ = cancel.cancelled() => {
                tree.kill(grace).await;
                break JobState::Cancelled;
            }
            _ = sleep_until_opt(deadline) => {
                tree.kill(grace).await;
                break JobState::TimedOut;
            }
        }
    };
    let summary = sink.finish();
    let mut text = summary_text(&summary);
    text.push_str(match state {
        JobState::Cancelled => "\n[Command cancelled]",
        JobState::TimedOut => "\n[The adopted processes were stopped at the call's deadline]",
        _ => "\n[The adopted processes exited]",
    });
    slot.finish(JobEnd { state, exit_code: None, signal: None, text });
}
