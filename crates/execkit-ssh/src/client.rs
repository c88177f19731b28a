//! The client: configuration, the control directory, per-host state (channel cap, verified
//! master, probe), and the doctor's warnings.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use execkit_process::Supervisor;
use tokio::sync::{OnceCell, Semaphore};

use crate::config::HostConfig;
use crate::control::{self, ControlDir};
use crate::environment::Environment;
use crate::error::SshError;
use crate::local::Local;
use crate::master::{self, MuxUse};
use crate::probe::HostInfo;
use crate::{HostEntry, args};

/// Which mux client opens sessions on a master.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MuxClient {
    /// The `openssh` crate's native mux, falling back to process-mux when the master does not
    /// speak the protocol it expects.
    #[default]
    Native,
    /// Always a process-mux `ssh` per command (measurements, and masters the native client
    /// cannot talk to).
    Process,
}

/// Knobs of a client.
#[derive(Debug, Clone)]
pub struct SshOptions {
    pub mux: MuxClient,
    /// Output bytes kept per host and call; the total is still counted exactly.
    pub max_output_bytes: usize,
}

impl Default for SshOptions {
    fn default() -> Self {
        SshOptions { mux: MuxClient::Native, max_output_bytes: 8 * 1024 * 1024 }
    }
}

/// State of one host entry in this client. Replaced when the entry changes.
#[derive(Debug)]
pub(crate) struct HostState {
    pub entry: HostEntry,
    /// `max_sessions` permits: sessions beyond it queue here instead of reaching the server.
    pub channels: Arc<Semaphore>,
    /// The master was found alive (or started) by this client; no check before each call.
    pub verified: tokio::sync::Mutex<Option<Option<u32>>>,
    pub info: Mutex<Option<HostInfo>>,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(crate) struct Inner {
    pub env: Environment,
    pub cwd: PathBuf,
    pub supervisor: Supervisor,
    pub options: SshOptions,
    pub control: ControlDir,
    pub cache_dir: Option<PathBuf>,
    pub config: Mutex<Arc<HostConfig>>,
    pub local: OnceCell<Result<Local, SshError>>,
    pub hosts: Mutex<HashMap<String, Arc<HostState>>>,
    /// Warnings found while running (a hung master), for the doctor.
    pub runtime_warnings: Mutex<Vec<String>>,
}

/// Runs commands on configured hosts. Cheap to clone; clones share masters and state.
#[derive(Clone)]
pub struct SshClient {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for SshClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SshClient").field("cwd", &self.inner.cwd).finish_non_exhaustive()
    }
}

impl SshClient {
    /// A client for the project at `cwd`. `env` is the environment to expand configuration
    /// with and to give ssh; nothing is read from the process environment. Nothing is spawned
    /// until the first call.
    pub fn new(
        cwd: &Path,
        env: Environment,
        supervisor: Supervisor,
        options: SshOptions,
    ) -> SshClient {
        let config = HostConfig::discover(cwd, &env);
        let control = control::choose_control_dir(&env);
        let cache_dir = env.home().map(|home| home.join(".execkit/cache/ssh-hosts"));
        SshClient {
            inner: Arc::new(Inner {
                env,
                cwd: cwd.to_path_buf(),
                supervisor,
                options,
                control,
                cache_dir,
                config: Mutex::new(Arc::new(config)),
                local: OnceCell::new(),
                hosts: Mutex::new(HashMap::new()),
                runtime_warnings: Mutex::new(Vec::new()),
            }),
        }
    }

    /// The configuration, re-read first when a file changed (S11).
    pub fn config(&self) -> Arc<HostConfig> {
        let mut config = lock(&self.inner.config);
        if config.changed() {
            *config = Arc::new(HostConfig::discover(&self.inner.cwd, &self.inner.env));
        }
        config.clone()
    }

    /// Everything `execkit doctor` should list: configuration problems, skipped control
    /// directories, masters that did not answer.
    pub fn doctor(&self) -> Vec<String> {
        let mut out = self.config().warnings.clone();
        out.extend(self.inner.control.warnings.iter().cloned());
        out.extend(lock(&self.inner.runtime_warnings).iter().cloned());
        out
    }

