//! One command on one host: checks, queue, master, probe, wrapper, session, timeout kill.

use std::time::{Duration, Instant};

use crate::client::{SshClient, lock};
use crate::collect::Collector;
use crate::config::{HostConfig, HostEntry};
use crate::error::SshError;
use crate::master::{self, MuxUse, Route};
use crate::probe::{self, HostInfo};
use crate::session::{self, NativeFailure, SessionEnd};
use crate::wrap;
use crate::{MuxClient, control, keys};

/// Linux's per-argument maximum (MAX_ARG_STRLEN): the remote shell gets the command as one
/// argv string.
pub const MAX_COMMAND_BYTES: usize = 131072;
/// Waits between attempts when the server refuses a session (see `Exec::execute`): about
/// 0.4 s in all, far longer than a channel close takes on loopback, far shorter than a
/// session that really holds the slot.
const REFUSED_RETRY_PAUSES: [Duration; 4] = [
    Duration::from_millis(20),
    Duration::from_millis(50),
    Duration::from_millis(100),
    Duration::from_millis(250),
];
/// A timed-out command's kill session gets this long.
const KILL_BUDGET: Duration = Duration::from_secs(5);

/// One command on one configured host, with a resolved timeout.
#[derive(Debug, Clone)]
pub struct RunRequest {
    pub host: String,
    pub command: String,
    pub cwd: Option<String>,
    pub timeout: Duration,
}

/// How the remote command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunEnd {
    Exited(i32),
    /// Ended without an exit status (killed by a signal, or the channel dropped).
    NoStatus,
    TimedOut,
}

/// What one call did on one host.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub host: String,
    /// stdout and stderr in arrival order, the pid marker removed, at most the client's
    /// `max_output_bytes`.
    pub output: Vec<u8>,
    /// Every byte the command wrote.
    pub output_bytes: u64,
    pub end: RunEnd,
    pub wall: Duration,
    /// Time spent starting the master; zero when reused.
    pub connect: Duration,
    pub queued: Duration,
    pub mux: MuxUse,
    pub info: HostInfo,
    /// The remote login shell's pid (its process group), when the wrapper reported it.
    pub remote_pid: Option<u32>,
    /// A timed-out command's process group was sent SIGTERM (and SIGKILL after 2 s).
    pub remote_killed: bool,
    /// The master's pid, when known.
    pub master_pid: Option<u32>,
}

impl RunOutcome {
    pub fn success(&self) -> bool {
        self.end == RunEnd::Exited(0)
    }
}

/// Where a command goes once the host is reachable.
struct Reached {
    route: Route,
    connect: Duration,
}

impl SshClient {
    /// Runs one command on one host. `Err` means no exit status exists: a refused argument,
    /// a connection failure, a refused or lost session.
    pub async fn run(&self, request: &RunRequest) -> Result<RunOutcome, SshError> {
        let started = Instant::now();
        let deadline = started + request.timeout;
        let config = self.config();
        let entry = check_request(&config, request)?.clone();
        let jump = entry.proxy_jump.as_ref().and_then(|j| config.hosts.get(j)).cloned();
        let local = self.local().await?.clone();
        let state = self.host_state(&entry);
        let permit =
            tokio::time::timeout_at(deadline.into(), state.channels.clone().acquire_owned()).await;
        let Ok(Ok(_permit)) = permit else {
            return Err(SshError::NotStarted {
                name: entry.name.clone(),
                secs: request.timeout.as_secs(),
            });
        };
        let queued = started.elapsed();
        let reached = self.reach(&entry, jump.as_ref(), deadline).await?;
        let info = self.host_info(&entry, jump.as_ref(), &reached.route, deadline).await?;
        check_cwd_for_os(&entry.name, &info.os, request.cwd.as_deref())?;
        let wrapper = info.wrapper();
        let wrapped = wrap::wrap(
            wrapper,
            &request.command,
            request.cwd.as_deref(),
            &entry.name,
            &info.shell,
        )?;
        if wrapped.len() > MAX_COMMAND_BYTES {
            return Err(too_long(wrapped.len()));
        }
        let ctx = Exec { client: self, local: &local, entry: &entry, jump: jump.as_ref() };
        let mut out = Collector::new(self.inner.options.max_output_bytes, wrapper.reports_pid());
        let (end, route) = ctx.execute(reached.route, &wrapped, deadline, &mut out).await?;
        let remote_pid = out.pid;
        let remote_killed = match (end, remote_pid) {
            (SessionEnd::TimedOut, Some(pid)) => ctx.kill_remote(&route, pid).await,
            _ => false,
        };
        let (output, output_bytes) = out.finish();
        let (mux, master_pid) = match route {
            Route::Mux { mux, pid, .. } => (mux, pid),
            Route::Direct { mux } => (mux, None),
        };
        Ok(RunOutcome {
            host: entry.name.clone(),
            output,
            output_bytes,
            end: match end {
                SessionEnd::Exited(code) => RunEnd::Exited(code),
                SessionEnd::NoStatus => RunEnd::NoStatus,
                SessionEnd::TimedOut => RunEnd::TimedOut,
            },
            wall: started.elapsed(),
            connect: reached.connect,
            queued,
            mux,
            info,
            remote_pid,
            remote_killed,
            master_pid,
        })
    }

