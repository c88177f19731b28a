//! The spawner thread (O33).
//!
//! `PR_SET_PDEATHSIG` fires when the *thread* that created the child exits, not the process.
//! tokio's blocking-pool threads exit after 10 s idle, so every clone happens on this one
//! thread, which lives as long as its Supervisor. Being the only spawner, it also owns the one
//! stack every child runs on until it execs ([`crate::vfork`]).

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::{Arc, mpsc};
use std::time::Duration;

use tokio::sync::oneshot;

use crate::child::{ChildSetup, MAX_EXTRA_FDS};
use crate::confine::Prepared;
use crate::spawn::{SpawnSpec, StdinMode};
use crate::tree::Shared;
use crate::vfork::{self, ChildStack, ExecImage, Launch};

/// Adopted orphans are reaped this often (O40).
const REAP_INTERVAL: Duration = Duration::from_secs(1);

/// What the spawner thread hands back.
#[derive(Debug)]
pub(crate) struct Spawned {
    pub pid: u32,
    pub pidfd: Option<OwnedFd>,
    pub output: SpawnedOutput,
    pub stdin: Option<OwnedFd>,
}

pub(crate) enum SpawnedOutput {
    Pipe(OwnedFd),
    Pty(Box<dyn portable_pty::MasterPty + Send>, std::path::PathBuf),
}

impl std::fmt::Debug for SpawnedOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SpawnedOutput::Pipe(fd) => f.debug_tuple("Pipe").field(fd).finish(),
            SpawnedOutput::Pty(_, tty) => f.debug_tuple("Pty").field(tty).finish(),
        }
    }
}

/// The child's cgroup leaves, opened before the clone.
#[derive(Default)]
pub(crate) struct LeafFds {
    /// The v2 leaf's directory.
    pub cgroup_dir: Option<OwnedFd>,
    /// Create the child inside the v2 leaf where the kernel can (else it joins by a write).
    pub into_leaf: bool,
    /// `tasks` of the v1 `pids` leaf.
    pub pids_tasks: Option<OwnedFd>,
}

pub(crate) struct Request {
    pub spec: SpawnSpec,
    pub leaves: LeafFds,
    /// The sandbox the child applies, prepared by the Supervisor from its policy.
    pub confinement: Prepared,
    pub reply: oneshot::Sender<io::Result<Spawned>>,
}

