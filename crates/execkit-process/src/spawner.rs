//! The spawner thread (O33) and the child's setup between fork and exec (O34).
//!
//! `PR_SET_PDEATHSIG` fires when the *thread* that forked exits, not the process. tokio's
//! blocking-pool threads exit after 10 s idle, so every fork happens on this one thread, which
//! lives as long as its Supervisor.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use tokio::sync::oneshot;

use crate::spawn::{SpawnSpec, StdinMode};
use crate::tree::Shared;

/// At most this many extra fds per child: the child's setup cannot allocate, so the
/// temporaries live in a fixed array.
pub(crate) const MAX_EXTRA_FDS: usize = 32;

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

pub(crate) struct Request {
    pub spec: SpawnSpec,
    /// `cgroup.procs` of the child's leaf, opened before the fork.
    pub cgroup_procs: Option<OwnedFd>,
    pub reply: oneshot::Sender<io::Result<Spawned>>,
}

/// Starts the thread; it ends when every sender is dropped.
pub(crate) fn start(shared: Arc<Shared>) -> io::Result<mpsc::Sender<Request>> {
    let (tx, rx) = mpsc::channel::<Request>();
    std::thread::Builder::new().name("execkit-spawner".into()).spawn(move || {
        loop {
            match rx.recv_timeout(REAP_INTERVAL) {
                Ok(request) => {
                    let result = spawn_one(request.spec, request.cgroup_procs);
                    if let Err(Ok(orphan)) = request.reply.send(result) {
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
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn pidfd_open(pid: u32) -> Option<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new fd or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    // SAFETY: a non-negative return is a new fd that we own.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

#[allow(clippy::disallowed_methods)] // the one spawn path
fn spawn_one(spec: SpawnSpec, cgroup_procs: Option<OwnedFd>) -> io::Result<Spawned> {
    if spec.extra_fds.len() > MAX_EXTRA_FDS {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "too many extra fds"));
    }
    let pty = spec.pty.map(crate::pty::open).transpose()?;
    let mut cmd = Command::new(&spec.program);
    cmd.args(&spec.args);
    if let Some(arg0) = &spec.arg0 {
        cmd.arg0(arg0);
    }
    cmd.env_clear();
    cmd.envs(spec.env.iter().map(|(k, v)| (k, v)));
    if !spec.cwd.as_os_str().is_empty() {
        cmd.current_dir(&spec.cwd);
    }
    let stdin_write = match (&pty, &spec.stdin) {
        (None, StdinMode::Pipe) => {
            let (read, write) = pipe()?;
            cmd.stdin(Stdio::from(read));
            Some(write)
        }
        _ => {
            cmd.stdin(Stdio::null());
            None
        }
    };
    let out_read = match &pty {
        // The child's setup puts the slave on 0, 1 and 2.
        Some(_) => {
            cmd.stdout(Stdio::null()).stderr(Stdio::null());
            None
        }
        None => {
            let (read, write) = pipe()?;
            cmd.stdout(Stdio::from(write.try_clone()?));
            cmd.stderr(Stdio::from(write));
            Some(read)
        }
    };

    let setup = ChildSetup {
        parent: std::process::id() as libc::pid_t,
        cgroup_procs: cgroup_procs.as_ref().map(AsRawFd::as_raw_fd),
        extra: spec.extra_fds.iter().map(|(fd, target)| (fd.as_raw_fd(), *target)).collect(),
        tty: pty.as_ref().map(|p| p.tty_c.clone()),
    };
    // SAFETY: `ChildSetup::apply` only makes async-signal-safe syscalls and reads memory
    // allocated before the fork; it never allocates.
    unsafe {
        cmd.pre_exec(move || setup.apply());
    }
    let spawned = cmd.spawn();
    // The Command holds the parent's copies of the child's pipe ends; drop them now so EOF
    // reaches us when the child's side closes.
    drop(cmd);
    drop(cgroup_procs);
    drop(spec.extra_fds);
    let child = spawned.map_err(|err| cwd_error(&spec.cwd, err))?;
    let pid = child.id();
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

/// std reports a failed `chdir` in the child like a failed exec; name the directory instead.
fn cwd_error(cwd: &Path, err: io::Error) -> io::Error {
    if cwd.as_os_str().is_empty() || cwd.is_dir() {
        return err;
    }
    io::Error::new(err.kind(), format!("cannot enter working directory {}: {err}", cwd.display()))
}

struct ChildSetup {
    parent: libc::pid_t,
    cgroup_procs: Option<RawFd>,
    extra: Vec<(RawFd, RawFd)>,
    /// The PTY slave's path.
    tty: Option<std::ffi::CString>,
}

const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;

impl ChildSetup {
    /// Runs in the child between fork and exec.
    fn apply(&self) -> io::Result<()> {
        // SAFETY: plain syscalls on this (single-threaded) forked child; no allocation.
        unsafe {
            check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0))?;
            // The parent may have died between fork and prctl; then nothing would kill us.
            if libc::getppid() != self.parent {
                libc::raise(libc::SIGKILL);
            }
            if let Some(fd) = self.cgroup_procs
                && libc::write(fd, b"0".as_ptr().cast(), 1) != 1
            {
                return Err(io::Error::last_os_error());
            }
            check(libc::setsid())?;
            if let Some(tty) = &self.tty {
                self.attach_tty(tty)?;
            }
            let mut empty: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut empty);
            check(libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut()))?;
            reset_dispositions();
            self.setup_fds()
        }
    }

    /// Opens the slave as fds 0, 1, 2 and makes it the controlling terminal of this new session.
    ///
    /// # Safety
    /// Only in the forked child, after `setsid`.
    unsafe fn attach_tty(&self, tty: &std::ffi::CStr) -> io::Result<()> {
        // SAFETY: open/ioctl/dup2/close on a path prepared before the fork; no allocation.
        unsafe {
            let fd = check(libc::open(tty.as_ptr(), libc::O_RDWR))?;
            check(libc::ioctl(fd, libc::TIOCSCTTY, 0))?;
            for target in 0..3 {
                check(libc::dup2(fd, target))?;
            }
            if fd > 2 {
                libc::close(fd);
            }
        }
        Ok(())
    }

    /// Marks every fd above 2 close-on-exec, then places the declared extra fds.
    ///
    /// # Safety
    /// Only in the forked child.
    unsafe fn setup_fds(&self) -> io::Result<()> {
        // SAFETY: close_range only changes fd flags of this process.
        let rc = unsafe {
            libc::syscall(libc::SYS_close_range, 3, libc::c_uint::MAX, CLOSE_RANGE_CLOEXEC)
        };
        if rc != 0 {
            // SAFETY: sysconf is async-signal-safe in practice and has no side effects.
            let max = unsafe { libc::sysconf(libc::_SC_OPEN_MAX) }.clamp(1024, 65536) as RawFd;
            for fd in 3..max {
                // SAFETY: setting FD_CLOEXEC on a possibly closed fd fails harmlessly.
                unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
            }
        }
        // Move sources above every target first, so a source numbered like another entry's
        // target is not overwritten before it is placed.
        let above = self.extra.iter().map(|(_, target)| *target).max().unwrap_or(2).max(2) + 1;
        let mut moved = [0 as RawFd; MAX_EXTRA_FDS];
        for (slot, (source, _)) in moved.iter_mut().zip(&self.extra) {
            // SAFETY: duplicating an fd the parent kept open across the fork.
            *slot = check(unsafe { libc::fcntl(*source, libc::F_DUPFD_CLOEXEC, above) })?;
        }
        for (temp, (_, target)) in moved.iter().zip(&self.extra) {
            // SAFETY: dup2 onto the declared number; the new fd has no FD_CLOEXEC.
            check(unsafe { libc::dup2(*temp, *target) })?;
        }
        Ok(())
    }
}

/// The kernel's `struct sigaction` (not glibc's): the raw syscall also resets signals 32 and
/// 33, which glibc reserves and its `sigaction` refuses, but which a host may have ignored.
#[repr(C)]
struct KernelSigaction {
    handler: libc::sighandler_t,
    flags: libc::c_ulong,
    restorer: usize,
    mask: u64,
}

/// Sets every signal but KILL and STOP to its default action.
///
/// # Safety
/// Only in the forked child.
unsafe fn reset_dispositions() {
    let action = KernelSigaction { handler: libc::SIG_DFL, flags: 0, restorer: 0, mask: 0 };
    // 1..=64 are the standard and real-time signals of Linux.
    for sig in 1..=64 {
        if sig != libc::SIGKILL && sig != libc::SIGSTOP {
            // SAFETY: rt_sigaction reads `action` (kernel layout, 8-byte mask) and writes nothing.
            unsafe {
                libc::syscall(
                    libc::SYS_rt_sigaction,
                    sig,
                    &action as *const KernelSigaction,
                    std::ptr::null_mut::<KernelSigaction>(),
                    8usize,
                )
            };
        }
    }
}

fn check(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 { Err(io::Error::last_os_error()) } else { Ok(rc) }
}