    /// The route to `entry`: a master verified earlier in this client, or the S24 check.
    async fn reach(
        &self,
        entry: &HostEntry,
        jump: Option<&HostEntry>,
        deadline: Instant,
    ) -> Result<Reached, SshError> {
        let zero = Duration::ZERO;
        if let Some(mux) = self.mux_off() {
            return Ok(Reached { route: Route::Direct { mux }, connect: zero });
        }
        let Some(socket) = self.control_path(&entry.name) else {
            return Ok(Reached { route: Route::Direct { mux: MuxUse::Off }, connect: zero });
        };
        let state = self.host_state(entry);
        let mut verified = state.verified.lock().await;
        if let Some(pid) = *verified
            && control::socket_state(&socket) == control::SocketState::Accepting
        {
            return Ok(Reached {
                route: Route::Mux { socket, mux: MuxUse::Reused, pid },
                connect: zero,
            });
        }
        let begun = Instant::now();
        let local = self.local().await?;
        let mut warnings = Vec::new();
        let route = master::ensure(local, entry, jump, &socket, deadline, &mut warnings).await?;
        warnings.into_iter().for_each(|w| self.warn(w));
        let connect = match &route {
            Route::Mux { mux: MuxUse::New, .. } => begun.elapsed(),
            _ => zero,
        };
        *verified = match &route {
            Route::Mux { pid, .. } => Some(*pid),
            Route::Direct { .. } => None,
        };
        Ok(Reached { route, connect })
    }

    /// The host's OS and shell: configured, remembered, cached on disk, or probed now.
    async fn host_info(
        &self,
        entry: &HostEntry,
        jump: Option<&HostEntry>,
        route: &Route,
        deadline: Instant,
    ) -> Result<HostInfo, SshError> {
        if let Some(shell) = entry.shell {
            return Ok(HostInfo::configured(shell));
        }
        let state = self.host_state(entry);
        if let Some(info) = lock(&state.info).clone() {
            return Ok(info);
        }
        let cache = self.inner.cache_dir.clone();
        if let Some(info) = cache.as_deref().and_then(|dir| probe::read_cache(dir, entry)) {
            *lock(&state.info) = Some(info.clone());
            return Ok(info);
        }
        let local = self.local().await?.clone();
        let ctx = Exec { client: self, local: &local, entry, jump };
        let mut out = Collector::new(64 * 1024, false);
        let (end, _) = ctx.execute(route.clone(), probe::PROBE_COMMAND, deadline, &mut out).await?;
        if end == SessionEnd::TimedOut {
            return Err(SshError::NotStarted { name: entry.name.clone(), secs: 0 });
        }
        let (bytes, _) = out.finish();
        let info = probe::parse_probe(&bytes).unwrap_or(HostInfo {
            os: "unknown".into(),
            shell: "unknown".into(),
            shell_path: None,
            source: probe::ProbeSource::Probed,
        });
        if let Some(dir) = cache.as_deref() {
            probe::write_cache(dir, entry, &info);
        }
        *lock(&state.info) = Some(info.clone());
        Ok(info)
    }
}

