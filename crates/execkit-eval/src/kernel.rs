//! One kernel process: spawn, handshake, I/O tasks, shutdown (spec-eval.md E28–E32).
//!
//! The kernel is started through `execkit-process` in its own session, with fd 0 `/dev/null`,
//! fds 1 and 2 the diagnostic pipe, fd 3 commands and fd 4 events. One owner task holds the
//! `Child` and publishes its exit status; the event reader parses untrusted lines into a
//! bounded channel (a flooding kernel blocks on its pipe, not on host memory); the command
//! writer serialises host frames. Dropping the command sender closes fd 3, and a kernel whose
//! command pipe reaches EOF exits.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use execkit_process::{ExitStatus, ProcessTree, SpawnSpec, StdinMode, Supervisor, signal_name};
use execkit_protocol::eval::Language;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::unix::pipe;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use crate::error::StartError;
use crate::frame::{self, HostFrame, KernelFrame, Line, PROTOCOL};

/// Frames queued between the event reader and the cell loop (E31).
const EVENT_QUEUE: usize = 256;
/// Host frames queued for the writer; the host sends few (execute, tool results).
const COMMAND_QUEUE: usize = 64;
/// The diagnostic ring keeps the newest 16 KiB (E28).
const DIAG_RING: usize = 16 * 1024;
/// Lines of the diagnostic tail shown when a kernel fails to start or dies.
const DIAG_LINES: usize = 40;

/// What the event reader forwards.
#[derive(Debug)]
pub enum Event {
    Frame(KernelFrame),
    Bad(String),
    TooLong,
    Closed,
}

/// How to start one kernel.
#[derive(Debug, Clone)]
pub struct KernelSpawn {
    pub language: Language,
    pub program: PathBuf,
    pub args: Vec<OsString>,
    pub cwd: PathBuf,
    pub env: Vec<(OsString, OsString)>,
    pub ready_timeout: Duration,
    pub trace: bool,
}

/// The newest bytes of the diagnostic pipe.
#[derive(Debug, Default)]
pub struct DiagRing {
    bytes: VecDeque<u8>,
}

impl DiagRing {
    fn push(&mut self, chunk: &[u8]) {
        self.bytes.extend(chunk);
        let excess = self.bytes.len().saturating_sub(DIAG_RING);
        self.bytes.drain(..excess);
    }

    /// The last 40 lines, lossily decoded.
    pub fn tail(&self) -> String {
        let (a, b) = self.bytes.as_slices();
        let text = String::from_utf8_lossy(&[a, b].concat()).into_owned();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(DIAG_LINES)..].join("\n")
    }
}

/// A live kernel. Running a cell on it is in `cell.rs`.
#[derive(Debug)]
pub struct Kernel {
    pub language: Language,
    pub pid: u32,
    pub version: String,
    pub start_ms: u64,
    pub(crate) tree: ProcessTree,
    pub(crate) cmd: mpsc::Sender<HostFrame>,
    pub(crate) events: tokio::sync::Mutex<mpsc::Receiver<Event>>,
    pub(crate) exit: watch::Receiver<Option<ExitStatus>>,
    diag: Arc<Mutex<DiagRing>>,
    next_id: AtomicU64,
    pub(crate) trace: bool,
    pub(crate) cell_snapshots: crate::cell_snapshot::CellSnapshots,
    /// The kernel's CPU time, read before and after every cell (`cpu_ms`).
    pub(crate) cpu: Option<execkit_process::procfs::CpuClock>,
}

fn pipe_pair() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let (r, w) = std::io::pipe()?;
    Ok((OwnedFd::from(r), OwnedFd::from(w)))
}

/// The kernel's diagnostic pipe: the ring of its newest bytes, and whether the pipe closed.
struct Diag {
    ring: Arc<Mutex<DiagRing>>,
    done: watch::Receiver<bool>,
}

/// Copies the diagnostic pipe (fds 1 and 2) into a ring until it closes.
fn read_diag(child: &mut execkit_process::Child) -> Diag {
    let ring = Arc::new(Mutex::new(DiagRing::default()));
    let (done_tx, done) = watch::channel(false);
    if let Some(mut out) = child.take_output() {
        let ring = ring.clone();
        tokio::spawn(async move {
            let mut buf = vec![0u8; 8192];
            while let Ok(n) = out.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                if let Ok(mut ring) = ring.lock() {
                    ring.push(&buf[..n]);
                }
            }
            let _ = done_tx.send(true);
        });
    }
    Diag { ring, done }
}

