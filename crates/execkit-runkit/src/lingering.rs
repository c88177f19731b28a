//! Processes still running after the leader exited: killed, or adopted as a job.

use std::time::{Duration, Instant};

use execkit_jobs::{JobStart, JobTable, TableFull};
use execkit_output::sink::OutputSink;
use execkit_process::run::RunOutcome;

use crate::adopted::{Adopted, follow_adopted};

/// How many lingering processes a run outcome names at most (execkit-process's cap).
const LINGERING_NAMED_MAX: usize = 64;

/// What happened to processes still running after the leader exited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LingeringAction {
    None,
    /// Stopped. `total` counts every lingering process (the outcome names at most 64);
    /// `why` says why when the caller did not ask for the stop (a full job table, say).
    Killed {
        total: usize,
        why: Option<String>,
    },
    /// Registered as the job `id`, which follows them until they are gone.
    Adopted {
        id: String,
        total: usize,
    },
}

impl LingeringAction {
    /// How many processes were left running (0 for `None`).
    pub fn total(&self) -> usize {
        match self {
            LingeringAction::None => 0,
            LingeringAction::Killed { total, .. } | LingeringAction::Adopted { total, .. } => {
                *total
            }
        }
    }
}

/// Every lingering process: the outcome names at most 64, so beyond that the tree is counted.
pub fn lingering_total(outcome: &RunOutcome) -> usize {
    let named = outcome.lingering.len();
    if named < LINGERING_NAMED_MAX {
        return named;
    }
    let leader = outcome.tree.leader_pid();
    let alive = outcome.tree.members().into_iter().filter(|pid| *pid != leader).count();
    alive.max(named)
}

/// Kills lingering processes in the background (TERM, then KILL after `grace`); the caller
/// never waits on them. `why` is kept for the result's text.
pub fn kill_lingering(
    outcome: &RunOutcome,
    grace: Duration,
    why: Option<String>,
) -> LingeringAction {
    if outcome.lingering.is_empty() {
        return LingeringAction::None;
    }
    let total = lingering_total(outcome);
    let tree = outcome.tree.clone();
    tokio::spawn(async move { tree.kill(grace).await });
    LingeringAction::Killed { total, why }
}

/// How an adopted job is set up.
pub struct Adoption<'a> {
    pub jobs: &'a JobTable,
    /// The job's label.
    pub label: String,
    /// The TERM → KILL grace when the job is cancelled or reaches its deadline.
    pub grace: Duration,
    /// The call's deadline, which the job keeps: a fork bomb whose leader exits at once
    /// still ends on time.
    pub deadline: Option<Instant>,
}

/// Registers the lingering processes as a job that follows them (their output into the sink
/// `make_sink` gives, made only once the job exists) until they are gone, the deadline passes
/// or the job is cancelled. A full job table is returned for the caller to decide.
pub fn adopt_lingering(
    outcome: &mut RunOutcome,
    adoption: Adoption<'_>,
    make_sink: impl FnOnce() -> OutputSink,
) -> Result<LingeringAction, TableFull> {
    if outcome.lingering.is_empty() {
        return Ok(LingeringAction::None);
    }
    let Adoption { jobs, label, grace, deadline } = adoption;
    let start = JobStart {
        label,
        timeout_s: deadline
            .map(|d| d.saturating_duration_since(Instant::now()).as_secs_f64().ceil() as u64),
        artifact: None,
        adopted: true,
        began: None,
    };
    let slot = jobs.register(start)?;
    let sink = make_sink();
    if let Some(uri) = sink.artifact().map(|a| a.uri()) {
        slot.set_artifact(uri);
    }
    let id = slot.id_text();
    let tree = outcome.tree.clone();
    let pipe = outcome.output.take();
    let total = lingering_total(outcome);
    tokio::spawn(follow_adopted(Adopted { tree, pipe, sink, slot, grace, deadline }));
    Ok(LingeringAction::Adopted { id, total })
}
