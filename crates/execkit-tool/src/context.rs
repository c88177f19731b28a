//! The per-call context a front end hands to a tool.

use execkit_protocol::ProgressFn;
use tokio_util::sync::CancellationToken;

/// What one call carries besides its arguments. Cancelling `cancel` (or dropping the call's
/// future, which the dispatcher turns into a cancel) kills whatever the call started.
#[derive(Clone, Default)]
pub struct CallContext {
    /// Receives progress events, at most one per throttle interval.
    pub progress: Option<ProgressFn>,
    pub cancel: CancellationToken,
}

impl CallContext {
    /// The same progress sink with another cancellation token (a child of the caller's, say).
    pub fn with_cancel(&self, cancel: CancellationToken) -> CallContext {
        CallContext { progress: self.progress.clone(), cancel }
    }
}
