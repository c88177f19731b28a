//! A child and everything it started: membership, signals, the kill tree (O37).

use std::time::Duration;

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

/// Cheap, cloneable handle to one spawned tree.
#[derive(Debug, Clone)]
pub struct ProcessTree {
    _private: (),
}

impl ProcessTree {
    pub fn leader_pid(&self) -> u32 {
        todo!()
    }

    /// Every live member: the cgroup's procs, or the group/session plus /proc descendants.
    pub fn members(&self) -> Vec<u32> {
        todo!()
    }

    /// Delivers `signal` to every member.
    pub fn signal(&self, signal: i32) {
        let _ = signal;
        todo!()
    }

    /// CONT+TERM, poll for `grace`, KILL the rest (O37). Idempotent; concurrent callers share one run.
    pub async fn kill(&self, grace: Duration) -> KillReport {
        let _ = grace;
        todo!()
    }

    /// `memory.peak` of the cgroup, when known.
    pub fn memory_peak_bytes(&self) -> Option<u64> {
        todo!()
    }

    /// True when the cgroup's `memory.events` shows an OOM kill.
    pub fn oom_killed(&self) -> bool {
        todo!()
    }
}
