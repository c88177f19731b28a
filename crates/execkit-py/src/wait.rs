//! Waiting for a call with the GIL released, while staying interruptible by Ctrl-C.
//!
//! Python runs signal handlers only on its main thread and only when that thread checks for
//! them. So the wait gives the GIL back every [`SIGNAL_POLL`] to run pending handlers: when
//! one raises (`KeyboardInterrupt` for SIGINT), the call is cancelled, its process tree is
//! killed, and only once the call has ended is the exception raised to the caller.

use std::time::Duration;

use execkit::ToolResult;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use tokio::runtime::Runtime;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// How often a waiting call checks for signals: short enough that Ctrl-C feels immediate,
/// long enough that the checks cost nothing next to a process spawn.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// A call running on the runtime, with the token that cancels it.
pub struct Running {
    pub handle: JoinHandle<ToolResult>,
    pub cancel: CancellationToken,
}

impl Running {
    /// Waits for the result; a signal handler's exception cancels the call, waits for it to
    /// end, and is returned instead.
    pub fn wait(mut self, py: Python<'_>, runtime: &Runtime) -> PyResult<ToolResult> {
        loop {
            let handle = &mut self.handle;
            let polled = py.detach(|| {
                runtime.block_on(async { tokio::time::timeout(SIGNAL_POLL, handle).await })
            });
            if let Ok(joined) = polled {
                return joined
                    .map_err(|e| PyRuntimeError::new_err(format!("tool call failed: {e}")));
            }
            if let Err(interrupt) = py.check_signals() {
                self.cancel.cancel();
                let handle = &mut self.handle;
                // The cancelled call kills its tree and ends within the kill grace.
                let _ = py.detach(|| runtime.block_on(handle));
                return Err(interrupt);
            }
        }
    }
}
