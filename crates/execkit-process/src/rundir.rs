//! The run directory (O42): `$XDG_RUNTIME_DIR/execkit/<pid>` or `/tmp/execkit-<uid>/<pid>`.
//!
//! One directory per process, shared by every Supervisor in it: it is created by the first,
//! removed by the last `close` (or drop). Directories of dead processes are swept at each start.
//!
//! The shared parent is never a reason not to start (O41a): when it exists but is not a
//! directory owned by this user with mode 0700 (another user may have created it, or it is a
//! file or a symlink), the run directory is a fresh private `mkdtemp` directory under `$TMPDIR`
//! (else `/tmp`) named `execkit-<uid>-<pid>-XXXXXX`, and [`note`] says why.

use std::ffi::{CString, OsString};
use std::fs;
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::signal::pid_exists;
use crate::tree::lock;

/// The run directory of this process while any Supervisor uses it.
struct State {
    users: usize,
    dir: Option<PathBuf>,
    /// Why the shared parent was not used, when it was not.
    note: Option<String>,
}

static STATE: Mutex<State> = Mutex::new(State { users: 0, dir: None, note: None });

/// Where the run directories of other processes are: the shared parent, or the fallbacks'.
fn sweep_beside(dir: &Path, fallback: bool) {
    match dir.parent() {
        Some(parent) if fallback => sweep_fallbacks(parent),
        Some(parent) => sweep(parent),
        None => {}
    }
}

fn uid() -> u32 {
    // SAFETY: getuid cannot fail.
    unsafe { libc::getuid() }
}

/// `$XDG_RUNTIME_DIR/execkit` when that names a directory, else `/tmp/execkit-<uid>`.
fn base(runtime_dir: Option<&Path>) -> PathBuf {
    match runtime_dir {
        Some(dir) if !dir.as_os_str().is_empty() && dir.is_dir() => dir.join("execkit"),
        _ => PathBuf::from(format!("/tmp/execkit-{}", uid())),
    }
}

/// Creates `dir` (mode 0700) unless it exists; then it must be a real directory (not a
/// symlink) owned by this user with mode 0700, so no one else can have put anything in it.
fn make_private_dir(dir: &Path) -> io::Result<()> {
    match fs::DirBuilder::new().mode(0o700).create(dir) {
        Err(err) if err.kind() != io::ErrorKind::AlreadyExists => return Err(err),
        _ => {}
    }
    let meta = fs::symlink_metadata(dir)?;
    let uid = uid();
    let why = if !meta.is_dir() {
        "is not a directory".to_string()
    } else if meta.uid() != uid {
        format!("is owned by uid {}, not {uid}", meta.uid())
    } else if meta.mode() & 0o777 != 0o700 {
        format!("has mode {:o}, not 700", meta.mode() & 0o777)
    } else {
        return Ok(());
    };
    Err(io::Error::new(io::ErrorKind::PermissionDenied, format!("{} {why}", dir.display())))
}

/// `$TMPDIR` when it names a directory, else `/tmp`.
fn temp_parent(temp_dir: Option<&Path>) -> PathBuf {
    match temp_dir {
        Some(dir) if !dir.as_os_str().is_empty() && dir.is_dir() => dir.to_path_buf(),
        _ => PathBuf::from("/tmp"),
    }
}

fn fallback_prefix() -> String {
    format!("execkit-{}-", uid())
}

/// A fresh directory only this user can enter (`mkdtemp` creates it with mode 0700).
fn make_temp_dir(parent: &Path) -> io::Result<PathBuf> {
    let template = parent.join(format!("{}{}-XXXXXX", fallback_prefix(), std::process::id()));
    let template = CString::new(template.into_os_string().into_vec())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "TMPDIR contains a NUL"))?;
    let mut bytes = template.into_bytes_with_nul();
    // SAFETY: `bytes` is a writable NUL-terminated template that outlives the call.
    if unsafe { libc::mkdtemp(bytes.as_mut_ptr().cast()) }.is_null() {
        return Err(io::Error::last_os_error());
    }
    bytes.pop();
    Ok(PathBuf::from(OsString::from_vec(bytes)))
}

/// The shared `<base>/<pid>`, or a private fallback in `parent` and why the shared one was
/// refused.
fn create(base: &Path, parent: &Path) -> io::Result<(PathBuf, Option<String>)> {
    let shared = make_private_dir(base).and_then(|()| {
        let dir = base.join(std::process::id().to_string());
        make_private_dir(&dir).map(|()| dir)
    });
    match shared {
        Ok(dir) => Ok((dir, None)),
        Err(err) => {
            let dir = make_temp_dir(parent).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("cannot create a run directory in {}: {e} ({err})", parent.display()),
                )
            })?;
            Ok((dir, Some(format!("{err}; using a private directory instead"))))
        }
    }
}

/// Creates (or reuses) this process's run directory and sweeps stale ones.
/// `runtime_dir` and `temp_dir` are the caller's `XDG_RUNTIME_DIR` and `TMPDIR`; the first
/// Supervisor of the process decides where the directory is.
pub(crate) fn acquire(runtime_dir: Option<&Path>, temp_dir: Option<&Path>) -> io::Result<PathBuf> {
    let mut state = lock(&STATE);
    let dir = match &state.dir {
        Some(dir) if dir.is_dir() => dir.clone(),
        _ => {
            let (dir, note) = create(&base(runtime_dir), &temp_parent(temp_dir))?;
            state.dir = Some(dir.clone());
            state.note = note;
            dir
        }
    };
    // Every start sweeps, so a process that outlives many dead ones still removes theirs.
    sweep_beside(&dir, state.note.is_some());
    state.users += 1;
    Ok(dir)
}

/// Why the run directory is not under the shared parent, when it is not (for doctor).
pub(crate) fn note() -> Option<String> {
    lock(&STATE).note.clone()
}

/// Removes the run directory when the last Supervisor of this process lets go.
pub(crate) fn release(dir: &Path) {
    let mut state = lock(&STATE);
    state.users = state.users.saturating_sub(1);
    if state.users == 0 {
        let _ = fs::remove_dir_all(dir);
        state.dir = None;
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

/// Removes this user's fallback directories (`execkit-<uid>-<pid>-XXXXXX`) of dead processes.
fn sweep_fallbacks(parent: &Path) {
    let Ok(entries) = fs::read_dir(parent) else { return };
    let prefix = fallback_prefix();
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let Some(rest) = name.as_bytes().strip_prefix(prefix.as_bytes()) else { continue };
        let pid = std::str::from_utf8(rest)
            .ok()
            .and_then(|r| r.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok());
        let ours = fs::symlink_metadata(entry.path()).is_ok_and(|m| m.is_dir() && m.uid() == uid());
        let dead = pid.is_some_and(|pid| pid != std::process::id() && !pid_exists(pid));
        if ours && dead {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(test)]
#[path = "rundir_tests.rs"]
mod tests;
