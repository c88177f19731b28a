//! A child and everything it started: membership, signals, the kill tree (O37), and the
//! reaping of adopted orphans (O40).

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use tokio::sync::OnceCell;
use tokio::time::Instant;

use crate::cgroup;
use crate::procfs::{self, Stat};
use crate::signal::send;

/// How often the kill polls for members that are gone.
const KILL_POLL: Duration = Duration::from_millis(20);
/// How long SIGKILL is repeated before the survivors are reported as unkillable.
const KILL_REPEAT: Duration = Duration::from_millis(500);

/// Every tree of every Supervisor in this process, for attributing adopted orphans.
static ALL_TREES: Mutex<Vec<Weak<TreeInner>>> = Mutex::new(Vec::new());
/// (pid, start time) of daemons left running on purpose ([`disown`]): members of no tree.
static DISOWNED: Mutex<Vec<(u32, u64)>> = Mutex::new(Vec::new());
/// Disowned daemons remembered at most; the oldest are forgotten first (long gone by then).
const DISOWNED_MAX: usize = 1024;

/// Marks `pid`, as it is now, as a member of no tree.
pub(crate) fn disown(pid: u32) {
    let Some(stat) = procfs::stat(pid) else { return };
    let mut disowned = lock(&DISOWNED);
    if disowned.contains(&(pid, stat.start_time)) {
        return;
    }
    if disowned.len() >= DISOWNED_MAX {
        disowned.remove(0);
    }
    disowned.push((pid, stat.start_time));
}

fn is_disowned(stat: &Stat) -> bool {
    lock(&DISOWNED).contains(&(stat.pid, stat.start_time))
}

/// A process still alive after the kill (usually state D).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unkillable {
    pub pid: u32,
    pub state: char,
    pub cmd: String,
}

/// What a kill did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KillReport {
    /// Members that needed SIGKILL after the grace.
    pub killed_after_grace: usize,
    pub unkillable: Vec<Unkillable>,
}

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Supervisor-wide state the trees and the spawner thread share.
#[derive(Debug)]
pub(crate) struct Shared {
    pub subreaper: bool,
    /// `/execkit-<pid>/` as it appears in `/proc/<pid>/cgroup`, when cgroups are used.
    pub cgroup_marker: Option<String>,
    pub trees: Mutex<Vec<ProcessTree>>,
}

impl Shared {
    /// Reaps zombies that are our children but no `Child` will wait for: leaders whose handle
    /// was dropped, and orphans of our trees adopted as subreaper. Never `waitpid(-1)`.
    pub(crate) fn reap(&self) {
        let me = std::process::id();
        let trees = lock(&self.trees).clone();
        let abandoned = trees.iter().any(|t| {
            t.inner.abandoned.load(Ordering::SeqCst) && !t.inner.reaped.load(Ordering::SeqCst)
        });
        if trees.is_empty() || !(self.subreaper || abandoned) {
            return;
        }
        for stat in procfs::all_stats(true).iter() {
            if stat.ppid != me || stat.state != 'Z' {
                continue;
            }
            let ours = match trees.iter().find(|t| t.inner.leader == stat.pid) {
                Some(tree) => tree.inner.abandoned.load(Ordering::SeqCst),
                None if is_disowned(stat) => true,
                None => self.subreaper && trees.iter().any(|t| t.claims(stat, self)),
            };
            if ours {
                let mut status = 0;
                // SAFETY: waitpid on one specific zombie child of ours.
                let rc =
                    unsafe { libc::waitpid(stat.pid as libc::pid_t, &mut status, libc::WNOHANG) };
                if rc > 0
                    && let Some(tree) = trees.iter().find(|t| t.inner.leader == stat.pid)
                {
                    tree.leader_reaped();
                }
            }
        }
    }
}

