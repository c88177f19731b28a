//! Finding a program on a `PATH` value.

use std::path::{Path, PathBuf};

/// The first executable file `name` in the directories of `path_var` (a `PATH` value, `:`
/// separated; empty entries are skipped).
pub fn find_on_path(path_var: &str, name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    path_var.split(':').filter(|d| !d.is_empty()).map(|d| Path::new(d).join(name)).find(|p| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_first_executable_and_skips_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("a");
        let exec = dir.path().join("b");
        std::fs::create_dir_all(&plain).unwrap();
        std::fs::create_dir_all(&exec).unwrap();
        std::fs::write(plain.join("tool"), "").unwrap();
        std::fs::write(exec.join("tool"), "").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(exec.join("tool"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        let path_var = format!("::{}:{}", plain.display(), exec.display());
        assert_eq!(find_on_path(&path_var, "tool"), Some(exec.join("tool")));
        assert_eq!(find_on_path(&path_var, "missing"), None);
        assert_eq!(find_on_path("", "tool"), None);
    }
}
