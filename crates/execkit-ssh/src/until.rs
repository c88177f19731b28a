//! How long one call may go on: its deadline, and the caller's cancellation.
//!
//! Every await on the command path races both, so a call ends at its deadline or as soon as
//! the caller cancels, whichever comes first; the caller then learns which one it was.

use std::future::Future;
use std::time::Instant;

use execkit_process::CancellationToken;

/// The bound of one call: a deadline and a cancellation token.
#[derive(Debug, Clone)]
pub struct Until {
    pub deadline: Instant,
    pub cancel: CancellationToken,
}

/// Why a raced future did not finish.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    TimedOut,
    Cancelled,
}

impl Until {
    /// A bound with no canceller: for the steps that must run even after a cancel (the
    /// remote kill).
    pub fn deadline(deadline: Instant) -> Until {
        Until { deadline, cancel: CancellationToken::new() }
    }

    /// Runs `work` until it finishes, the deadline passes or the call is cancelled.
    pub async fn race<T>(&self, work: impl Future<Output = T>) -> Result<T, Stop> {
        tokio::select! {
            biased;
            out = work => Ok(out),
            _ = tokio::time::sleep_until(self.deadline.into()) => Err(Stop::TimedOut),
            _ = self.cancel.cancelled() => Err(Stop::Cancelled),
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn races_the_deadline_and_the_cancel() {
        let until = Until::deadline(Instant::now() + Duration::from_secs(1));
        let slow = until.race(tokio::time::sleep(Duration::from_secs(5))).await;
        assert_eq!(slow, Err(Stop::TimedOut));
        let until = Until::deadline(Instant::now() + Duration::from_secs(60));
        until.cancel.cancel();
        assert_eq!(until.race(std::future::pending::<()>()).await, Err(Stop::Cancelled));
        assert_eq!(until.race(async { 7 }).await, Ok(7));
    }
}
