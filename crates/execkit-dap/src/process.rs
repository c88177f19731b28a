//! The adapter process: spawned through `execkit-process`, owned by one waiter task, with its
//! stderr (and, for socket transports, stdout) kept in a bounded tail ring.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use execkit_process::{
    Child, ExitStatus, KillReport, OutputPipe, ProcessTree, SpawnSpec, StdinMode, Supervisor,
};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::error::TransportError;

/// What the adapter's stderr ring keeps: enough for a stack trace, bounded per session.
pub const STDERR_RING_BYTES: usize = 64 * 1024;

/// How much of the ring an error text quotes.
pub const STDERR_TAIL_BYTES: usize = 2 * 1024;

/// One adapter command line, already resolved (no placeholders left).
#[derive(Debug, Clone, Default)]
pub struct AdapterCommand {
    /// The adapter's name, for messages (`Debug adapter lldb-dap exited …`).
    pub name: String,
    pub program: PathBuf,
    pub args: Vec<OsString>,
    pub cwd: PathBuf,
    /// The complete environment (see `execkit_process::env::EnvBuilder`).
    pub env: Vec<(OsString, OsString)>,
}

/// A running (or finished) adapter process.
#[derive(Debug, Clone)]
pub struct AdapterProcess {
    name: String,
    pid: u32,
    tree: ProcessTree,
    exit: watch::Receiver<Option<ExitStatus>>,
    stderr: Arc<Mutex<TailRing>>,
}

impl AdapterProcess {
    /// Starts `cmd` with the given extra fds; its merged output (stderr, plus stdout when fd 1
    /// is not overridden) feeds the tail ring.
    pub(crate) async fn spawn(
        supervisor: &Supervisor,
        cmd: &AdapterCommand,
        extra_fds: Vec<(std::os::fd::OwnedFd, i32)>,
    ) -> Result<AdapterProcess, TransportError> {
        let spec = SpawnSpec {
            program: cmd.program.clone(),
            args: cmd.args.clone(),
            cwd: cmd.cwd.clone(),
            env: cmd.env.clone(),
            stdin: StdinMode::Null,
            extra_fds,
            ..SpawnSpec::default()
        };
        let mut child = supervisor.spawn(spec).await.map_err(|source| TransportError::Spawn {
            adapter: cmd.name.clone(),
            source: Box::new(source),
        })?;
        let stderr = Arc::new(Mutex::new(TailRing::default()));
        let feeder =
            child.take_output().map(|output| tokio::spawn(feed_ring(output, Arc::clone(&stderr))));
        let (tx, exit) = watch::channel(None);
        let (pid, tree) = (child.pid(), child.tree());
        tokio::spawn(wait_for_exit(child, feeder, tx));
        Ok(AdapterProcess { name: cmd.name.clone(), pid, tree, exit, stderr })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The exit status, once the leader has exited.
    pub fn exit_status(&self) -> Option<ExitStatus> {
        *self.exit.borrow()
    }

    /// Waits for the leader's exit, up to `deadline`.
    pub async fn wait_exit(&self, deadline: Instant) -> Option<ExitStatus> {
        let mut exit = self.exit.clone();
        let waited = tokio::time::timeout_at(deadline, exit.wait_for(Option::is_some)).await;
        match waited {
            Ok(Ok(status)) => *status,
            _ => self.exit_status(),
        }
    }

    /// The last bytes of stderr (at most `max`), cut on a UTF-8 boundary.
    pub fn stderr_tail(&self, max: usize) -> String {
        self.stderr.lock().map(|ring| ring.tail(max)).unwrap_or_default()
    }

    /// Kills the adapter's whole tree: TERM, `grace`, KILL.
    pub async fn kill(&self, grace: Duration) -> KillReport {
        self.tree.kill(grace).await
    }

    /// `code 3`, `signal SIGABRT` or `status unknown`, for messages.
    pub fn exit_text(status: Option<ExitStatus>) -> String {
        match status {
            Some(ExitStatus { code: Some(code), .. }) => format!("code {code}"),
            Some(ExitStatus { signal: Some(sig), .. }) => {
                format!("signal {}", execkit_process::signal_name(sig))
            }
            _ => "status unknown".to_string(),
        }
    }
}

/// How long the exit waits for the adapter's last output to reach the ring. A process the
/// adapter left behind may hold the pipe open, so the wait is bounded.
const LAST_OUTPUT_WAIT: Duration = Duration::from_millis(500);

/// Publishes the exit only once the ring holds what the adapter wrote before exiting, so an
/// error built from the exit quotes the adapter's last words.
async fn wait_for_exit(
    mut child: Child,
    feeder: Option<tokio::task::JoinHandle<()>>,
    tx: watch::Sender<Option<ExitStatus>>,
) {
    if let Ok(status) = child.wait().await {
        if let Some(feeder) = feeder {
            let _ = tokio::time::timeout(LAST_OUTPUT_WAIT, feeder).await;
        }
        tx.send_replace(Some(status));
    }
}

async fn feed_ring(mut output: OutputPipe, ring: Arc<Mutex<TailRing>>) {
    let mut buf = vec![0u8; 8192];
    while let Ok(n @ 1..) = output.read(&mut buf).await {
        if let Ok(mut ring) = ring.lock() {
            ring.push(&buf[..n]);
        }
    }
}

/// The last [`STDERR_RING_BYTES`] bytes written.
#[derive(Debug, Default)]
struct TailRing {
    bytes: VecDeque<u8>,
}

impl TailRing {
    fn push(&mut self, chunk: &[u8]) {
        let chunk = &chunk[chunk.len().saturating_sub(STDERR_RING_BYTES)..];
        let overflow = (self.bytes.len() + chunk.len()).saturating_sub(STDERR_RING_BYTES);
        self.bytes.drain(..overflow);
        self.bytes.extend(chunk);
    }

    fn tail(&self, max: usize) -> String {
        let skip = self.bytes.len().saturating_sub(max);
        let bytes: Vec<u8> = self.bytes.iter().skip(skip).copied().collect();
        let text = String::from_utf8_lossy(&bytes);
        text.trim_start_matches('\u{FFFD}').trim_end().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_text_names_code_or_signal() {
        let code = ExitStatus { code: Some(3), signal: None };
        let signal = ExitStatus { code: None, signal: Some(libc::SIGABRT) };
        assert_eq!(AdapterProcess::exit_text(Some(code)), "code 3");
        assert_eq!(AdapterProcess::exit_text(Some(signal)), "signal SIGABRT");
        assert_eq!(AdapterProcess::exit_text(None), "status unknown");
    }

    #[test]
    fn ring_keeps_the_tail() {
        let mut ring = TailRing::default();
        ring.push(&vec![b'a'; STDERR_RING_BYTES]);
        ring.push(b"boom\n");
        assert_eq!(ring.bytes.len(), STDERR_RING_BYTES);
        assert_eq!(ring.tail(6), "aboom");
    }
}
