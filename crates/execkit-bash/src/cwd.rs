//! Working-directory resolution (B10, B11): logical paths, checked before anything runs.

use std::path::{Component, Path, PathBuf};

/// Resolves `requested` against `base`: `~` and `~/…` expand to `home`, relative paths join
/// `base`, and `.`/`..` collapse lexically (symlinks are kept, as with bash's `cd`).
pub(crate) fn resolve(base: &Path, requested: &str, home: Option<&Path>) -> PathBuf {
    let expanded = match (requested, home) {
        ("~", Some(home)) => home.to_path_buf(),
        (r, Some(home)) if r.starts_with("~/") => home.join(&r[2..]),
        (r, _) => PathBuf::from(r),
    };
    let joined = if expanded.is_absolute() { expanded } else { base.join(expanded) };
    normalize(&joined)
}

fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for component in path.components() {
        match component {
            Component::RootDir | Component::Prefix(_) | Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(part) => out.push(part),
        }
    }
    out
}

/// B11: the directory must exist, be a directory, and be searchable.
pub(crate) fn check(dir: &Path, base: &Path) -> Result<(), String> {
    match std::fs::metadata(dir) {
        Err(err) if err.kind() == std::io::ErrorKind::PermissionDenied => Err(format!(
            "Working directory is not accessible: {} (permission denied)",
            dir.display()
        )),
        Err(_) => Err(format!(
            "Working directory does not exist: {} (resolved against {})",
            dir.display(),
            base.display()
        )),
        Ok(meta) if !meta.is_dir() => {
            Err(format!("Working directory is not a directory: {}", dir.display()))
        }
        Ok(_) if !searchable(dir) => Err(format!(
            "Working directory is not accessible: {} (permission denied)",
            dir.display()
        )),
        Ok(_) => Ok(()),
    }
}

/// `cd` needs search (x) permission on the directory, not read permission.
fn searchable(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(path) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else { return false };
    // SAFETY: `path` is a valid NUL-terminated string for the duration of the call.
    unsafe { libc::access(path.as_ptr(), libc::X_OK) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logical_resolution() {
        let base = Path::new("/w/base");
        let home = Some(Path::new("/home/u"));
        assert_eq!(resolve(base, "sub/../x", home), PathBuf::from("/w/base/x"));
        assert_eq!(resolve(base, "/tmp/./a/", home), PathBuf::from("/tmp/a"));
        assert_eq!(resolve(base, "~", home), PathBuf::from("/home/u"));
        assert_eq!(resolve(base, "~/p", home), PathBuf::from("/home/u/p"));
        assert_eq!(resolve(base, "~nobody", home), PathBuf::from("/w/base/~nobody"));
        assert_eq!(resolve(base, "/..", home), PathBuf::from("/"));
    }

    #[test]
    fn checks() {
        let dir = tempfile::tempdir().unwrap();
        assert!(check(dir.path(), dir.path()).is_ok());
        let missing = dir.path().join("nope");
        let err = check(&missing, dir.path()).unwrap_err();
        assert!(err.starts_with("Working directory does not exist: "), "{err}");
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        assert!(check(&file, dir.path()).unwrap_err().contains("is not a directory"));
    }
}
