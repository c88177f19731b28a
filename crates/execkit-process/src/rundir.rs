//! The run directory (O42): `$XDG_RUNTIME_DIR/execkit/<pid>` or `/tmp/execkit-<uid>/<pid>`.
//!
//! One directory per process, shared by every Supervisor in it: it is created by the first,
//! removed by the last `close` (or drop). Directories of dead processes are swept at each start.

use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::tree::{lock, pid_exists};

/// How many live Supervisors use this process's run directory.
static USERS: Mutex<usize> = Mutex::new(0);

fn base() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR") {
        Some(dir) if !dir.is_empty() && Path::new(&dir).is_dir() => {
            PathBuf::from(dir).join("execkit")
        }
        // SAFETY: getuid cannot fail.
        _ => PathBuf::from(format!("/tmp/execkit-{}", unsafe { libc::getuid() })),
    }
}

fn make_private_dir(dir: &Path) -> io::Result<()> {
    match fs::DirBuilder::new().mode(0o700).create(dir) {
        Err(err) if err.kind() != io::ErrorKind::AlreadyExists => return Err(err),
        _ => {}
    }
    let meta = fs::symlink_metadata(dir)?;
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    if !meta.is_dir() || meta.uid() != uid {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{} is not a directory owned by uid {uid}", dir.display()),
        ));
    }
    if meta.mode() & 0o777 != 0o700 {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Creates (or reuses) this process's run directory and sweeps stale ones.
pub(crate) fn acquire() -> io::Result<PathBuf> {
    let base = base();
    let dir = base.join(std::process::id().to_string());
    let mut users = lock(&USERS);
    make_private_dir(&base)?;
    make_private_dir(&dir)?;
    sweep(&base);
    *users += 1;
    Ok(dir)
}

/// Removes the run directory when the last Supervisor of this process lets go.
pub(crate) fn release(dir: &Path) {
    let mut users = lock(&USERS);
    *users = users.saturating_sub(1);
    if *users == 0 {
        let _ = fs::remove_dir_all(dir);
    }
}

fn sweep(base: &Path) {
    let Ok(entries) = fs::read_dir(base) else { return };
    for entry in entries.filter_map(Result::ok) {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if pid != std::process::id() && !pid_exists(pid) {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}
