//! One remote command over a route: native mux on the master's socket, process-mux as the
//! fallback, or a direct login (spec-ssh S20, S21, S25, S34).
//!
//! Native mux speaks the multiplexing protocol on the socket, so no process is spawned per
//! command. It cannot fall back to a fresh login; neither can process-mux, whose destination
//! is `none` port 9. A session the server refuses is therefore an error, never a silent
//! second login.

use std::io;
use std::path::Path;
use std::time::Duration;

use openssh::{Session, Stdio};
use tokio::io::AsyncReadExt;

use crate::args;
use crate::collect::Collector;
use crate::config::HostEntry;
use crate::error::SshError;
use crate::local::Local;
use crate::master;
use crate::until::{Stop, Until};

/// How often a native session ticks its observer while the command is silent, so progress
/// heartbeats keep going.
const TICK: Duration = Duration::from_millis(100);

/// How a remote command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionEnd {
    Exited(i32),
    /// The session closed without an exit status (killed by a signal, or dropped).
    NoStatus,
    TimedOut,
    Cancelled,
}

impl From<Stop> for SessionEnd {
    fn from(stop: Stop) -> SessionEnd {
        match stop {
            Stop::TimedOut => SessionEnd::TimedOut,
            Stop::Cancelled => SessionEnd::Cancelled,
        }
    }
}

/// Why a native session did not run the command.
#[derive(Debug)]
pub enum NativeFailure {
    /// Nothing was sent: the socket refused or broke before the session opened. Retryable.
    BeforeOpen(String),
    /// The master does not speak the protocol we expect: use process-mux.
    Protocol,
    /// A definite refusal or loss.
    Fatal(SshError),
}

/// Runs `command` on the master at `socket` with native mux; output into `out`.
pub async fn native(
    name: &str,
    socket: &Path,
    command: &str,
    until: &Until,
    out: &mut Collector,
) -> Result<SessionEnd, NativeFailure> {
    let session = Session::resume_mux(socket.into(), Some(args::log_path(socket).into()));
    let mut cmd = session.raw_command(command);
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let spawned = until.race(cmd.spawn()).await;
    let mut child = match spawned {
        Err(stop) => return Ok(stop.into()),
        Ok(Ok(child)) => child,
        Ok(Err(err)) => return Err(classify_open(name, err)),
    };
    let (Some(mut stdout), Some(mut stderr)) = (child.stdout().take(), child.stderr().take())
    else {
        return Err(NativeFailure::Fatal(SshError::Local(
            "the mux session gave no output pipes".into(),
        )));
    };
    let finished = until
        .race(async {
            let (mut a, mut b) = (vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]);
            let (mut out_open, mut err_open) = (true, true);
            let mut ticks = tokio::time::interval(TICK);
            while out_open || err_open {
                tokio::select! {
                    _ = ticks.tick() => out.heartbeat(),
                    n = stdout.read(&mut a), if out_open => match n {
                        Ok(n) if n > 0 => out.stdout(&a[..n]),
                        _ => out_open = false,
                    },
                    n = stderr.read(&mut b), if err_open => match n {
                        Ok(n) if n > 0 => out.stderr(&b[..n]),
                        _ => err_open = false,
                    },
                }
            }
            child.wait().await
        })
        .await;
    match finished {
        Err(stop) => Ok(stop.into()),
        Ok(Ok(status)) => Ok(status.code().map_or(SessionEnd::NoStatus, SessionEnd::Exited)),
        // The master reports "no exit status" both for a signalled command and when it lost
        // the connection; only a master that still answers means the former.
        Ok(Err(openssh::Error::RemoteProcessTerminated)) => {
            match master::alive_check(socket, master::CHECK_TIMEOUT).await {
                Ok(_) => Ok(SessionEnd::NoStatus),
                Err(_) => Err(NativeFailure::Fatal(SshError::Lost { name: name.into() })),
            }
        }
        // The crate turns exit 127 into an error; it is the command's own exit code.
        Ok(Err(openssh::Error::Remote(err))) if err.kind() == io::ErrorKind::NotFound => {
            Ok(SessionEnd::Exited(127))
        }
        Ok(Err(_)) => Err(NativeFailure::Fatal(SshError::Lost { name: name.into() })),
    }
}

fn classify_open(name: &str, err: openssh::Error) -> NativeFailure {
    use openssh_mux_client::Error as Mux;
    let text = err.to_string();
    match err {
        openssh::Error::SshMux(Mux::RequestFailure(reason)) if reason.contains("refused") => {
            NativeFailure::Fatal(SshError::SessionRefused { name: name.into() })
        }
        openssh::Error::SshMux(Mux::IOError(io)) => NativeFailure::BeforeOpen(io.to_string()),
        openssh::Error::SshMux(Mux::RequestFailure(reason) | Mux::PermissionDenied(reason)) => {
            NativeFailure::BeforeOpen(reason.to_string())
        }
        openssh::Error::SshMux(_) => NativeFailure::Protocol,
        _ => NativeFailure::BeforeOpen(text),
    }
}

/// Runs `command` through a process-mux client on `socket`. An exit of 255 is either the
/// command's or ssh's own; the master's liveness tells which.
pub async fn process_mux(
    local: &Local,
    name: &str,
    socket: &Path,
    command: &str,
    until: &Until,
    out: &mut Collector,
) -> Result<SessionEnd, SshError> {
    let end = local.run_until(args::process_mux_args(socket, command), until, out).await?;
    if let Some(stop) = end.stopped {
        return Ok(stop.into());
    }
    match end.code() {
        Some(255) if master::alive_check(socket, master::CHECK_TIMEOUT).await.is_err() => {
            Err(SshError::Lost { name: name.into() })
        }
        Some(code) => Ok(SessionEnd::Exited(code)),
        None => Ok(SessionEnd::NoStatus),
    }
}

/// Runs `command` over a fresh login that shares nothing.
pub async fn direct(
    local: &Local,
    entry: &HostEntry,
    jump: Option<&HostEntry>,
    command: &str,
    until: &Until,
    out: &mut Collector,
) -> Result<SessionEnd, SshError> {
    let args = args::direct_args(entry, jump, &local.ssh, command);
    let end = local.run_until(args, until, out).await?;
    if let Some(stop) = end.stopped {
        return Ok(stop.into());
    }
    Ok(end.code().map_or(SessionEnd::NoStatus, SessionEnd::Exited))
}
