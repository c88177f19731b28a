//! Where Unix-socket adapters put their socket: a private directory, so no other user can
//! connect to the debugger (which can run arbitrary code in the debuggee).
//!
//! The directory is the caller's (the Supervisor's private run directory, in practice), used
//! only when it is owned by this user with no group or other access; otherwise a fresh private
//! directory is made instead of trusting one someone else may control.

use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// A socket path in a private directory; the socket (and a fresh directory made for it) is
/// removed on drop.
#[derive(Debug)]
pub struct SocketPath {
    path: PathBuf,
    fresh_dir: Option<PathBuf>,
}

impl SocketPath {
    /// `dap-<session>-<6 random>.sock` in `dir` when it is private, else in a fresh private
    /// directory.
    pub fn new(dir: &Path, session: &str) -> io::Result<SocketPath> {
        let (dir, fresh) = match ensure_private(dir) {
            Ok(()) => (dir.to_path_buf(), false),
            Err(_) => (fresh_dir()?, true),
        };
        let path = dir.join(format!("dap-{session}-{}.sock", random_suffix()));
        Ok(SocketPath { path, fresh_dir: fresh.then_some(dir) })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for SocketPath {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        if let Some(dir) = &self.fresh_dir {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

fn uid() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    unsafe { libc::getuid() }
}

/// Creates `dir` with mode 0700 if missing; fails unless it is a directory (not a symlink)
/// owned by this user with no group or other permissions.
pub(crate) fn ensure_private(dir: &Path) -> io::Result<()> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = std::fs::symlink_metadata(dir)?;
    let private = meta.is_dir() && meta.uid() == uid() && meta.permissions().mode() & 0o077 == 0;
    if private { Ok(()) } else { Err(io::Error::other("directory is not private")) }
}

fn fresh_dir() -> io::Result<PathBuf> {
    for _ in 0..16 {
        let dir = std::env::temp_dir().join(format!("execkit-dap-{}", random_suffix()));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("could not create a private socket directory"))
}

/// Six characters that differ between calls (clock, pid and a counter); uniqueness is
/// checked by the callers (`create` fails on an existing directory, the socket name carries
/// the session id).
fn random_suffix() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let mut x = u64::from(nanos)
        ^ (u64::from(std::process::id()) << 32)
        ^ COUNTER.fetch_add(1, Ordering::Relaxed).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    (0..6)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ALPHABET[(x >> 33) as usize % ALPHABET.len()] as char
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socket_path_is_private_and_removed_on_drop() {
        let base = tempfile::tempdir().unwrap();
        let socket = SocketPath::new(base.path(), "debug-1").unwrap();
        let name = socket.path().file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("dap-debug-1-") && name.ends_with(".sock"), "{name}");
        let dir = socket.path().parent().unwrap().to_path_buf();
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "{mode:o}");
        std::fs::write(socket.path(), "").unwrap();
        let path = socket.path().to_path_buf();
        drop(socket);
        assert!(!path.exists());
    }

    #[test]
    fn a_directory_open_to_others_is_refused() {
        let base = tempfile::tempdir().unwrap();
        let open = base.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(ensure_private(&open).is_err());
        let private = base.path().join("private");
        assert!(ensure_private(&private).is_ok());
        let link = base.path().join("link");
        std::os::unix::fs::symlink(&private, &link).unwrap();
        assert!(ensure_private(&link).is_err(), "a symlink is not trusted");
    }
}