    /// The socket a host's master listens on, when reuse is on.
    pub fn control_path(&self, name: &str) -> Option<PathBuf> {
        let config = self.config();
        let entry = config.hosts.get(name)?;
        Some(control::socket_path(self.inner.control.dir.as_ref()?, entry))
    }

    /// Stops a host's master (`execkit ssh close`): never done on the client's own, since
    /// another process may share it.
    pub async fn close_master(&self, name: &str) -> Result<bool, SshError> {
        let Some(socket) = self.control_path(name) else { return Ok(false) };
        if control::socket_state(&socket) != control::SocketState::Accepting {
            return Ok(false);
        }
        let local = self.local().await?;
        let mut out = crate::collect::Collector::new(4096, false);
        let deadline = std::time::Instant::now() + master::CHECK_TIMEOUT;
        let end = local.run(args::control_args(&socket, "exit"), deadline, &mut out).await?;
        if let Some(state) = lock(&self.inner.hosts).get(name) {
            state.verified.try_lock().map(|mut v| *v = None).ok();
        }
        Ok(end.code() == Some(0))
    }

    pub(crate) async fn local(&self) -> Result<&Local, SshError> {
        let init = || Local::new(self.inner.supervisor.clone(), &self.inner.env);
        self.inner.local.get_or_init(init).await.as_ref().map_err(Clone::clone)
    }

    /// The state of `entry`, new when the entry changed since it was made.
    pub(crate) fn host_state(&self, entry: &HostEntry) -> Arc<HostState> {
        let mut hosts = lock(&self.inner.hosts);
        if let Some(state) = hosts.get(&entry.name)
            && state.entry == *entry
        {
            return state.clone();
        }
        let state = Arc::new(HostState {
            entry: entry.clone(),
            channels: Arc::new(Semaphore::new(entry.max_sessions)),
            verified: tokio::sync::Mutex::new(None),
            info: Mutex::new(None),
        });
        hosts.insert(entry.name.clone(), state.clone());
        state
    }

    pub(crate) fn warn(&self, warning: String) {
        let mut warnings = lock(&self.inner.runtime_warnings);
        if !warnings.contains(&warning) {
            warnings.push(warning);
        }
    }

    pub(crate) fn mux_off(&self) -> Option<MuxUse> {
        self.inner.control.dir.is_none().then_some(MuxUse::Off)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_hosts_means_no_tool() {
        let dir = tempfile::tempdir().unwrap();
        let control = dir.path().join("c");
        let env = Environment::from_vars([
            ("HOME", dir.path().to_str().unwrap()),
            ("EXECKIT_SSH_CONTROL_DIR", control.to_str().unwrap()),
        ]);
        let supervisor = Supervisor::start(execkit_process::SupervisorConfig::default()).unwrap();
        let client = SshClient::new(dir.path(), env, supervisor, SshOptions::default());
        assert_eq!(client.tool_description(), None);
        let text = ".execkit/ssh.json";
        std::fs::create_dir_all(dir.path().join(".execkit")).unwrap();
        std::fs::write(
            dir.path().join(text),
            r#"{"hosts": {"a": {"host": "h", "description": "the box", "shell": "bash"}}}"#,
        )
        .unwrap();
        let lines = client.host_lines();
        assert_eq!(lines, vec!["- a: h:22 — the box (unix/bash)".to_string()]);
        assert!(client.tool_description().unwrap().starts_with("Run one non-interactive command"));
        std::fs::write(
            dir.path().join(text),
            r#"{"hosts": {"a": {"host": "h"}, "b": {"host": "k"}}, "groups": {"both": ["a", "b"]}}"#,
        )
        .unwrap();
        let described = client.tool_description().unwrap();
        assert!(
            described.ends_with(
                "Hosts:\n- a: h:22 (not probed yet)\n- b: k:22 (not probed yet)\nGroups (pass them in \"hosts\"):\n- both: a, b"
            ),
            "{described}"
        );
    }
}
