//! The shell snapshot kept on disk across processes (B17), so a one-shot `execkit call` does not
//! pay for a login shell (often ~100 ms when the rc files run pyenv, nvm or conda).
//!
//! One private (0600) JSON file per key under `~/.execkit/cache/`. The key is a SHA-256 of
//! everything the login shell's output can depend on that execkit can see: the shell's path,
//! `HOME`, the mode, the inherited environment but execkit's own `EXECKIT_*` settings (hashed,
//! so no value is written to disk) and the size and mtime of every startup file the shell reads. An entry whose
//! key differs is never read; one older than [`MAX_AGE`] is never used. Files sourced indirectly
//! from the rc files are not tracked: the age bounds how long such a change can go unseen.

use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use execkit_output::fsutil::write_private;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::snapshot::{LoginOutput, LoginShell};

/// How long an entry is used: a change in a file sourced indirectly goes unseen at most this long.
pub(crate) const MAX_AGE: Duration = Duration::from_secs(3600);
const PREFIX: &str = "shell-snapshot-";
/// Bumped when the entry's meaning changes, so older entries are never read.
const FORMAT: u32 = 1;

#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    format: u32,
    key: String,
    captured_at_unix_s: u64,
    vars: Vec<(String, String)>,
    /// `full` mode's aliases, functions and options, base64 (they need not be UTF-8).
    full_part: Option<String>,
}

/// The cache entry of one login shell configuration.
#[derive(Debug, Clone)]
pub(crate) struct SnapshotCache {
    dir: PathBuf,
    path: PathBuf,
    key: String,
}

/// What doctor says about the entry.
pub(crate) enum EntryState {
    Fresh(Duration),
    Stale(Duration),
    Missing,
}

