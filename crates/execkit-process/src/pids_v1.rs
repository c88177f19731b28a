//! Fork-bomb limit through a cgroup v1 `pids` hierarchy (O35), for hybrid hosts.
//!
//! On a hybrid host the `pids` controller is usually bound to its own v1 hierarchy, so the v2
//! tree cannot have it and a v2 leaf's `pids.max` never exists: a fork bomb inside a command
//! would be unlimited. There, each spawn also gets `<pids mount>/<own>/execkit-<pid>/c<n>`
//! with `pids.max`, which the child joins before exec through the leaf's pre-opened `tasks`
//! file (it is one thread then). The v1 leaf only limits: membership and kills stay on the v2
//! leaf (`cgroup.kill`) or the process-group fallback.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::cgroup;

/// `<pids mount>/<own pids cgroup>/execkit-<pid>`: the parent of this process's v1 leaves.
#[derive(Debug, Clone)]
pub(crate) struct PidsRoot {
    pub dir: PathBuf,
    /// `pids.max` of each leaf.
    pub max: u64,
}

/// Finds a writable v1 `pids` hierarchy for this process, or says why there is none.
pub(crate) fn detect(max: u64) -> Result<PidsRoot, String> {
    let mountinfo = fs::read_to_string("/proc/self/mountinfo")
        .map_err(|err| format!("cannot read /proc/self/mountinfo: {err}"))?;
    let (mount_root, mount) =
        pids_mount(&mountinfo).ok_or("no cgroup v1 pids hierarchy is mounted")?;
    let cgroups = fs::read_to_string("/proc/self/cgroup")
        .map_err(|err| format!("cannot read /proc/self/cgroup: {err}"))?;
    let own = own_pids_path(&cgroups).ok_or("this process has no cgroup v1 pids membership")?;
    // /proc/self/cgroup names the hierarchy's path; a mount may show only a subtree of it.
    let own = match own.strip_prefix(mount_root.as_str()) {
        Some(rest) if mount_root != "/" && (rest.is_empty() || rest.starts_with('/')) => rest,
        _ => own.as_str(),
    };
    let dir =
        mount.join(own.trim_start_matches('/')).join(format!("execkit-{}", std::process::id()));
    let _roots = cgroup::lock_roots();
    ensure_root(&dir).map_err(|err| format!("cannot create {}: {err}", dir.display()))?;
    if !dir.join("pids.max").exists() {
        cgroup::remove(&dir);
        return Err(format!("{} has no pids.max", dir.display()));
    }
    Ok(PidsRoot { dir, max })
}

/// `(root, mount point)` of the first v1 `cgroup` mount whose super options include `pids`.
fn pids_mount(mountinfo: &str) -> Option<(String, PathBuf)> {
    mountinfo.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        let mut right = right.split_whitespace();
        if right.next()? != "cgroup" {
            return None;
        }
        let options = right.nth(1)?;
        if !options.split(',').any(|option| option == "pids") {
            return None;
        }
        let mut left = left.split_whitespace().skip(3);
        let root = cgroup::unescape_mount(left.next()?);
        let point = cgroup::unescape_mount(left.next()?);
        Some((root, PathBuf::from(point)))
    })
}

/// The path of the `N:...pids...:<path>` entry of `/proc/self/cgroup`.
fn own_pids_path(cgroups: &str) -> Option<String> {
    cgroups.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let _id = parts.next()?;
        let controllers = parts.next()?;
        let path = parts.next()?;
        controllers.split(',').any(|c| c == "pids").then(|| path.to_string())
    })
}

/// Creates `execkit-<pid>` if it is missing (the last leaf's removal takes it away).
fn ensure_root(dir: &Path) -> io::Result<()> {
    match fs::create_dir(dir) {
        Err(err) if err.kind() != io::ErrorKind::AlreadyExists => Err(err),
        _ => Ok(()),
    }
}

/// Creates leaf `c<n>` with its `pids.max`; a leaf whose limit cannot be set is removed.
pub(crate) fn create_leaf(root: &PidsRoot, n: u64) -> io::Result<PathBuf> {
    let leaf = root.dir.join(format!("c{n}"));
    let mut attempts = 0;
    loop {
        match fs::create_dir(&leaf) {
            // The parent is gone (a sibling Supervisor of this process closed): make it again.
            Err(err) if err.kind() == io::ErrorKind::NotFound && attempts < 3 => {
                attempts += 1;
                ensure_root(&root.dir)?;
            }
            other => break other?,
        }
    }
    if let Err(err) = fs::write(leaf.join("pids.max"), root.max.to_string()) {
        cgroup::remove(&leaf);
        return Err(err);
    }
    Ok(leaf)
}

#[cfg(test)]
#[path = "pids_v1_tests.rs"]
mod tests;
