//! What to spawn, and the handle to what was spawned.

use std::ffi::OsString;
use std::os::fd::{OwnedFd, RawFd};
use std::path::PathBuf;

use crate::tree::ProcessTree;

/// What the child's stdin is (O34).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum StdinMode {
    /// `/dev/null`: reads get EOF at once.
    #[default]
    Null,
    /// A pipe the caller writes to ([`Child::take_stdin`]).
    Pipe,
}

/// One process to start. `env` is the complete environment (nothing else is inherited).
#[derive(Debug, Default)]
pub struct SpawnSpec {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    /// `argv[0]`, when it should differ from `program`.
    pub arg0: Option<OsString>,
    pub cwd: PathBuf,
    pub env: Vec<(OsString, OsString)>,
    pub stdin: StdinMode,
    /// Extra fds the child inherits, as (fd in the parent, fd number in the child).
    pub extra_fds: Vec<(OwnedFd, RawFd)>,
}

/// A failed start: `Failed to start <program>: <os error>`.
#[derive(Debug, thiserror::Error)]
#[error("Failed to start {program}: {source}")]
pub struct SpawnError {
    pub program: String,
    #[source]
    pub source: std::io::Error,
}

/// How the leader ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExitStatus {
    pub code: Option<i32>,
    pub signal: Option<i32>,
}

/// `SIGKILL`, `SIGTERM`, … (`SIG<n>` for unnamed numbers).
pub fn signal_name(signal: i32) -> String {
    let _ = signal;
    todo!()
}

/// The read end of the child's merged stdout+stderr pipe.
#[derive(Debug)]
pub struct OutputPipe {
    _private: (),
}

impl OutputPipe {
    /// Reads into `buf`; `Ok(0)` is EOF.
    pub async fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let _ = buf;
        todo!()
    }
}

/// The write end of the child's stdin pipe.
#[derive(Debug)]
pub struct StdinPipe {
    _private: (),
}

impl StdinPipe {
    pub async fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let _ = bytes;
        todo!()
    }
}

/// A started child. Dropping it does not kill it; the tree handle (and the Supervisor's
/// `close`) does.
#[derive(Debug)]
pub struct Child {
    _private: (),
}

impl Child {
    pub fn pid(&self) -> u32 {
        todo!()
    }

    pub fn tree(&self) -> ProcessTree {
        todo!()
    }

    pub fn take_output(&mut self) -> Option<OutputPipe> {
        todo!()
    }

    pub fn take_stdin(&mut self) -> Option<StdinPipe> {
        todo!()
    }

    /// Waits for the leader to exit and reaps it.
    pub async fn wait(&mut self) -> std::io::Result<ExitStatus> {
        todo!()
    }
}
