//! Spawning straight into a cgroup v2 leaf: `clone3(CLONE_VM | CLONE_VFORK | CLONE_INTO_CGROUP)`.
//!
//! A child that joins its leaf by writing `cgroup.procs` makes the kernel take its global
//! threadgroup lock for writing, which waits for an RCU grace period once the lock has been
//! idle: 13–16 ms per spawn on the machines this was measured on, against 0.2 ms for a child
//! the kernel creates inside the leaf. `clone3` has no libc wrapper that runs a function on a
//! new stack, so the syscall and the jump onto the child's stack are a few lines of assembly
//! (x86_64 only; elsewhere, and on kernels or seccomp filters without `clone3`, the child
//! joins by writing `cgroup.procs` as before).

use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};

/// `CLONE_INTO_CGROUP` (Linux 5.7): the `cgroup` field of the arguments names the leaf.
const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;

/// Cleared the first time the kernel (or a seccomp filter) refuses the call.
static USABLE: AtomicBool = AtomicBool::new(cfg!(target_arch = "x86_64"));

/// `struct clone_args` up to `cgroup` (the kernel's `CLONE_ARGS_SIZE_VER2`).
#[repr(C, align(8))]
#[derive(Default)]
struct CloneArgs {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
    set_tid: u64,
    set_tid_size: u64,
    cgroup: u64,
}

/// The child's entry point: runs on the new stack and never returns (it execs or `_exit`s).
pub(crate) type ChildEntry = extern "C" fn(*mut libc::c_void) -> libc::c_int;

/// What a spawn into a leaf came to.
pub(crate) enum Cloned {
    /// The child's pid (it has exec'd or exited: the caller was suspended until then).
    Child(libc::pid_t),
    /// This kernel cannot do it; the caller spawns the other way.
    Unsupported,
}

/// Whether spawning into a leaf is worth trying.
pub(crate) fn usable() -> bool {
    USABLE.load(Ordering::Relaxed)
}

/// Clones a child that shares this process's memory into the cgroup v2 directory `cgroup`, on
/// the stack `[stack, stack + size)`, running `entry(arg)`.
///
/// # Safety
/// As for `clone(CLONE_VM | CLONE_VFORK)`: every signal blocked on this thread, `stack` used by
/// nothing else, `arg` alive and `entry` async-signal-safe until the child has exec'd or exited.
pub(crate) unsafe fn clone_into(
    cgroup: RawFd,
    stack: *mut libc::c_void,
    size: usize,
    entry: ChildEntry,
    arg: *mut libc::c_void,
) -> io::Result<Cloned> {
    let args = CloneArgs {
        flags: (libc::CLONE_VM | libc::CLONE_VFORK) as u64 | CLONE_INTO_CGROUP,
        exit_signal: libc::SIGCHLD as u64,
        stack: stack as u64,
        stack_size: size as u64,
        cgroup: cgroup as u64,
        ..CloneArgs::default()
    };
    // SAFETY: the caller's contract; `args` lives across the call.
    let rc = unsafe { raw_clone3(&args, entry, arg) };
    if rc >= 0 {
        return Ok(Cloned::Child(rc as libc::pid_t));
    }
    let errno = -rc as i32;
    // ENOSYS: no clone3 (or a filter hiding it); EINVAL or E2BIG: a kernel older than
    // CLONE_INTO_CGROUP; EPERM: a filter refusing it.
    if matches!(errno, libc::ENOSYS | libc::EINVAL | libc::E2BIG | libc::EPERM) {
        USABLE.store(false, Ordering::Relaxed);
        return Ok(Cloned::Unsupported);
    }
    let err = io::Error::from_raw_os_error(errno);
    Err(io::Error::new(err.kind(), format!("cannot start the child in its cgroup leaf: {err}")))
}

/// The raw syscall; the child calls `entry(arg)` on its own stack. Returns the pid or `-errno`.
#[cfg(target_arch = "x86_64")]
unsafe fn raw_clone3(args: &CloneArgs, entry: ChildEntry, arg: *mut libc::c_void) -> i64 {
    let rc: i64;
    // SAFETY: the caller's contract. The parent returns from `syscall` with only rax, rcx and
    // r11 changed. The child starts after `syscall` with rsp at the top of its stack (16-byte
    // aligned, so the call leaves it as a function entry expects), keeps r12 and r13, and never
    // comes back into this frame: `entry` execs or exits.
    unsafe {
        std::arch::asm!(
            "syscall",
            "test rax, rax",
            "jnz 2f",
            "xor ebp, ebp",
            "mov rdi, r12",
            "call r13",
            "ud2",
            "2:",
            inlateout("rax") libc::SYS_clone3 => rc,
            in("rdi") args as *const CloneArgs,
            in("rsi") std::mem::size_of::<CloneArgs>(),
            in("r12") arg,
            in("r13") entry,
            lateout("rcx") _,
            lateout("r11") _,
        );
    }
    rc
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn raw_clone3(_: &CloneArgs, _: ChildEntry, _: *mut libc::c_void) -> i64 {
    -i64::from(libc::ENOSYS)
}