#[derive(Debug)]
struct TreeInner {
    leader: u32,
    leader_start: u64,
    leaf: Option<PathBuf>,
    /// The v1 `pids` leaf ([`crate::pids_v1`]): it only limits, so it is only removed.
    pids_leaf: Option<PathBuf>,
    shared: Weak<Shared>,
    /// (pid, start time) of every member ever seen, so adopted orphans stay members.
    seen: Mutex<HashSet<(u32, u64)>>,
    reaped: AtomicBool,
    abandoned: AtomicBool,
    kill_once: OnceCell<KillReport>,
    /// A detached spawn ([`crate::SpawnSpec::detached`]): the leader is the only member.
    detached: bool,
    /// The v2 leaf has the memory controller (`memory.peak`, `memory.events`).
    memory: bool,
    /// Both leaves are gone; later removals have nothing to do.
    leaves_removed: AtomicBool,
}

/// The cgroup leaves one spawn joined.
#[derive(Debug, Default)]
pub(crate) struct Leaves {
    pub v2: Option<PathBuf>,
    pub pids_v1: Option<PathBuf>,
    /// The v2 leaf has the memory controller.
    pub memory: bool,
}

/// Cheap, cloneable handle to one spawned tree.
#[derive(Debug, Clone)]
pub struct ProcessTree {
    inner: Arc<TreeInner>,
}

impl ProcessTree {
    pub(crate) fn new(
        leader: u32,
        leaves: Leaves,
        shared: &Arc<Shared>,
        detached: bool,
    ) -> ProcessTree {
        let leader_start = procfs::stat(leader).map_or(0, |s| s.start_time);
        let tree = ProcessTree {
            inner: Arc::new(TreeInner {
                leader,
                leader_start,
                leaf: leaves.v2,
                pids_leaf: leaves.pids_v1,
                shared: Arc::downgrade(shared),
                seen: Mutex::new(HashSet::new()),
                reaped: AtomicBool::new(false),
                abandoned: AtomicBool::new(false),
                kill_once: OnceCell::new(),
                detached,
                memory: leaves.memory,
                leaves_removed: AtomicBool::new(false),
            }),
        };
        let mut all = lock(&ALL_TREES);
        all.retain(|t| t.strong_count() > 0);
        all.push(Arc::downgrade(&tree.inner));
        tree
    }

    pub fn leader_pid(&self) -> u32 {
        self.inner.leader
    }

    /// The leader's start time (clock ticks since boot; 0 when it was gone at spawn).
    pub(crate) fn leader_start(&self) -> u64 {
        self.inner.leader_start
    }

    /// The cgroup leaf, in cgroup mode.
    pub fn cgroup(&self) -> Option<&std::path::Path> {
        self.inner.leaf.as_deref()
    }

    /// The v1 `pids` leaf, when the v2 tree has no `pids` controller.
    pub(crate) fn pids_leaf(&self) -> Option<&std::path::Path> {
        self.inner.pids_leaf.as_deref()
    }

    pub(crate) fn same(&self, other: &ProcessTree) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    pub(crate) fn leader_reaped(&self) {
        self.inner.reaped.store(true, Ordering::SeqCst);
    }

    pub(crate) fn leader_abandoned(&self) {
        self.inner.abandoned.store(true, Ordering::SeqCst);
    }

    /// The leader is collected (or nobody will) and no member is left.
    pub(crate) fn is_finished(&self) -> bool {
        let leader_done =
            self.inner.reaped.load(Ordering::SeqCst) || self.inner.abandoned.load(Ordering::SeqCst);
        // A removed v2 leaf had no members left (rmdir refuses a populated cgroup).
        let emptied =
            self.inner.leaf.is_some() && self.inner.leaves_removed.load(Ordering::Acquire);
        leader_done && (emptied || self.poll_members().is_empty())
    }

    /// Every live member: the cgroup's procs, or the group/session plus /proc descendants.
    pub fn members(&self) -> Vec<u32> {
        self.member_stats().iter().map(|s| s.pid).collect()
    }

    fn member_stats(&self) -> Vec<Stat> {
        self.scan(false)
    }

    /// Members for a poll, where a scan a few ms old is good enough.
    fn poll_members(&self) -> Vec<Stat> {
        self.scan(true)
    }

