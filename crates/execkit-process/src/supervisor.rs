//! The Supervisor: spawner thread, containment mode, run directory, live trees for `close`.

use std::fs::OpenOptions;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use tokio::io::unix::AsyncFd;
use tokio::sync::oneshot;
use tokio::task::JoinSet;

use crate::cgroup::{self, CgroupRoot};
use crate::confine::{Confinement, Prepared};
use crate::pids_v1::{self, PidsRoot};
use crate::pty::{PtyHandle, PtyUnavailable};
use crate::sandbox::Sandbox;
use crate::spawn::{Child, OutputPipe, SpawnError, SpawnSpec, StdinPipe};
use crate::spawner::{self, LeafFds, Request, SpawnedOutput};
use crate::tree::{Leaves, ProcessTree, Shared, lock};
use crate::{rundir, spawner::Spawned, watchdog};

/// Leaf numbers are unique per process, since every Supervisor of it shares `execkit-<pid>`.
static NEXT_LEAF: AtomicU64 = AtomicU64::new(1);

/// What `close` may take beyond the grace: the SIGKILL repeat (500 ms) and the polls.
const CLOSE_SLACK: Duration = Duration::from_millis(900);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SupervisorConfig {
    /// `EXECKIT_KILL_GRACE_MS`.
    pub kill_grace: Duration,
    /// `EXECKIT_DRAIN_IDLE_MS`.
    pub drain_idle: Duration,
    /// `EXECKIT_DRAIN_MAX_MS`.
    pub drain_max: Duration,
    /// Become a child subreaper (the `execkit` binary does; libraries only when asked).
    pub subreaper: bool,
    /// Try cgroup v2 containment (tests turn it off to exercise the fallback).
    pub use_cgroup: bool,
    /// Create each child inside its cgroup v2 leaf (`clone3` with `CLONE_INTO_CGROUP`) where
    /// the kernel allows it; `false` makes every child join its leaf by writing `cgroup.procs`,
    /// which waits for the kernel's global cgroup lock (benchmarks compare the two).
    pub spawn_into_leaf: bool,
    /// `EXECKIT_MEMORY_MAX`: `memory.max` of each leaf, when the memory controller is delegated.
    pub memory_max: Option<u64>,
    /// `EXECKIT_NO_PTY=1`: PTY spawns fail with [`crate::PtyUnavailable`] and tools fall back.
    pub no_pty: bool,
    /// `EXECKIT_PIDS_MAX`: `pids.max` of each leaf (v2 `pids` controller, else the v1 `pids`
    /// hierarchy of a hybrid host), so a fork bomb stops there.
    pub pids_max: u64,
    /// `XDG_RUNTIME_DIR`: where the run directory goes (`<dir>/execkit/<pid>`).
    pub runtime_dir: Option<PathBuf>,
    /// `TMPDIR`: where a private run directory goes when the shared one cannot be used.
    pub temp_dir: Option<PathBuf>,
    /// The sandbox policy every child is confined by (mode `off` by default).
    pub sandbox: execkit_sandbox::Policy,
}

impl Default for SupervisorConfig {
    fn default() -> Self {
        SupervisorConfig {
            kill_grace: Duration::from_millis(2000),
            drain_idle: Duration::from_millis(250),
            drain_max: Duration::from_millis(2000),
            subreaper: false,
            use_cgroup: true,
            spawn_into_leaf: true,
            memory_max: None,
            no_pty: false,
            pids_max: crate::cgroup::PIDS_MAX,
            runtime_dir: None,
            temp_dir: None,
            sandbox: execkit_sandbox::Policy::default(),
        }
    }
}

/// How children are contained (`structuredContent.containment`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Containment {
    /// Each child in its own leaf under this directory.
    Cgroup { root: PathBuf },
    /// Process group + session + /proc walk; `reason` says why cgroups are not used.
    ProcessGroup { reason: String },
}

impl Containment {
    /// `"cgroup"` or `"process_group"`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Containment::Cgroup { .. } => "cgroup",
            Containment::ProcessGroup { .. } => "process_group",
        }
    }
}

#[derive(Debug)]
struct Inner {
    config: SupervisorConfig,
    containment: Containment,
    cgroup: Option<CgroupRoot>,
    /// The v1 `pids` leaves' parent, or why spawns get none.
    pids_v1: Result<PidsRoot, String>,
    run_dir: PathBuf,
    sandbox: Sandbox,
    /// The watchdog's pid, or why there is none.
    watchdog: Result<u32, String>,
    shared: Arc<Shared>,
    requests: Mutex<Option<mpsc::Sender<Request>>>,
    closed: AtomicBool,
    /// Leaves made for the next spawn while the last child runs, so that a spawn does not
    /// wait for the two cgroup `mkdir`s (about 0.1 ms).
    spare: Mutex<Option<Leaves>>,
}

