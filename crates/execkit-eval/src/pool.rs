//! The kernel pool (spec-eval.md E33–E37): one slot per kernel key, at most `max` live kernels
//! per language with LRU eviction of idle ones, an idle timer, the restart policy, and state
//! loss remembered until the next cell can announce it.
//!
//! Starts for one key are serialised by a per-key async lock, so a call that needs a kernel
//! whose start (a pre-warm, say) is in flight waits for it instead of launching a second one.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use execkit_process::Supervisor;
use execkit_protocol::eval::Language;
use tokio::sync::{Mutex, Notify};
use tokio::time::Instant;

use crate::error::{PoolError, StartError};
use crate::kernel::{Kernel, KernelSpawn};
use crate::park::{Restored, Snapshot};

/// (session, language, canonical cwd, kernel executable).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KernelKey {
    pub session: String,
    pub language: Language,
    pub cwd: PathBuf,
    pub executable: PathBuf,
}

/// Why a kernel's state went away (E20 `state_lost.reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LossReason {
    Crashed,
    TimeoutKill,
    IdleTimeout,
    Evicted,
    ProtocolError,
}

impl LossReason {
    pub fn as_str(self) -> &'static str {
        match self {
            LossReason::Crashed => "crashed",
            LossReason::TimeoutKill => "timeout_kill",
            LossReason::IdleTimeout => "idle_timeout",
            LossReason::Evicted => "evicted",
            LossReason::ProtocolError => "protocol_error",
        }
    }
}

/// A pending announcement that the key's kernel was restarted, and why (spec E34).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loss {
    pub reason: LossReason,
    /// `the previous kernel crashed (killed by SIGSEGV)`, `it had been idle for 5 min`, …
    pub text: String,
}

#[derive(Debug, Default)]
struct Slot {
    kernel: Option<Arc<Kernel>>,
    busy: bool,
    /// A kernel for this slot is being started: it counts against the cap already.
    starting: bool,
    /// This slot's kernel was taken out and is being stopped: it still counts until it is gone.
    stopping: bool,
    last_used: Option<Instant>,
    generation: u64,
    deaths: u32,
    unavailable: Option<String>,
    loss: Option<Loss>,
    /// What was restored into a kernel that replaced a killed one, announced with the loss.
    restored: Option<Restored>,
    snapshot: Option<Snapshot>,
    start_lock: Arc<Mutex<()>>,
}

/// How long a call waits for kernels being started or stopped before it may count the room
/// under the cap; a Python start is bounded by its 10 s handshake.
const ROOM_WAIT: Duration = Duration::from_secs(15);

/// What [`Pool::make_room`] found.
enum Room {
    /// Room now, after stopping the evicted kernel (if any).
    Free(Option<(KernelKey, Arc<Kernel>)>),
    /// At the cap while another kernel is starting or stopping.
    Wait,
    /// At the cap and every kernel is running a cell.
    Busy,
}

type Slots<'a> = tokio::sync::MutexGuard<'a, HashMap<KernelKey, Slot>>;

/// The live kernel of a key, or the locked slots to start one with.
enum Live<'a> {
    Lease(Lease),
    None(Slots<'a>),
}

/// What a new kernel of a key owes its first cell: the loss to announce, the snapshot to
/// restore.
struct Owed {
    loss: Option<Loss>,
    snapshot: Option<Snapshot>,
}

/// A kernel checked out for one call; give it back with [`Pool::release`].
#[derive(Debug)]
pub struct Lease {
    pub key: KernelKey,
    pub kernel: Arc<Kernel>,
    /// True when this lease started the kernel.
    pub started: bool,
    /// The loss to announce before this lease's first cell.
    pub loss: Option<Loss>,
    /// What a parking snapshot brought back into this (new) kernel.
    pub restored: Option<Restored>,
}

#[derive(Debug)]
struct Inner {
    supervisor: Supervisor,
    slots: Mutex<HashMap<KernelKey, Slot>>,
    max: usize,
    idle: Option<Duration>,
    /// Private 0700 directory for parking snapshots; `None` when snapshots are off.
    snap_dir: Option<PathBuf>,
    /// Woken when a kernel start or stop ends, for calls waiting for room under the cap.
    changed: Notify,
}

/// The pool. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Pool {
    inner: Arc<Inner>,
}

