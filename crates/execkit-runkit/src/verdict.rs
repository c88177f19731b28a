//! How a run ended, typed: what a tool's result text and a job's end are both made from.

use execkit_jobs::{JobEnd, JobState};
use execkit_process::run::{RunEnd, RunOutcome};
use execkit_process::{CancellationToken, signal_name};

/// The kind of end a run had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The leader exited by itself (with any status).
    Exited,
    /// Killed by a signal, or by the kernel's OOM killer.
    Killed,
    TimedOut,
    Cancelled,
    /// The tool stopped it for a reason of its own (bash: a command waiting for input).
    Stopped,
}

/// A run's end: what happened, the exit code and signal to report, and whether the call
/// failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    pub ending: Ending,
    /// The exit code, `128 + n` for a leader killed by signal `n`; `None` after a timeout,
    /// cancel or stop, or when no status could be collected.
    pub exit_code: Option<i32>,
    /// The signal that killed the leader, when the run was not ended by us.
    pub signal: Option<i32>,
    /// Anything but an exit with code 0 is a failure.
    pub failed: bool,
}

impl Verdict {
    /// The verdict of a finished run.
    pub fn of(outcome: &RunOutcome) -> Verdict {
        let (ending, status) = match outcome.end {
            RunEnd::TimedOut => (Ending::TimedOut, None),
            RunEnd::Cancelled => (Ending::Cancelled, None),
            RunEnd::Exited => (Ending::Exited, outcome.status),
        };
        let signal = status.and_then(|s| s.signal);
        let exit_code = status.and_then(|s| s.code.or(signal.map(|sig| 128 + sig)));
        let killed = signal.is_some() || outcome.oom;
        let ending = if ending == Ending::Exited && killed { Ending::Killed } else { ending };
        let failed = ending != Ending::Exited || exit_code != Some(0);
        Verdict { ending, exit_code, signal, failed }
    }

    /// The verdict of a run the tool stopped itself: no exit code or signal to report.
    pub fn stopped() -> Verdict {
        Verdict { ending: Ending::Stopped, exit_code: None, signal: None, failed: true }
    }

    /// A job's end with this verdict and the result's `text`.
    pub fn job_end(&self, text: String) -> JobEnd {
        let state = match self.ending {
            Ending::TimedOut => JobState::TimedOut,
            Ending::Cancelled => JobState::Cancelled,
            _ if self.failed => JobState::Failed,
            _ => JobState::Completed,
        };
        JobEnd { state, exit_code: self.exit_code, signal: self.signal.map(signal_name), text }
    }
}

/// A leader killed by a signal after `cancel` fired (the Toolkit closing, say) was killed by
/// us: the run counts as cancelled, not as a crash.
pub fn mark_cancelled_kill(outcome: &mut RunOutcome, cancel: &CancellationToken) {
    let by_signal = outcome.status.is_some_and(|s| s.signal.is_some());
    if outcome.end == RunEnd::Exited && by_signal && cancel.is_cancelled() {
        outcome.end = RunEnd::Cancelled;
    }
}