/// Owns every child this Toolkit starts. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Supervisor {
    inner: Arc<Inner>,
}

impl Supervisor {
    /// Starts the spawner thread, detects containment, creates the run directory and sweeps
    /// stale ones left by dead execkit processes (O41).
    pub fn start(config: SupervisorConfig) -> std::io::Result<Supervisor> {
        let pids_max = config.pids_max.max(1);
        if config.subreaper {
            // SAFETY: prctl with integer arguments only.
            if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        // Before any other child, so that nothing this process starts outlives it unnoticed.
        let watchdog = watchdog::ensure();
        let (cgroup, containment) = if config.use_cgroup {
            match cgroup::detect(pids_max) {
                Ok(root) => {
                    cgroup::sweep_stale(&root.dir);
                    watchdog::register_cgroup(&root.dir);
                    let containment = Containment::Cgroup { root: root.dir.clone() };
                    (Some(root), containment)
                }
                Err(reason) => (None, Containment::ProcessGroup { reason }),
            }
        } else {
            let reason = "cgroup containment turned off".to_string();
            (None, Containment::ProcessGroup { reason })
        };
        let pids_v1 = pids_v1_root(&config, cgroup.as_ref(), pids_max);
        let cgroup_marker = cgroup.as_ref().map(|_| format!("/execkit-{}/", std::process::id()));
        let shared = Arc::new(Shared {
            subreaper: config.subreaper,
            cgroup_marker,
            trees: Mutex::new(Vec::new()),
        });
        let run_dir = rundir::acquire(config.runtime_dir.as_deref(), config.temp_dir.as_deref())?;
        let sandbox = Sandbox::start(config.sandbox.clone(), &run_dir);
        let requests = match spawner::start(shared.clone()) {
            Ok(requests) => requests,
            Err(err) => {
                rundir::release(&run_dir);
                return Err(err);
            }
        };
        Ok(Supervisor {
            inner: Arc::new(Inner {
                config,
                containment,
                cgroup,
                pids_v1,
                run_dir,
                sandbox,
                watchdog,
                shared,
                requests: Mutex::new(Some(requests)),
                closed: AtomicBool::new(false),
                spare: Mutex::new(None),
            }),
        })
    }

    pub fn config(&self) -> &SupervisorConfig {
        &self.inner.config
    }

    pub fn containment(&self) -> &Containment {
        &self.inner.containment
    }

    /// Where the v1 `pids` leaves go, or why spawns get none.
    #[cfg(test)]
    pub(crate) fn pids_v1(&self) -> Result<&PidsRoot, &str> {
        self.inner.pids_v1.as_ref().map_err(String::as_str)
    }

    /// Whether the v2 leaves get `(pids, memory)` limits, when there is a v2 tree.
    #[cfg(test)]
    pub(crate) fn v2_controllers(&self) -> Option<(bool, bool)> {
        self.inner.cgroup.as_ref().map(|root| (root.pids, root.memory))
    }

    /// `$XDG_RUNTIME_DIR/execkit/<pid>` or `/tmp/execkit-<uid>/<pid>`, mode 0700 (O42).
    pub fn run_dir(&self) -> &Path {
        &self.inner.run_dir
    }

    /// Why the run directory is a private fallback rather than under the shared parent
    /// (O41a), when it is.
    pub fn run_dir_note(&self) -> Option<String> {
        rundir::note()
    }

    /// The watchdog's pid, or why there is none (for doctor).
    pub fn watchdog(&self) -> Result<u32, &str> {
        self.inner.watchdog.as_ref().copied().map_err(String::as_str)
    }

    /// The sandbox every child is confined by: its policy and how much of it is enforced.
    pub fn sandbox(&self) -> &Sandbox {
        &self.inner.sandbox
    }

    pub async fn spawn(&self, mut spec: SpawnSpec) -> Result<Child, SpawnError> {
        let program = spec.program.display().to_string();
        let fail = |source: io::Error| SpawnError { program: program.clone(), source };
        // Never unconfined in a confined mode: a sandbox that cannot be applied fails the spawn.
        let confinement = self
            .inner
            .sandbox
            .prepared(&spec.confinement)
            .map_err(|text| fail(io::Error::new(io::ErrorKind::PermissionDenied, text)))?;
        if spec.confinement == Confinement::Policy {
            self.inner.sandbox.adjust_env(&mut spec.env);
        }
        if spec.pty.is_some() && self.config().no_pty {
            let reason = "EXECKIT_NO_PTY=1".to_string();
            return Err(fail(io::Error::other(PtyUnavailable { reason })));
        }
        if self.inner.closed.load(Ordering::SeqCst) {
            // Before any leaf is made: a leaf would bring back the cgroup that close removed.
            return Err(fail(io::Error::other("the supervisor is closed")));
        }
        let detached = spec.detached;
        let (leaves, leaf_fds) = if detached {
            (Leaves::default(), LeafFds::default())
        } else {
            self.open_spare().map_err(fail)?
        };
        let result = self.request(spec, leaf_fds, confinement).await;
        let spawned = match result {
            Ok(spawned) => spawned,
            Err(err) => {
                remove_leaves(&leaves);
                return Err(fail(err));
            }
        };
        let tree = ProcessTree::new(spawned.pid, leaves, &self.inner.shared, detached);
        if !detached {
            self.refill_spare_later();
        }
        if tree.cgroup().is_none() {
            // Without a leaf, the child's process group is what the watchdog can kill.
            watchdog::register_group(tree.leader_pid(), tree.leader_start());
        }
        // Membership walks lock the registry, so finished trees are found outside the lock.
        let snapshot = lock(&self.inner.shared.trees).clone();
        let done: Vec<ProcessTree> =
            snapshot.into_iter().filter(ProcessTree::is_finished).collect();
        for tree in &done {
            // Trees waited on without `run::run` leave their empty leaves to this sweep.
            tree.remove_leaf();
            forget(tree);
        }
        {
            let mut trees = lock(&self.inner.shared.trees);
            trees.retain(|t| !done.iter().any(|d| d.same(t)));
            trees.push(tree.clone());
        }
        into_child(spawned, tree).map_err(fail)
    }

    /// Never counts the process `pid` (a daemon a detached spawn left running on purpose) as
    /// a member of any tree of this process, nor as an adopted orphan; it is reaped if it
    /// ends while this process is its parent.
    pub fn disown(&self, pid: u32) {
        crate::tree::disown(pid);
    }

    /// The spare leaves, opened, or new ones when there is no spare or it cannot be opened
    /// (something outside removed it).
    fn open_spare(&self) -> io::Result<(Leaves, LeafFds)> {
        let into_leaf = self.inner.config.spawn_into_leaf;
        if let Some(spare) = lock(&self.inner.spare).take() {
            match open_leaves(&spare, into_leaf) {
                Ok(fds) => return Ok((spare, fds)),
                Err(_) => remove_leaves(&spare),
            }
        }
        let leaves = self.leaves();
        match open_leaves(&leaves, into_leaf) {
            Ok(fds) => Ok((leaves, fds)),
            Err(err) => {
                remove_leaves(&leaves);
                Err(err)
            }
        }
    }

    /// The leaves made ahead for the next spawn, if any (tests check they go at close).
    #[cfg(test)]
    pub(crate) fn spare_leaves(&self) -> Vec<std::path::PathBuf> {
        let spare = lock(&self.inner.spare);
        spare.iter().flat_map(|l| [l.v2.clone(), l.pids_v1.clone()]).flatten().collect()
    }

    /// Makes the next spawn's leaves on a blocking thread, off this spawn's way back to its
    /// caller, unless there are some already or there is no cgroup containment.
    fn refill_spare_later(&self) {
        let inner = &self.inner;
        if (inner.cgroup.is_none() && inner.pids_v1.is_err()) || lock(&inner.spare).is_some() {
            return;
        }
        let supervisor = self.clone();
        tokio::task::spawn_blocking(move || supervisor.refill_spare());
    }

    /// Makes the next spawn's leaves, unless there are some already or the Supervisor closed.
    fn refill_spare(&self) {
        let inner = &self.inner;
        let mut spare = lock(&inner.spare);
        if spare.is_none() && !inner.closed.load(Ordering::SeqCst) {
            *spare = Some(self.leaves());
        }
    }

    /// A spawn's cgroup leaves. One number for both, so `c<n>` names the same child in each.
    fn leaves(&self) -> Leaves {
        let n = NEXT_LEAF.fetch_add(1, Ordering::Relaxed);
        let memory_max = self.inner.config.memory_max;
        let leaf =
            self.inner.cgroup.as_ref().and_then(|r| cgroup::create_leaf(r, n, memory_max).ok());
        let pids_root = self.inner.pids_v1.as_ref().ok();
        let pids_leaf = pids_root.and_then(|root| pids_v1::create_leaf(root, n).ok());
        let memory = self.inner.cgroup.as_ref().is_some_and(|root| root.memory);
        Leaves { v2: leaf, pids_v1: pids_leaf, memory }
    }

    async fn request(
        &self,
        spec: SpawnSpec,
        leaves: LeafFds,
        confinement: Prepared,
    ) -> io::Result<Spawned> {
        if self.inner.closed.load(Ordering::SeqCst) {
            return Err(io::Error::other("the supervisor is closed"));
        }
        let (reply, response) = oneshot::channel();
        let request = Request { spec, leaves, confinement, reply };
        let sent = lock(&self.inner.requests).as_ref().map(|tx| tx.send(request).is_ok());
        if sent != Some(true) {
            return Err(io::Error::other("the spawner thread is gone"));
        }
        response.await.map_err(|_| io::Error::other("the spawner thread is gone"))?
    }

    /// Kills every live tree in parallel with one shared grace; returns within grace + 1 s.
    pub async fn close(&self) {
        if self.inner.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        let trees = std::mem::take(&mut *lock(&self.inner.shared.trees));
        let grace = self.inner.config.kill_grace;
        let mut kills = JoinSet::new();
        for tree in &trees {
            let tree = tree.clone();
            kills.spawn(async move { tree.kill(grace).await });
        }
        let _ = tokio::time::timeout(grace + CLOSE_SLACK, async {
            while kills.join_next().await.is_some() {}
        })
        .await;
        for tree in &trees {
            tree.remove_leaf();
            forget(tree);
        }
        self.inner.finish();
    }
}

impl Inner {
    /// Stops the spawner thread and removes the directories; idempotent.
    fn finish(&self) {
        if lock(&self.requests).take().is_none() {
            return;
        }
        if let Some(spare) = lock(&self.spare).take() {
            remove_leaves(&spare);
        }
        let roots = cgroup::lock_roots();
        if let Some(root) = &self.cgroup {
            cgroup::remove(&root.dir);
        }
        if let Ok(root) = &self.pids_v1 {
            cgroup::remove(&root.dir);
        }
        drop(roots);
        rundir::release(&self.run_dir);
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        let trees = std::mem::take(&mut *lock(&self.shared.trees));
        for tree in &trees {
            tree.kill_now();
        }
        for tree in &trees {
            tree.remove_leaf();
            forget(tree);
        }
        self.finish();
    }
}

/// The v1 `pids` root when containment is on but the v2 tree cannot limit pids; stale
/// `execkit-<pid>` siblings of dead processes are swept.
fn pids_v1_root(
    config: &SupervisorConfig,
    v2: Option<&CgroupRoot>,
    pids_max: u64,
) -> Result<PidsRoot, String> {
    if !config.use_cgroup {
        return Err("cgroup containment turned off".into());
    }
    if v2.is_some_and(|root| root.pids) {
        return Err("the cgroup v2 tree has the pids controller".into());
    }
    let root = pids_v1::detect(pids_max)?;
    cgroup::sweep_stale(&root.dir);
    Ok(root)
}

/// The v2 leaf's directory (the child is created inside it, or joins it) and the v1 `pids`
/// leaf's `tasks` (the child joins it).
fn open_leaves(leaves: &Leaves, into_leaf: bool) -> io::Result<LeafFds> {
    let cgroup_dir = leaves.v2.as_deref().map(open_dir).transpose()?;
    let pids_tasks =
        leaves.pids_v1.as_deref().map(|leaf| open_write(&leaf.join("tasks"))).transpose()?;
    Ok(LeafFds { cgroup_dir, into_leaf, pids_tasks })
}

/// An ended tree without a leaf leaves the watchdog's list of process groups.
fn forget(tree: &ProcessTree) {
    if tree.cgroup().is_none() {
        watchdog::unregister_group(tree.leader_pid(), tree.leader_start());
    }
}

/// Removes the leaves of a spawn that did not happen.
fn remove_leaves(leaves: &Leaves) {
    leaves.v2.as_deref().map(cgroup::remove);
    leaves.pids_v1.as_deref().map(cgroup::remove);
}

fn open_write(path: &Path) -> io::Result<OwnedFd> {
    let file = OpenOptions::new().write(true).custom_flags(libc::O_CLOEXEC).open(path)?;
    Ok(file.into())
}

fn open_dir(path: &Path) -> io::Result<OwnedFd> {
    let dir = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC)
        .open(path)?;
    Ok(dir.into())
}

fn into_child(spawned: Spawned, tree: ProcessTree) -> io::Result<Child> {
    let pidfd = match spawned.pidfd {
        // SAFETY: an OwnedFd stays open, and is the same fd, for as long as the AsyncFd owns it.
        Some(fd) => Some(unsafe { AsyncFd::register(fd) }?),
        None => None,
    };
    let (output, pty) = match spawned.output {
        SpawnedOutput::Pipe(fd) => (OutputPipe::new(fd)?, None),
        SpawnedOutput::Pty(master, tty) => {
            let (handle, chunks) = PtyHandle::start(master, tty.clone())?;
            (OutputPipe::pty(chunks, tty), Some(handle))
        }
    };
    Ok(Child {
        pid: spawned.pid,
        tree,
        output: Some(output),
        stdin: spawned.stdin.map(StdinPipe::new).transpose()?,
        pidfd,
        status: None,
        pty,
    })
}

#[cfg(test)]
#[path = "supervisor_tests.rs"]
mod tests;
