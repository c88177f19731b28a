//! Signals to single processes by pid.

/// True while `pid` exists (a zombie included).
pub(crate) fn pid_exists(pid: u32) -> bool {
    // SAFETY: signal 0 only checks for existence and permission.
    let rc = unsafe { libc::kill(pid as libc::pid_t, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Sends `signal` to `pid`, never to pid 0 or 1 (which would reach a group or init).
pub(crate) fn send(pid: u32, signal: i32) {
    if pid > 1 {
        // SAFETY: kill has no memory effects; errors (ESRCH) are expected and ignored.
        unsafe { libc::kill(pid as libc::pid_t, signal) };
    }
}
