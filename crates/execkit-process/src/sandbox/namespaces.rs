//! The Toolkit's private network, mount and (for an unprivileged user) user namespaces.
//!
//! Created once when the Toolkit starts, by a short-lived holder process: it unshares the
//! namespaces, maps its uid and gid 1:1 (unprivileged only: root needs no user namespace, and
//! one mapping only uid 0 would make `tar` and `apt` fail to chown), brings `lo` up, applies
//! the mount plan of the protected and denied paths, and execs `sleep`. The parent opens
//! `/proc/<pid>/ns/*`, which keeps the namespaces alive for as long as the descriptors are
//! open, and ends the holder. Every confined child `setns`es into them, so the Toolkit's
//! processes share one loopback (a server one call starts is reachable from the next, and
//! nothing outside is) and one mount namespace: joining it costs a few microseconds where
//! making and mounting a fresh one per child cost milliseconds.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use super::mounts::{self, Step};

/// The namespaces confined children join.
#[derive(Debug)]
pub(crate) struct Namespaces {
    pub user: Option<OwnedFd>,
    pub net: Option<OwnedFd>,
    /// The mount namespace with the protected and denied paths applied.
    pub mnt: Option<OwnedFd>,
}

impl Namespaces {
    pub(crate) fn none() -> Namespaces {
        Namespaces { user: None, net: None, mnt: None }
    }
}

/// Creates the namespaces: a user namespace when not root, a network namespace when `net`, a
/// mount namespace with `mounts` applied when there are any.
// The holder is not a supervised child: it lives only until its namespaces are opened, and its
// pre-exec hook unshares what the Supervisor's spawn path never does.
#[allow(clippy::disallowed_methods)]
pub(crate) fn create(net: bool, mounts: Vec<Step>) -> Result<Namespaces, String> {
    // SAFETY: geteuid has no side effects.
    let root = unsafe { libc::geteuid() } == 0;
    let maps = IdMaps::new();
    let wants_mnt = !mounts.is_empty();
    let mut holder = Command::new("sleep");
    holder.arg("3600").stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    // SAFETY: the hook runs in the forked child before exec and makes only raw syscalls on
    // data built before the fork.
    unsafe {
        holder.pre_exec(move || {
            if !root {
                maps.enter_user_namespace()?;
            }
            if net {
                check(libc::unshare(libc::CLONE_NEWNET))?;
                loopback_up()?;
            }
            if !mounts.is_empty() {
                mounts::apply(&mounts).map_err(io::Error::from_raw_os_error)?;
            }
            Ok(())
        });
    }
    let mut child =
        holder.spawn().map_err(|e| format!("cannot create the sandbox namespaces: {e}"))?;
    let open = |kind: &str| -> Result<OwnedFd, String> {
        let path = format!("/proc/{}/ns/{kind}", child.id());
        File::open(&path).map(OwnedFd::from).map_err(|e| format!("cannot open {path}: {e}"))
    };
    let opened = (|| -> Result<Namespaces, String> {
        let user = if root { None } else { Some(open("user")?) };
        let net = if net { Some(open("net")?) } else { None };
        let mnt = if wants_mnt { Some(open("mnt")?) } else { None };
        Ok(Namespaces { user, net, mnt })
    })();
    let _ = child.kill();
    let _ = child.wait();
    opened
}

/// The uid and gid maps of an unprivileged user's namespace: itself, 1:1.
struct IdMaps {
    uid_map: CString,
    gid_map: CString,
}

impl IdMaps {
    fn new() -> IdMaps {
        // SAFETY: getuid and getgid have no side effects.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let line = |id: u32| CString::new(format!("{id} {id} 1\n")).unwrap_or_default();
        IdMaps { uid_map: line(uid), gid_map: line(gid) }
    }

    /// In the holder child: a new user namespace with the maps written.
    fn enter_user_namespace(&self) -> io::Result<()> {
        // SAFETY: raw syscalls on prepared, NUL-terminated data.
        unsafe {
            // A non-dumpable process (the binary makes itself one) has /proc/self owned by
            // root, so it could not write its own maps; this child is about to exec anyway.
            check(libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0))?;
            check(libc::unshare(libc::CLONE_NEWUSER))?;
            write_file(c"/proc/self/setgroups", c"deny")?;
            write_file(c"/proc/self/uid_map", &self.uid_map)?;
            write_file(c"/proc/self/gid_map", &self.gid_map)
        }
    }
}

/// # Safety
/// Raw syscalls only; callable between fork and exec.
unsafe fn write_file(path: &std::ffi::CStr, text: &std::ffi::CStr) -> io::Result<()> {
    // SAFETY: open, write and close on a valid C string path and buffer.
    unsafe {
        let fd = check(libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC))?;
        let bytes = text.to_bytes();
        let written = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        libc::close(fd);
        if written != bytes.len() as isize {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Brings `lo` up in the current network namespace.
fn loopback_up() -> io::Result<()> {
    // SAFETY: a socket and an ioctl on a zeroed, correctly sized ifreq; no allocation.
    unsafe {
        let sock = check(libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0))?;
        let mut request: libc::ifreq = std::mem::zeroed();
        for (slot, byte) in request.ifr_name.iter_mut().zip(b"lo") {
            *slot = *byte as libc::c_char;
        }
        request.ifr_ifru.ifru_flags = (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
        let rc = libc::ioctl(sock, libc::SIOCSIFFLAGS, &request);
        libc::close(sock);
        check(rc).map(|_| ())
    }
}

fn check(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 { Err(io::Error::last_os_error()) } else { Ok(rc) }
}