/// Everything one execution on one host needs.
struct Exec<'a> {
    client: &'a SshClient,
    local: &'a crate::local::Local,
    entry: &'a HostEntry,
    jump: Option<&'a HostEntry>,
}

impl Exec<'_> {
    /// Runs `command` over `route`, retrying a refused session a few times within the
    /// deadline. sshd frees a session slot only after the channel has closed, which comes a
    /// little after the exit status that released our channel permit; so a session opened
    /// right after another one of ours ended can be refused although the client is within
    /// `max_sessions`. A refused session ran nothing, so retrying it is safe; a refusal that
    /// persists (the server's limit is lower than `max_sessions`, or another process shares
    /// the master) is reported.
    async fn execute(
        &self,
        route: Route,
        command: &str,
        deadline: Instant,
        out: &mut Collector,
    ) -> Result<(SessionEnd, Route), SshError> {
        let mut pauses = REFUSED_RETRY_PAUSES.iter();
        loop {
            match self.execute_once(route.clone(), command, deadline, out).await {
                Err(SshError::SessionRefused { name }) => {
                    let pause = pauses.next().filter(|p| Instant::now() + **p < deadline);
                    let Some(pause) = pause else {
                        return Err(SshError::SessionRefused { name });
                    };
                    out.clear();
                    tokio::time::sleep(*pause).await;
                }
                other => return other,
            }
        }
    }

    /// One attempt. A native failure before the session opened is retried once after a
    /// fresh check; one after it opened is never retried (the command may have run).
    /// Returns the route actually used.
    async fn execute_once(
        &self,
        route: Route,
        command: &str,
        deadline: Instant,
        out: &mut Collector,
    ) -> Result<(SessionEnd, Route), SshError> {
        let name = &self.entry.name;
        let Route::Mux { socket, .. } = &route else {
            let end =
                session::direct(self.local, self.entry, self.jump, command, deadline, out).await?;
            return Ok((end, route));
        };
        if self.client.inner.options.mux == MuxClient::Process {
            return self.process_mux(route.clone(), command, deadline, out).await;
        }
        match session::native(name, socket, command, deadline, out).await {
            Ok(end) => Ok((end, route)),
            Err(NativeFailure::Fatal(err)) => Err(err),
            Err(NativeFailure::Protocol) => {
                self.process_mux(route.clone(), command, deadline, out).await
            }
            Err(NativeFailure::BeforeOpen(_)) => {
                self.client.forget_master(self.entry).await;
                let reached = self.client.reach(self.entry, self.jump, deadline).await?;
                let retry = reached.route;
                match &retry {
                    Route::Mux { socket, .. } => {
                        match session::native(name, socket, command, deadline, out).await {
                            Ok(end) => Ok((end, retry)),
                            Err(NativeFailure::Fatal(err)) => Err(err),
                            Err(NativeFailure::Protocol) => {
                                self.process_mux(retry.clone(), command, deadline, out).await
                            }
                            Err(NativeFailure::BeforeOpen(why)) => Err(SshError::Local(format!(
                                "cannot open a session on the master for {name}: {why}"
                            ))),
                        }
                    }
                    Route::Direct { .. } => {
                        let end = session::direct(
                            self.local, self.entry, self.jump, command, deadline, out,
                        )
                        .await?;
                        Ok((end, retry))
                    }
                }
            }
        }
    }

    /// Process-mux on `route`. When the client could not reach the socket at all (so no
    /// session opened), the master is checked again and the command retried once.
    async fn process_mux(
        &self,
        route: Route,
        command: &str,
        deadline: Instant,
        out: &mut Collector,
    ) -> Result<(SessionEnd, Route), SshError> {
        let end = self.process_mux_once(&route, command, deadline, out).await;
        if !matches!(end, Err(SshError::Lost { .. })) || !out.contains(b"Control socket connect(") {
            return end.map(|end| (end, route));
        }
        out.clear();
        self.client.forget_master(self.entry).await;
        let retry = self.client.reach(self.entry, self.jump, deadline).await?.route;
        if let Route::Direct { .. } = retry {
            let end =
                session::direct(self.local, self.entry, self.jump, command, deadline, out).await?;
            return Ok((end, retry));
        }
        let end = self.process_mux_once(&retry, command, deadline, out).await?;
        Ok((end, retry))
    }

    async fn process_mux_once(
        &self,
        route: &Route,
        command: &str,
        deadline: Instant,
        out: &mut Collector,
    ) -> Result<SessionEnd, SshError> {
        let Route::Mux { socket, .. } = route else {
            return Err(SshError::Local("process-mux needs a master socket".into()));
        };
        let name = &self.entry.name;
        let end = session::process_mux(self.local, name, socket, command, deadline, out).await;
        let failed = matches!(end, Ok(SessionEnd::Exited(255)) | Err(SshError::Lost { .. }));
        if failed && out.contains(b"refused by peer") {
            return Err(SshError::SessionRefused { name: name.clone() });
        }
        end
    }

    /// Sends the kill over a second session; true when it ran.
    async fn kill_remote(&self, route: &Route, pid: u32) -> bool {
        let mut sink = Collector::new(4096, false);
        let deadline = Instant::now() + KILL_BUDGET;
        let end = self.execute(route.clone(), &wrap::kill_command(pid), deadline, &mut sink).await;
        matches!(end, Ok((SessionEnd::Exited(0), _)))
    }
}