impl Pool {
    pub fn new(
        supervisor: Supervisor,
        max: usize,
        idle: Option<Duration>,
        snap_dir: Option<PathBuf>,
    ) -> Pool {
        Pool {
            inner: Arc::new(Inner {
                supervisor,
                slots: Mutex::default(),
                max,
                idle,
                snap_dir,
                changed: Notify::new(),
            }),
        }
    }

    /// Writes `kernel`'s state to the key's snapshot file before it is stopped (P19).
    async fn park(&self, key: &KernelKey, kernel: &Kernel) -> Option<Snapshot> {
        use std::os::unix::fs::DirBuilderExt;
        let dir = self.inner.snap_dir.as_ref()?;
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).ok()?;
        kernel.snapshot(&dir.join(format!("{:016x}.pickle", key_hash(key)))).await
    }

    async fn stop_parked(&self, key: &KernelKey, kernel: Arc<Kernel>) {
        // Holding the key's start lock makes a call that arrives meanwhile wait for the
        // snapshot, so its new kernel can restore it.
        let start_lock = {
            let mut slots = self.inner.slots.lock().await;
            slots.entry(key.clone()).or_default().start_lock.clone()
        };
        let _parking = start_lock.lock().await;
        let snap = self.park(key, &kernel).await;
        if let Some(snap) = snap {
            let mut slots = self.inner.slots.lock().await;
            if let Some(slot) = slots.get_mut(key) {
                slot.snapshot = Some(snap);
            }
        }
        kernel.shutdown().await;
        self.stopped(key).await;
    }

    /// A kernel taken out of `key`'s slot has exited: it no longer counts against the cap.
    async fn stopped(&self, key: &KernelKey) {
        if let Some(slot) = self.inner.slots.lock().await.get_mut(key) {
            slot.stopping = false;
        }
        self.inner.changed.notify_waiters();
    }

    /// Whether `key` may start a kernel of its language now. Kernels being started or stopped
    /// count against the cap, so concurrent calls on other sessions cannot overshoot it; at the
    /// cap the least recently used idle kernel is taken out to be parked and stopped.
    fn make_room(&self, slots: &mut HashMap<KernelKey, Slot>, key: &KernelKey) -> Room {
        let same = |k: &KernelKey| k.language == key.language;
        let live = slots
            .iter()
            .filter(|(k, s)| same(k) && (s.kernel.is_some() || s.starting || s.stopping))
            .count();
        if live < self.inner.max {
            return Room::Free(None);
        }
        let victim = slots
            .iter()
            .filter(|(k, s)| same(k) && s.kernel.is_some() && !s.busy)
            .min_by_key(|(_, s)| s.last_used)
            .map(|(k, _)| k.clone());
        let Some(victim) = victim else {
            let settling = slots.iter().any(|(k, s)| same(k) && (s.starting || s.stopping));
            return if settling { Room::Wait } else { Room::Busy };
        };
        let Some(slot) = slots.get_mut(&victim) else { return Room::Busy };
        let evicted = slot.kernel.take().map(|k| (victim.clone(), k));
        slot.stopping = evicted.is_some();
        slot.loss = Some(Loss {
            reason: LossReason::Evicted,
            text: format!(
                "it was stopped to make room (at most {} live {} kernels)",
                self.inner.max,
                key.language.display_name()
            ),
        });
        Room::Free(evicted)
    }

    /// Checks out the kernel for `key`, starting one when needed.
    /// `spawn` is only called when a kernel has to be started.
    pub async fn acquire(
        &self,
        key: &KernelKey,
        spawn: impl FnOnce() -> Result<KernelSpawn, StartError>,
    ) -> Result<Lease, PoolError> {
        self.checkout(key, spawn, true).await
    }

    /// [`Pool::acquire`]; with `for_cell` false (a pre-warm) the kernel is left idle, so a call
    /// waiting for room under the cap may use or evict it as soon as it is up.
    async fn checkout(
        &self,
        key: &KernelKey,
        spawn: impl FnOnce() -> Result<KernelSpawn, StartError>,
        for_cell: bool,
    ) -> Result<Lease, PoolError> {
        let start_lock = {
            let mut slots = self.inner.slots.lock().await;
            slots.entry(key.clone()).or_default().start_lock.clone()
        };
        let _starting = start_lock.lock().await;
        let slots = match self.take_live(key, for_cell).await? {
            Live::Lease(lease) => return Ok(lease),
            Live::None(slots) => slots,
        };
        let (mut slots, evicted) = self.wait_for_room(slots, key).await?;
        let owed = Owed {
            loss: slots.get_mut(key).and_then(|s| s.loss.take()),
            snapshot: slots.get_mut(key).and_then(|s| s.snapshot.take()),
        };
        if let Some(slot) = slots.get_mut(key) {
            slot.starting = true;
        }
        drop(slots);
        if let Some((victim, old)) = evicted {
            self.stop_parked(&victim, old).await;
        }
        let started = match spawn() {
            Ok(spec) => Kernel::start(&self.inner.supervisor, spec).await,
            Err(e) => Err(e),
        };
        let kernel = match started {
            Ok(kernel) => Arc::new(kernel),
            Err(e) => {
                self.start_failed(key, owed).await;
                return Err(e.into());
            }
        };
        let restored = match &owed.snapshot {
            Some(snap) => {
                let restored = kernel.restore(snap).await;
                let _ = std::fs::remove_file(&snap.path);
                Some(restored)
            }
            None => None,
        };
        self.install(key, &kernel, for_cell).await;
        Ok(Lease { key: key.clone(), kernel, started: true, loss: owed.loss, restored })
    }

    /// The live kernel of `key` when there is one; a kernel found dead while idle is
    /// recorded as an unexpected death like any other.
    async fn take_live(&self, key: &KernelKey, for_cell: bool) -> Result<Live<'_>, PoolError> {
        let mut slots = self.inner.slots.lock().await;
        let slot = slots.entry(key.clone()).or_default();
        if let Some(msg) = &slot.unavailable {
            return Err(PoolError::Unavailable(msg.clone()));
        }
        let Some(kernel) = slot.kernel.clone() else { return Ok(Live::None(slots)) };
        if kernel.is_alive() {
            slot.busy |= for_cell;
            slot.generation += 1;
            let loss = slot.loss.take();
            let restored = slot.restored.take();
            return Ok(Live::Lease(Lease {
                key: key.clone(),
                kernel,
                started: false,
                loss,
                restored,
            }));
        }
        slot.kernel = None;
        let desc = kernel.exit_status().map(crate::kernel::describe_exit);
        drop(slots);
        self.record_death(key, desc.unwrap_or_else(|| "ended".into()), false).await;
        let slots = self.inner.slots.lock().await;
        if let Some(msg) = slots.get(key).and_then(|s| s.unavailable.clone()) {
            return Err(PoolError::Unavailable(msg));
        }
        Ok(Live::None(slots))
    }

    /// Room for one more live kernel of this language? While another kernel is being
    /// started or stopped the answer is not known yet: wait for that to finish (bounded).
    async fn wait_for_room<'a>(
        &'a self,
        mut slots: Slots<'a>,
        key: &KernelKey,
    ) -> Result<(Slots<'a>, Option<(KernelKey, Arc<Kernel>)>), PoolError> {
        let waited_until = Instant::now() + ROOM_WAIT;
        loop {
            match self.make_room(&mut slots, key) {
                Room::Free(evicted) => return Ok((slots, evicted)),
                Room::Wait if Instant::now() < waited_until => {
                    let changed = self.inner.changed.notified();
                    tokio::pin!(changed);
                    changed.as_mut().enable();
                    drop(slots);
                    let _ = tokio::time::timeout_at(waited_until, changed).await;
                    slots = self.inner.slots.lock().await;
                }
                Room::Wait | Room::Busy => {
                    return Err(PoolError::AllBusy {
                        max: self.inner.max,
                        lang: key.language.display_name(),
                    });
                }
            }
        }
    }

    /// A start failed: keep what is owed to the next attempt (the loss to announce, the
    /// snapshot to restore).
    async fn start_failed(&self, key: &KernelKey, owed: Owed) {
        let mut slots = self.inner.slots.lock().await;
        let slot = slots.entry(key.clone()).or_default();
        slot.starting = false;
        self.inner.changed.notify_waiters();
        slot.loss = slot.loss.take().or(owed.loss);
        slot.snapshot = slot.snapshot.take().or(owed.snapshot);
    }

    /// A started kernel becomes `key`'s: busy for a cell, idle (with its expiry) otherwise.
    async fn install(&self, key: &KernelKey, kernel: &Arc<Kernel>, for_cell: bool) {
        let mut slots = self.inner.slots.lock().await;
        let slot = slots.entry(key.clone()).or_default();
        slot.starting = false;
        slot.kernel = Some(kernel.clone());
        slot.busy = for_cell;
        slot.generation += 1;
        if !for_cell {
            self.arm_idle(key, slot);
        }
        self.inner.changed.notify_waiters();
    }

    /// Starts the kernel for `key` in the background of a caller (pre-warm): a later acquire
    /// waits for it. Failures are returned for doctor, never shown to calls.
    pub async fn prewarm(
        &self,
        key: &KernelKey,
        spawn: impl FnOnce() -> Result<KernelSpawn, StartError>,
    ) -> Result<(), PoolError> {
        self.checkout(key, spawn, false).await?;
        Ok(())
    }

    /// Gives a lease back and arms the idle timer.
    pub async fn release(&self, lease: Lease) {
        let mut slots = self.inner.slots.lock().await;
        let Some(slot) = slots.get_mut(&lease.key) else { return };
        slot.busy = false;
        slot.generation += 1;
        self.arm_idle(&lease.key, slot);
        self.inner.changed.notify_waiters();
    }

    /// Marks `slot` used now and stops its kernel after the idle timeout unless it is used
    /// again first (the generation changes).
    fn arm_idle(&self, key: &KernelKey, slot: &mut Slot) {
        slot.last_used = Some(Instant::now());
        let generation = slot.generation;
        if let (Some(idle), Some(_)) = (self.inner.idle, &slot.kernel) {
            let pool = self.clone();
            let key = key.clone();
            tokio::spawn(async move {
                tokio::time::sleep(idle).await;
                pool.expire(&key, generation, idle).await;
            });
        }
    }

    async fn expire(&self, key: &KernelKey, generation: u64, idle: Duration) {
        let kernel = {
            let mut slots = self.inner.slots.lock().await;
            let Some(slot) = slots.get_mut(key) else { return };
            if slot.busy || slot.generation != generation {
                return;
            }
            let Some(kernel) = slot.kernel.take() else { return };
            slot.stopping = true;
            slot.loss = Some(Loss {
                reason: LossReason::IdleTimeout,
                text: format!("it had been idle for {}", human_duration(idle)),
            });
            kernel
        };
        self.stop_parked(key, kernel).await;
    }

    /// The kernel behind `key` died unexpectedly (E33): the first death allows one automatic
    /// restart, the second stops the key until a reset.
    pub async fn record_death(&self, key: &KernelKey, exit: String, protocol: bool) {
        let mut slots = self.inner.slots.lock().await;
        let slot = slots.entry(key.clone()).or_default();
        slot.kernel = None;
        slot.busy = false;
        slot.deaths += 1;
        if slot.deaths >= 2 {
            slot.unavailable = Some(format!(
                "{} kernel for session \"{}\" died twice (last: {exit}) and is not restarted \
                 automatically again. Run a cell with \"reset\": true to start a fresh kernel.",
                key.language.display_name(),
                key.session
            ));
            slot.loss = None;
        } else {
            slot.loss = Some(if protocol {
                Loss {
                    reason: LossReason::ProtocolError,
                    text: "the previous kernel broke the protocol".into(),
                }
            } else {
                Loss {
                    reason: LossReason::Crashed,
                    text: format!("the previous kernel crashed ({exit})"),
                }
            });
        }
    }

    /// How many unexpected deaths `key` has had since its last reset.
    pub async fn deaths(&self, key: &KernelKey) -> u32 {
        self.inner.slots.lock().await.get(key).map_or(0, |s| s.deaths)
    }

    /// A deliberate kill of a cell that ignored SIGINT after a timeout or a cancellation:
    /// announced, never counted (E33).
    pub async fn record_timeout_kill(&self, key: &KernelKey, cancelled: bool) {
        let mut slots = self.inner.slots.lock().await;
        let slot = slots.entry(key.clone()).or_default();
        slot.kernel = None;
        slot.busy = false;
        let text = if cancelled {
            "the previous kernel was killed after its cell was cancelled and ignored the interrupt"
        } else {
            "the previous kernel was killed after a timeout"
        };
        slot.loss = Some(Loss { reason: LossReason::TimeoutKill, text: text.into() });
    }

    /// Where `key`'s kernel writes the snapshot asked for after each `ok` cell (spec JS17):
    /// a file in the private snapshot directory, `None` when snapshots are off.
    pub fn cell_snapshot_path(&self, key: &KernelKey) -> Option<PathBuf> {
        use std::os::unix::fs::DirBuilderExt;
        let dir = self.inner.snap_dir.as_ref()?;
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).ok()?;
        Some(dir.join(format!("{:016x}.cell.json", key_hash(key))))
    }

    /// A kernel killed because its cell was busy at a timeout or cancellation (spec JS16):
    /// announced, never counted, and replaced at once with `snapshot` (its last `ok` cell's
    /// state) restored. What came back is returned for the killed cell's note and kept for
    /// the next cell's announcement.
    pub async fn replace_killed(
        &self,
        key: &KernelKey,
        cancelled: bool,
        snapshot: Option<Snapshot>,
        spawn: impl FnOnce() -> Result<KernelSpawn, StartError>,
    ) -> Result<Option<Restored>, PoolError> {
        self.record_timeout_kill(key, cancelled).await;
        if let Some(snap) = snapshot {
            self.inner.slots.lock().await.entry(key.clone()).or_default().snapshot = Some(snap);
        }
        let lease = self.checkout(key, spawn, false).await?;
        let mut slots = self.inner.slots.lock().await;
        let slot = slots.entry(key.clone()).or_default();
        slot.loss = lease.loss;
        slot.restored = lease.restored.clone();
        Ok(lease.restored)
    }

    /// `reset: true` (E7): stops the kernel and clears the key's history.
    pub async fn reset(&self, key: &KernelKey) {
        if let Some(path) = self.cell_snapshot_path(key) {
            let _ = std::fs::remove_file(path);
        }
        let kernel = {
            let mut slots = self.inner.slots.lock().await;
            let Some(slot) = slots.get_mut(key) else { return };
            slot.deaths = 0;
            slot.unavailable = None;
            slot.loss = None;
            slot.restored = None;
            if let Some(snap) = slot.snapshot.take() {
                let _ = std::fs::remove_file(&snap.path);
            }
            slot.stopping = slot.kernel.is_some();
            slot.kernel.take()
        };
        if let Some(kernel) = kernel {
            kernel.shutdown().await;
            self.stopped(key).await;
        }
    }

    /// Drops every kernel whose cwd is `cwd`: that directory no longer exists, and a kernel
    /// is never moved to another one (spec B26).
    pub async fn drop_cwd(&self, cwd: &std::path::Path) {
        let gone: Vec<Arc<Kernel>> = {
            let mut slots = self.inner.slots.lock().await;
            let keys: Vec<KernelKey> = slots.keys().filter(|k| k.cwd == cwd).cloned().collect();
            keys.iter().filter_map(|k| slots.remove(k).and_then(|s| s.kernel)).collect()
        };
        for kernel in gone {
            kernel.shutdown().await;
        }
    }

    /// Live kernels per language (tests and doctor).
    pub async fn live(&self, language: Language) -> Vec<Arc<Kernel>> {
        let slots = self.inner.slots.lock().await;
        slots
            .iter()
            .filter(|(k, _)| k.language == language)
            .filter_map(|(_, s)| s.kernel.clone())
            .filter(|k| k.is_alive())
            .collect()
    }

    /// Shuts every kernel down in parallel.
    pub async fn close(&self) {
        let kernels: Vec<Arc<Kernel>> = {
            let mut slots = self.inner.slots.lock().await;
            slots.values_mut().filter_map(|s| s.kernel.take()).collect()
        };
        let mut set = tokio::task::JoinSet::new();
        for kernel in kernels {
            set.spawn(async move { kernel.shutdown().await });
        }
        while set.join_next().await.is_some() {}
        if let Some(dir) = &self.inner.snap_dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// A stable name for `key`'s files in the snapshot directory.
fn key_hash(key: &KernelKey) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut h);
    h.finish()
}

/// `5 min`, `90 s`.
pub fn human_duration(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 && s.is_multiple_of(60) { format!("{} min", s / 60) } else { format!("{s} s") }
}
