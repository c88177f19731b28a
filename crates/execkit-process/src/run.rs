//! Driving one child to its end: output, deadline, cancellation, drain, lingering (O38–O39).

use std::time::{Duration, Instant};

use tokio::time::{Interval, MissedTickBehavior};
use tokio_util::sync::CancellationToken;

use crate::procfs;
use crate::spawn::{Child, ExitStatus, OutputPipe};
use crate::tree::{KillReport, ProcessTree};

/// Output is read in chunks of this size.
const READ_BUF: usize = 64 * 1024;
/// The observer's tick: progress at most every 100 ms (architecture §3).
const TICK: Duration = Duration::from_millis(100);
/// After a kill, EOF comes as soon as the killed processes' fds close; what has not arrived
/// by then is held by an unkillable process, so waiting longer gains nothing.
const KILLED_DRAIN_MAX: Duration = Duration::from_millis(500);
/// `cmd` of a lingering process is cut to this many characters (O39).
const CMD_MAX_CHARS: usize = 120;
/// After a cancel, only output already buffered is read: the caller is not kept waiting.
const CANCEL_DRAIN: Duration = Duration::from_millis(100);
/// Lingering members reported at most: a fork bomb must not turn the report into a /proc walk
/// of thousands of processes. The kill still reaches every member.
const LINGERING_MAX: usize = 64;

/// Receives output as it arrives, and a tick every 100 ms while the run lasts.
pub trait RunObserver: Send {
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

/// The output side of a run: the pipe (until EOF), the buffer, the observer and its ticks.
struct Reader<'a> {
    pipe: Option<OutputPipe>,
    buf: Vec<u8>,
    observer: &'a mut dyn RunObserver,
    ticks: Interval,
}

impl Reader<'_> {
    /// Reads one chunk, or ticks; pending forever after EOF except for ticks.
    async fn step(&mut self) -> bool {
        let got_data;
        tokio::select! {
            read = read_some(&mut self.pipe, &mut self.buf) => {
                match read {
                    Some(n) if n > 0 => {
                        self.observer.output(&self.buf[..n]);
                        got_data = true;
                    }
                    _ => {
                        self.pipe = None;
                        got_data = false;
                    }
                }
            }
            _ = self.ticks.tick() => {
                self.observer.tick();
                got_data = false;
            }
        }
        got_data
    }

    /// Reads until EOF, `idle` without data, or `max` in total.
    async fn drain(&mut self, idle: Duration, max: Duration) {
        let until = tokio::time::Instant::now() + max;
        let mut idle_at = tokio::time::Instant::now() + idle;
        while self.pipe.is_some() {
            tokio::select! {
                got = self.step() => {
                    if got {
                        idle_at = tokio::time::Instant::now() + idle;
                    }
                }
                _ = tokio::time::sleep_until(idle_at.min(until)) => break,
            }
        }
    }
}

async fn read_some(pipe: &mut Option<OutputPipe>, buf: &mut [u8]) -> Option<usize> {
    match pipe {
        Some(pipe) => pipe.read(buf).await.ok(),
        None => std::future::pending().await,
    }
}

/// Sleeps until `deadline`; without one, never wakes (a `select!` arm that never fires).
pub async fn sleep_until_opt(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

/// Runs `child` until its leader exits (then drains), the deadline passes, or `cancel` fires
/// (then kills the tree and drains ≤ 500 ms).
pub async fn run(
    mut child: Child,
    observer: &mut dyn RunObserver,
    limits: RunLimits,
) -> RunOutcome {
    let started = Instant::now();
    let tree = child.tree();
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + TICK, TICK);
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut reader = Reader { pipe: child.take_output(), buf: vec![0; READ_BUF], observer, ticks };
    let link = reader.pipe.as_ref().map(|pipe| pipe.link().to_path_buf());

    let mut status = None;
    let end = {
        let wait = child.wait();
        tokio::pin!(wait);
        loop {
            tokio::select! {
                result = &mut wait => {
                    status = result.ok();
                    break RunEnd::Exited;
                }
                _ = reader.step() => {}
                _ = sleep_until_opt(limits.deadline) => break RunEnd::TimedOut,
                _ = limits.cancel.cancelled() => break RunEnd::Cancelled,
            }
        }
    };

    let mut kill = None;
    let mut memory_peak_bytes = tree.memory_peak_bytes();
    let mut oom = tree.oom_killed();
    match end {
        RunEnd::Exited => reader.drain(limits.drain_idle, limits.drain_max).await,
        RunEnd::Cancelled => {
            // Cancelling never blocks (B30): the kill and the reap finish in the background,
            // and only what is already buffered is read.
            kill_in_background(&tree, child, limits.kill_grace);
            reader.drain(CANCEL_DRAIN, CANCEL_DRAIN).await;
        }
        RunEnd::TimedOut => {
            let (report, reaped) = kill_while_reading(&tree, child, &mut reader, &limits).await;
            kill = Some(report);
            status = reaped;
        }
    }

    let lingering =
        if end == RunEnd::Exited { lingering_members(&tree, link.as_deref()) } else { Vec::new() };
    if let Some(peak) = tree.memory_peak_bytes() {
        memory_peak_bytes = Some(peak);
    }
    oom = oom || tree.oom_killed();
    if lingering.is_empty() {
        tree.remove_leaf();
    }
    let output = if lingering.iter().any(|l| l.holds_output) { reader.pipe.take() } else { None };
    RunOutcome {
        end,
        status,
        wall: started.elapsed(),
        lingering,
        tree,
        output,
        kill,
        memory_peak_bytes,
        oom,
    }
}

/// Kills the tree and reaps the leader in a task of their own.
fn kill_in_background(tree: &ProcessTree, mut child: Child, grace: Duration) {
    let killer = tree.clone();
    tokio::spawn(async move {
        killer.kill(grace).await;
        let _ = tokio::time::timeout(KILLED_DRAIN_MAX, child.wait()).await;
    });
}

/// Kills the tree after a timeout, reading output all the while (a writer blocked on a full
/// pipe cannot handle SIGTERM), then reaps the leader and drains what is left.
async fn kill_while_reading(
    tree: &ProcessTree,
    mut child: Child,
    reader: &mut Reader<'_>,
    limits: &RunLimits,
) -> (KillReport, Option<ExitStatus>) {
    let killing = tree.kill(limits.kill_grace);
    tokio::pin!(killing);
    let report = loop {
        tokio::select! {
            report = &mut killing => break report,
            _ = reader.step() => {}
        }
    };
    let reap = tokio::time::timeout(KILLED_DRAIN_MAX, child.wait());
    tokio::pin!(reap);
    let status = loop {
        tokio::select! {
            result = &mut reap => break result.ok().and_then(Result::ok),
            _ = reader.step() => {}
        }
    };
    reader.drain(limits.drain_idle, KILLED_DRAIN_MAX).await;
    (report, status)
}

/// Members other than the leader still alive, at most [`LINGERING_MAX`]; `link` is what a
/// fd holding our output pipe links to.
fn lingering_members(tree: &ProcessTree, link: Option<&std::path::Path>) -> Vec<Lingering> {
    let leader = tree.leader_pid();
    tree.members()
        .into_iter()
        .filter(|pid| *pid != leader)
        .take(LINGERING_MAX)
        .map(|pid| Lingering {
            pid,
            cmd: procfs::cmdline(pid, CMD_MAX_CHARS),
            holds_output: link.is_some_and(|link| procfs::holds(pid, link)),
        })
        .collect()
}
