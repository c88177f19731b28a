//! The on-disk interpreter cache (spec-eval.md P2): `<cache>/interpreters.json` keeps probe
//! results so one-shot `execkit call` runs do not re-probe (a pyenv shim costs ~95 ms a probe).
//!
//! An entry is keyed by everything that can change what a candidate path runs: the path, its
//! mtime (of the path itself and of what it points to), the canonical cwd, `PYENV_VERSION` and
//! the content of the nearest `.python-version` (falling back to pyenv's global `version` file,
//! as pyenv itself does). An entry whose executable has disappeared is
//! dropped. The file is rewritten atomically (temporary file, then rename) with mode 0600, so
//! concurrent processes see either the old or the new cache, never half of one.

use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use execkit_output::fsutil::write_private;
use serde::{Deserialize, Serialize};

use crate::python::interpreter::Interpreter;

/// File name inside the cache directory.
pub const FILE: &str = "interpreters.json";
/// Entries kept; the oldest go first. Enough for many projects, small enough to parse in µs.
const MAX_ENTRIES: usize = 64;
/// Bytes of `.python-version` that take part in the key (the file names a version or two).
const VERSION_FILE_MAX: u64 = 4096;

/// What a probe result depends on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeKey {
    pub candidate: PathBuf,
    /// mtime of the candidate path itself (a symlink's own time) and of its target, in ns.
    pub mtime_ns: (Option<u64>, Option<u64>),
    pub cwd: PathBuf,
    pub pyenv_version: Option<String>,
    pub python_version_file: Option<String>,
}

fn mtime_ns(meta: std::io::Result<std::fs::Metadata>) -> Option<u64> {
    let since = meta.ok()?.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
    u64::try_from(since.as_nanos()).ok()
}

/// The content of the nearest `.python-version` in `cwd` or an ancestor, else of pyenv's
/// global `version` file: the order in which pyenv picks what its shims run.
fn nearest_version_file(cwd: &Path, lookup: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    use std::io::Read;
    let global = lookup("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| lookup("HOME").map(|h| PathBuf::from(h).join(".pyenv")))
        .map(|root| root.join("version"));
    let path =
        cwd.ancestors().map(|d| d.join(".python-version")).chain(global).find(|p| p.is_file())?;
    let mut text = String::new();
    std::fs::File::open(path).ok()?.take(VERSION_FILE_MAX).read_to_string(&mut text).ok()?;
    Some(text.trim().to_string())
}

impl ProbeKey {
    pub fn new(candidate: &Path, cwd: &Path, lookup: &dyn Fn(&str) -> Option<String>) -> Self {
        ProbeKey {
            candidate: candidate.to_path_buf(),
            mtime_ns: (
                mtime_ns(std::fs::symlink_metadata(candidate)),
                mtime_ns(std::fs::metadata(candidate)),
            ),
            cwd: std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf()),
            pyenv_version: lookup("PYENV_VERSION").filter(|v| !v.is_empty()),
            python_version_file: nearest_version_file(cwd, lookup),
        }
    }

    /// Same candidate in the same context, whatever its mtime: a newer probe replaces it.
    fn same_slot(&self, other: &ProbeKey) -> bool {
        self.candidate == other.candidate
            && self.cwd == other.cwd
            && self.pyenv_version == other.pyenv_version
            && self.python_version_file == other.python_version_file
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Entry {
    key: ProbeKey,
    version: (u32, u32, u32),
    executable: PathBuf,
    prefix: PathBuf,
    is_venv: bool,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct CacheFile {
    entries: Vec<Entry>,
}

/// The cache, loaded once per resolution and saved when it changed.
#[derive(Debug)]
pub struct InterpCache {
    path: PathBuf,
    entries: Vec<Entry>,
    dirty: bool,
}

impl InterpCache {
    /// Loads `<dir>/interpreters.json`; a missing or unreadable file is an empty cache, and
    /// entries whose executable has disappeared are dropped.
    pub fn load(dir: &Path) -> InterpCache {
        let path = dir.join(FILE);
        let file: CacheFile = std::fs::read(&path)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default();
        let before = file.entries.len();
        let entries: Vec<Entry> =
            file.entries.into_iter().filter(|e| e.executable.exists()).collect();
        let dirty = entries.len() != before;
        InterpCache { path, entries, dirty }
    }

    /// The cached probe for `key`, with `source` left for the caller to fill in.
    pub fn get(&self, key: &ProbeKey) -> Option<Interpreter> {
        self.entries.iter().find(|e| &e.key == key).map(|e| Interpreter {
            candidate: key.candidate.clone(),
            source: String::new(),
            executable: e.executable.clone(),
            version: e.version,
            prefix: e.prefix.clone(),
            is_venv: e.is_venv,
        })
    }

    pub fn put(&mut self, key: ProbeKey, interp: &Interpreter) {
        self.entries.retain(|e| !e.key.same_slot(&key));
        self.entries.push(Entry {
            key,
            version: interp.version,
            executable: interp.executable.clone(),
            prefix: interp.prefix.clone(),
            is_venv: interp.is_venv,
        });
        let excess = self.entries.len().saturating_sub(MAX_ENTRIES);
        self.entries.drain(..excess);
        self.dirty = true;
    }

    /// Writes the file when something changed. Failures are ignored: the cache only saves
    /// time, and the next run probes again.
    pub fn save(&self) {
        if self.dirty {
            let _ = self.write();
        }
    }

    fn write(&self) -> std::io::Result<()> {
        use std::os::unix::fs::DirBuilderExt;
        let Some(dir) = self.path.parent() else { return Ok(()) };
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
        let body = serde_json::to_vec_pretty(&CacheFile { entries: self.entries.clone() })
            .map_err(std::io::Error::other)?;
        write_private(&self.path, &body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interp(exe: &Path) -> Interpreter {
        Interpreter {
            candidate: exe.to_path_buf(),
            source: String::new(),
            executable: exe.to_path_buf(),
            version: (3, 11, 7),
            prefix: PathBuf::from("/usr"),
            is_venv: false,
        }
    }

    #[test]
    fn round_trip_replacement_and_vanished_executables() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("python3");
        std::fs::write(&exe, "").unwrap();
        let key = ProbeKey::new(&exe, dir.path(), &|_| None);
        let mut cache = InterpCache::load(dir.path());
        assert!(cache.get(&key).is_none());
        cache.put(key.clone(), &interp(&exe));
        cache.save();
        let cache = InterpCache::load(dir.path());
        assert_eq!(cache.get(&key).unwrap().version, (3, 11, 7));
        // Another PYENV_VERSION is another key.
        let other =
            ProbeKey::new(&exe, dir.path(), &|k| (k == "PYENV_VERSION").then(|| "3.8".into()));
        assert!(cache.get(&other).is_none());
        // A newer probe of the same slot replaces the old entry.
        let mut cache = InterpCache::load(dir.path());
        let mut newer = key.clone();
        newer.mtime_ns.0 = Some(1);
        cache.put(newer, &interp(&exe));
        assert_eq!(cache.entries.len(), 1);
        cache.save();
        std::fs::remove_file(&exe).unwrap();
        let cache = InterpCache::load(dir.path());
        assert!(cache.entries.is_empty());
        assert!(cache.dirty);
    }
}
