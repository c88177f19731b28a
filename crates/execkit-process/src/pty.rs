//! PTY children (O43): the master side, its reader, and the probes input-wait detection uses.
//!
//! portable-pty opens the pair; the spawn itself stays on the spawner thread with the same
//! setup as every child, plus the slave as fds 0, 1, 2 and controlling terminal.

use std::ffi::CString;
use std::io::{self, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use portable_pty::MasterPty;
use tokio::sync::mpsc;

use crate::tree::lock;

/// The terminal size of a PTY child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PtySize {
    pub cols: u16,
    pub rows: u16,
}

impl From<PtySize> for portable_pty::PtySize {
    fn from(size: PtySize) -> Self {
        portable_pty::PtySize { rows: size.rows, cols: size.cols, ..Default::default() }
    }
}

/// No PTY for this spawn: `EXECKIT_NO_PTY=1`, or `openpty` failed. The tool falls back to
/// pipes. Carried as the `source` of a [`crate::SpawnError`]; see
/// [`crate::SpawnError::pty_unavailable`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("PTY unavailable: {reason}")]
pub struct PtyUnavailable {
    pub reason: String,
}

/// The line discipline flags input-wait detection looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TermMode {
    pub echo: bool,
    pub icanon: bool,
}

/// Chunks in flight from the blocking reader to the async side.
const READ_QUEUE: usize = 16;
const READ_CHUNK: usize = 64 * 1024;

/// An open pair: the master, the slave's path (opened again by the child) and the slave
/// handle, held until the child has exec'd.
pub(crate) struct OpenPty {
    pub master: Box<dyn MasterPty + Send>,
    pub tty: PathBuf,
    pub tty_c: CString,
    pub slave: Box<dyn portable_pty::SlavePty + Send>,
}

pub(crate) fn open(size: PtySize) -> io::Result<OpenPty> {
    let unavailable = |reason: String| io::Error::other(PtyUnavailable { reason });
    let pair = portable_pty::native_pty_system()
        .openpty(size.into())
        .map_err(|err| unavailable(format!("openpty failed: {err}")))?;
    let tty = pair.master.tty_name().ok_or_else(|| unavailable("no slave tty name".into()))?;
    let tty_c = CString::new(tty.as_os_str().as_bytes())
        .map_err(|_| unavailable("slave tty name contains NUL".into()))?;
    Ok(OpenPty { master: pair.master, tty, tty_c, slave: pair.slave })
}

/// The parent's side of a PTY child. Cheap to clone.
#[derive(Clone)]
pub struct PtyHandle {
    master: Arc<Mutex<Box<dyn MasterPty + Send>>>,
    writer: Arc<Mutex<Option<Box<dyn Write + Send>>>>,
    tty: PathBuf,
}

impl std::fmt::Debug for PtyHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PtyHandle").field("tty", &self.tty).finish()
    }
}

impl PtyHandle {
    /// Splits the master into this handle and the receiving end of its reader, which runs on
    /// tokio's blocking pool (a PTY master cannot be registered with epoll portably).
    pub(crate) fn start(
        master: Box<dyn MasterPty + Send>,
        tty: PathBuf,
    ) -> io::Result<(PtyHandle, mpsc::Receiver<Vec<u8>>)> {
        let mut reader = master.try_clone_reader().map_err(io::Error::other)?;
        let writer = master.take_writer().map_err(io::Error::other)?;
        let (tx, rx) = mpsc::channel(READ_QUEUE);
        tokio::task::spawn_blocking(move || {
            let mut buf = vec![0u8; READ_CHUNK];
            // portable-pty maps EIO (every slave fd closed) to Ok(0), i.e. EOF.
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 || tx.blocking_send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        let handle = PtyHandle {
            master: Arc::new(Mutex::new(master)),
            writer: Arc::new(Mutex::new(Some(writer))),
            tty,
        };
        Ok((handle, rx))
    }

    /// The slave's path, `/dev/pts/<n>`.
    pub fn tty(&self) -> &std::path::Path {
        &self.tty
    }

    /// The terminal's foreground process group.
    pub fn fg_pgrp(&self) -> Option<i32> {
        lock(&self.master).process_group_leader()
    }

    /// ECHO and ICANON of the terminal's current line discipline.
    pub fn termios(&self) -> Option<TermMode> {
        let fd = lock(&self.master).as_raw_fd()?;
        // SAFETY: a zeroed termios is a valid out buffer for tcgetattr.
        let mut term: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: `fd` is the master, open while the handle holds it; `term` is valid.
        if unsafe { libc::tcgetattr(fd, &mut term) } != 0 {
            return None;
        }
        Some(TermMode {
            echo: term.c_lflag & libc::ECHO != 0,
            icanon: term.c_lflag & libc::ICANON != 0,
        })
    }

    pub fn resize(&self, size: PtySize) -> io::Result<()> {
        lock(&self.master).resize(size.into()).map_err(io::Error::other)
    }

    /// Writes to the terminal's input.
    pub async fn write_all(&self, bytes: &[u8]) -> io::Result<()> {
        let writer = self.writer.clone();
        let bytes = bytes.to_vec();
        tokio::task::spawn_blocking(move || match lock(&writer).as_mut() {
            Some(w) => w.write_all(&bytes).and_then(|()| w.flush()),
            None => Err(io::Error::new(io::ErrorKind::BrokenPipe, "PTY input closed")),
        })
        .await
        .map_err(io::Error::other)?
    }

    /// Closes the terminal's input (sends EOF to a reader in canonical mode).
    pub fn close_input(&self) {
        lock(&self.writer).take();
    }
}
