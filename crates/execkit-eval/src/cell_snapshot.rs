//! The per-cell snapshot (spec-eval.md JS17): after each `ok` cell of a kernel whose busy
//! cells can only be stopped by a kill, the host asks it to write its state to a file the host
//! chose. The ToolResult does not wait for the answer: the kernel handles commands in order,
//! so the next `execute` simply queues behind the snapshot, and its `snapshot_done` arrives
//! during the next cell's frame loop, which hands it here. After a kill the last completed
//! snapshot is what the replacement kernel restores.

use std::path::PathBuf;
use std::sync::Mutex;

use crate::frame::{HostFrame, NameReason};
use crate::kernel::Kernel;
use crate::park::Snapshot;

/// The kernel's per-cell snapshots: the one asked for, and the last one written.
#[derive(Debug, Default)]
pub struct CellSnapshots {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The `snapshot` request whose answer has not arrived: its id and file.
    pending: Option<(u64, PathBuf)>,
    /// The last snapshot the kernel reported written.
    done: Option<Snapshot>,
}

impl Kernel {
    /// Asks the kernel to write its state to `path`, without waiting for the answer.
    pub(crate) fn request_cell_snapshot(&self, path: PathBuf) {
        let id = self.next_id();
        let frame = HostFrame::Snapshot { id, path: path.display().to_string() };
        if self.cmd.try_send(frame).is_ok()
            && let Ok(mut state) = self.cell_snapshots.state.lock()
        {
            state.pending = Some((id, path));
        }
    }

    /// A `snapshot_done` frame: true when it answers the pending per-cell request.
    pub(crate) fn cell_snapshot_done(&self, id: u64, skipped: Vec<NameReason>) -> bool {
        let Ok(mut state) = self.cell_snapshots.state.lock() else { return false };
        match state.pending.take() {
            Some((pending, path)) if pending == id => {
                state.done = Some(Snapshot { path, skipped });
                true
            }
            other => {
                state.pending = other;
                false
            }
        }
    }

    /// The last snapshot written, for the kernel that replaces this one; `None` when no
    /// `ok` cell's snapshot completed (or its file is gone).
    pub(crate) fn last_cell_snapshot(&self) -> Option<Snapshot> {
        let done = self.cell_snapshots.state.lock().ok()?.done.clone()?;
        done.path.is_file().then_some(done)
    }
}
