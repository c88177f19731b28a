//! Driving one child to its end: output, deadline, cancellation, drain, lingering (O38–O39).

use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::spawn::{Child, ExitStatus, OutputPipe};
use crate::tree::{KillReport, ProcessTree};

/// Receives output as it arrives, and a tick every 100 ms while the run lasts.
pub trait RunObserver {
    fn output(&mut self, chunk: &[u8]);
    fn tick(&mut self) {}
}

/// How a run may end early.
#[derive(Debug, Clone)]
pub struct RunLimits {
    pub deadline: Option<Instant>,
    pub cancel: CancellationToken,
    pub kill_grace: Duration,
    pub drain_idle: Duration,
    pub drain_max: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunEnd {
    Exited,
    TimedOut,
    Cancelled,
}

/// A member still alive after the drain (O39).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lingering {
    pub pid: u32,
    /// argv joined by spaces, ≤ 120 chars.
    pub cmd: String,
    /// A `/proc/<pid>/fd` link is our pipe's write end.
    pub holds_output: bool,
}

#[derive(Debug)]
pub struct RunOutcome {
    pub end: RunEnd,
    /// The leader's status; `None` when it could not be collected.
    pub status: Option<ExitStatus>,
    pub wall: Duration,
    /// Members alive after the drain; never waited on. Empty after a timeout or cancel (the
    /// tree was killed).
    pub lingering: Vec<Lingering>,
    /// The tree, so the tool can kill or adopt the lingering members.
    pub tree: ProcessTree,
    /// The output pipe when lingering members still hold it open (for adoption).
    pub output: Option<OutputPipe>,
    pub kill: Option<KillReport>,
    pub memory_peak_bytes: Option<u64>,
    pub oom: bool,
}

/// Runs `child` until its leader exits (then drains), the deadline passes, or `cancel` fires
/// (then kills the tree and drains ≤ 500 ms).
pub async fn run(child: Child, observer: &mut dyn RunObserver, limits: RunLimits) -> RunOutcome {
    let _ = (child, observer, limits);
    todo!()
}
