//! The control directory and socket paths (spec-ssh S22–S24).
//!
//! Sockets live in a private directory with short hashed names, because a unix socket path
//! must fit `sun_path` (104 bytes on macOS and BSD, 108 on Linux, NUL included) and OpenSSH
//! first binds `<path>.` plus 16 random characters before renaming it into place.

use std::io;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::config::{HostEntry, SshConfigFile};
use crate::environment::Environment;

/// The longest socket path that binds everywhere: 104 bytes of macOS `sun_path`, less the
/// NUL and the 17 bytes of OpenSSH's temporary suffix.
pub const MAX_SOCKET_PATH: usize = 86;
/// `/<16 hex digits>` after the directory.
const SOCKET_NAME_LEN: usize = 17;

/// The chosen directory, or why reuse is off, plus the warnings for skipped candidates.
#[derive(Debug, Clone, Default)]
pub struct ControlDir {
    pub dir: Option<PathBuf>,
    pub warnings: Vec<String>,
}

/// The first usable candidate of `$EXECKIT_SSH_CONTROL_DIR`, `$XDG_RUNTIME_DIR/execkit-ssh`,
/// `/tmp/execkit-ssh-<uid>`. `$TMPDIR` is never used: on macOS it alone is about 50 bytes.
pub fn choose_control_dir(env: &Environment) -> ControlDir {
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    let mut candidates = Vec::new();
    if let Some(dir) = env.non_empty("EXECKIT_SSH_CONTROL_DIR") {
        candidates.push(PathBuf::from(dir));
    }
    if let Some(dir) = env.non_empty("XDG_RUNTIME_DIR") {
        candidates.push(Path::new(dir).join("execkit-ssh"));
    }
    candidates.push(PathBuf::from(format!("/tmp/execkit-ssh-{uid}")));
    let mut chosen = ControlDir::default();
    for dir in candidates {
        if !dir.is_absolute() || dir.as_os_str().len() + SOCKET_NAME_LEN > MAX_SOCKET_PATH {
            continue;
        }
        match private_dir(&dir, uid) {
            Ok(()) => {
                chosen.dir = Some(dir);
                return chosen;
            }
            Err(warning) => chosen.warnings.push(warning),
        }
    }
    chosen.warnings.push(
        "connection reuse disabled: no control directory short enough for a unix socket".into(),
    );
    chosen
}

/// Creates `dir` with mode 0700, or checks that an existing one is a real directory of ours
/// with mode 0700: anyone else who can write there could plant a socket we would talk to.
fn private_dir(dir: &Path, uid: u32) -> Result<(), String> {
    let d = dir.display();
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => return Ok(()),
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
        Err(err) => {
            return Err(format!("control directory {d} cannot be created ({err}); skipped"));
        }
    }
    let meta = std::fs::symlink_metadata(dir)
        .map_err(|err| format!("control directory {d} cannot be read ({err}); skipped"))?;
    let mode = meta.mode() & 0o777;
    if !meta.is_dir() || meta.uid() != uid || mode != 0o700 {
        return Err(format!(
            "control directory {d} is not private (owner {}, mode {mode:04o}); skipped",
            meta.uid()
        ));
    }
    Ok(())
}

/// `<dir>/<first 16 hex digits of SHA-256 over the identity fields joined by NUL>`: the same
/// entry maps to the same socket in every process, and any change of where or as whom it
/// connects gives a new one.
pub fn socket_path(dir: &Path, entry: &HostEntry) -> PathBuf {
    let path_text = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
    let ssh_config = match &entry.ssh_config {
        None => String::new(),
        Some(SshConfigFile::None) => "none".into(),
        Some(SshConfigFile::Path(p)) => p.display().to_string(),
    };
    let fields = [
        entry.name.clone(),
        entry.host.clone(),
        entry.port.to_string(),
        entry.username.clone().unwrap_or_default(),
        path_text(&entry.key).unwrap_or_default(),
        entry.proxy_jump.clone().unwrap_or_default(),
        ssh_config,
    ];
    let digest = Sha256::digest(fields.join("\0").as_bytes());
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    dir.join(hex)
}

/// What is at a socket path before reuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SocketState {
    Missing,
    /// `connect()` was refused: nobody listens, the master is gone.
    Dead,
    /// Something accepted the connection; whether it answers is the mux check's question.
    Accepting,
}

pub fn socket_state(path: &Path) -> SocketState {
    match UnixStream::connect(path) {
        Ok(_) => SocketState::Accepting,
        Err(err) if err.kind() == io::ErrorKind::NotFound => SocketState::Missing,
        Err(err) if err.raw_os_error() == Some(libc::ECONNREFUSED) => SocketState::Dead,
        // Anything else (a non-socket file, EACCES): treat as not ours to remove.
        Err(_) => SocketState::Accepting,
    }
}

/// Unlinks a socket confirmed dead, but only when it is a socket owned by us.
pub fn remove_dead_socket(path: &Path) -> bool {
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_socket() && meta.uid() == uid => {
            std::fs::remove_file(path).is_ok()
        }
        _ => false,
    }
}

#[cfg(test)]
pub(crate) mod tests;
