//! One command on one host: checks, queue, master, probe, wrapper, session, timeout kill.

use std::time::{Duration, Instant};

use execkit_process::CancellationToken;

use crate::checks::{check_cwd_for_os, check_request, too_long};
use crate::client::{SshClient, lock};
use crate::collect::Collector;
use crate::config::HostEntry;
use crate::error::SshError;
use crate::exec::Exec;
use crate::master::{self, MuxUse, Route};
use crate::probe::{self, HostInfo};
use crate::session::SessionEnd;
use crate::until::{Stop, Until};
use crate::{compat, control, wrap};

/// Linux's per-argument maximum (MAX_ARG_STRLEN): the remote shell gets the command as one
/// argv string.
pub const MAX_COMMAND_BYTES: usize = 131072;
/// A probe's answer is a few lines; a login banner may add a page.
const PROBE_OUTPUT_MAX: usize = 64 * 1024;

/// One command on one configured host, with a resolved timeout.
#[derive(Debug, Clone)]
pub struct RunRequest {
    pub host: String,
    pub command: String,
    pub cwd: Option<String>,
    pub timeout: Duration,
    /// Cancelling ends the call as soon as it can; a started command is killed like a
    /// timed-out one.
    pub cancel: CancellationToken,
}

impl RunRequest {
    /// A request that nothing cancels.
    pub fn new(host: &str, command: &str, cwd: Option<&str>, timeout: Duration) -> RunRequest {
        RunRequest {
            host: host.into(),
            command: command.into(),
            cwd: cwd.map(str::to_string),
            timeout,
            cancel: CancellationToken::new(),
        }
    }
}

/// How the remote command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunEnd {
    Exited(i32),
    /// Ended without an exit status (killed by a signal, or the channel dropped).
    NoStatus,
    TimedOut,
    /// The caller cancelled the call while the command ran.
    Cancelled,
}

/// What one call did on one host.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub host: String,
    /// stdout and stderr in arrival order, the pid marker removed, at most the client's
    /// `max_output_bytes`. Empty from [`SshClient::run_into`], whose collector has it.
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
pub(crate) struct Reached {
    pub route: Route,
    pub connect: Duration,
}

impl SshClient {
    /// Runs one command on one host. `Err` means no exit status exists: a refused argument,
    /// a connection failure, a refused or lost session.
    pub async fn run(&self, request: &RunRequest) -> Result<RunOutcome, SshError> {
        let mut out = Collector::new(self.inner.options.max_output_bytes, false);
        let mut outcome = self.run_into(request, &mut out).await?;
        outcome.output = out.finish().0;
        Ok(outcome)
    }

    /// [`SshClient::run`] with the output going into `out` (a streaming collector feeds the
    /// call's OutputSink as the bytes arrive).
    pub async fn run_into(
        &self,
        request: &RunRequest,
        out: &mut Collector,
    ) -> Result<RunOutcome, SshError> {
        let started = Instant::now();
        let until = Until { deadline: started + request.timeout, cancel: request.cancel.clone() };
        let config = self.config();
        let entry = check_request(&config, request)?.clone();
        let jump = entry.proxy_jump.as_ref().and_then(|j| config.hosts.get(j)).cloned();
        let local = self.local().await?.clone();
        let state = self.host_state(&entry);
        let not_started = |stop: Stop| match stop {
            Stop::TimedOut => {
                SshError::NotStarted { name: entry.name.clone(), secs: request.timeout.as_secs() }
            }
            Stop::Cancelled => SshError::Cancelled { name: entry.name.clone() },
        };
        let permit = until.race(state.channels.clone().acquire_owned()).await;
        let _permit = match permit {
            Ok(Ok(permit)) => permit,
            Ok(Err(_)) => return Err(not_started(Stop::TimedOut)),
            Err(stop) => return Err(not_started(stop)),
        };
        let queued = started.elapsed();
        let reached = until
            .race(self.reach(&entry, jump.as_ref(), until.deadline))
            .await
            .map_err(not_started)?
            .map_err(|e| e.with_budget(request.timeout.as_secs()))?;
        let info = self
            .host_info(&entry, jump.as_ref(), &reached.route, &until)
            .await
            .map_err(|e| e.with_budget(request.timeout.as_secs()))?;
        check_cwd_for_os(&entry.name, &info.os, request.cwd.as_deref())?;
        let wrapper = compat::wrapper(&info, entry.compat, &entry.name)?;
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
        out.expect_marker(wrapper.reports_pid());
        let (end, route) = ctx.execute(reached.route, &wrapped, &until, out).await?;
        let remote_pid = out.pid;
        let remote_killed = match (end, remote_pid) {
            (SessionEnd::TimedOut | SessionEnd::Cancelled, Some(pid)) => {
                ctx.kill_remote(&route, wrapper, pid).await
            }
            _ => false,
        };
        let (mux, master_pid) = match route {
            Route::Mux { mux, pid, .. } => (mux, pid),
            Route::Direct { mux } => (mux, None),
        };
        Ok(RunOutcome {
            host: entry.name.clone(),
            output: Vec::new(),
            output_bytes: out.total(),
            end: match end {
                SessionEnd::Exited(code) => RunEnd::Exited(code),
                SessionEnd::NoStatus => RunEnd::NoStatus,
                SessionEnd::TimedOut => RunEnd::TimedOut,
                SessionEnd::Cancelled => RunEnd::Cancelled,
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
    pub(crate) async fn reach(
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
        until: &Until,
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
        let bytes = ctx.probe(route, probe::PROBE_COMMAND, until).await?;
        let mut info = probe::parse_probe(&bytes).unwrap_or(HostInfo {
            os: "unknown".into(),
            shell: "unknown".into(),
            shell_path: None,
            bash: None,
            source: probe::ProbeSource::Probed,
        });
        if compat::needs_bash_probe(&info, entry.compat) {
            let bytes = ctx.probe(route, compat::BASH_PROBE, until).await?;
            info.bash = Some(compat::parse_bash_probe(&bytes));
        }
        if let Some(dir) = cache.as_deref() {
            probe::write_cache(dir, entry, &info);
        }
        *lock(&state.info) = Some(info.clone());
        Ok(info)
    }
}

impl Exec<'_> {
    /// Runs one probe command within the call's budget; its output, both streams.
    async fn probe(
        &self,
        route: &Route,
        command: &str,
        until: &Until,
    ) -> Result<Vec<u8>, SshError> {
        let mut out = Collector::new(PROBE_OUTPUT_MAX, false);
        let name = || self.entry.name.clone();
        match self.execute(route.clone(), command, until, &mut out).await?.0 {
            SessionEnd::TimedOut => Err(SshError::NotStarted { name: name(), secs: 0 }),
            SessionEnd::Cancelled => Err(SshError::Cancelled { name: name() }),
            SessionEnd::Exited(_) | SessionEnd::NoStatus => Ok(out.finish().0),
        }
    }
}