/// Starts the thread; it ends when every sender is dropped.
pub(crate) fn start(shared: Arc<Shared>) -> io::Result<mpsc::Sender<Request>> {
    let (tx, rx) = mpsc::channel::<Request>();
    std::thread::Builder::new().name("execkit-spawner".into()).spawn(move || {
        let mut stack = None;
        loop {
            match rx.recv_timeout(REAP_INTERVAL) {
                Ok(request) => {
                    let Request { spec, leaves, confinement, reply } = request;
                    let result = spawn_one(&mut stack, spec, leaves, confinement);
                    if let Err(Ok(orphan)) = reply.send(result) {
                        // The caller stopped waiting (its future was dropped): nobody would
                        // ever track this child.
                        kill_unwanted(orphan.pid);
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => shared.reap(),
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
    })?;
    Ok(tx)
}

fn kill_unwanted(pid: u32) {
    let mut status = 0;
    // SAFETY: our own, unreaped child: the pid cannot have been reused.
    unsafe {
        libc::kill(pid as libc::pid_t, libc::SIGKILL);
        libc::waitpid(pid as libc::pid_t, &mut status, 0);
    }
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: pipe2 writes two fds into a two-element array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both fds were just created and are owned by nobody else.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    Ok((above_stdio(read)?, above_stdio(write)?))
}

fn pidfd_open(pid: u32) -> Option<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new fd or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    // SAFETY: a non-negative return is a new fd that we own.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

fn spawn_one(
    stack: &mut Option<ChildStack>,
    spec: SpawnSpec,
    leaves: LeafFds,
    confinement: Prepared,
) -> io::Result<Spawned> {
    if spec.extra_fds.len() > MAX_EXTRA_FDS {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "too many extra fds"));
    }
    let image = ExecImage::new(&spec)?;
    let cwd = match spec.cwd.as_os_str().as_bytes() {
        [] => None,
        bytes => Some(CString::new(bytes).map_err(|_| vfork::nul_error())?),
    };
    let pty = spec.pty.map(crate::pty::open).transpose()?;
    let null = open_null()?;
    let (stdin_read, stdin_write) = match (&pty, &spec.stdin) {
        (None, StdinMode::Pipe) => {
            let (read, write) = pipe()?;
            (Some(read), Some(write))
        }
        _ => (None, None),
    };
    // A PTY child's setup puts the slave on 0, 1 and 2 after these.
    let (out_read, out_write) = match &pty {
        Some(_) => (None, None),
        None => {
            let (read, write) = pipe()?;
            (Some(read), Some(write))
        }
    };
    let fd_of = |fd: &Option<OwnedFd>| fd.as_ref().map_or(null.as_raw_fd(), AsRawFd::as_raw_fd);
    let out = fd_of(&out_write);
    let mut launch = Launch {
        stdio: [fd_of(&stdin_read), out, out],
        cwd,
        setup: ChildSetup {
            parent: std::process::id() as libc::pid_t,
            cgroup_procs: None,
            pids_tasks: leaves.pids_tasks.as_ref().map(AsRawFd::as_raw_fd),
            extra: spec.extra_fds.iter().map(|(fd, target)| (fd.as_raw_fd(), *target)).collect(),
            tty: pty.as_ref().map(|p| p.tty_c.clone()),
        },
        cgroup_dir: leaves.cgroup_dir.as_ref().map(AsRawFd::as_raw_fd),
        into_leaf: leaves.into_leaf,
        confinement,
        image,
    };
    let stack = match stack {
        Some(stack) => stack,
        None => stack.insert(ChildStack::new()?),
    };
    let spawned = vfork::spawn(stack, &mut launch);
    // Drop the parent's copies of the child's ends now, so EOF reaches us when the child's
    // side closes.
    drop((launch, null, stdin_read, out_write, leaves, spec.extra_fds));
    let pid = spawned.map_err(|err| cwd_error(&spec.cwd, err))?;
    let output = match (pty, out_read) {
        (Some(pty), _) => {
            // The child has its own slave fds now; ours would keep EOF from ever arriving.
            drop(pty.slave);
            SpawnedOutput::Pty(pty.master, pty.tty)
        }
        (None, Some(read)) => SpawnedOutput::Pipe(read),
        (None, None) => return Err(io::Error::other("no output pipe")),
    };
    Ok(Spawned { pid, pidfd: pidfd_open(pid), output, stdin: stdin_write })
}

/// `/dev/null`, read-only: the stdin of a child without a stdin pipe, and what a PTY child's
/// 0, 1 and 2 are before the slave replaces them.
fn open_null() -> io::Result<OwnedFd> {
    // SAFETY: open with a static C string; the result is checked.
    let fd = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a new fd that nobody else owns.
    above_stdio(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Moves an fd numbered 0, 1 or 2 (a host that closed its own stdio) above 2, so the child's
/// stdio `dup2`s cannot overwrite a source before it is used.
fn above_stdio(fd: OwnedFd) -> io::Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    // SAFETY: F_DUPFD_CLOEXEC on an open fd; the result is checked.
    let high = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
    if high < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a new fd that nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(high) })
}

/// A failed `chdir` in the child reads like a failed exec; name the directory instead.
fn cwd_error(cwd: &Path, err: io::Error) -> io::Error {
    if cwd.as_os_str().is_empty() || cwd.is_dir() {
        return err;
    }
    io::Error::new(err.kind(), format!("cannot enter working directory {}: {err}", cwd.display()))
}
