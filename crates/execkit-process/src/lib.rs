//! Process supervision for execkit: the only crate that spawns OS processes.
//!
//! Every child goes through one [`Supervisor`]: a dedicated spawner thread (so the parent-death
//! signal is tied to a thread that never exits), a new session per child, default signal
//! dispositions, only the fds it was given, and containment in a cgroup v2 leaf where the
//! machine allows it (else its process group plus a subreaper walk). The child is created
//! inside its leaf (`clone3` with `CLONE_INTO_CGROUP`) rather than moved there, because a move
//! waits for the kernel's global cgroup lock. Where the v2 tree has no `pids` controller but a
//! v1 `pids` hierarchy is writable (hybrid hosts), each child also joins a v1 leaf whose
//! `pids.max` stops fork bombs. The next spawn's leaves are made while the last child runs.
//! [`run::run`] drives a child to its end under a deadline and a cancellation token, drains its
//! output for a bounded time after the leader exits, and reports processes that linger. [`mod@env`] builds the hardened, scrubbed
//! environments every tool passes to its children.
//!
//! A child may run on a PTY instead of a pipe ([`SpawnSpec::pty`]); its output then comes
//! through the same [`OutputPipe`], and [`PtyHandle`] gives the foreground process group and
//! line-discipline flags that input-wait detection needs.
//!
//! Every child is confined by the Supervisor's sandbox policy ([`SupervisorConfig::sandbox`]):
//! Landlock rules, a seccomp filter, a private network namespace shared by the Supervisor's
//! children and a mount namespace for protected paths, all prepared once in the parent
//! ([`Sandbox`]) and applied in the child with raw syscalls right before exec. A spawn opts
//! out only by naming [`Confinement::Exempt`], so no tool can run unconfined by accident;
//! where a confined mode cannot be enforced, no confined child starts.
//!
//! Statuses are collected per pid (a pidfd says when), never with `waitpid(-1)`, so a host
//! with children of its own keeps their statuses.

mod cgroup;
mod child;
mod clone3;
mod confine;
pub mod env;
mod environ_block;
pub mod gated_regex;
pub mod glob;
mod pids_v1;
pub mod procfs;
mod pty;
pub mod run;
mod rundir;
mod sandbox;
mod saved_env;
mod scrub;
mod search_path;
mod signal;
mod spawn;
mod spawner;
mod supervisor;
mod tree;
mod vfork;
mod watchdog;

pub use confine::Confinement;
pub use execkit_sandbox as policy;
pub use pty::{PtyHandle, PtySize, PtyUnavailable, TermMode};
pub use sandbox::{Sandbox, SocketFactory};
pub use search_path::find_on_path;
pub use spawn::{
    Child, ExitStatus, OutputPipe, SpawnError, SpawnSpec, StdinMode, StdinPipe, signal_name,
};
pub use supervisor::{Containment, Supervisor, SupervisorConfig};
pub use tokio_util::sync::CancellationToken;
pub use tree::{KillReport, ProcessTree, Unkillable};
