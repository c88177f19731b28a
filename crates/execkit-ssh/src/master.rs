//! Masters: reuse, liveness and start (spec-ssh S19, S24, S34).
//!
//! A master is the one process this crate leaves running on purpose: `ssh -M -N -f` forks
//! and detaches after authentication, and ControlPersist keeps it 3600 s past its last
//! session so later calls and later processes reuse it. It is never stopped from here, since
//! another process may share it.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::args;
use crate::collect::Collector;
use crate::config::HostEntry;
use crate::control::{self, SocketState};
use crate::error::SshError;
use crate::local::Local;

/// How long a master that accepts connections gets to answer an alive check before it is
/// treated as hung and bypassed.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(5);
/// Beyond `connect_timeout`, what authentication and the fork may take.
const START_SLACK: Duration = Duration::from_secs(10);
/// How often a lock held by another process is retried.
const LOCK_RETRY: Duration = Duration::from_millis(20);

/// How a call reaches its host (`structuredContent.mux`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MuxUse {
    /// A running master answered its check, or was verified earlier in this client.
    Reused,
    /// This call started the master.
    New,
    /// The master hangs; this call logged in directly.
    Bypassed,
    /// No control directory fits a unix socket; every call logs in.
    Off,
}

impl MuxUse {
    pub fn as_str(self) -> &'static str {
        match self {
            MuxUse::Reused => "reused",
            MuxUse::New => "new",
            MuxUse::Bypassed => "bypassed",
            MuxUse::Off => "off",
        }
    }
}

/// The way in that [`ensure`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    Mux {
        socket: PathBuf,
        mux: MuxUse,
        pid: Option<u32>,
    },
    /// Log in directly for this call (a hung master, or reuse off).
    Direct {
        mux: MuxUse,
    },
}

