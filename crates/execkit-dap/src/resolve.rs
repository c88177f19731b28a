//! Resolving a definition's `command` alternatives to an executable.
//!
//! A bare name is searched in the given directories (the caller passes the project's
//! `.venv/bin`, `node_modules/.bin`, then PATH); a path with a `/` is taken as it is. A `*`
//! in the name or in a directory stands for a version number, and the highest version wins
//! (`lldb-dap-*` finds `lldb-dap-19` over `lldb-dap-18`; `/usr/lib/llvm-*/bin/lldb-dap` finds
//! llvm-19 over llvm-9). Alternatives whose program is a placeholder (`${python}`) are left to
//! the caller.

use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use crate::adapters::AdapterDef;
use crate::detect::glob_match;

/// The first alternative of `def.command` whose program resolves: its index and path.
pub fn resolve_command(def: &AdapterDef, search: &[PathBuf]) -> Option<(usize, PathBuf)> {
    def.command.iter().enumerate().find_map(|(index, argv)| {
        let program = argv.first()?;
        if program.contains("${") {
            return None;
        }
        resolve_program(program, search).map(|path| (index, path))
    })
}

/// One program name or path, resolved to an executable file.
pub fn resolve_program(name: &str, search: &[PathBuf]) -> Option<PathBuf> {
    if name.contains('/') {
        return highest(expand(Path::new(name)));
    }
    search.iter().find_map(|dir| highest(expand(&dir.join(name))))
}

/// Every existing executable the pattern matches, with the text each `*` stood for.
fn expand(pattern: &Path) -> Vec<(PathBuf, Vec<String>)> {
    let mut found = vec![(PathBuf::new(), Vec::new())];
    for component in pattern.components() {
        let part = match component {
            Component::Normal(part) => part.to_string_lossy().into_owned(),
            other => {
                found.iter_mut().for_each(|(path, _)| path.push(other.as_os_str()));
                continue;
            }
        };
        found = if part.contains('*') {
            found.into_iter().flat_map(|(dir, stars)| matches_in(&dir, &part, &stars)).collect()
        } else {
            found.into_iter().map(|(dir, stars)| (dir.join(&part), stars)).collect()
        };
    }
    found.retain(|(path, _)| is_executable(path));
    found
}

fn matches_in(dir: &Path, pattern: &str, stars: &[String]) -> Vec<(PathBuf, Vec<String>)> {
    let Ok(entries) =
        std::fs::read_dir(if dir.as_os_str().is_empty() { Path::new(".") } else { dir })
    else {
        return Vec::new();
    };
    let (prefix, suffix) = pattern.split_once('*').unwrap_or((pattern, ""));
    entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !glob_match(pattern, &name) {
                return None;
            }
            // What the (first) star stood for; `get` keeps odd multi-star names from panicking.
            let end = name.len().saturating_sub(suffix.len()).max(prefix.len());
            let star = name.get(prefix.len()..end).unwrap_or("").to_string();
            let mut stars = stars.to_vec();
            stars.push(star);
            Some((dir.join(&name), stars))
        })
        .collect()
}

fn highest(mut found: Vec<(PathBuf, Vec<String>)>) -> Option<PathBuf> {
    found.sort_by_key(|(path, stars)| {
        (stars.iter().map(|s| version_key(s)).collect::<Vec<_>>(), path.clone())
    });
    found.pop().map(|(path, _)| path)
}

/// `19.1.7` → `[19, 1, 7]`; text without digits sorts lowest.
fn version_key(text: &str) -> Vec<u64> {
    text.split(|c: char| !c.is_ascii_digit())
        .filter(|part| !part.is_empty())
        .filter_map(|part| part.parse().ok())
        .collect()
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn executable(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn star_in_a_name_picks_the_highest_version() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["lldb-dap-9", "lldb-dap-18", "lldb-dap-19"] {
            executable(&dir.path().join(name));
        }
        std::fs::write(dir.path().join("lldb-dap-20"), "not executable").unwrap();
        let found = resolve_program("lldb-dap-*", &[dir.path().to_path_buf()]);
        assert_eq!(found, Some(dir.path().join("lldb-dap-19")));
    }

    #[test]
    fn star_in_a_directory_picks_the_highest_version() {
        let dir = tempfile::tempdir().unwrap();
        for version in ["9", "19", "14"] {
            executable(&dir.path().join(format!("llvm-{version}/bin/lldb-dap")));
        }
        let pattern = format!("{}/llvm-*/bin/lldb-dap", dir.path().display());
        let found = resolve_program(&pattern, &[]);
        assert_eq!(found, Some(dir.path().join("llvm-19/bin/lldb-dap")));
    }

    #[test]
    fn alternatives_are_tried_in_order_and_placeholders_skipped() {
        let dir = tempfile::tempdir().unwrap();
        executable(&dir.path().join("node"));
        let (defs, _) = crate::adapters::builtin();
        let js = defs.iter().find(|d| d.name == "js-debug").unwrap();
        let found = resolve_command(js, &[dir.path().to_path_buf()]);
        assert_eq!(found, Some((1, dir.path().join("node"))));
        let debugpy = defs.iter().find(|d| d.name == "debugpy").unwrap();
        assert_eq!(resolve_command(debugpy, &[dir.path().to_path_buf()]), None);
    }

    #[test]
    fn versions_compare_numerically() {
        assert!(version_key("19.1.7") > version_key("9.9"));
        assert!(version_key("19") > version_key(""));
    }
}