impl SnapshotCache {
    /// The entry for `login` under `<home>/.execkit/cache`; `None` without a home directory.
    pub fn new(login: &LoginShell<'_>, home: Option<&Path>) -> Option<SnapshotCache> {
        let dir = home?.join(".execkit").join("cache");
        let key = cache_key(login, home);
        let path = dir.join(format!("{PREFIX}{}.json", &key[..32]));
        Some(SnapshotCache { dir, path, key })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The cached output, when the entry exists, is ours, has this key and is fresh.
    pub fn load(&self, now: SystemTime) -> Option<LoginOutput> {
        let entry = self.read()?;
        (age(&entry, now) < MAX_AGE).then(|| output_of(entry)).flatten()
    }

    /// Whether the entry can be used now, and how old it is.
    pub fn state(&self, now: SystemTime) -> EntryState {
        match self.read() {
            Some(entry) if age(&entry, now) < MAX_AGE => EntryState::Fresh(age(&entry, now)),
            Some(entry) => EntryState::Stale(age(&entry, now)),
            None => EntryState::Missing,
        }
    }

    /// Stores `output` (best effort: a cache that cannot be written only costs the next process
    /// a login shell), and removes entries past their age.
    pub fn store(&self, output: &LoginOutput, now: SystemTime) {
        let Some(vars) = output
            .vars
            .iter()
            .map(|(k, v)| Some((k.clone().into_string().ok()?, v.clone().into_string().ok()?)))
            .collect::<Option<Vec<_>>>()
        else {
            return;
        };
        let entry = Entry {
            format: FORMAT,
            key: self.key.clone(),
            captured_at_unix_s: unix_secs(now),
            vars,
            full_part: output.full_part.as_ref().map(|p| STANDARD.encode(p)),
        };
        let Ok(bytes) = serde_json::to_vec(&entry) else { return };
        if create_private_dir(&self.dir).is_ok() {
            let _ = write_private(&self.path, &bytes);
        }
        self.remove_expired(now);
    }

    fn read(&self) -> Option<Entry> {
        let meta = std::fs::symlink_metadata(&self.path).ok()?;
        // SAFETY: getuid has no preconditions and cannot fail.
        let uid = unsafe { libc::getuid() };
        if !meta.is_file() || meta.uid() != uid || meta.mode() & 0o077 != 0 {
            return None;
        }
        let entry: Entry = serde_json::from_slice(&std::fs::read(&self.path).ok()?).ok()?;
        (entry.format == FORMAT && entry.key == self.key).then_some(entry)
    }

    /// Entries of any key past their age, so keys that stop being used do not pile up.
    fn remove_expired(&self, now: SystemTime) {
        let Ok(dir) = std::fs::read_dir(&self.dir) else { return };
        for file in dir.flatten() {
            let name = file.file_name();
            if !name.to_string_lossy().starts_with(PREFIX) {
                continue;
            }
            let modified = file.metadata().and_then(|m| m.modified());
            if modified.is_ok_and(|m| now.duration_since(m).unwrap_or_default() > MAX_AGE) {
                let _ = std::fs::remove_file(file.path());
            }
        }
    }
}

fn output_of(entry: Entry) -> Option<LoginOutput> {
    let full_part = match entry.full_part {
        Some(text) => Some(STANDARD.decode(text).ok()?),
        None => None,
    };
    let vars = entry.vars.into_iter().map(|(k, v)| (OsString::from(k), OsString::from(v)));
    Some(LoginOutput { vars: vars.collect(), full_part })
}

fn age(entry: &Entry, now: SystemTime) -> Duration {
    // An entry from the future (a clock set back) counts as expired.
    unix_secs(now).checked_sub(entry.captured_at_unix_s).map_or(Duration::MAX, Duration::from_secs)
}

fn unix_secs(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

/// The SHA-256 of everything the login shell's output depends on, as hex.
fn cache_key(login: &LoginShell<'_>, home: Option<&Path>) -> String {
    let mut hash = Sha256::new();
    let mut field = |bytes: &[u8]| {
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(bytes);
    };
    let shell = login.shell();
    field(shell.as_os_str().as_encoded_bytes());
    field(home.map(|h| h.as_os_str().as_encoded_bytes()).unwrap_or_default());
    field(if login.captures_full() { b"full" } else { b"env" });
    let inherited = login.own.vars().filter(|(name, _)| !unkeyed(name.as_encoded_bytes()));
    for (name, value) in inherited {
        field(name.as_encoded_bytes());
        field(value.as_encoded_bytes());
    }
    for file in startup_files(&shell, home, login.own.get("ZDOTDIR")) {
        field(file.as_os_str().as_encoded_bytes());
        field(fingerprint(&file).as_bytes());
    }
    hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Variables left out of the key: execkit's own settings (not the login shell's business, and
/// different between a test's Toolkits), and what the calling shell sets per directory, per
/// command or per terminal (`_` is the path of the command it ran). The snapshot drops all of
/// them from what it keeps.
fn unkeyed(name: &[u8]) -> bool {
    const NAMES: &[&[u8]] = &[b"_", b"PWD", b"OLDPWD", b"SHLVL", b"COLUMNS", b"LINES"];
    name.starts_with(b"EXECKIT") || NAMES.contains(&name)
}

/// Size and mtime (ns) of a file, or `absent`.
fn fingerprint(path: &Path) -> String {
    match std::fs::metadata(path) {
        Ok(meta) => format!("{} {}.{}", meta.len(), meta.mtime(), meta.mtime_nsec()),
        Err(_) => "absent".to_string(),
    }
}

/// The startup files `shell` reads as a login interactive shell, present or not; a directory
/// of them (`/etc/profile.d`) counts as itself and each entry.
pub(crate) fn startup_files(
    shell: &Path,
    home: Option<&Path>,
    zdotdir: Option<&str>,
) -> Vec<PathBuf> {
    let name = shell.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    let (system, user): (&[&str], &[&str]) = match name.as_str() {
        "zsh" => (
            &["/etc/zshenv", "/etc/zprofile", "/etc/zshrc", "/etc/zlogin", "/etc/zsh"],
            &[".zshenv", ".zprofile", ".zshrc", ".zlogin"],
        ),
        "fish" => (&["/etc/fish"], &[".config/fish/config.fish", ".config/fish/conf.d"]),
        _ => (
            &["/etc/profile", "/etc/profile.d", "/etc/bash.bashrc", "/etc/bashrc"],
            &[".bash_profile", ".bash_login", ".profile", ".bashrc", ".kshrc"],
        ),
    };
    let user_dir = match (name.as_str(), zdotdir) {
        ("zsh", Some(z)) if !z.is_empty() => Some(PathBuf::from(z)),
        _ => home.map(Path::to_path_buf),
    };
    let mut files: Vec<PathBuf> = system.iter().map(PathBuf::from).collect();
    files.extend(user_dir.iter().flat_map(|dir| user.iter().map(move |f| dir.join(f))));
    let mut listed = Vec::new();
    for file in &files {
        if let Ok(entries) = std::fs::read_dir(file) {
            let mut names: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
            names.sort();
            listed.extend(names);
        }
    }
    files.extend(listed);
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bash_reads_the_profile_directory_and_home_files() {
        let home = tempfile::tempdir().unwrap();
        let files = startup_files(Path::new("/bin/bash"), Some(home.path()), None);
        assert!(files.contains(&PathBuf::from("/etc/profile")));
        assert!(files.contains(&home.path().join(".bashrc")));
        let zsh = startup_files(Path::new("/usr/bin/zsh"), Some(home.path()), Some("/z"));
        assert!(zsh.contains(&PathBuf::from("/z/.zshrc")), "{zsh:?}");
        assert!(!zsh.contains(&home.path().join(".zshrc")));
    }

    #[test]
    fn a_fingerprint_changes_with_the_size() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("rc");
        assert_eq!(fingerprint(&file), "absent");
        std::fs::write(&file, "a").unwrap();
        let one = fingerprint(&file);
        std::fs::write(&file, "ab").unwrap();
        assert_ne!(one, fingerprint(&file));
    }

    #[test]
    fn an_entry_from_the_future_is_expired() {
        let now = SystemTime::now();
        let entry = Entry {
            format: FORMAT,
            key: String::new(),
            captured_at_unix_s: unix_secs(now) + 60,
            vars: Vec::new(),
            full_part: None,
        };
        assert_eq!(age(&entry, now), Duration::MAX);
    }
}
