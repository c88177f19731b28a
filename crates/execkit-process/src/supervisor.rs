//! The Supervisor: spawner thread, containment mode, run directory, live trees for `close`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::spawn::{Child, SpawnError, SpawnSpec};

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
}

impl Default for SupervisorConfig {
    fn default() -> Self {
        SupervisorConfig {
            kill_grace: Duration::from_millis(2000),
            drain_idle: Duration::from_millis(250),
            drain_max: Duration::from_millis(2000),
            subreaper: false,
            use_cgroup: true,
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

/// Owns every child this Toolkit starts. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Supervisor {
    _private: (),
}

impl Supervisor {
    /// Starts the spawner thread, detects containment, creates the run directory and sweeps
    /// stale ones left by dead execkit processes (O41).
    pub fn start(config: SupervisorConfig) -> std::io::Result<Supervisor> {
        let _ = config;
        todo!()
    }

    pub fn config(&self) -> &SupervisorConfig {
        todo!()
    }

    pub fn containment(&self) -> &Containment {
        todo!()
    }

    /// `$XDG_RUNTIME_DIR/execkit/<pid>` or `/tmp/execkit-<uid>/<pid>`, mode 0700 (O42).
    pub fn run_dir(&self) -> &Path {
        todo!()
    }

    pub async fn spawn(&self, spec: SpawnSpec) -> Result<Child, SpawnError> {
        let _ = spec;
        todo!()
    }

    /// Kills every live tree in parallel with one shared grace; returns within grace + 1 s.
    pub async fn close(&self) {
        todo!()
    }
}
