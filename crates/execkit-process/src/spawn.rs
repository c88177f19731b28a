//! What to spawn, and the handle to what was spawned.

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::time::Duration;

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::pipe;

use crate::confine::Confinement;
use crate::pty::{PtyHandle, PtySize, PtyUnavailable};
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
    /// Run on a PTY of this size: the slave is fds 0, 1, 2 and the controlling terminal, and
    /// `stdin` is ignored (input goes through [`Child::pty`]).
    pub pty: Option<PtySize>,
    /// [`Confinement::Policy`] (the Supervisor's sandbox) by default; only
    /// [`Confinement::Exempt`] runs outside it.
    pub confinement: Confinement,
    /// The child starts a daemon that must outlive this process (an ssh ControlMaster, which
    /// forks away after authentication). It gets no cgroup leaf (the daemon would stay a
    /// member and die with it), and its tree is the leader alone: what the leader forks is
    /// never a member. The leader itself is still killed at a timeout, a cancel or close.
    /// Pass the daemon's pid to [`crate::Supervisor::disown`] once known.
    pub detached: bool,
}

/// A failed start: `Failed to start <program>: <os error>`.
#[derive(Debug, thiserror::Error)]
#[error("Failed to start {program}: {source}")]
pub struct SpawnError {
    pub program: String,
    #[source]
    pub source: std::io::Error,
}

impl SpawnError {
    /// The PTY could not be had (`EXECKIT_NO_PTY=1`, `openpty` failed); the tool falls back
    /// to pipes.
    pub fn pty_unavailable(&self) -> Option<&PtyUnavailable> {
        self.source.get_ref()?.downcast_ref::<PtyUnavailable>()
    }
}

/// How the leader ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExitStatus {
    pub code: Option<i32>,
    pub signal: Option<i32>,
}

impl ExitStatus {
    /// Decodes a `waitpid` status word.
    pub(crate) fn from_wait(status: libc::c_int) -> ExitStatus {
        if libc::WIFEXITED(status) {
            ExitStatus { code: Some(libc::WEXITSTATUS(status)), signal: None }
        } else if libc::WIFSIGNALED(status) {
            ExitStatus { code: None, signal: Some(libc::WTERMSIG(status)) }
        } else {
            ExitStatus { code: None, signal: None }
        }
    }

    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
}

/// `SIGKILL`, `SIGTERM`, … (`SIG<n>` for unnamed numbers).
pub fn signal_name(signal: i32) -> String {
    let name = match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGSTKFLT => "SIGSTKFLT",
        libc::SIGCHLD => "SIGCHLD",
        libc::SIGCONT => "SIGCONT",
        libc::SIGSTOP => "SIGSTOP",
        libc::SIGTSTP => "SIGTSTP",
        libc::SIGTTIN => "SIGTTIN",
        libc::SIGTTOU => "SIGTTOU",
        libc::SIGURG => "SIGURG",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGVTALRM => "SIGVTALRM",
        libc::SIGPROF => "SIGPROF",
        libc::SIGWINCH => "SIGWINCH",
        libc::SIGIO => "SIGIO",
        libc::SIGPWR => "SIGPWR",
        libc::SIGSYS => "SIGSYS",
        other => return format!("SIG{other}"),
    };
    name.to_string()
}

/// The read side of the child's output: its merged stdout+stderr pipe, or its PTY master.
#[derive(Debug)]
pub struct OutputPipe {
    source: Source,
    /// What a `/proc/<pid>/fd` link of a process holding the write side reads as.
    link: PathBuf,
}

#[derive(Debug)]
enum Source {
    Pipe(pipe::Receiver),
    Pty { chunks: tokio::sync::mpsc::Receiver<Vec<u8>>, pending: Vec<u8>, at: usize },
}

impl OutputPipe {
    pub(crate) fn new(fd: OwnedFd) -> io::Result<OutputPipe> {
        let link = PathBuf::from(format!("pipe:[{}]", fd_inode(&fd)?));
        Ok(OutputPipe { source: Source::Pipe(pipe::Receiver::from_owned_fd(fd)?), link })
    }

