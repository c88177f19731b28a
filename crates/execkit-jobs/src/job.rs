//! One job's record: how it started, how it ended, and what polls have shown of it.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    Running,
    Completed,
    Failed,
    TimedOut,
    Cancelled,
}

impl JobState {
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Running => "running",
            JobState::Completed => "completed",
            JobState::Failed => "failed",
            JobState::TimedOut => "timed_out",
            JobState::Cancelled => "cancelled",
        }
    }
}

/// What a tool tells the table when it starts a job.
#[derive(Debug, Clone, Default)]
pub struct JobStart {
    /// The command's first line, cut at 80 chars.
    pub label: String,
    pub timeout_s: Option<u64>,
    /// `artifact://<id>` of the live output, when there is one.
    pub artifact: Option<String>,
    /// Processes a foreground command left behind (B31).
    pub adopted: bool,
    /// When the work began, if before registration (a call moved to the background).
    pub began: Option<Instant>,
}

/// How a job ended.
#[derive(Debug, Clone, PartialEq)]
pub struct JobEnd {
    pub state: JobState,
    pub exit_code: Option<i32>,
    pub signal: Option<String>,
    /// The result text a foreground call would have given.
    pub text: String,
}

#[derive(Debug)]
pub(crate) struct Job {
    pub id: u64,
    pub start: JobStart,
    pub started_at: SystemTime,
    pub started: Instant,
    pub finished: Option<Instant>,
    pub end: Option<JobEnd>,
    pub cancel: CancellationToken,
    pub tail: String,
    /// A poll or list has shown its final result.
    pub reported: bool,
    /// Another tool's result has announced it (J9).
    pub announced: bool,
    /// Retention counts from here: the finish, or a later announcement, so an announced job
    /// can still be read with the poll its announcement points to.
    pub kept_from: Option<Instant>,
}

impl Job {
    pub fn state(&self) -> JobState {
        self.end.as_ref().map_or(JobState::Running, |e| e.state)
    }

    pub fn wall(&self) -> Duration {
        self.finished.unwrap_or_else(Instant::now).saturating_duration_since(self.started)
    }

    pub fn id_text(&self) -> String {
        format!("bg_{}", self.id)
    }

    pub fn started_at_ms(&self) -> u64 {
        self.started_at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
    }
}