impl SshClient {
    /// Drops the "verified" mark so the next reach checks the socket again.
    async fn forget_master(&self, entry: &HostEntry) {
        *self.host_state(entry).verified.lock().await = None;
    }
}

fn too_long(n: usize) -> SshError {
    SshError::Argument(format!(
        "command is too long for a remote shell: {n} bytes after wrapping (limit {MAX_COMMAND_BYTES})"
    ))
}

/// The checks that need no process (S2–S4, S12, S13): the entry when they pass.
pub(crate) fn check_request<'a>(
    config: &'a HostConfig,
    request: &RunRequest,
) -> Result<&'a HostEntry, SshError> {
    let entry = config.hosts.get(&request.host).ok_or_else(|| SshError::UnknownHost {
        name: request.host.clone(),
        configured: config.hosts.keys().cloned().collect(),
    })?;
    check_command(&request.command)?;
    if let Some(cwd) = &request.cwd {
        check_cwd(cwd)?;
    }
    crate::args::guard(entry)?;
    if let Some(key) = &entry.key {
        keys::check_key(&entry.name, key)?;
    }
    Ok(entry)
}

fn check_command(command: &str) -> Result<(), SshError> {
    if command.trim().is_empty() {
        return Err(SshError::Argument("command: must not be empty".into()));
    }
    if command.contains('\0') {
        return Err(SshError::Argument("command: must not contain a NUL byte".into()));
    }
    if command.len() > MAX_COMMAND_BYTES {
        return Err(too_long(command.len()));
    }
    Ok(())
}

/// The OS-independent cwd rules: no `~`, no NUL/CR/LF, absolute for some OS.
fn check_cwd(cwd: &str) -> Result<(), SshError> {
    if cwd == "~" || cwd.starts_with("~/") {
        return Err(SshError::Argument(
            "cwd must be an absolute remote path; \"~\" is not expanded. Omit cwd to start in the login directory.".into(),
        ));
    }
    if cwd.contains(['\0', '\r', '\n']) {
        return Err(SshError::Argument("cwd must not contain NUL, CR or LF".into()));
    }
    let bytes = cwd.as_bytes();
    let windows = bytes.len() >= 3
        && bytes[0].is_ascii_alphabetic()
        && bytes[1] == b':'
        && matches!(bytes[2], b'\\' | b'/');
    if !(cwd.starts_with('/') || windows || cwd.starts_with(r"\\")) {
        return Err(SshError::Argument(format!("cwd must be an absolute path: {cwd}")));
    }
    Ok(())
}

/// The OS-dependent rule: POSIX paths start with `/`; Windows ones with `X:\`, `X:/` or `\\`.
fn check_cwd_for_os(name: &str, os: &str, cwd: Option<&str>) -> Result<(), SshError> {
    let Some(cwd) = cwd else { return Ok(()) };
    let posix = cwd.starts_with('/');
    let ok = match os {
        "windows" => !posix,
        "unknown" => true,
        _ => posix,
    };
    if ok {
        Ok(())
    } else {
        Err(SshError::Argument(format!("cwd must be an absolute path on {name} ({os}): {cwd}")))
    }
}
