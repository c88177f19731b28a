//! A run in its own task, for a call that may hand it to a job while it runs.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use execkit_process::run::{RunLimits, RunObserver, RunOutcome};
use execkit_process::{CancellationToken, Child};
use tokio::sync::oneshot;
use tokio_util::sync::DropGuard;

use crate::drive::run_to_end;
use crate::observer::{Observer, Watcher};
use crate::verdict::mark_cancelled_kill;

/// A run driven by a task of its own. Dropping it (the call went away) cancels the run, until
/// [`BackgroundRun::detach`] hands it over.
pub struct BackgroundRun<W> {
    observer: Arc<Mutex<Observer<W>>>,
    outcome: oneshot::Receiver<RunOutcome>,
    run_cancel: CancellationToken,
    guard: Option<DropGuard>,
    caller_cancelled: bool,
}

/// How [`BackgroundRun::wait`] returned.
pub enum Waited {
    /// The run ended; `None` when its task went away without an outcome.
    Ended(Option<RunOutcome>),
    /// The time given passed with the run still going.
    Reached,
}

/// The observer shared between the running task and the call.
struct Shared<W>(Arc<Mutex<Observer<W>>>);

fn lock<W>(observer: &Mutex<Observer<W>>) -> MutexGuard<'_, Observer<W>> {
    observer.lock().unwrap_or_else(|e| e.into_inner())
}

impl<W: Watcher> RunObserver for Shared<W> {
    fn output(&mut self, chunk: &[u8]) {
        lock(&self.0).output(chunk);
    }

    fn tick(&mut self) {
        lock(&self.0).tick();
    }
}

impl<W: Watcher + 'static> BackgroundRun<W> {
    /// Starts driving `child`; `limits.cancel` becomes the run's own token.
    pub fn spawn(child: Child, observer: Observer<W>, limits: RunLimits) -> BackgroundRun<W> {
        let run_cancel = limits.cancel.clone();
        let observer = Arc::new(Mutex::new(observer));
        let (tx, outcome) = oneshot::channel();
        let task_observer = observer.clone();
        tokio::spawn(async move {
            let mut shared = Shared(task_observer);
            let outcome = run_to_end(child, &mut shared, limits).await;
            // Let go of the observer before the outcome is seen, so the receiver owns it alone.
            drop(shared);
            let _ = tx.send(outcome);
        });
        let guard = Some(run_cancel.clone().drop_guard());
        BackgroundRun { observer, outcome, run_cancel, guard, caller_cancelled: false }
    }

    /// Waits for the end of the run, or until `until`. The caller's `cancel` cancels the run,
    /// after which only its end is waited for.
    pub async fn wait(&mut self, until: Option<Instant>, cancel: &CancellationToken) -> Waited {
        let until = until.filter(|_| !self.caller_cancelled);
        loop {
            let reached = !self.caller_cancelled;
            tokio::select! {
                outcome = &mut self.outcome => return Waited::Ended(outcome.ok()),
                _ = cancel.cancelled(), if !self.caller_cancelled => {
                    self.caller_cancelled = true;
                    self.run_cancel.cancel();
                }
                _ = execkit_process::run::sleep_until_opt(until), if reached => {
                    return Waited::Reached;
                }
            }
        }
    }

    /// The observer, while the run may still be writing to it.
    pub fn observer(&self) -> MutexGuard<'_, Observer<W>> {
        lock(&self.observer)
    }

    /// The observer once the run has ended; `None` if something still holds it.
    pub fn into_observer(mut self) -> Option<Observer<W>> {
        self.guard.take().map(DropGuard::disarm);
        let observer = Arc::try_unwrap(self.observer).ok()?;
        Some(observer.into_inner().unwrap_or_else(|e| e.into_inner()))
    }

    /// Hands the run over: it is no longer cancelled when this value goes away. The returned
    /// future follows it to its end, `cancel` (a job's token) cancelling it; a leader killed
    /// after that cancel counts as cancelled.
    pub fn detach(
        mut self,
        cancel: CancellationToken,
    ) -> impl Future<Output = Option<(RunOutcome, Observer<W>)>> + Send {
        self.guard.take().map(DropGuard::disarm);
        let BackgroundRun { observer, outcome, run_cancel, .. } = self;
        follow(observer, outcome, run_cancel, cancel)
    }
}

/// Follows a detached run to its end; `cancel` cancels it.
async fn follow<W>(
    observer: Arc<Mutex<Observer<W>>>,
    outcome: oneshot::Receiver<RunOutcome>,
    run_cancel: CancellationToken,
    cancel: CancellationToken,
) -> Option<(RunOutcome, Observer<W>)> {
    let watch = cancel.clone();
    let forward = run_cancel.clone();
    tokio::spawn(async move {
        tokio::select! {
            _ = watch.cancelled() => forward.cancel(),
            _ = forward.cancelled() => {}
        }
    });
    let outcome = outcome.await;
    run_cancel.cancel();
    let mut outcome = outcome.ok()?;
    mark_cancelled_kill(&mut outcome, &cancel);
    let observer = Arc::try_unwrap(observer).ok()?;
    Some((outcome, observer.into_inner().unwrap_or_else(|e| e.into_inner())))
}