impl Kernel {
    /// Spawns the kernel and waits for `ready` (spec E30).
    pub async fn start(supervisor: &Supervisor, spec: KernelSpawn) -> Result<Kernel, StartError> {
        let lang = spec.language.display_name();
        let io_err = |e: std::io::Error| StartError::Failed {
            lang,
            reason: format!("cannot create pipes: {e}"),
            diag: String::new(),
        };
        let (cmd_r, cmd_w) = pipe_pair().map_err(io_err)?;
        let (evt_r, evt_w) = pipe_pair().map_err(io_err)?;
        let started = Instant::now();
        let mut child = supervisor
            .spawn(SpawnSpec {
                program: spec.program.clone(),
                args: spec.args.clone(),
                arg0: None,
                cwd: spec.cwd.clone(),
                env: spec.env.clone(),
                stdin: StdinMode::Null,
                extra_fds: vec![(cmd_r, 3), (evt_w, 4)],
                ..SpawnSpec::default()
            })
            .await
            .map_err(|e| StartError::Failed { lang, reason: e.to_string(), diag: String::new() })?;
        let pid = child.pid();
        let tree = child.tree();
        let diag = read_diag(&mut child);
        let (exit_tx, exit) = watch::channel(None);
        tokio::spawn(async move {
            // The owner task: the only holder of the Child.
            let status = child.wait().await.unwrap_or(ExitStatus { code: None, signal: None });
            let _ = exit_tx.send(Some(status));
        });
        let (event_tx, event_rx) = mpsc::channel(EVENT_QUEUE);
        let receiver = pipe::Receiver::from_owned_fd(evt_r).map_err(io_err)?;
        tokio::spawn(read_events(receiver, event_tx));
        let (cmd_tx, cmd_rx) = mpsc::channel(COMMAND_QUEUE);
        let sender = pipe::Sender::from_owned_fd(cmd_w).map_err(io_err)?;
        tokio::spawn(write_commands(sender, cmd_rx));
        let mut kernel = Kernel {
            language: spec.language,
            pid,
            version: String::new(),
            start_ms: 0,
            tree,
            cmd: cmd_tx,
            events: tokio::sync::Mutex::new(event_rx),
            exit,
            diag: diag.ring,
            next_id: AtomicU64::new(1),
            trace: spec.trace,
            cell_snapshots: Default::default(),
            cpu: execkit_process::procfs::CpuClock::open(pid),
        };
        if let Err(mut err) = kernel.handshake(spec.ready_timeout).await {
            kernel.kill().await;
            let mut diag_done = diag.done;
            // The diagnostic pipe closes when the group is gone; bound the wait anyway.
            let _ = tokio::time::timeout(Duration::from_secs(1), diag_done.wait_for(|d| *d)).await;
            if let StartError::Failed { diag, .. } = &mut err {
                *diag = kernel.diag_tail();
            }
            return Err(err);
        }
        kernel.start_ms = started.elapsed().as_millis() as u64;
        Ok(kernel)
    }

    /// Waits for the first frame, which must be `ready` with execkit's protocol version.
    async fn handshake(&mut self, ready_timeout: Duration) -> Result<(), StartError> {
        let lang = self.language.display_name();
        let first = tokio::time::timeout(ready_timeout, async {
            let mut events = self.events.lock().await;
            events.recv().await
        })
        .await;
        let broke = |reason: String| Err(StartError::Broke { lang, reason });
        match first {
            Ok(Some(Event::Frame(KernelFrame::Ready { protocol, version, .. }))) => {
                if protocol != PROTOCOL {
                    return Err(StartError::Protocol { lang, got: protocol });
                }
                self.version = version;
                Ok(())
            }
            Ok(Some(Event::Frame(other))) => {
                broke(format!("sent {} before ready", frame_kind(&other)))
            }
            Ok(Some(Event::Bad(_))) => broke("sent an invalid frame before ready".into()),
            Ok(Some(Event::TooLong)) => broke("a frame line over 16 MiB".into()),
            Ok(Some(Event::Closed) | None) => {
                let status = self.wait_exit(Duration::from_secs(2)).await;
                let reason = match status {
                    Some(s) => describe_exit(s),
                    None => "it closed its event pipe".into(),
                };
                Err(StartError::Failed { lang, reason, diag: String::new() })
            }
            Err(_) => Err(StartError::Failed {
                lang,
                reason: format!("no ready frame within {} s", ready_timeout.as_secs()),
                diag: String::new(),
            }),
        }
    }