/// Asks the master on `socket` whether it is alive; its pid when it is.
pub async fn alive_check(socket: &Path, within: Duration) -> Result<u32, CheckFailure> {
    let check = async {
        let mut conn = openssh_mux_client::Connection::connect(socket).await?;
        conn.send_alive_check().await
    };
    match tokio::time::timeout(within, check).await {
        Ok(Ok(pid)) => Ok(pid.get()),
        Ok(Err(err)) => Err(CheckFailure::Failed(err.to_string())),
        Err(_) => Err(CheckFailure::Hung),
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckFailure {
    Hung,
    Failed(String),
}

/// Finds or starts the master of `entry` on `socket` (S24): no socket → start; a socket that
/// refuses connections → unlink it (only a socket of ours) and start; one that answers its
/// check → reuse; one that hangs or answers wrongly → leave it, log in directly, warn.
pub async fn ensure(
    local: &Local,
    entry: &HostEntry,
    jump: Option<&HostEntry>,
    socket: &Path,
    deadline: Instant,
    warnings: &mut Vec<String>,
) -> Result<Route, SshError> {
    let _lock = lock(socket, deadline, &entry.name).await?;
    match control::socket_state(socket) {
        SocketState::Missing => {}
        SocketState::Dead => {
            control::remove_dead_socket(socket);
        }
        SocketState::Accepting => {
            let within = CHECK_TIMEOUT.min(deadline.saturating_duration_since(Instant::now()));
            match alive_check(socket, within).await {
                Ok(pid) => {
                    return Ok(Route::Mux {
                        socket: socket.to_path_buf(),
                        mux: MuxUse::Reused,
                        pid: Some(pid),
                    });
                }
                Err(CheckFailure::Hung) => {
                    warnings.push(format!(
                        "master for {} is not answering ({})",
                        entry.name,
                        socket.display()
                    ));
                    return Ok(Route::Direct { mux: MuxUse::Bypassed });
                }
                Err(CheckFailure::Failed(_))
                    if control::socket_state(socket) == SocketState::Dead =>
                {
                    control::remove_dead_socket(socket);
                }
                Err(CheckFailure::Failed(why)) => {
                    warnings.push(format!(
                        "master for {} answered wrongly ({why}) ({})",
                        entry.name,
                        socket.display()
                    ));
                    return Ok(Route::Direct { mux: MuxUse::Bypassed });
                }
            }
        }
    }
    start(local, entry, jump, socket, deadline).await?;
    let pid = alive_check(socket, CHECK_TIMEOUT).await.ok();
    if let Some(pid) = pid {
        local.disown(pid);
    }
    Ok(Route::Mux { socket: socket.to_path_buf(), mux: MuxUse::New, pid })
}

/// Starts the master, bounded by min(deadline, connect_timeout + 10 s). On timeout the
/// process group is killed by the run; on failure the master log says why.
async fn start(
    local: &Local,
    entry: &HostEntry,
    jump: Option<&HostEntry>,
    socket: &Path,
    deadline: Instant,
) -> Result<(), SshError> {
    let log = args::log_path(socket);
    let _ = std::fs::remove_file(&log);
    let started = Instant::now();
    let until = deadline.min(started + entry.connect_timeout + START_SLACK);
    let mut out = Collector::new(16 * 1024, false);
    let end = local
        .run_master(args::master_args(entry, jump, &local.ssh, socket), until, &mut out)
        .await?;
    if end.timed_out() {
        let secs = (until - started).as_secs_f64().round() as u64;
        return Err(SshError::ConnectTimeout {
            name: entry.name.clone(),
            host: entry.host.clone(),
            port: entry.port,
            secs: secs.max(1),
        });
    }
    if end.code() == Some(0) && control::socket_state(socket) == SocketState::Accepting {
        return Ok(());
    }
    let (bytes, _) = out.finish();
    let log_text = std::fs::read_to_string(&log).unwrap_or_default();
    let detail = connect_detail(entry, &format!("{log_text}\n{}", String::from_utf8_lossy(&bytes)));
    Err(SshError::Connect { name: entry.name.clone(), target: target(entry), detail })
}

/// `user@host:port`, or `host:port` without a configured user.
pub fn target(entry: &HostEntry) -> String {
    match &entry.username {
        Some(user) => format!("{user}@{}:{}", entry.host, entry.port),
        None => format!("{}:{}", entry.host, entry.port),
    }
}

/// The last meaningful line of ssh's log, with a hint for the two failures users can fix.
pub fn connect_detail(entry: &HostEntry, log: &str) -> String {
    let lines: Vec<&str> = log
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("Warning: Permanently added"))
        .collect();
    // OpenSSH follows a specific timeout line ("… during banner exchange") with a generic
    // "Connection to <h> port <p> timed out"; the specific one says what happened.
    let generic = |l: &&str| l.starts_with("Connection to ") && l.ends_with(" timed out");
    let line = lines
        .iter()
        .rev()
        .find(|l| !generic(l))
        .or(lines.last())
        .copied()
        .unwrap_or("ssh exited without saying why")
        .to_string();
    if line.contains("Permission denied (publickey") {
        let key =
            entry.key.as_ref().map_or("(ssh's default keys)".into(), |k| k.display().to_string());
        return format!("{line}; the server rejected key {key}");
    }
    if log.contains("Host key verification failed")
        || log.contains("REMOTE HOST IDENTIFICATION HAS CHANGED")
    {
        let known = entry
            .known_hosts
            .as_ref()
            .map_or("~/.ssh/known_hosts".into(), |k| k.display().to_string());
        return format!(
            "Host key verification failed; the host key differs from {known}; if the change is expected, remove the old entry"
        );
    }
    line
}

/// An exclusive lock on `<socket>.lock`, so two processes never start two masters on one
/// socket (the second would fail to bind and stay as an unshared, detached connection).
async fn lock(socket: &Path, deadline: Instant, name: &str) -> Result<File, SshError> {
    let mut path = socket.as_os_str().to_owned();
    path.push(".lock");
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(PathBuf::from(path))
        .map_err(|err| {
        SshError::Local(format!("cannot lock the control socket of {name}: {err}"))
    })?;
    loop {
        // SAFETY: flock on an fd we own; LOCK_NB never blocks.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            return Ok(file);
        }
        if Instant::now() >= deadline {
            return Err(SshError::NotStarted { name: name.into(), secs: 0 });
        }
        tokio::time::sleep(LOCK_RETRY).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> HostEntry {
        let mut entry = crate::control::tests::entry("web");
        entry.key = Some("/k/id".into());
        entry.known_hosts = Some("/k/known".into());
        entry
    }

    #[test]
    fn connect_details_prefer_the_specific_line_and_add_hints() {
        let log = "Connection timed out during banner exchange\nConnection to 1.2.3.4 port 22 timed out\n";
        assert_eq!(connect_detail(&entry(), log), "Connection timed out during banner exchange");
        let denied = "Warning: Permanently added 'x' to the list of known hosts.\nu@h: Permission denied (publickey).\n";
        assert_eq!(
            connect_detail(&entry(), denied),
            "u@h: Permission denied (publickey).; the server rejected key /k/id"
        );
        assert_eq!(
            connect_detail(&entry(), "@@@ WARNING\nHost key verification failed.\n"),
            "Host key verification failed; the host key differs from /k/known; if the change is expected, remove the old entry"
        );
        assert_eq!(target(&entry()), "u@127.0.0.1:22");
    }
}
