//! TCP sockets that execkit itself opens to reach its confined children: a debug adapter that
//! listens (`tcp`), one that dials back (`tcp-dial`), a server to attach to by port.
//!
//! With network off the children live in the Toolkit's private network namespace, and a
//! socket belongs to the namespace its creator was in when it called `socket()`; connect,
//! bind and listen on it then act there, from any thread. An unprivileged process cannot move
//! one of its threads into a namespace its user namespace does not own, and `setns` into a
//! user namespace is refused to a multithreaded process, so a short child does it: cloned with
//! `CLONE_VM | CLONE_FILES | CLONE_VFORK` (it borrows the parent's memory and shares its
//! descriptor table, and the calling thread waits until it has exited), it joins the held user
//! namespace (when there is one), then the network namespace, calls `socket()`, stores the
//! descriptor number and exits. The descriptor is already the parent's, as the table is shared,
//! so nothing has to be passed over `SCM_RIGHTS`. The parent then connects, binds or listens
//! on it normally. Without a private namespace (network on, mode off, or the seccomp-only
//! fallback) the sockets are plain host sockets.

use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};

use tokio::net::{TcpListener, TcpSocket, TcpStream};

use super::Enforcer;
use super::namespaces::Namespaces;
use crate::vfork::ChildStack;

/// Makes TCP sockets in the network the Toolkit's confined processes share. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct SocketFactory {
    /// The sandbox's prepared parts, when they hold a private network namespace.
    private: Option<Arc<Enforcer>>,
}

impl SocketFactory {
    /// Plain host sockets: for a Supervisor without a private network, and for tests.
    pub fn host() -> SocketFactory {
        SocketFactory::default()
    }

    pub(crate) fn for_enforcer(enforcer: Option<&Arc<Enforcer>>) -> SocketFactory {
        let private = enforcer.filter(|e| e.namespaces.net.is_some()).cloned();
        SocketFactory { private }
    }

    /// Whether the sockets live in the Toolkit's private network namespace.
    pub fn is_private(&self) -> bool {
        self.private.is_some()
    }

    /// A fresh, unconnected, non-blocking TCP socket for addresses like `addr`.
    pub fn tcp_socket(&self, addr: &SocketAddr) -> io::Result<TcpSocket> {
        let domain = if addr.is_ipv4() { libc::AF_INET } else { libc::AF_INET6 };
        let fd = match &self.private {
            Some(enforcer) => socket_in(&enforcer.namespaces, domain)?,
            None => host_socket(domain)?,
        };
        Ok(TcpSocket::from_std_stream(std::net::TcpStream::from(fd)))
    }

    /// One connection attempt to `addr`.
    pub async fn connect(&self, addr: SocketAddr) -> io::Result<TcpStream> {
        self.tcp_socket(&addr)?.connect(addr).await
    }

    /// A listener on `addr` (port 0 picks a free one).
    pub fn listen(&self, addr: SocketAddr) -> io::Result<TcpListener> {
        let socket = self.tcp_socket(&addr)?;
        socket.set_reuseaddr(true)?;
        socket.bind(addr)?;
        socket.listen(16)
    }

    /// A free port on `127.0.0.1`: bound, then released for a child to listen on.
    pub fn reserve_port(&self) -> io::Result<u16> {
        let addr = SocketAddr::from(([127, 0, 0, 1], 0));
        let socket = self.tcp_socket(&addr)?;
        socket.bind(addr)?;
        Ok(socket.local_addr()?.port())
    }
}