    fn scan(&self, shared: bool) -> Vec<Stat> {
        let me = std::process::id();
        let stats: Vec<Stat> = match &self.inner.leaf {
            Some(leaf) => cgroup::procs(leaf).into_iter().filter_map(procfs::stat).collect(),
            None if self.inner.detached => self.leader_alone(),
            None => self.walk(&procfs::all_stats(shared)),
        };
        let live: Vec<Stat> =
            stats.into_iter().filter(|s| procfs::is_live(s) && s.pid != me).collect();
        lock(&self.inner.seen).extend(live.iter().map(|s| (s.pid, s.start_time)));
        live
    }

    /// A detached tree's one member: its leader, while it runs.
    fn leader_alone(&self) -> Vec<Stat> {
        if self.inner.reaped.load(Ordering::SeqCst) {
            return Vec::new();
        }
        let leader = procfs::stat(self.inner.leader);
        leader.filter(|s| s.start_time == self.inner.leader_start).into_iter().collect()
    }

    /// Fallback membership (O36): the session and group of the leader, members seen before,
    /// orphans adopted as subreaper, and all their descendants.
    fn walk(&self, stats: &[Stat]) -> Vec<Stat> {
        let me = std::process::id();
        let leader = self.inner.leader;
        let seen = lock(&self.inner.seen).clone();
        let shared = self.inner.shared.upgrade();
        // SAFETY: getsid(0) only queries this process.
        let own_session = unsafe { libc::getsid(0) } as u32;
        let disowned = lock(&DISOWNED).clone();
        let kept = |s: &Stat| !disowned.contains(&(s.pid, s.start_time));
        let mut set: HashSet<u32> = HashSet::new();
        for stat in stats.iter().filter(|s| procfs::is_live(s) && s.pid != me && kept(s)) {
            let direct = stat.pid == leader
                || stat.session == leader
                || stat.pgrp == leader
                || seen.contains(&(stat.pid, stat.start_time));
            // Our trees all start in sessions of their own, so a child of ours in our own
            // session is the host's, not an orphan adopted from a tree.
            let adopted = shared.as_ref().is_some_and(|sh| sh.subreaper)
                && stat.ppid == me
                && stat.session != own_session
                && self.owns_orphan(stat);
            if direct || adopted {
                set.insert(stat.pid);
            }
        }
        loop {
            let before = set.len();
            for stat in stats {
                if stat.pid != me && set.contains(&stat.ppid) && kept(stat) {
                    set.insert(stat.pid);
                }
            }
            if set.len() == before {
                break;
            }
        }
        stats.iter().filter(|s| set.contains(&s.pid)).copied().collect()
    }

    /// An orphan re-parented to us that left its tree's session (a `setsid` double fork)
    /// belongs to the most recent tree able to adopt it, of any Supervisor in this process,
    /// started before it.
    /// Orphans still in a tree's session or group, or in one of our cgroup leaves, are that
    /// tree's.
    fn owns_orphan(&self, orphan: &Stat) -> bool {
        if is_disowned(orphan) {
            return false;
        }
        let trees: Vec<Arc<TreeInner>> =
            lock(&ALL_TREES).iter().filter_map(Weak::upgrade).collect();
        if trees.iter().any(|t| {
            t.leader == orphan.pid || t.leader == orphan.session || t.leader == orphan.pgrp
        }) {
            return false;
        }
        let marker = format!("/execkit-{}/", std::process::id());
        if cgroup::v2_path_contains(orphan.pid, &marker) {
            return false;
        }
        // Only a tree that can claim adopted orphans may own one: a tree with a leaf finds
        // its members there, and one of a Supervisor without subreaper never claims them.
        let can_adopt =
            |t: &TreeInner| t.leaf.is_none() && t.shared.upgrade().is_some_and(|s| s.subreaper);
        let owner = trees
            .iter()
            .filter(|t| can_adopt(t) && t.leader_start <= orphan.start_time)
            .max_by_key(|t| t.leader_start);
        owner.is_some_and(|t| Arc::ptr_eq(t, &self.inner))
    }

