//! Raw file operations: private (0600) files, `flock`, the owner check, read-only mappings.
//!
//! [`write_private`] is the one way execkit writes a private file; the rest serves the
//! artifact store.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// Replaces `path` with `bytes` as a private file (mode 0600): written to a fresh temporary
/// file in the same directory, which no other writer in any process shares, then renamed over
/// `path`, so a reader sees the old contents or the new, never a half-written file. A symlink
/// at the temporary name is never followed.
pub fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let name = path.file_name().ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
    let n = WRITES.fetch_add(1, Ordering::Relaxed);
    let tmp =
        path.with_file_name(format!(".{}.{}.{n}.tmp", name.to_string_lossy(), std::process::id()));
    let written = create_private(&tmp).and_then(|mut file| file.write_all(bytes));
    match written.and_then(|()| std::fs::rename(&tmp, path)) {
        Ok(()) => Ok(()),
        Err(err) => {
            let _ = std::fs::remove_file(&tmp);
            Err(err)
        }
    }
}

/// Opens (creating when missing, never truncating) a 0600 file without following a symlink:
/// the shape of a lock file.
pub(crate) fn open_lock_file(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// `O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC`, mode 0600 (O24). Never chmod-ed afterwards.
pub(crate) fn create_private(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .read(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// Opens an existing file for reading without following a symlink.
pub(crate) fn open_read(path: &Path) -> io::Result<File> {
    OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC).open(path)
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum Lock {
    Exclusive,
    Shared,
}

/// `flock` without blocking; `Ok(false)` when another open file holds a conflicting lock.
pub(crate) fn try_lock(file: &File, lock: Lock) -> io::Result<bool> {
    let op = match lock {
        Lock::Exclusive => libc::LOCK_EX,
        Lock::Shared => libc::LOCK_SH,
    };
    // SAFETY: flock on a descriptor owned by `file`, which outlives the call.
    let rc = unsafe { libc::flock(file.as_raw_fd(), op | libc::LOCK_NB) };
    if rc == 0 {
        return Ok(true);
    }
    let err = io::Error::last_os_error();
    if err.kind() == io::ErrorKind::WouldBlock { Ok(false) } else { Err(err) }
}

pub(crate) fn current_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// An I/O error as the model reads it: `No space left on device`, without `(os error 28)`.
pub(crate) fn describe_io(err: &io::Error) -> String {
    let text = err.to_string();
    match text.find(" (os error ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// Seconds since the epoch.
pub(crate) fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// A whole file mapped read-only, so a 100 MiB grep reads the page cache in place instead of
/// copying it into a fresh buffer (OBM6). Artifact files are only ever appended to by their
/// one writer and never truncated, so the mapped range stays backed by the file.
pub(crate) struct Mapped {
    ptr: *mut libc::c_void,
    len: usize,
}

impl Mapped {
    pub(crate) fn new(file: &File) -> io::Result<Mapped> {
        let len = usize::try_from(file.metadata()?.len())
            .map_err(|_| io::Error::from(io::ErrorKind::FileTooLarge))?;
        if len == 0 {
            return Ok(Mapped { ptr: std::ptr::null_mut(), len });
        }
        // SAFETY: a fresh private read-only mapping of `len` bytes of an open descriptor; the
        // kernel picks the address, so no existing memory is affected.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Mapped { ptr, len })
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: `ptr` is a live mapping of `len` readable bytes until `drop`, and nothing
        // writes through it (PROT_READ, MAP_PRIVATE).
        unsafe { std::slice::from_raw_parts(self.ptr.cast::<u8>(), self.len) }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: unmaps exactly the mapping created in `new`; no slice from `bytes`
            // outlives `self`.
            unsafe { libc::munmap(self.ptr, self.len) };
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::write_private;

    #[test]
    fn write_private_replaces_the_file_with_mode_0600_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        write_private(&path, b"old").unwrap();
        write_private(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
