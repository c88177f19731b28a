//! The job table: registration, state, retention, announcements.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::config::JobConfig;
use crate::job::{Job, JobEnd, JobStart, JobState};
use crate::render::outcome_words;

/// How many finished jobs one result announces before pointing to `list` (J9).
const ANNOUNCE_MAX: usize = 5;

/// The cap on running jobs was reached (J3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableFull {
    pub running: usize,
}

impl std::fmt::Display for TableFull {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Background job limit reached ({} running). Wait with job {{\"poll\": []}} or stop \
             one with job {{\"cancel\": [\"bg_N\"]}}.",
            self.running
        )
    }
}

#[derive(Debug, Default)]
pub(crate) struct State {
    pub next_id: u64,
    pub jobs: BTreeMap<u64, Job>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    pub config: JobConfig,
    pub state: Mutex<State>,
    /// Woken whenever a job finishes.
    pub finished: Notify,
}

/// The job table of one Toolkit. Cheap to clone.
#[derive(Debug, Clone)]
pub struct JobTable {
    pub(crate) inner: Arc<Inner>,
}

impl JobTable {
    pub fn new(config: JobConfig) -> JobTable {
        JobTable {
            inner: Arc::new(Inner {
                config,
                state: Mutex::new(State { next_id: 1, jobs: BTreeMap::new() }),
                finished: Notify::new(),
            }),
        }
    }

    pub fn config(&self) -> &JobConfig {
        &self.inner.config
    }

    /// Locks the state, first forgetting finished jobs past retention (J7). A finished job
    /// nothing has reported or announced yet is kept: it must not vanish unannounced.
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        let mut state = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
        let retention = self.inner.config.retention;
        state.jobs.retain(|_, job| {
            let untold = job.end.is_some() && !job.reported && !job.announced;
            untold || job.kept_from.is_none_or(|at| at.elapsed() <= retention)
        });
        state
    }

    pub fn running(&self) -> usize {
        self.lock().jobs.values().filter(|j| j.end.is_none()).count()
    }

    /// Registers a running job, or refuses at the cap. Ids count from 1 and are never reused.
    pub fn register(&self, start: JobStart) -> Result<JobSlot, TableFull> {
        let mut state = self.lock();
        let running = state.jobs.values().filter(|j| j.end.is_none()).count();
        if running >= self.inner.config.max_running {
            return Err(TableFull { running });
        }
        let id = state.next_id;
        state.next_id += 1;
        let cancel = CancellationToken::new();
        let started = start.began.unwrap_or_else(Instant::now);
        let started_at = SystemTime::now() - started.elapsed();
        state.jobs.insert(
            id,
            Job {
                id,
                start,
                started_at,
                started,
                finished: None,
                end: None,
                cancel: cancel.clone(),
                tail: String::new(),
                reported: false,
                announced: false,
                kept_from: None,
            },
        );
        Ok(JobSlot { table: self.clone(), id, cancel, done: false })
    }

    /// One line per finished job no poll has reported and no result has announced (J9).
    pub fn take_announcements(&self) -> Vec<String> {
        let mut state = self.lock();
        let due: Vec<&mut Job> = state
            .jobs
            .values_mut()
            .filter(|j| j.end.is_some() && !j.reported && !j.announced)
            .collect();
        let total = due.len();
        let mut lines = Vec::new();
        let now = Instant::now();
        for job in due.into_iter().take(ANNOUNCE_MAX) {
            job.announced = true;
            job.kept_from = Some(now);
            lines.push(format!(
                "[Background job {} finished: {}, after {:.1} s. Read it with job {{\"poll\": [\"{}\"]}}]",
                job.id_text(),
                outcome_words(job),
                job.wall().as_secs_f64(),
                job.id_text()
            ));
        }
        if total > ANNOUNCE_MAX {
            lines.push(format!(
                "[… and {} more finished jobs; see job {{\"list\": true}}]",
                total - ANNOUNCE_MAX
            ));
        }
        lines
    }

    /// Cancels every running job and waits until they end, at most the kill grace + 1 s.
    pub async fn close(&self) {
        let tokens: Vec<CancellationToken> = self
            .lock()
            .jobs
            .values()
            .filter(|j| j.end.is_none())
            .map(|j| j.cancel.clone())
            .collect();
        for token in &tokens {
            token.cancel();
        }
        let deadline = Instant::now() + self.inner.config.kill_grace + Duration::from_secs(1);
        loop {
            // Registered before the check, so a job finishing in between still wakes us.
            let wait = self.inner.finished.notified();
            tokio::pin!(wait);
            wait.as_mut().enable();
            if self.running() == 0 || Instant::now() >= deadline {
                break;
            }
            let _ = tokio::time::timeout_at(deadline.into(), wait).await;
        }
    }

    fn finish(&self, id: u64, end: JobEnd) {
        {
            let mut state = self.lock();
            if let Some(job) = state.jobs.get_mut(&id).filter(|j| j.end.is_none()) {
                job.end = Some(end);
                job.finished = Some(Instant::now());
                job.kept_from = job.finished;
            }
        }
        self.inner.finished.notify_waiters();
    }

    fn set_tail(&self, id: u64, tail: String) {
        if let Some(job) = self.lock().jobs.get_mut(&id) {
            job.tail = tail;
        }
    }

    fn set_artifact(&self, id: u64, artifact: String) {
        if let Some(job) = self.lock().jobs.get_mut(&id) {
            job.start.artifact = Some(artifact);
        }
    }
}

/// A running job's side of the table: its id, cancellation, tail and final result.
#[derive(Debug)]
pub struct JobSlot {
    table: JobTable,
    id: u64,
    cancel: CancellationToken,
    done: bool,
}

impl JobSlot {
    /// `bg_<n>`.
    pub fn id_text(&self) -> String {
        format!("bg_{}", self.id)
    }

    /// Cancelled by `job {"cancel": …}` or when the Toolkit closes.
    pub fn cancel_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// Publishes the latest output tail, shown by polls while the job runs.
    pub fn set_tail(&self, tail: String) {
        self.table.set_tail(self.id, tail);
    }

    pub fn set_artifact(&self, artifact: String) {
        self.table.set_artifact(self.id, artifact);
    }

    pub fn finish(mut self, end: JobEnd) {
        self.done = true;
        self.table.finish(self.id, end);
    }
}

impl Drop for JobSlot {
    fn drop(&mut self) {
        if !self.done {
            self.table.finish(
                self.id,
                JobEnd {
                    state: JobState::Failed,
                    exit_code: None,
                    signal: None,
                    text: "[The job ended without a result]".to_string(),
                },
            );
        }
    }
}

/// Publishes a running job's output tail from anywhere (a progress callback, say).
#[derive(Debug, Clone)]
pub struct TailHandle {
    table: JobTable,
    id: u64,
}

impl TailHandle {
    pub fn set(&self, tail: String) {
        self.table.set_tail(self.id, tail);
    }
}

impl JobSlot {
    pub fn tail_handle(&self) -> TailHandle {
        TailHandle { table: self.table.clone(), id: self.id }
    }
}
