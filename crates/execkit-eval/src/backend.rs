//! The boundary between the language-neutral eval machinery (the pool, the cell loop, the
//! result code) and one language's kernels.
//!
//! Every kernel speaks the same NDJSON protocol on the same fds (see `kernel.rs`); a
//! backend only says which executable runs its kernels, how to start one, and what doctor
//! should report about it. The backends a build has are listed in `languages.rs`.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::time::Duration;

use execkit_process::Supervisor;
use execkit_protocol::eval::Language;
use execkit_tool::Lookup;

use crate::config::EvalConfig;
use crate::error::StartError;
use crate::kernel::KernelSpawn;
use crate::pool::KernelKey;

/// A boxed future, so the trait stays usable as `dyn KernelBackend`.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a backend may read while it finds its executable or builds a spawn.
#[derive(Clone, Copy)]
pub struct BackendEnv<'a> {
    pub supervisor: &'a Supervisor,
    pub config: &'a EvalConfig,
    /// The saved environment: discovery, probes and kernels read it, never the process's.
    pub lookup: &'a Lookup,
    /// The Toolkit's working directory (as given; kernels start in the canonical one).
    pub cwd: &'a Path,
}

/// One language's kernels.
pub trait KernelBackend: Send + Sync {
    fn language(&self) -> Language;

    /// The executable this language's kernels run, found and probed once per runner. The
    /// error is the one-line message an eval call gets (it names what was tried).
    fn executable<'a>(&'a self, env: BackendEnv<'a>) -> BoxFuture<'a, Result<PathBuf, String>>;

    /// What to spawn for `key` (whose `executable` came from [`Self::executable`]); only
    /// called when a kernel has to start.
    fn spawn(&self, key: &KernelKey, env: BackendEnv<'_>) -> Result<KernelSpawn, StartError>;

    /// Doctor lines: the executable, where it was found, what was rejected.
    fn doctor(&self) -> Vec<String>;

    /// What the kernel raises in a cell on SIGINT, named in the timeout note.
    fn interrupt_name(&self) -> &'static str;

    /// How a cell of this language is stopped on timeout or cancellation.
    fn interruption(&self) -> Interruption {
        Interruption::Signal
    }

    /// Doctor lines when the backend may look things up now (`execkit doctor` starts no
    /// kernel); the default is [`Self::doctor`].
    fn doctor_in(&self, env: BackendEnv<'_>) -> Vec<String> {
        let _ = env;
        self.doctor()
    }

    /// What a crash means in this language's words, from the exit and the diagnostic tail
    /// (`ran out of memory (limit 2048 MiB)`); `None` keeps the generic exit description.
    fn crash_cause(&self, diag: &str, env: BackendEnv<'_>) -> Option<String> {
        let _ = (diag, env);
        None
    }
}

/// How the host stops a running cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interruption {
    /// SIGINT to the kernel's process group, SIGKILL after the configured grace (spec
    /// P16–P17). The kernel keeps no state across the kill.
    Signal,
    /// An `interrupt` frame, which only a cell that is waiting can act on (spec JS16). A
    /// kernel still busy after `grace` is killed and replaced at once, and the snapshot the
    /// host asked for after its last `ok` cell is restored into the replacement (JS17).
    Frame { grace: Duration },
}

/// The pool key of `session`'s kernel for `backend`.
pub fn kernel_key(
    session: &str,
    backend: &dyn KernelBackend,
    cwd: PathBuf,
    executable: PathBuf,
) -> KernelKey {
    KernelKey { session: session.to_string(), language: backend.language(), cwd, executable }
}
