//! cgroup v2 containment (O35): detection, one leaf per spawn, kill, removal, stale sweep.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// `<own cgroup>/execkit-<pid>`: the parent of this process's leaves.
#[derive(Debug, Clone)]
pub(crate) struct CgroupRoot {
    pub dir: PathBuf,
    pub pids: bool,
    pub memory: bool,
    /// `pids.max` of each leaf, when `pids` is enabled.
    pub pids_max: u64,
}

/// A fork bomb stops here instead of exhausting the machine's pid space (spec O35).
pub(crate) const PIDS_MAX: u64 = 4096;

/// The Supervisors of one process share `execkit-<pid>` (v2 and v1 `pids`), and each one's
/// close removes it when it is empty. Detection creates and probes it, and close removes it,
/// only while holding this: otherwise a close could remove it between another start's creating
/// and probing it, and that start would see no controllers.
static ROOTS: Mutex<()> = Mutex::new(());

pub(crate) fn lock_roots() -> MutexGuard<'static, ()> {
    ROOTS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Finds a writable cgroup v2 tree for this process, or says why there is none.
pub(crate) fn detect(pids_max: u64) -> Result<CgroupRoot, String> {
    let _roots = lock_roots();
    let mountinfo = fs::read_to_string("/proc/self/mountinfo")
        .map_err(|err| format!("cannot read /proc/self/mountinfo: {err}"))?;
    let mount = cgroup2_mount(&mountinfo).ok_or("no cgroup2 filesystem is mounted")?;
    let cgroups = fs::read_to_string("/proc/self/cgroup")
        .map_err(|err| format!("cannot read /proc/self/cgroup: {err}"))?;
    let own = own_v2_path(&cgroups).ok_or("this process has no cgroup v2 membership")?;
    let own_dir = mount.join(own.trim_start_matches('/'));
    let dir = own_dir.join(format!("execkit-{}", std::process::id()));
    let root = CgroupRoot { dir, pids: false, memory: false, pids_max };
    ensure_root(&root).map_err(|err| format!("cannot create {}: {err}", root.dir.display()))?;
    let controllers = fs::read_to_string(root.dir.join("cgroup.controllers")).unwrap_or_default();
    let wanted: Vec<&str> =
        controllers.split_whitespace().filter(|c| *c == "pids" || *c == "memory").collect();
    if !wanted.is_empty() {
        let line: Vec<String> = wanted.iter().map(|c| format!("+{c}")).collect();
        let _ = fs::write(root.dir.join("cgroup.subtree_control"), line.join(" "));
    }
    let enabled = fs::read_to_string(root.dir.join("cgroup.subtree_control")).unwrap_or_default();
    let has = |name: &str| enabled.split_whitespace().any(|c| c == name);
    Ok(CgroupRoot { pids: has("pids"), memory: has("memory"), ..root })
}

/// Creates `execkit-<pid>` if it is missing (a sibling Supervisor of this process removes it
/// when it closes), enabling the controllers found at detection again.
fn ensure_root(root: &CgroupRoot) -> io::Result<()> {
    match fs::create_dir(&root.dir) {
        Err(err) if err.kind() != io::ErrorKind::AlreadyExists => Err(err),
        Err(_) => Ok(()),
        Ok(()) => {
            let wanted: Vec<&str> = [("+pids", root.pids), ("+memory", root.memory)]
                .into_iter()
                .filter_map(|(name, on)| on.then_some(name))
                .collect();
            if !wanted.is_empty() {
                let _ = fs::write(root.dir.join("cgroup.subtree_control"), wanted.join(" "));
            }
            Ok(())
        }
    }
}

/// The mount point of the first `cgroup2` filesystem in a mountinfo text.
pub(crate) fn cgroup2_mount(mountinfo: &str) -> Option<PathBuf> {
    mountinfo.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        if right.split_whitespace().next()? != "cgroup2" {
            return None;
        }
        let point = left.split_whitespace().nth(4)?;
        Some(PathBuf::from(unescape_mount(point)))
    })
}

pub(crate) fn unescape_mount(raw: &str) -> String {
    raw.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")
}

/// The `0::<path>` entry of `/proc/self/cgroup`.
pub(crate) fn own_v2_path(cgroups: &str) -> Option<String> {
    cgroups.lines().find_map(|line| line.strip_prefix("0::").map(str::to_string))
}

