//! Local ssh processes: found once, spawned only through `execkit-process`, with the hardened
//! environment (spec-ssh S14, S18).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use execkit_process::env::{EnvBuilder, ScrubRules};
use execkit_process::run::{RunEnd, RunLimits, RunObserver};
use execkit_process::{Confinement, ExitStatus, SpawnSpec, StdinMode, Supervisor};
use execkit_runkit::run_to_end;

use crate::collect::Collector;
use crate::environment::Environment;
use crate::error::SshError;
use crate::until::{Stop, Until};

/// `accept-new` for StrictHostKeyChecking arrived in OpenSSH 7.6.
const MIN_VERSION: (u32, u32) = (7, 6);
/// `ssh -V` answers at once; anything slower is a broken client.
const VERSION_TIMEOUT: Duration = Duration::from_secs(5);

/// What a local ssh process did.
#[derive(Debug)]
pub struct LocalEnd {
    /// Why the process was stopped before it ended, if it was.
    pub stopped: Option<Stop>,
    pub status: Option<ExitStatus>,
}

impl LocalEnd {
    pub fn timed_out(&self) -> bool {
        self.stopped == Some(Stop::TimedOut)
    }

    pub fn code(&self) -> Option<i32> {
        self.status.and_then(|s| s.code)
    }
}

/// The ssh binary and how to start it.
#[derive(Debug, Clone)]
pub struct Local {
    pub supervisor: Supervisor,
    pub ssh: PathBuf,
    env: Vec<(OsString, OsString)>,
}

impl Local {
    /// Finds `ssh` on the PATH of `env` and checks its version.
    pub async fn new(supervisor: Supervisor, env: &Environment) -> Result<Local, SshError> {
        let ssh = find_on_path("ssh", env.get("PATH").unwrap_or("/usr/bin:/bin"))
            .ok_or_else(|| SshError::Client("ssh client not found on PATH".into()))?;
        let local = Local { supervisor, ssh, env: spawn_env(env) };
        let mut out = Collector::new(4096, false);
        let deadline = Instant::now() + VERSION_TIMEOUT;
        local.run(vec!["-V".into()], deadline, &mut out).await?;
        let (bytes, _) = out.finish();
        let text = String::from_utf8_lossy(&bytes);
        let line = text.lines().next().unwrap_or("").trim().to_string();
        match openssh_version(&line) {
            Some(found) if found >= MIN_VERSION => Ok(local),
            _ => Err(SshError::Client(format!(
                "the ssh tool needs OpenSSH 7.6 or newer (found {})",
                if line.is_empty() { "no version" } else { &line }
            ))),
        }
    }

    /// Runs `ssh <args>` to its end or `deadline`; output goes to `out`.
    pub async fn run(
        &self,
        args: Vec<OsString>,
        deadline: Instant,
        out: &mut dyn RunObserver,
    ) -> Result<LocalEnd, SshError> {
        self.run_on(args, false, &Until::deadline(deadline), out).await
    }

    /// [`Local::run`] that also stops when the call is cancelled.
    pub async fn run_until(
        &self,
        args: Vec<OsString>,
        until: &Until,
        out: &mut dyn RunObserver,
    ) -> Result<LocalEnd, SshError> {
        self.run_on(args, false, until, out).await
    }

    /// Runs the `ssh -M -N -f` that starts a master. The master forks away from it after
    /// authentication and must outlive this process, so the spawn is detached: no cgroup
    /// leaf (the master would stay a member, killed when the Toolkit closes) and nothing the
    /// launcher forks is a member of its tree. [`Local::disown`] the master's pid once known.
    pub async fn run_master(
        &self,
        args: Vec<OsString>,
        deadline: Instant,
        out: &mut dyn RunObserver,
    ) -> Result<LocalEnd, SshError> {
        self.run_on(args, true, &Until::deadline(deadline), out).await
    }

    /// The master `pid` is a member of no tree of this process, not even as an orphan this
    /// process (a subreaper) adopted when the launcher exited.
    pub fn disown(&self, pid: u32) {
        self.supervisor.disown(pid);
    }

    async fn run_on(
        &self,
        args: Vec<OsString>,
        detached: bool,
        until: &Until,
        out: &mut dyn RunObserver,
    ) -> Result<LocalEnd, SshError> {
        let spec = SpawnSpec {
            program: self.ssh.clone(),
            args,
            cwd: PathBuf::from("/"),
            env: self.env.clone(),
            stdin: StdinMode::Null,
            detached,
            // The ssh client must reach the network whatever the sandbox allows the commands
            // execkit runs locally; what runs remotely is the remote host's to confine.
            confinement: Confinement::Exempt,
            ..SpawnSpec::default()
        };
        let supervisor = &self.supervisor;
        let child = supervisor.spawn(spec).await.map_err(|err| SshError::Local(err.to_string()))?;
        let config = supervisor.config();
        let limits = RunLimits {
            deadline: Some(until.deadline),
            cancel: until.cancel.clone(),
            kill_grace: Duration::from_millis(500),
            drain_idle: config.drain_idle,
            drain_max: config.drain_max,
        };
        // Dropping this future (the call went away) kills the ssh process.
        let outcome = run_to_end(child, &mut Forward(out), limits).await;
        let stopped = match outcome.end {
            RunEnd::Exited => None,
            RunEnd::TimedOut => Some(Stop::TimedOut),
            RunEnd::Cancelled => Some(Stop::Cancelled),
        };
        Ok(LocalEnd { stopped, status: outcome.status })
    }
}

/// A sized observer over a borrowed one, as `run_to_end` takes.
struct Forward<'a>(&'a mut dyn RunObserver);

impl RunObserver for Forward<'_> {
    fn output(&mut self, chunk: &[u8]) {
        self.0.output(chunk);
    }

    fn tick(&mut self) {
        self.0.tick();
    }
}

/// The hardened environment with the credential scrub, except `SSH_AUTH_SOCK`: agent keys
/// must keep working for ssh.
fn spawn_env(env: &Environment) -> Vec<(OsString, OsString)> {
    let mut builder = EnvBuilder::from_vars(env.to_os_vars());
    builder.remove_shell_state();
    builder.scrub(&ScrubRules::from_lookup(&|name| env.get(name).map(str::to_string)));
    if let Some(agent) = env.non_empty("SSH_AUTH_SOCK") {
        builder.set("SSH_AUTH_SOCK", agent);
    }
    builder.harden();
    builder.into_vars()
}

fn find_on_path(program: &str, path: &str) -> Option<PathBuf> {
    path.split(':')
        .filter(|dir| !dir.is_empty())
        .map(|dir| Path::new(dir).join(program))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `OpenSSH_9.2p1 Debian-2, OpenSSL …` → (9, 2).
fn openssh_version(line: &str) -> Option<(u32, u32)> {
    let rest = line.strip_prefix("OpenSSH_")?;
    let mut parts = rest.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(openssh_version("OpenSSH_9.2p1 Debian-2+deb12u6, OpenSSL 3.0"), Some((9, 2)));
        assert_eq!(openssh_version("OpenSSH_7.4p1"), Some((7, 4)));
        assert_eq!(openssh_version("Dropbear"), None);
    }
}
