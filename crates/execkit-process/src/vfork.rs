//! The spawn itself: `clone(CLONE_VM | CLONE_VFORK)` on a reused stack, then `execve`; a
//! child with a cgroup v2 leaf is created inside it ([`crate::clone3`]).
//!
//! `fork` copies the parent's page tables, so it costs more the bigger the parent is; a child
//! that borrows the parent's memory until it execs costs the same for any parent (glibc's
//! `posix_spawn` works this way). The price is discipline, since the child runs on memory the
//! parent still owns:
//!
//! - argv, envp, the PATH candidates and every fd number are built before the clone
//!   ([`ExecImage`], [`Launch`]);
//! - the child makes only async-signal-safe syscalls ([`ChildSetup`]): no allocation, no locks;
//! - every signal is blocked across the clone, so no handler of the parent runs in the child
//!   before the child has reset its dispositions;
//! - the child reports a failure by storing errno in a slot the parent reads when it resumes
//!   (CLONE_VFORK suspends the spawner thread until the child has exec'd or exited).
//!
//! What the child does matches what `std::process::Command` with a `pre_exec` hook did before:
//! stdio, then [`ChildSetup::apply`], then the spawn's confinement ([`crate::Confinement`],
//! prepared in the parent), then `chdir` (joining the sandbox's mount namespace resets the
//! cwd), then glibc's `execvpe` search (PATH taken
//! from the child's environment, `/bin/sh` for an executable without a `#!` line).

use std::collections::BTreeMap;
use std::ffi::{CStr, CString, OsStr};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicI32, Ordering};

use crate::child::ChildSetup;
use crate::clone3::{self, Cloned};
use crate::confine::Prepared;
use crate::spawn::SpawnSpec;

/// The child's stack: its few frames plus the syscall wrappers' need a few KiB, debug builds a
/// few more; untouched pages cost nothing.
const STACK_BYTES: usize = 256 * 1024;

/// glibc's `execvp` path when `PATH` is unset (`confstr(_CS_PATH)`).
const DEFAULT_PATH: &[u8] = b"/bin:/usr/bin";

/// glibc's `execvp` runs an executable the kernel cannot load (no `#!` line) with this.
const SCRIPT_SHELL: &CStr = c"/bin/sh";

/// Longest program name `execvp` searches PATH for.
const NAME_MAX: usize = 255;

/// The errno slot's value while the child has not failed.
const NO_ERROR: i32 = -1;

/// The stack the cloned child runs on, with a guard page below it. The spawner thread is the
/// only spawner, so one stack serves every spawn.
pub(crate) struct ChildStack {
    base: *mut libc::c_void,
    len: usize,
}

