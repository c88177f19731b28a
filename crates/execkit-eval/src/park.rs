//! Parking (spec-eval.md P19): before a kernel is stopped for idle time or eviction the host
//! asks it to write its restorable state to a file in a private directory; the next kernel for
//! that key loads it before its first cell, and the announcement says what came back.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::frame::{HostFrame, KernelFrame, NameReason};
use crate::kernel::{Event, Kernel};

/// Budget for writing a snapshot (P19).
const SNAPSHOT_BUDGET: Duration = Duration::from_secs(10);
/// Budget for loading one, outside the cell's clock.
const RESTORE_BUDGET: Duration = Duration::from_secs(30);
/// Names listed in an announcement before `+<k> more`.
const LIST_MAX: usize = 20;

/// What a snapshot saved and skipped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    pub path: PathBuf,
    pub skipped: Vec<NameReason>,
}

/// What a restore brought back.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Restored {
    pub names: Vec<String>,
    pub not_restored: Vec<NameReason>,
}

impl Restored {
    /// `restored 4 names (df, np, clean, cfg); not restored: conn (cannot be pickled)`.
    pub fn clause(&self) -> String {
        let mut out = match self.names.len() {
            0 => "restored 0 names".to_string(),
            1 => format!("restored 1 name ({})", list(&self.names)),
            n => format!("restored {n} names ({})", list(&self.names)),
        };
        if !self.not_restored.is_empty() {
            let items: Vec<String> =
                self.not_restored.iter().map(|n| format!("{} ({})", n.name, n.reason)).collect();
            out.push_str(&format!("; not restored: {}", list(&items)));
        }
        out
    }
}

fn list(items: &[String]) -> String {
    let shown: Vec<&str> = items.iter().take(LIST_MAX).map(String::as_str).collect();
    let mut out = shown.join(", ");
    if items.len() > LIST_MAX {
        out.push_str(&format!(", +{} more", items.len() - LIST_MAX));
    }
    out
}

impl Kernel {
    async fn request(&self, frame: HostFrame, id: u64, budget: Duration) -> Option<KernelFrame> {
        let mut events = self.events.lock().await;
        self.cmd.send(frame).await.ok()?;
        let wait = async {
            while let Some(event) = events.recv().await {
                match event {
                    Event::Frame(f @ KernelFrame::SnapshotDone { id: fid, .. })
                    | Event::Frame(f @ KernelFrame::RestoreDone { id: fid, .. })
                        if fid == id =>
                    {
                        return Some(f);
                    }
                    Event::Closed | Event::TooLong => return None,
                    _ => {}
                }
            }
            None
        };
        tokio::time::timeout(budget, wait).await.ok().flatten()
    }

    /// Asks the kernel to write its state to `path`.
    pub async fn snapshot(&self, path: &Path) -> Option<Snapshot> {
        let id = self.next_id();
        let frame = HostFrame::Snapshot { id, path: path.display().to_string() };
        match self.request(frame, id, SNAPSHOT_BUDGET).await? {
            KernelFrame::SnapshotDone { skipped, .. } => {
                Some(Snapshot { path: path.to_path_buf(), skipped })
            }
            _ => None,
        }
    }

    /// Loads a snapshot written by [`Kernel::snapshot`].
    pub async fn restore(&self, snap: &Snapshot) -> Restored {
        let id = self.next_id();
        let frame = HostFrame::Restore { id, path: snap.path.display().to_string() };
        let mut out = match self.request(frame, id, RESTORE_BUDGET).await {
            Some(KernelFrame::RestoreDone { restored, failed, .. }) => {
                Restored { names: restored, not_restored: failed }
            }
            _ => Restored {
                names: Vec::new(),
                not_restored: vec![NameReason {
                    name: "*".into(),
                    reason: "the restore did not finish".into(),
                }],
            },
        };
        out.not_restored.extend(snap.skipped.iter().cloned());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clause_lists_and_caps() {
        let r = Restored {
            names: vec!["df".into(), "np".into()],
            not_restored: vec![NameReason {
                name: "conn".into(),
                reason: "cannot be pickled".into(),
            }],
        };
        assert_eq!(r.clause(), "restored 2 names (df, np); not restored: conn (cannot be pickled)");
        let many: Vec<String> = (0..25).map(|i| format!("v{i}")).collect();
        let r = Restored { names: many, not_restored: vec![] };
        assert!(r.clause().ends_with(", v19, +5 more)"), "{}", r.clause());
    }
}
