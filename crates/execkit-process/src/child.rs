//! The child's setup between clone and exec (O34).
//!
//! It runs in a child that shares the parent's memory ([`crate::vfork`]), so it only makes
//! async-signal-safe syscalls on data prepared before the clone: no allocation, no locks, no
//! std I/O. Errors are `io::Error`s built from errno, which allocate nothing.

use std::ffi::CString;
use std::io;
use std::os::fd::RawFd;

/// At most this many extra fds per child: the child's setup cannot allocate, so the
/// temporaries live in a fixed array.
pub(crate) const MAX_EXTRA_FDS: usize = 32;

pub(crate) struct ChildSetup {
    pub parent: libc::pid_t,
    /// `cgroup.procs` of the v2 leaf, when the child could not be created inside it.
    pub cgroup_procs: Option<RawFd>,
    /// `tasks` of the v1 `pids` leaf ([`crate::pids_v1`]). The child is a single thread here,
    /// so moving that thread moves the process, and a thread moving itself (unlike a write to
    /// `cgroup.procs`) does not wait for the kernel's global threadgroup lock on kernels with
    /// the single-thread migration fast path (2022 onwards); older ones are no slower.
    pub pids_tasks: Option<RawFd>,
    pub extra: Vec<(RawFd, RawFd)>,
    /// The PTY slave's path.
    pub tty: Option<CString>,
}

const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;

impl ChildSetup {
    /// Runs in the child between clone and exec.
    ///
    /// # Safety
    /// Only in the cloned child, which starts with every signal blocked (see
    /// [`crate::vfork`]): dispositions are reset before the mask is emptied, so no handler of
    /// the parent ever runs on the shared memory.
    pub(crate) unsafe fn apply(&self) -> io::Result<()> {
        // SAFETY: plain syscalls in the single-threaded cloned child; no allocation.
        unsafe {
            check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0))?;
            // The parent may have died between clone and prctl; then nothing would kill us.
            if libc::getppid() != self.parent {
                libc::syscall(libc::SYS_kill, libc::syscall(libc::SYS_getpid), libc::SIGKILL);
            }
            for fd in [self.cgroup_procs, self.pids_tasks].into_iter().flatten() {
                if libc::write(fd, b"0".as_ptr().cast(), 1) != 1 {
                    return Err(io::Error::last_os_error());
                }
            }
            check(libc::setsid())?;
            if let Some(tty) = &self.tty {
                self.attach_tty(tty)?;
            }
            reset_dispositions();
            let empty: u64 = 0;
            let rc = libc::syscall(
                libc::SYS_rt_sigprocmask,
                libc::SIG_SETMASK,
                &empty as *const u64,
                std::ptr::null_mut::<u64>(),
                8usize,
            );
            if rc != 0 {
                return Err(io::Error::last_os_error());
            }
            self.setup_fds()
        }
    }

    /// Opens the slave as fds 0, 1, 2 and makes it the controlling terminal of this new session.
    ///
    /// # Safety
    /// Only in the cloned child, after `setsid`.
    unsafe fn attach_tty(&self, tty: &std::ffi::CStr) -> io::Result<()> {
        // SAFETY: open/ioctl/dup2/close on a path prepared before the clone; no allocation.
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
    /// Only in the cloned child.
    unsafe fn setup_fds(&self) -> io::Result<()> {
        // SAFETY: close_range only changes fd flags of this process (the child has its own fd
        // table: no CLONE_FILES).
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
        // target is not overwritten before it is placed. (Saturating: a panic here would
        // allocate in the parent's memory.)
        let above = self
            .extra
            .iter()
            .map(|(_, target)| *target)
            .max()
            .unwrap_or(2)
            .max(2)
            .saturating_add(1);
        let mut moved = [0 as RawFd; MAX_EXTRA_FDS];
        for (slot, (source, _)) in moved.iter_mut().zip(&self.extra) {
            // SAFETY: duplicating an fd the parent kept open across the clone.
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

/// Sets every signal but KILL and STOP to its default action. The child has its own copy of
/// the handler table (no CLONE_SIGHAND), so the parent's handlers are untouched.
///
/// # Safety
/// Only in the cloned child.
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

pub(crate) fn check(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 { Err(io::Error::last_os_error()) } else { Ok(rc) }
}