impl ChildStack {
    pub(crate) fn new() -> io::Result<ChildStack> {
        // SAFETY: sysconf has no side effects.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
        let len = STACK_BYTES + page;
        // SAFETY: a fresh private anonymous mapping; nothing else refers to it.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let stack = ChildStack { base, len };
        // The stack grows down: its lowest page is the guard.
        // SAFETY: the first page of the mapping made above.
        if unsafe { libc::mprotect(base, page, libc::PROT_NONE) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(stack)
    }

    pub(crate) fn top(&mut self) -> *mut libc::c_void {
        // SAFETY: one past the end of the mapping, which is page-aligned (so 16-byte aligned).
        unsafe { self.base.cast::<u8>().add(self.len).cast() }
    }

    /// The lowest address and the length, as `clone3` takes a stack (guard page included: the
    /// kernel starts the child at the top).
    fn region(&mut self) -> (*mut libc::c_void, usize) {
        (self.base, self.len)
    }
}

impl Drop for ChildStack {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`; no child runs on it (spawns are synchronous).
        unsafe { libc::munmap(self.base, self.len) };
    }
}

/// The argv, envp and executable candidates of one spawn, as the child's `execve` wants them.
pub(crate) struct ExecImage {
    /// Owns what `argv` and `envp` point to.
    _strings: Vec<CString>,
    argv: Vec<*const libc::c_char>,
    envp: Vec<*const libc::c_char>,
    /// The paths `execvp` would try, in order.
    candidates: Vec<CString>,
    /// The errno when there is no candidate at all.
    no_candidate: libc::c_int,
    /// `/bin/sh`, a slot the child fills with the candidate, then `argv[1..]`.
    script_argv: Vec<*const libc::c_char>,
}

impl ExecImage {
    /// `argv[0]` is `spec.arg0` or the program; the environment is deduplicated (last value
    /// wins) and sorted by name, as `Command` passed it.
    pub(crate) fn new(spec: &SpawnSpec) -> io::Result<ExecImage> {
        let program = spec.program.as_os_str().as_bytes();
        let mut strings = Vec::with_capacity(1 + spec.args.len() + spec.env.len());
        strings.push(cstring(spec.arg0.as_deref().map_or(program, OsStr::as_bytes).to_vec())?);
        for arg in &spec.args {
            strings.push(cstring(arg.as_bytes().to_vec())?);
        }
        let argc = strings.len();
        let env: BTreeMap<&OsStr, &OsStr> =
            spec.env.iter().map(|(k, v)| (k.as_os_str(), v.as_os_str())).collect();
        for (name, value) in &env {
            let mut entry = Vec::with_capacity(name.len() + value.len() + 1);
            entry.extend_from_slice(name.as_bytes());
            entry.push(b'=');
            entry.extend_from_slice(value.as_bytes());
            strings.push(cstring(entry)?);
        }
        let path = env.get(OsStr::new("PATH")).map_or(DEFAULT_PATH, |p| p.as_bytes());
        let (candidates, no_candidate) = candidates(program, path)?;
        let pointers = |items: &[CString]| -> Vec<*const libc::c_char> {
            items.iter().map(|s| s.as_ptr()).chain([std::ptr::null()]).collect()
        };
        let argv = pointers(&strings[..argc]);
        let envp = pointers(&strings[argc..]);
        let mut script_argv = vec![SCRIPT_SHELL.as_ptr(), std::ptr::null()];
        script_argv.extend_from_slice(&argv[1..]);
        Ok(ExecImage { _strings: strings, argv, envp, candidates, no_candidate, script_argv })
    }
}

/// glibc's `execvpe` search: a name with a slash is tried as is, any other in each PATH entry
/// (an empty entry is the working directory).
fn candidates(program: &[u8], path: &[u8]) -> io::Result<(Vec<CString>, libc::c_int)> {
    if program.is_empty() {
        return Ok((Vec::new(), libc::ENOENT));
    }
    if program.contains(&b'/') {
        return Ok((vec![cstring(program.to_vec())?], libc::ENOENT));
    }
    if program.len() > NAME_MAX {
        return Ok((Vec::new(), libc::ENAMETOOLONG));
    }
    let list = path
        .split(|b| *b == b':')
        .map(|dir| {
            let mut full = Vec::with_capacity(dir.len() + 1 + program.len());
            if !dir.is_empty() {
                full.extend_from_slice(dir);
                full.push(b'/');
            }
            full.extend_from_slice(program);
            cstring(full)
        })
        .collect::<io::Result<Vec<_>>>()?;
    Ok((list, libc::ENOENT))
}

/// `Command`'s error for a NUL inside the program, an argument, a variable or the cwd.
fn cstring(bytes: Vec<u8>) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| nul_error())
}

pub(crate) fn nul_error() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, "nul byte found in provided data")
}

/// Everything the child needs, prepared before the clone.
pub(crate) struct Launch {
    /// What becomes fds 0, 1 and 2; each above 2, so no dup2 clobbers a later source.
    pub stdio: [RawFd; 3],
    pub cwd: Option<CString>,
    pub setup: ChildSetup,
    /// The child's cgroup v2 leaf directory: the child is created inside it, or joins it.
    pub cgroup_dir: Option<RawFd>,
    /// Create the child inside `cgroup_dir` where the kernel can.
    pub into_leaf: bool,
    /// Applied last, right before `execve`.
    pub confinement: Prepared,
    pub image: ExecImage,
}

/// What the parent shares with the child for the length of one clone.
struct ChildArgs<'a> {
    launch: &'a Launch,
    /// `launch.image.script_argv`'s buffer; the child writes slot 1.
    script_argv: *mut *const libc::c_char,
    /// [`NO_ERROR`], or the errno of the child's failed setup or exec.
    errno: AtomicI32,
}

/// Starts the child; returns its pid once it has exec'd, or the errno it failed with (the
/// failed child is reaped).
pub(crate) fn spawn(stack: &mut ChildStack, launch: &mut Launch) -> io::Result<u32> {
    let Some(dir) = launch.cgroup_dir else {
        return start_plain(stack, launch);
    };
    if launch.into_leaf
        && clone3::usable()
        && let Some(pid) = start(stack, launch, Some(dir))?
    {
        return Ok(pid);
    }
    // The kernel cannot create the child inside its leaf: the child joins it by a write.
    let procs = open_procs(dir)?;
    launch.setup.cgroup_procs = Some(procs.as_raw_fd());
    let pid = start_plain(stack, launch);
    launch.setup.cgroup_procs = None;
    pid
}

/// [`start`] without a leaf to be created in, which always clones or fails.
fn start_plain(stack: &mut ChildStack, launch: &mut Launch) -> io::Result<u32> {
    start(stack, launch, None)?.ok_or_else(|| io::Error::other("clone reported no child"))
}

/// Clones the child (inside the leaf `into`, when given) and waits for it to exec or fail.
/// `None` only when the kernel refused to create a child inside `into`.
fn start(
    stack: &mut ChildStack,
    launch: &mut Launch,
    into: Option<RawFd>,
) -> io::Result<Option<u32>> {
    let script_argv = launch.image.script_argv.as_mut_ptr();
    let args = ChildArgs { launch: &*launch, script_argv, errno: AtomicI32::new(NO_ERROR) };
    let arg: *mut libc::c_void = (&args as *const ChildArgs).cast_mut().cast();
    let flags = libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD;
    let cloned = signals_blocked(|| match into {
        // SAFETY: as below; `clone_into` clones with the same flags plus the leaf.
        Some(dir) => {
            let (base, len) = stack.region();
            unsafe { clone3::clone_into(dir, base, len, child_main, arg) }
        }
        // SAFETY: `child_main` runs on `stack`, which nothing else uses while this thread is
        // suspended (CLONE_VFORK) until the child has exec'd or exited; `args` outlives that,
        // and the child only reads it, writes the errno atomic and the script_argv slot, and
        // makes async-signal-safe syscalls. Without CLONE_FILES, CLONE_FS and CLONE_SIGHAND
        // the child has its own fd table, cwd and signal handlers.
        None => match unsafe { libc::clone(child_main, stack.top(), flags, arg) } {
            -1 => Err(io::Error::last_os_error()),
            pid => Ok(Cloned::Child(pid)),
        },
    })??;
    let pid = match cloned {
        Cloned::Child(pid) => pid,
        Cloned::Unsupported => return Ok(None),
    };
    match args.errno.load(Ordering::Acquire) {
        NO_ERROR => Ok(Some(pid as u32)),
        errno => {
            reap(pid);
            Err(io::Error::from_raw_os_error(errno))
        }
    }
}

/// `cgroup.procs` of the leaf `dir`, for a child that joins by writing its pid there.
fn open_procs(dir: RawFd) -> io::Result<OwnedFd> {
    // SAFETY: openat relative to an open directory fd, with a static C string.
    let fd =
        unsafe { libc::openat(dir, c"cgroup.procs".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a new fd that nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Runs `clone` with every signal blocked on this thread, so no handler of the parent runs in
/// a child that shares its memory; returns what `clone` returned.
pub(crate) fn with_signals_blocked(clone: impl FnOnce() -> libc::c_int) -> io::Result<libc::c_int> {
    signals_blocked(|| match clone() {
        pid if pid < 0 => Err(io::Error::last_os_error()),
        pid => Ok(pid),
    })?
}

/// Runs `f` with every signal blocked on this thread.
fn signals_blocked<T>(f: impl FnOnce() -> T) -> io::Result<T> {
    let all: u64 = !0;
    let mut old: u64 = 0;
    // SAFETY: rt_sigprocmask on this thread with kernel-sized (8-byte) masks; the raw call also
    // blocks glibc's internal signals 32 and 33.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_rt_sigprocmask,
            libc::SIG_SETMASK,
            &all as *const u64,
            &mut old as *mut u64,
            8usize,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    let result = f();
    // SAFETY: restores this thread's mask saved above.
    unsafe {
        libc::syscall(
            libc::SYS_rt_sigprocmask,
            libc::SIG_SETMASK,
            &old as *const u64,
            std::ptr::null_mut::<u64>(),
            8usize,
        )
    };
    Ok(result)
}

/// Collects a child that failed before exec (it has exited: CLONE_VFORK resumed us).
fn reap(pid: libc::pid_t) {
    let mut status = 0;
    // SAFETY: waitpid on our own, unreaped child with a valid out pointer.
    while unsafe { libc::waitpid(pid, &mut status, 0) } < 0 && errno() == libc::EINTR {}
}

fn errno() -> libc::c_int {
    // SAFETY: __errno_location returns this thread's errno slot, always valid.
    unsafe { *libc::__errno_location() }
}

/// The child's entry point.
extern "C" fn child_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `ChildArgs` `spawn` passed to clone; the parent is suspended and
    // keeps it alive until this child has exec'd or exited.
    let args = unsafe { &*arg.cast::<ChildArgs>() };
    // SAFETY: this is the cloned child, started with every signal blocked.
    let errno = unsafe { exec(args) };
    args.errno.store(errno, Ordering::Release);
    // SAFETY: ends the child without the parent's atexit handlers or stdio flushes.
    unsafe { libc::_exit(127) }
}

/// Stdio, setup, confinement, cwd, then the `execvpe` search; returns only on failure, with the errno.
///
/// # Safety
/// Only in the cloned child.
unsafe fn exec(args: &ChildArgs) -> libc::c_int {
    let launch = args.launch;
    for (fd, target) in launch.stdio.iter().zip(0..) {
        // SAFETY: dup2 of an fd the parent holds open across the clone.
        while unsafe { libc::dup2(*fd, target) } < 0 {
            if errno() != libc::EINTR {
                return errno();
            }
        }
    }
    // SAFETY: in the cloned child, signals blocked, as `apply` requires.
    if let Err(err) = unsafe { launch.setup.apply() } {
        return err.raw_os_error().unwrap_or(libc::EINVAL);
    }
    // SAFETY: in the cloned child, after its setup and before exec, as `apply` requires.
    if let Err(errno) = unsafe { launch.confinement.apply() } {
        return errno;
    }
    // After the confinement: joining the sandbox's mount namespace resets the cwd to its root,
    // and the cwd must resolve there (inside a protected path it is read-only too).
    // SAFETY: chdir to a path prepared before the clone.
    if let Some(cwd) = &launch.cwd
        && unsafe { libc::chdir(cwd.as_ptr()) } != 0
    {
        return errno();
    }
    let image = &launch.image;
    let mut got_eacces = false;
    let mut last = image.no_candidate;
    for path in &image.candidates {
        // SAFETY: NUL-terminated arrays of C strings built before the clone.
        unsafe { libc::execve(path.as_ptr(), image.argv.as_ptr(), image.envp.as_ptr()) };
        let mut err = errno();
        if err == libc::ENOEXEC {
            // SAFETY: slot 1 of `script_argv`, which has at least three slots; the parent does
            // not touch it until we are gone.
            unsafe {
                *args.script_argv.add(1) = path.as_ptr();
                libc::execve(SCRIPT_SHELL.as_ptr(), args.script_argv, image.envp.as_ptr());
            }
            err = errno();
        }
        match err {
            libc::EACCES => got_eacces = true,
            libc::ENOENT | libc::ESTALE | libc::ENOTDIR | libc::ENODEV | libc::ETIMEDOUT => {}
            _ => return err,
        }
        last = err;
    }
    if got_eacces { libc::EACCES } else { last }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(list: &[CString]) -> Vec<&str> {
        list.iter().map(|c| c.to_str().unwrap()).collect()
    }

    #[test]
    fn searches_path_like_execvp() {
        let (list, _) = candidates(b"ls", b"/usr/bin::bin").unwrap();
        assert_eq!(texts(&list), ["/usr/bin/ls", "ls", "bin/ls"]);
        let (list, _) = candidates(b"./x/ls", b"/usr/bin").unwrap();
        assert_eq!(texts(&list), ["./x/ls"]);
        assert_eq!(candidates(b"", b"/bin").unwrap(), (Vec::new(), libc::ENOENT));
        let long = vec![b'a'; NAME_MAX + 1];
        assert_eq!(candidates(&long, b"/bin").unwrap(), (Vec::new(), libc::ENAMETOOLONG));
    }

    #[test]
    fn environment_is_deduplicated_and_sorted() {
        let spec = SpawnSpec {
            program: "prog".into(),
            args: vec!["a".into()],
            env: vec![
                ("B".into(), "1".into()),
                ("PATH".into(), "/x".into()),
                ("A".into(), "2".into()),
                ("B".into(), "3".into()),
            ],
            ..SpawnSpec::default()
        };
        let image = ExecImage::new(&spec).unwrap();
        let strings = |ptrs: &[*const libc::c_char]| -> Vec<String> {
            let (last, items) = ptrs.split_last().unwrap();
            assert!(last.is_null());
            // SAFETY: pointers into `image._strings`, alive for this test.
            items.iter().map(|p| unsafe { CStr::from_ptr(*p) }.to_str().unwrap().into()).collect()
        };
        assert_eq!(strings(&image.argv), ["prog", "a"]);
        assert_eq!(strings(&image.envp), ["A=2", "B=3", "PATH=/x"]);
        assert_eq!(texts(&image.candidates), ["/x/prog"]);
        assert_eq!(image.script_argv.len(), 4);
    }

    #[test]
    fn nul_bytes_are_refused() {
        let spec = SpawnSpec { program: "a\0b".into(), ..SpawnSpec::default() };
        let err = ExecImage::new(&spec).err().unwrap();
        assert_eq!(err.to_string(), "nul byte found in provided data");
    }
}
