//! The kernel's side of the NDJSON protocol (spec-eval.md E28–E29): the protocol fds, the
//! frame writer and the command reader thread. The frame types are the host's own
//! (`execkit_protocol::kernel`), so both ends parse and write the same definitions.

use execkit_protocol::kernel::{HostFrame, KernelFrame, StreamName};
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::{FromRawFd, RawFd};
use std::sync::Mutex;
use std::sync::mpsc::Sender;

pub use execkit_protocol::kernel::PROTOCOL;
/// Longest command line the kernel reads; longer lines are dropped.
const MAX_COMMAND: usize = 16 * 1024 * 1024;
/// Most text one `stream` frame carries (E29: ≤ 64 KiB).
pub const STREAM_CHUNK: usize = 60 * 1024;

static EVENTS: Mutex<Option<File>> = Mutex::new(None);

/// The command and event fds, moved to numbers ≥ 100 with close-on-exec.
#[derive(Debug)]
pub struct ProtocolFds {
    pub commands: RawFd,
    pub events: RawFd,
}

/// Moves fds 3 and 4 out of the way of anything the kernel opens later.
pub fn take_protocol_fds() -> Result<ProtocolFds, String> {
    let commands = move_high(3)?;
    let events = move_high(4)?;
    Ok(ProtocolFds { commands, events })
}

fn move_high(fd: RawFd) -> Result<RawFd, String> {
    // SAFETY: fcntl and close on a plain fd number have no memory-safety preconditions.
    let new = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 100) };
    if new < 0 {
        return Err(format!(
            "fd {fd} is not open; execkit-js-kernel is started by execkit with fd 3 = commands and fd 4 = events"
        ));
    }
    // SAFETY: as above; `fd` is no longer used after this.
    unsafe { libc::close(fd) };
    Ok(new)
}

/// Installs the event fd as the destination of [`emit`].
pub fn install_events(fd: RawFd) {
    // SAFETY: the fd was just duplicated for this process and is owned by the writer from now.
    let file = unsafe { File::from_raw_fd(fd) };
    if let Ok(mut slot) = EVENTS.lock() {
        *slot = Some(file);
    }
}

/// Writes one frame as a line. A closed event pipe means the host is gone: exit at once.
pub fn emit(frame: &KernelFrame) {
    emit_all(std::slice::from_ref(frame));
}

/// Writes frames in one write, so a trivial cell's `result` and `done` cost one syscall.
pub fn emit_all(frames: &[KernelFrame]) {
    let mut lines = Vec::new();
    for frame in frames {
        match serde_json::to_writer(&mut lines, frame) {
            Ok(()) => lines.push(b'\n'),
            Err(_) => lines.extend_from_slice(b"{}\n"),
        }
    }
    let Ok(mut slot) = EVENTS.lock() else { return };
    if let Some(file) = slot.as_mut()
        && file.write_all(&lines).is_err()
    {
        exit_now(0);
    }
}

/// Sends `text` as `stream` frames of at most [`STREAM_CHUNK`] bytes, split on char boundaries.
pub fn emit_stream(id: u64, name: StreamName, text: &str) {
    let mut rest = text;
    while !rest.is_empty() {
        let mut cut = rest.len().min(STREAM_CHUNK);
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        let (chunk, tail) = rest.split_at(cut);
        emit(&KernelFrame::Stream { id, name, text: chunk.to_string() });
        rest = tail;
    }
}

/// Ends the process without unwinding or running destructors (the VM thread may be busy).
pub fn exit_now(code: i32) -> ! {
    // SAFETY: _exit has no preconditions; it never returns.
    unsafe { libc::_exit(code) }
}

/// Reads commands until EOF. `shutdown` and EOF end the process at once, even mid-cell
/// (E32); anything else goes to the VM thread. Lines that are not commands are ignored.
pub fn read_commands(fd: RawFd, to_vm: Sender<HostFrame>) -> ! {
    // SAFETY: the fd was duplicated for this process and is owned by this reader from now.
    let file = unsafe { File::from_raw_fd(fd) };
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.by_ref().take(MAX_COMMAND as u64 + 1).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => exit_now(0),
            Ok(_) => {}
        }
        if line.len() > MAX_COMMAND {
            skip_rest_of_line(&mut reader);
            continue;
        }
        match serde_json::from_slice::<HostFrame>(&line) {
            Ok(HostFrame::Shutdown) => exit_now(0),
            Ok(cmd) => {
                if to_vm.send(cmd).is_err() {
                    exit_now(0);
                }
            }
            Err(_) => continue,
        }
    }
}

fn skip_rest_of_line(reader: &mut BufReader<File>) {
    let mut sink = Vec::new();
    loop {
        sink.clear();
        match reader.by_ref().take(1 << 20).read_until(b'\n', &mut sink) {
            Ok(0) | Err(_) => exit_now(0),
            Ok(_) if sink.ends_with(b"\n") => return,
            Ok(_) => {}
        }
    }
}
