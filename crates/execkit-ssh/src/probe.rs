//! The remote OS and login shell: probed once, cached for a day (spec-ssh S26–S28).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::config::{HostEntry, Shell};
use crate::wrap::Wrapper;

/// One command that every shell family answers differently: POSIX shells expand `$SHELL`
/// and run `uname`, cmd expands `%OS%`, PowerShell prints each argument on a line.
pub const PROBE_COMMAND: &str = "echo EXECKIT_PROBE %OS% $SHELL; uname -s";
/// A cached probe older than this is redone: hosts get reinstalled.
const CACHE_MAX_AGE: Duration = Duration::from_secs(24 * 3600);
const CACHE_VERSION: u32 = 1;

/// Where the OS/shell came from (`structuredContent.probe`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeSource {
    Cached,
    Probed,
    Configured,
}

impl ProbeSource {
    pub fn as_str(self) -> &'static str {
        match self {
            ProbeSource::Cached => "cached",
            ProbeSource::Probed => "probed",
            ProbeSource::Configured => "configured",
        }
    }
}

/// What is known about a host's OS and shell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostInfo {
    /// `linux`, `macos`, `unix`, `windows` or `unknown`.
    pub os: String,
    /// `sh`, `bash`, …, or the name of a shell execkit cannot wrap.
    pub shell: String,
    pub shell_path: Option<String>,
    /// On Windows: whether a POSIX bash answered (S27); `None` when not probed.
    pub bash: Option<bool>,
    pub source: ProbeSource,
}

impl HostInfo {
    pub fn wrapper(&self) -> Wrapper {
        match Shell::parse(&self.shell) {
            Some(shell) => Wrapper::Shell(shell),
            None => Wrapper::Unknown,
        }
    }

    /// From a configured `shell`: cmd and powershell imply Windows, the others Unix.
    pub fn configured(shell: Shell) -> HostInfo {
        let os = if matches!(shell, Shell::Cmd | Shell::PowerShell) { "windows" } else { "unix" };
        HostInfo {
            os: os.into(),
            shell: shell.as_str().into(),
            shell_path: None,
            bash: None,
            source: ProbeSource::Configured,
        }
    }
}

/// Reads the probe's stdout; login noise before the `EXECKIT_PROBE` line is skipped.
pub fn parse_probe(stdout: &[u8]) -> Option<HostInfo> {
    let text = String::from_utf8_lossy(stdout);
    let mut lines = text.lines().map(|l| l.trim_end_matches('\r'));
    let line = lines.by_ref().find(|l| l.starts_with("EXECKIT_PROBE"))?;
    let next = lines.next().unwrap_or("").trim();
    let info = |os: &str, shell: &str, path: Option<&str>| HostInfo {
        os: os.into(),
        shell: shell.into(),
        shell_path: path.map(str::to_string),
        bash: None,
        source: ProbeSource::Probed,
    };
    if line.contains("Windows_NT") {
        return Some(info("windows", "cmd", None));
    }
    if line.trim() == "EXECKIT_PROBE" && next == "%OS%" {
        return Some(info("windows", "powershell", None));
    }
    let shell_path = line.split_whitespace().nth(2).unwrap_or("");
    let os = match next {
        "Linux" => "linux",
        "Darwin" => "macos",
        "" => "unknown",
        _ => "unix",
    };
    let base = shell_path.rsplit('/').next().unwrap_or("");
    let shell = match base {
        "" | "sh" | "dash" | "ash" | "ksh" | "mksh" => "sh",
        "bash" | "zsh" | "fish" => base,
        other => other,
    };
    let path = (!shell_path.is_empty()).then_some(shell_path);
    Some(info(os, shell, path))
}

/// `~/.execkit/cache/ssh-hosts/<name>.json`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct CacheFile {
    version: u32,
    host: String,
    port: u16,
    username: Option<String>,
    os: String,
    shell: String,
    shell_path: Option<String>,
    bash: Option<bool>,
    probed_at: u64,
}

pub fn cache_path(cache_dir: &Path, name: &str) -> PathBuf {
    cache_dir.join(format!("{name}.json"))
}

/// The cached probe, when it is of this version, for the same host/port/user, and fresh.
pub fn read_cache(cache_dir: &Path, entry: &HostEntry) -> Option<HostInfo> {
    let text = std::fs::read_to_string(cache_path(cache_dir, &entry.name)).ok()?;
    let file: CacheFile = serde_json::from_str(&text).ok()?;
    let now = SystemTime::now().duration_since(UNIX_EPOCH).ok()?.as_secs();
    let fresh = now.saturating_sub(file.probed_at) < CACHE_MAX_AGE.as_secs();
    let same = file.version == CACHE_VERSION
        && file.host == entry.host
        && file.port == entry.port
        && file.username == entry.username;
    if !(same && fresh) {
        return None;
    }
    Some(HostInfo {
        os: file.os,
        shell: file.shell,
        shell_path: file.shell_path,
        bash: file.bash,
        source: ProbeSource::Cached,
    })
}

/// Best effort: a cache that cannot be written only means probing again next time.
pub fn write_cache(cache_dir: &Path, entry: &HostEntry, info: &HostInfo) {
    let probed_at = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let file = CacheFile {
        version: CACHE_VERSION,
        host: entry.host.clone(),
        port: entry.port,
        username: entry.username.clone(),
        os: info.os.clone(),
        shell: info.shell.clone(),
        shell_path: info.shell_path.clone(),
        bash: info.bash,
        probed_at,
    };
    let Ok(text) = serde_json::to_string_pretty(&file) else { return };
    if std::fs::create_dir_all(cache_dir).is_ok() {
        let path = cache_path(cache_dir, &entry.name);
        let temp = path.with_extension("json.tmp");
        if std::fs::write(&temp, text).is_ok() {
            let _ = std::fs::rename(&temp, &path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn posix_hosts_behind_a_banner() {
        let info = parse_probe(b"Welcome!\nEXECKIT_PROBE %OS% /bin/dash\nLinux\n").unwrap();
        assert_eq!((info.os.as_str(), info.shell.as_str()), ("linux", "sh"));
        assert_eq!(info.shell_path.as_deref(), Some("/bin/dash"));
        let mac = parse_probe(b"EXECKIT_PROBE %OS% /bin/zsh\nDarwin\n").unwrap();
        assert_eq!((mac.os.as_str(), mac.shell.as_str()), ("macos", "zsh"));
        let bsd = parse_probe(b"EXECKIT_PROBE %OS% /usr/local/bin/tcsh\nFreeBSD\n").unwrap();
        assert_eq!((bsd.os.as_str(), bsd.shell.as_str()), ("unix", "tcsh"));
        assert_eq!(bsd.wrapper(), Wrapper::Unknown);
        let bare = parse_probe(b"EXECKIT_PROBE %OS%\n").unwrap();
        assert_eq!((bare.os.as_str(), bare.shell.as_str()), ("unknown", "sh"));
    }

    #[test]
    fn windows_shells() {
        let cmd = parse_probe(b"EXECKIT_PROBE Windows_NT $SHELL\r\n'uname' is not recognized\r\n")
            .unwrap();
        assert_eq!((cmd.os.as_str(), cmd.shell.as_str()), ("windows", "cmd"));
        let ps = parse_probe(b"EXECKIT_PROBE\r\n%OS%\r\n\r\n").unwrap();
        assert_eq!((ps.os.as_str(), ps.shell.as_str()), ("windows", "powershell"));
        assert!(parse_probe(b"no marker here\n").is_none());
    }
}