    /// True when a zombie child of ours was a member of this tree.
    fn claims(&self, zombie: &Stat, shared: &Shared) -> bool {
        if zombie.session == self.inner.leader
            || lock(&self.inner.seen).contains(&(zombie.pid, zombie.start_time))
        {
            return true;
        }
        let Some(marker) = &shared.cgroup_marker else { return false };
        cgroup::v2_path_contains(zombie.pid, marker)
    }

    /// Delivers `signal` to every member.
    pub fn signal(&self, signal: i32) {
        let members = self.member_stats();
        self.signal_members(&members, signal);
    }

    fn signal_members(&self, members: &[Stat], signal: i32) {
        let leader = self.inner.leader;
        if self.inner.leaf.is_none() && members.iter().any(|s| s.pgrp == leader) {
            // SAFETY: killpg has no memory effects; the group exists (a member is in it).
            unsafe { libc::killpg(leader as libc::pid_t, signal) };
        }
        for stat in members {
            send(stat.pid, signal);
        }
    }

    /// CONT+TERM, poll for `grace`, KILL the rest (O37). Idempotent; concurrent callers share
    /// one run, and later callers get its report.
    pub async fn kill(&self, grace: Duration) -> KillReport {
        self.inner.kill_once.get_or_init(|| self.kill_run(grace)).await.clone()
    }

    async fn kill_run(&self, grace: Duration) -> KillReport {
        let members = self.member_stats();
        if members.is_empty() {
            self.remove_leaf();
            return KillReport::default();
        }
        self.signal_members(&members, libc::SIGCONT);
        self.signal_members(&members, libc::SIGTERM);
        let until = Instant::now() + grace;
        let mut survivors = members.len();
        while Instant::now() < until {
            tokio::time::sleep(KILL_POLL).await;
            survivors = self.poll_members().len();
            if survivors == 0 {
                self.remove_leaf();
                return KillReport::default();
            }
        }
        let until = Instant::now() + KILL_REPEAT;
        let mut left = self.member_stats();
        while !left.is_empty() {
            let cgroup_killed = self.inner.leaf.as_deref().is_some_and(cgroup::kill_all);
            if !cgroup_killed {
                self.signal_members(&left, libc::SIGKILL);
            }
            if Instant::now() >= until {
                break;
            }
            tokio::time::sleep(KILL_POLL).await;
            left = self.poll_members();
        }
        let unkillable = left
            .iter()
            .map(|s| Unkillable { pid: s.pid, state: s.state, cmd: procfs::cmdline(s.pid, 120) })
            .collect();
        self.remove_leaf();
        KillReport { killed_after_grace: survivors, unkillable }
    }

    /// Best-effort immediate SIGKILL of every member (Drop paths).
    pub(crate) fn kill_now(&self) {
        let cgroup_killed = self.inner.leaf.as_deref().is_some_and(cgroup::kill_all);
        if !cgroup_killed {
            let members = self.member_stats();
            self.signal_members(&members, libc::SIGKILL);
        }
    }

    /// Removes the cgroup leaves when they are empty.
    pub(crate) fn remove_leaf(&self) -> bool {
        if self.inner.leaves_removed.load(Ordering::Acquire) {
            return true;
        }
        let v2 = self.inner.leaf.as_deref().is_none_or(cgroup::remove);
        let pids_v1 = self.pids_leaf().is_none_or(cgroup::remove);
        let removed = v2 && pids_v1;
        if removed {
            self.inner.leaves_removed.store(true, Ordering::Release);
        }
        removed
    }

    /// The v2 leaf, when it has the memory controller.
    fn memory_leaf(&self) -> Option<&std::path::Path> {
        self.inner.leaf.as_deref().filter(|_| self.inner.memory)
    }

    /// `memory.peak` of the cgroup, when known.
    pub fn memory_peak_bytes(&self) -> Option<u64> {
        cgroup::memory_peak(self.memory_leaf()?)
    }

    /// True when the cgroup's `memory.events` shows an OOM kill.
    pub fn oom_killed(&self) -> bool {
        self.memory_leaf().is_some_and(|leaf| cgroup::oom_kills(leaf) > 0)
    }
}