/// True when `pid`'s v2 cgroup path contains `marker` (v1 lines, such as a `pids` leaf of the
/// same name, do not count).
pub(crate) fn v2_path_contains(pid: u32, marker: &str) -> bool {
    fs::read_to_string(format!("/proc/{pid}/cgroup"))
        .ok()
        .and_then(|text| own_v2_path(&text))
        .is_some_and(|path| format!("{path}/").contains(marker))
}

/// Creates leaf `c<n>` with its limits; the parent is recreated if a sibling Supervisor of
/// this process removed it at close.
pub(crate) fn create_leaf(
    root: &CgroupRoot,
    n: u64,
    memory_max: Option<u64>,
) -> io::Result<PathBuf> {
    let leaf = root.dir.join(format!("c{n}"));
    let mut attempts = 0;
    loop {
        match fs::create_dir(&leaf) {
            // The parent is gone (a sibling Supervisor of this process closed): make it again.
            Err(err) if err.kind() == io::ErrorKind::NotFound && attempts < 3 => {
                attempts += 1;
                ensure_root(root)?;
            }
            other => break other?,
        }
    }
    if root.pids {
        let _ = fs::write(leaf.join("pids.max"), root.pids_max.to_string());
    }
    if let (true, Some(max)) = (root.memory, memory_max) {
        let _ = fs::write(leaf.join("memory.max"), max.to_string());
    }
    Ok(leaf)
}

pub(crate) fn procs(dir: &Path) -> Vec<u32> {
    fs::read_to_string(dir.join("cgroup.procs"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| line.trim().parse().ok())
        .collect()
}

/// `cgroup.kill` (Linux ≥ 5.14): SIGKILL to every process in `dir` and below. False where
/// there is no such file (older kernels, v1 hierarchies).
pub(crate) fn kill_all(dir: &Path) -> bool {
    OpenOptions::new()
        .write(true)
        .open(dir.join("cgroup.kill"))
        .and_then(|mut file| file.write_all(b"1"))
        .is_ok()
}

pub(crate) fn remove(dir: &Path) -> bool {
    fs::remove_dir(dir).is_ok()
}

pub(crate) fn memory_peak(leaf: &Path) -> Option<u64> {
    fs::read_to_string(leaf.join("memory.peak")).ok()?.trim().parse().ok()
}

pub(crate) fn oom_kills(leaf: &Path) -> u64 {
    let events = fs::read_to_string(leaf.join("memory.events")).unwrap_or_default();
    events.lines().find_map(|line| line.strip_prefix("oom_kill ")?.trim().parse().ok()).unwrap_or(0)
}

/// Kills and removes `execkit-<pid>` siblings of `dir` whose Toolkit process is dead (O41).
pub(crate) fn sweep_stale(dir: &Path) {
    let Some(parent) = dir.parent() else { return };
    let Ok(entries) = fs::read_dir(parent) else { return };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("execkit-")) else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else { continue };
        if pid != std::process::id() && !crate::signal::pid_exists(pid) {
            kill_and_remove(&entry.path());
        }
    }
}

fn kill_and_remove(dir: &Path) {
    let leaves: Vec<PathBuf> = fs::read_dir(dir)
        .map(|entries| {
            entries.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.is_dir()).collect()
        })
        .unwrap_or_default();
    if !kill_all(dir) {
        for leaf in &leaves {
            for pid in procs(leaf) {
                crate::signal::send(pid, libc::SIGKILL);
            }
        }
    }
    let until = Instant::now() + Duration::from_millis(500);
    for leaf in &leaves {
        while !remove(leaf) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    remove(dir);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_hybrid_and_unified_mounts() {
        let hybrid = "31 25 0:26 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro\n\
                      41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        assert_eq!(cgroup2_mount(hybrid), Some(PathBuf::from("/sys/fs/cgroup/unified")));
        let unified = "30 24 0:27 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw\n";
        assert_eq!(cgroup2_mount(unified), Some(PathBuf::from("/sys/fs/cgroup")));
        let spaced = "30 24 0:27 / /mnt/my\\040cg rw - cgroup2 none rw\n";
        assert_eq!(cgroup2_mount(spaced), Some(PathBuf::from("/mnt/my cg")));
        assert_eq!(cgroup2_mount("30 24 0:27 / /sys rw - sysfs sysfs rw\n"), None);
    }

    #[test]
    fn reads_v2_line() {
        assert_eq!(own_v2_path("4:memory:/x\n0::/user.slice/a\n"), Some("/user.slice/a".into()));
        assert_eq!(own_v2_path("4:memory:/x\n"), None);
    }
}