fn host_socket(domain: libc::c_int) -> io::Result<OwnedFd> {
    let kind = libc::SOCK_STREAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK;
    // SAFETY: socket() with constant arguments; a non-negative result is a descriptor we own.
    let fd = unsafe { libc::socket(domain, kind, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by socket() and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The steps of the child, named in its error.
const STEPS: [&str; 3] = [
    "joining the sandbox's user namespace",
    "joining the sandbox's network namespace",
    "creating the socket",
];

/// What the parent shares with the socket child for the length of one clone.
struct Request {
    user: Option<RawFd>,
    net: RawFd,
    domain: libc::c_int,
    /// The new descriptor, or -1.
    fd: AtomicI32,
    /// The index in [`STEPS`] of the step that failed, or -1.
    failed_step: AtomicI32,
    errno: AtomicI32,
}

/// A TCP socket of `domain` created inside `namespaces`' network namespace.
pub(crate) fn socket_in(namespaces: &Namespaces, domain: libc::c_int) -> io::Result<OwnedFd> {
    let Some(net) = &namespaces.net else { return host_socket(domain) };
    let request = Request {
        user: namespaces.user.as_ref().map(AsRawFd::as_raw_fd),
        net: net.as_raw_fd(),
        domain,
        fd: AtomicI32::new(-1),
        failed_step: AtomicI32::new(-1),
        errno: AtomicI32::new(0),
    };
    let mut stack = ChildStack::new()?;
    let flags = libc::CLONE_VM | libc::CLONE_FILES | libc::CLONE_VFORK | libc::SIGCHLD;
    let pid = crate::vfork::with_signals_blocked(|| {
        // SAFETY: `socket_child` runs on `stack`, which nothing else uses; this thread is
        // suspended (CLONE_VFORK) until the child has exited, and `request` outlives that.
        // The child only reads `request`, stores into its atomics and makes raw syscalls.
        unsafe {
            libc::clone(
                socket_child,
                stack.top(),
                flags,
                (&request as *const Request).cast_mut().cast(),
            )
        }
    })
    .map_err(|err| prefixed(err, "starting the namespace child"))?;
    reap(pid);
    let fd = request.fd.load(Ordering::Acquire);
    if fd >= 0 {
        // SAFETY: the child created `fd` in the descriptor table it shared with us, and
        // exited; nothing else knows the number.
        return Ok(unsafe { OwnedFd::from_raw_fd(fd) });
    }
    let step = usize::try_from(request.failed_step.load(Ordering::Acquire)).ok();
    let what = step.and_then(|s| STEPS.get(s)).copied().unwrap_or("the namespace child");
    Err(prefixed(io::Error::from_raw_os_error(request.errno.load(Ordering::Acquire)), what))
}

fn prefixed(err: io::Error, what: &str) -> io::Error {
    io::Error::new(
        err.kind(),
        format!("cannot open a socket in the sandbox's private network: {what} failed: {err}"),
    )
}

/// Collects the socket child (it has exited: CLONE_VFORK resumed us).
fn reap(pid: libc::pid_t) {
    let mut status = 0;
    // SAFETY: waitpid on our own, unreaped child with a valid out pointer.
    while unsafe { libc::waitpid(pid, &mut status, 0) } < 0
        && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
    {}
}

/// The child's entry point: setns, setns, socket, exit.
extern "C" fn socket_child(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `Request` `socket_in` passed to clone; the parent is suspended and
    // keeps it alive until this child has exited.
    let request = unsafe { &*arg.cast::<Request>() };
    // SAFETY: this is the cloned child, with every signal blocked.
    match unsafe { make_socket(request) } {
        Ok(fd) => request.fd.store(fd, Ordering::Release),
        Err((step, errno)) => {
            request.errno.store(errno, Ordering::Release);
            request.failed_step.store(step, Ordering::Release);
        }
    }
    // SAFETY: ends the child without the parent's atexit handlers or stdio flushes.
    unsafe { libc::_exit(0) }
}

/// # Safety
/// Only in the cloned child: raw syscalls, no allocation.
unsafe fn make_socket(request: &Request) -> Result<RawFd, (i32, libc::c_int)> {
    let errno = || {
        // SAFETY: this thread's errno slot.
        unsafe { *libc::__errno_location() }
    };
    // SAFETY: setns on descriptors the parent holds open, socket() with constant arguments.
    unsafe {
        if let Some(user) = request.user
            && libc::setns(user, libc::CLONE_NEWUSER) != 0
        {
            return Err((0, errno()));
        }
        if libc::setns(request.net, libc::CLONE_NEWNET) != 0 {
            return Err((1, errno()));
        }
        let kind = libc::SOCK_STREAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK;
        let fd = libc::socket(request.domain, kind, 0);
        if fd < 0 {
            return Err((2, errno()));
        }
        Ok(fd)
    }
}

#[cfg(test)]
#[path = "sockets_tests.rs"]
mod tests;
