//! Key file checks, run on every call that uses the key (spec-ssh S13).
//!
//! OpenSSH itself refuses a key other users can read, but only after connecting, with a
//! warning the model never sees; checking first gives one line that says how to fix it.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::error::SshError;

pub fn check_key(name: &str, path: &Path) -> Result<(), SshError> {
    let fail = |problem: String| SshError::Key { name: name.to_string(), problem };
    let p = path.display();
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Err(fail(format!("not found: {p}")));
        }
        Err(_) => return Err(fail(format!("is not readable: {p}"))),
    };
    if !meta.is_file() {
        return Err(fail(format!("is not a regular file: {p}")));
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(fail(format!(
            "must not be accessible by other users (mode {mode:04o}); run: chmod 600 {p}"
        )));
    }
    if std::fs::File::open(path).is_err() {
        return Err(fail(format!("is not readable: {p}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(dir: &Path, mode: u32) -> std::path::PathBuf {
        let path = dir.join("id");
        std::fs::write(&path, "k").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        path
    }

    #[test]
    fn texts_for_each_problem() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope");
        let text = |p: &Path| check_key("web", p).unwrap_err().to_string();
        assert_eq!(
            text(&missing),
            format!("SSH key for host \"web\" not found: {}", missing.display())
        );
        assert_eq!(
            text(dir.path()),
            format!("SSH key for host \"web\" is not a regular file: {}", dir.path().display())
        );
        let loose = key(dir.path(), 0o644);
        assert_eq!(
            text(&loose),
            format!(
                "SSH key for host \"web\" must not be accessible by other users (mode 0644); run: chmod 600 {}",
                loose.display()
            )
        );
        let tight = key(dir.path(), 0o600);
        assert!(check_key("web", &tight).is_ok());
    }
}
