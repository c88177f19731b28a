//! When the shell snapshot (B17) runs, and where it comes from.
//!
//! A server starts it with the runner, in the background, so its first call finds it done. A
//! one-shot front end starts it at the first bash call instead: a call that runs no bash must
//! not pay for a login shell. Either way it comes from the disk cache when a fresh entry with
//! the same key exists, else from the login shell, whose output is then cached.

use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use execkit_process::Supervisor;
use execkit_process::env::ScrubRules;
use execkit_tool::Lookup;
use tokio::sync::watch;

use crate::snapshot::{self, LoginShell, SNAPSHOT_BUDGET, Snapshot};
use crate::snapshot_cache::{EntryState, SnapshotCache};

/// What the login shell run needs, owned, until it starts.
pub(crate) struct SnapshotJob {
    pub supervisor: Supervisor,
    pub bash: PathBuf,
    pub own: Lookup,
    pub rules: ScrubRules,
    pub cwd: PathBuf,
    pub full: bool,
    pub home: Option<PathBuf>,
}

impl SnapshotJob {
    fn login(&self) -> LoginShell<'_> {
        LoginShell {
            supervisor: &self.supervisor,
            bash: &self.bash,
            own: &self.own,
            rules: &self.rules,
            cwd: self.cwd.clone(),
            full: self.full,
        }
    }

    /// The disk cache entry this job reads and writes.
    fn cache(&self) -> Option<SnapshotCache> {
        SnapshotCache::new(&self.login(), self.home.as_deref())
    }

    async fn run(self) -> Snapshot {
        let login = self.login();
        let cache = self.cache();
        if let Some(output) = cache.as_ref().and_then(|c| c.load(SystemTime::now())) {
            return snapshot::from_output(&login, output).await;
        }
        match snapshot::run_login_shell(&login).await {
            Ok(output) => {
                if let Some(cache) = &cache {
                    cache.store(&output, SystemTime::now());
                }
                snapshot::from_output(&login, output).await
            }
            Err(reason) => snapshot::fallback(reason),
        }
    }
}

/// The snapshot of one runner: not started, running, or known.
pub(crate) struct SnapshotStart {
    rx: watch::Receiver<Option<Snapshot>>,
    tx: Mutex<Option<watch::Sender<Option<Snapshot>>>>,
    job: Mutex<Option<SnapshotJob>>,
    started: OnceLock<Instant>,
    /// For doctor: the entry's path and age. `None` when the snapshot is off.
    cache: Option<SnapshotCache>,
}

impl SnapshotStart {
    /// A snapshot that is known already (mode `off`, or no bash).
    pub fn known(snapshot: Snapshot) -> SnapshotStart {
        let (_tx, rx) = watch::channel(Some(snapshot));
        SnapshotStart {
            rx,
            tx: Mutex::new(None),
            job: Mutex::new(None),
            started: OnceLock::new(),
            cache: None,
        }
    }

    /// A snapshot to take; with `now` it starts at once (needs a tokio runtime), else at the
    /// first [`SnapshotStart::wait`].
    pub fn pending(job: SnapshotJob, now: bool) -> SnapshotStart {
        let (tx, rx) = watch::channel(None);
        let start = SnapshotStart {
            rx,
            tx: Mutex::new(Some(tx)),
            cache: job.cache(),
            job: Mutex::new(Some(job)),
            started: OnceLock::new(),
        };
        if now {
            start.start();
        }
        start
    }

    /// Starts the job in the background unless it has started.
    pub(crate) fn start(&self) {
        let job = self.job.lock().ok().and_then(|mut j| j.take());
        let tx = self.tx.lock().ok().and_then(|mut t| t.take());
        let (Some(job), Some(tx)) = (job, tx) else { return };
        let _ = self.started.set(Instant::now());
        tokio::spawn(async move {
            let _ = tx.send(Some(job.run().await));
        });
    }

    /// The snapshot, waiting at most for what is left of the budget since it started.
    pub async fn wait(&self) -> Snapshot {
        self.start();
        let mut rx = self.rx.clone();
        let started = self.started.get().copied().unwrap_or_else(Instant::now);
        let budget_end = started + SNAPSHOT_BUDGET + Duration::from_millis(500);
        let waited = tokio::time::timeout_at(budget_end.into(), rx.wait_for(Option::is_some)).await;
        match waited {
            Ok(Ok(snap)) => snap.clone().unwrap_or_default(),
            _ => snapshot::fallback("timed out after 3 s".to_string()),
        }
    }

    /// The snapshot when it is known.
    pub fn current(&self) -> Option<Snapshot> {
        self.rx.borrow().clone()
    }

    /// Doctor's line about the disk cache: the entry, its age, and how to clear it.
    pub fn cache_line(&self) -> Option<String> {
        let cache = self.cache.as_ref()?;
        let path = cache.path().display();
        let minutes = |age: Duration| age.as_secs() / 60;
        Some(match cache.state(SystemTime::now()) {
            EntryState::Fresh(age) => format!(
                "shell snapshot cache: {path}, {} min old (used for up to 60 min; delete it to \
                 refresh now)",
                minutes(age)
            ),
            EntryState::Stale(age) => format!(
                "shell snapshot cache: {path}, {} min old, expired (refreshed by the next bash \
                 call)",
                minutes(age)
            ),
            EntryState::Missing => format!(
                "shell snapshot cache: none for these startup files yet (written to {path} by \
                 the next bash call)"
            ),
        })
    }
}
