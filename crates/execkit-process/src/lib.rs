//! Process supervision for execkit: the only crate that spawns OS processes.
//!
//! Every child goes through one [`Supervisor`]: a dedicated spawner thread (so the parent-death
//! signal is tied to a thread that never exits), a new session per child, default signal
//! dispositions, only the fds it was given, and containment in a cgroup v2 leaf where the
//! machine allows it (else its process group plus a subreaper walk). [`run::run`] drives a
//! child to its end under a deadline and a cancellation token, drains its output for a bounded
//! time after the leader exits, and reports processes that linger. [`env`] builds the hardened,
//! scrubbed environments every tool passes to its children.

pub mod env;
pub mod run;
mod spawn;
mod supervisor;
mod tree;

pub use spawn::{Child, ExitStatus, OutputPipe, SpawnError, SpawnSpec, StdinMode, signal_name};
pub use supervisor::{Containment, Supervisor, SupervisorConfig};
pub use tree::{KillReport, ProcessTree, Unkillable};
pub use tokio_util::sync::CancellationToken;
