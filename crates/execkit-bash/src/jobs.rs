//! Background work of the bash tool: `async` jobs (J1–J6) and adopted processes (B31).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use execkit_jobs::{JobEnd, JobStart, JobState};
use execkit_output::sink::SinkConfig;
use execkit_process::run::RunOutcome;
use execkit_protocol::{Content, ToolResult};
use execkit_runkit::{
    Adoption, LingeringAction, adopt_lingering, job_label, kill_lingering, mark_cancelled_kill,
    run_to_end,
};
use serde_json::json;

use crate::config::LingeringPolicy;
use crate::request::Request;
use crate::runner::{BashExtras, BashRunner};

/// Why a one-shot front end stops what a command leaves running.
const ONE_SHOT_REASON: &str = "this one-shot call ends with the command (keep processes running \
     through the MCP server, execkit mcp, and the job tool)";

impl BashRunner {
    /// J1: validates, registers, spawns and returns at once; the run continues in a task.
    pub(crate) async fn start_job(
        &self,
        request: Request,
        bash: PathBuf,
        extras: BashExtras,
    ) -> ToolResult {
        let start = JobStart {
            label: job_label(&request.original),
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
            let mut outcome = run_to_end(child, &mut observer, limits).await;
            mark_cancelled_kill(&mut outcome, &cancel);
            let lingering = runner.kill_lingering(&outcome, None);
            outcome.output = None;
            let explained = runner.explain(&request, info, outcome, observer, lingering);
            slot.finish(explained.job_end());
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
        let label = job_label(&outcome.lingering[0].cmd);
        let adoption = Adoption {
            jobs: &self.inner.deps.jobs,
            label: label.clone(),
            grace: self.kill_grace(),
            deadline,
        };
        let make_sink = || {
            let mut config = SinkConfig::from_limits(&self.inner.deps.limits);
            config.spill_from_start = true;
            self.new_sink(config, label)
        };
        match adopt_lingering(outcome, adoption, make_sink) {
            Ok(action) => action,
            Err(full) => {
                let why = format!("the background job limit is reached ({} running)", full.running);
                self.kill_lingering(outcome, Some(why))
            }
        }
    }

    /// Kills lingering members in the background; the call never waits on them. `why` is said
    /// in the result when the caller did not ask for the kill.
    pub(crate) fn kill_lingering(
        &self,
        outcome: &RunOutcome,
        why: Option<String>,
    ) -> LingeringAction {
        kill_lingering(outcome, self.kill_grace(), why)
    }
}

fn start_text(id: &str, request: &Request, artifact: Option<&str>) -> String {
    let deadline = match request.timeout.secs {
        Some(secs) => format!("deadline {secs} s"),
        None => "no deadline".to_string(),
    };
    let mut text =
        format!("Started background job {id} ({deadline}): {}", job_label(&request.original));
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