    pub(crate) fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// The last 40 lines of the diagnostic pipe.
    pub fn diag_tail(&self) -> String {
        self.diag.lock().map(|ring| ring.tail()).unwrap_or_default()
    }

    /// The exit status, once the leader has exited.
    pub fn exit_status(&self) -> Option<ExitStatus> {
        *self.exit.borrow()
    }

    pub fn is_alive(&self) -> bool {
        self.exit.borrow().is_none()
    }

    /// Waits up to `limit` for the leader to exit.
    pub async fn wait_exit(&self, limit: Duration) -> Option<ExitStatus> {
        let mut exit = self.exit.clone();
        let _ = tokio::time::timeout(limit, exit.wait_for(Option::is_some)).await;
        *exit.borrow()
    }

    /// SIGKILLs the whole group at once (timeouts, protocol violations).
    pub async fn kill(&self) {
        self.tree.kill(Duration::ZERO).await;
    }

    /// A graceful stop (spec E32): `shutdown`, close fd 3, wait 1 s, then TERM and KILL the group.
    pub async fn shutdown(&self) {
        let _ = self.cmd.try_send(HostFrame::Shutdown);
        if self.wait_exit(Duration::from_secs(1)).await.is_none() {
            self.tree.kill(Duration::from_secs(1)).await;
        } else {
            // Children the kernel started stay in its group: end them too.
            self.tree.kill(Duration::ZERO).await;
        }
    }

    /// Every live member of the kernel's tree (tests check that none remain).
    pub fn members(&self) -> Vec<u32> {
        self.tree.members()
    }
}

/// `exited with code 3` / `killed by SIGSEGV`.
pub fn describe_exit(status: ExitStatus) -> String {
    match (status.code, status.signal) {
        (_, Some(sig)) => format!("killed by {}", signal_name(sig)),
        (Some(code), None) => format!("exited with code {code}"),
        (None, None) => "ended (status unknown)".to_string(),
    }
}

pub(crate) fn frame_kind(frame: &KernelFrame) -> &'static str {
    match frame {
        KernelFrame::Ready { .. } => "ready",
        KernelFrame::Started { .. } => "started",
        KernelFrame::Stream { .. } => "stream",
        KernelFrame::Display { .. } => "display",
        KernelFrame::Result { .. } => "result",
        KernelFrame::Error { .. } => "error",
        KernelFrame::ToolCall { .. } => "tool_call",
        KernelFrame::ToolCancel { .. } => "tool_cancel",
        KernelFrame::Done { .. } => "done",
        KernelFrame::SnapshotDone { .. } => "snapshot_done",
        KernelFrame::RestoreDone { .. } => "restore_done",
        KernelFrame::Unknown => "an unknown frame",
    }
}

async fn read_events(receiver: pipe::Receiver, tx: mpsc::Sender<Event>) {
    let mut reader = BufReader::with_capacity(64 * 1024, receiver);
    let mut buf = Vec::new();
    loop {
        let event = match frame::read_line(&mut reader, &mut buf, frame::MAX_LINE).await {
            Ok(Line::Frame(f)) => Event::Frame(f),
            Ok(Line::Bad(why)) => Event::Bad(why),
            Ok(Line::TooLong) => Event::TooLong,
            Ok(Line::Eof) | Err(_) => Event::Closed,
        };
        let last = matches!(event, Event::TooLong | Event::Closed);
        if tx.send(event).await.is_err() || last {
            return;
        }
    }
}

async fn write_commands(mut sender: pipe::Sender, mut rx: mpsc::Receiver<HostFrame>) {
    while let Some(frame) = rx.recv().await {
        let shutdown = matches!(frame, HostFrame::Shutdown);
        if sender.write_all(&frame.to_line()).await.is_err() || shutdown {
            break;
        }
    }
    // Dropping the sender closes fd 3: the kernel exits on EOF (E32).
}
