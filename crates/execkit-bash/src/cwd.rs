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

/// B11: the directory must exist, be a directory, and be searchable. Each failure names its
/// real cause: a symlink loop or an over-long path is not reported as "does not exist".
pub(crate) fn check(dir: &Path, base: &Path) -> Result<(), String> {
    let denied =
        || format!("Working directory is not accessible: {} (permission denied)", dir.display());
    match std::fs::metadata(dir) {
        Err(err) => Err(match err.raw_os_error() {
            Some(libc::EACCES) | Some(libc::EPERM) => denied(),
            Some(libc::ENOENT) => format!(
                "Working directory does not exist: {} (resolved against {})",
                dir.display(),
                base.display()
            ),
            Some(libc::ENOTDIR) => match file_ancestor(dir) {
                Some(file) => format!(
                    "Working directory is not a directory: {} ({} is not a directory)",
                    dir.display(),
                    file.display()
                ),
                None => format!("Working directory is not a directory: {}", dir.display()),
            },
            Some(libc::ELOOP) => format!(
                "Working directory cannot be resolved: {} (too many levels of symbolic links; \
                 a symlink loop?)",
                dir.display()
            ),
            Some(libc::ENAMETOOLONG) => format!(
                "Working directory path is too long: {} ({} bytes; the limits are {} bytes per \
                 path and {} per name)",
                shortened(dir),
                dir.as_os_str().len(),
                libc::PATH_MAX - 1,
                255
            ),
            _ => format!("Working directory cannot be used: {} ({err})", shortened(dir)),
        }),
        Ok(meta) if !meta.is_dir() => {
            Err(format!("Working directory is not a directory: {}", dir.display()))
        }
        Ok(_) if !searchable(dir) => Err(denied()),
        Ok(_) => Ok(()),
    }
}

/// The first ancestor of `dir` that exists and is not a directory.
fn file_ancestor(dir: &Path) -> Option<&Path> {
    let mut ancestors: Vec<&Path> = dir.ancestors().skip(1).collect();
    ancestors.reverse();
    ancestors.into_iter().find(|a| std::fs::metadata(a).is_ok_and(|m| !m.is_dir()))
}

/// A path cut to 100 characters, for messages about paths that may be kilobytes long.
fn shortened(dir: &Path) -> String {
    let text = dir.display().to_string();
    if text.chars().count() <= 100 {
        return text;
    }
    let head: String = text.chars().take(100).collect();
    format!("{head}…")
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
        assert_eq!(
            check(&file.join("sub"), dir.path()).unwrap_err(),
            format!(
                "Working directory is not a directory: {}/sub ({} is not a directory)",
                file.display(),
                file.display()
            )
        );
        let looped = dir.path().join("loop");
        std::os::unix::fs::symlink(&looped, &looped).unwrap();
        let err = check(&looped, dir.path()).unwrap_err();
        assert!(err.starts_with("Working directory cannot be resolved: "), "{err}");
        assert!(err.contains("too many levels of symbolic links"), "{err}");
        let long = dir.path().join("a".repeat(5000));
        let err = check(&long, dir.path()).unwrap_err();
        assert!(err.starts_with("Working directory path is too long: "), "{err}");
        assert!(err.contains("…"), "{err}");
        assert!(err.len() < 300, "{err}");
        let deep = dir.path().join(["abcdefgh"; 600].join("/"));
        let err = check(&deep, dir.path()).unwrap_err();
        assert!(err.starts_with("Working directory path is too long: "), "{err}");
    }
}
