//! Driving a launched child to its end, killing it if the caller goes away.

use std::time::{Duration, Instant};

use execkit_output::clamp::Limits;
use execkit_process::run::{RunLimits, RunObserver, RunOutcome, run};
use execkit_process::{CancellationToken, Child, ProcessTree};

/// The limits of a run that started at `started`: a deadline `timeout_s` later (none without
/// a timeout), `cancel`, and the Toolkit's kill grace and drain bounds.
pub fn run_limits(
    limits: &Limits,
    started: Instant,
    timeout_s: Option<u64>,
    cancel: CancellationToken,
) -> RunLimits {
    RunLimits {
        deadline: timeout_s.map(|s| started + Duration::from_secs(s)),
        cancel,
        kill_grace: Duration::from_millis(limits.kill_grace_ms),
        drain_idle: Duration::from_millis(limits.drain_idle_ms),
        drain_max: Duration::from_millis(limits.drain_max_ms),
    }
}

/// Runs `child` to its end, feeding `observer`. When this future is dropped mid-run (the
/// call went away), the tree is killed in the background.
pub async fn run_to_end<O: RunObserver>(
    child: Child,
    observer: &mut O,
    limits: RunLimits,
) -> RunOutcome {
    let guard = KillOnDrop { tree: Some(child.tree()), grace: limits.kill_grace };
    let outcome = run(child, observer, limits).await;
    guard.disarm();
    outcome
}

/// Kills the tree in the background when dropped armed.
struct KillOnDrop {
    tree: Option<ProcessTree>,
    grace: Duration,
}

impl KillOnDrop {
    fn disarm(mut self) {
        self.tree = None;
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(tree) = self.tree.take() {
            let grace = self.grace;
            if let Ok(handle) = tokio::runtime::Handle::try_current() {
                handle.spawn(async move { tree.kill(grace).await });
            }
        }
    }
}