    pub(crate) fn pty(chunks: tokio::sync::mpsc::Receiver<Vec<u8>>, tty: PathBuf) -> OutputPipe {
        OutputPipe { source: Source::Pty { chunks, pending: Vec::new(), at: 0 }, link: tty }
    }

    /// Reads into `buf`; `Ok(0)` is EOF.
    pub async fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match &mut self.source {
            Source::Pipe(rx) => rx.read(buf).await,
            Source::Pty { chunks, pending, at } => {
                if *at >= pending.len() {
                    match chunks.recv().await {
                        Some(chunk) => {
                            *pending = chunk;
                            *at = 0;
                        }
                        None => return Ok(0),
                    }
                }
                let n = buf.len().min(pending.len() - *at);
                buf[..n].copy_from_slice(&pending[*at..*at + n]);
                *at += n;
                Ok(n)
            }
        }
    }

    pub(crate) fn link(&self) -> &std::path::Path {
        &self.link
    }
}

/// The write end of the child's stdin pipe.
#[derive(Debug)]
pub struct StdinPipe {
    tx: pipe::Sender,
}

impl StdinPipe {
    pub(crate) fn new(fd: OwnedFd) -> io::Result<StdinPipe> {
        Ok(StdinPipe { tx: pipe::Sender::from_owned_fd(fd)? })
    }

    pub async fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.tx.write_all(bytes).await
    }
}

pub(crate) fn fd_inode(fd: &OwnedFd) -> io::Result<u64> {
    // SAFETY: fstat writes into a zeroed, properly sized stat buffer for a valid fd.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `fd` is open for the duration of the call and `st` is a valid out pointer.
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st.st_ino)
}

/// A started child. Dropping it does not kill it; the tree handle (and the Supervisor's
/// `close`) does.
#[derive(Debug)]
pub struct Child {
    pub(crate) pid: u32,
    pub(crate) tree: ProcessTree,
    pub(crate) output: Option<OutputPipe>,
    pub(crate) stdin: Option<StdinPipe>,
    /// Readable once the leader has exited; `None` on kernels without `pidfd_open`.
    pub(crate) pidfd: Option<AsyncFd<OwnedFd>>,
    pub(crate) status: Option<ExitStatus>,
    pub(crate) pty: Option<PtyHandle>,
}

/// Poll interval when no pidfd is available (kernels before 5.3).
const WAIT_POLL: Duration = Duration::from_millis(10);

impl Child {
    pub fn pid(&self) -> u32 {
        self.pid
    }

    pub fn tree(&self) -> ProcessTree {
        self.tree.clone()
    }

    pub fn take_output(&mut self) -> Option<OutputPipe> {
        self.output.take()
    }

    pub fn take_stdin(&mut self) -> Option<StdinPipe> {
        self.stdin.take()
    }

    /// The PTY master, for a child spawned with [`SpawnSpec::pty`].
    pub fn pty(&self) -> Option<PtyHandle> {
        self.pty.clone()
    }

    /// Waits for the leader to exit and reaps it. Only this pid is waited for, never -1, so
    /// statuses of other children of the host are not stolen.
    pub async fn wait(&mut self) -> std::io::Result<ExitStatus> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        loop {
            if let Some(status) = self.try_reap()? {
                self.status = Some(status);
                self.tree.leader_reaped();
                return Ok(status);
            }
            match &self.pidfd {
                Some(fd) => {
                    let mut guard = fd.readable().await?;
                    if let Some(status) = self.try_reap()? {
                        self.status = Some(status);
                        self.tree.leader_reaped();
                        return Ok(status);
                    }
                    guard.clear_ready();
                }
                None => tokio::time::sleep(WAIT_POLL).await,
            }
        }
    }

    fn try_reap(&self) -> io::Result<Option<ExitStatus>> {
        let mut status: libc::c_int = 0;
        // SAFETY: waitpid on our own child's pid with a valid out pointer.
        let rc = unsafe { libc::waitpid(self.pid as libc::pid_t, &mut status, libc::WNOHANG) };
        match rc {
            0 => Ok(None),
            rc if rc > 0 => Ok(Some(ExitStatus::from_wait(status))),
            _ => Err(io::Error::last_os_error()),
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if self.status.is_none() {
            // Nobody will wait for the leader now; the supervisor's reaper may.
            self.tree.leader_abandoned();
        }
    }
}
