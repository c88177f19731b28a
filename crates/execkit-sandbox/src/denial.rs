//! Telling a denial apart from an ordinary failure, and the one line that explains it.
//!
//! After a confined run that failed, its output is searched for the words the kernel's errors
//! print (`Permission denied`, `Read-only file system`, Python's `[Errno 13]`, ...) next to a
//! path the policy does not let the command write, or next to a network operation.

use std::path::{Path, PathBuf};

use crate::options::Network;
use crate::policy::Policy;

/// Words of a refused filesystem operation.
const FS_WORDS: &[&str] = &[
    "Permission denied",
    "Read-only file system",
    "Operation not permitted",
    "PermissionError",
    "[Errno 1]",
    "[Errno 13]",
    "[Errno 30]",
];

/// Words of a refused network operation, whatever else the line says.
const NET_WORDS: &[&str] =
    &["Network is unreachable", "Could not resolve host", "Temporary failure in name resolution"];

/// Words that make an `Operation not permitted` a network one.
const SOCKET_WORDS: &[&str] = &["socket", "connect", "sendto", "bind", "urlopen", "http"];

/// What the command was denied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Denial {
    Write(PathBuf),
    Read(PathBuf),
    Network,
}

/// The first denial in `output` of a failed run under `policy`; `cwd` resolves relative paths.
pub fn find_denial(output: &str, policy: &Policy, cwd: &Path) -> Option<Denial> {
    if !policy.is_confined() {
        return None;
    }
    for line in output.lines() {
        if policy.network == Network::Off && NET_WORDS.iter().any(|w| line.contains(w)) {
            return Some(Denial::Network);
        }
        if !FS_WORDS.iter().any(|w| line.contains(w)) && !line.contains("No such file") {
            continue;
        }
        for path in paths_in(line) {
            let path = cwd.join(path);
            if policy.denied.iter().any(|d| path.starts_with(d)) {
                return Some(Denial::Read(path));
            }
            if FS_WORDS.iter().any(|w| line.contains(w)) && !policy.allows_write(&path) {
                return Some(Denial::Write(path));
            }
        }
        let lower = line.to_ascii_lowercase();
        let refused_socket = line.contains("Operation not permitted") || line.contains("[Errno 1]");
        if policy.network == Network::Off
            && refused_socket
            && SOCKET_WORDS.iter().any(|w| lower.contains(w) || output.contains(w))
        {
            return Some(Denial::Network);
        }
    }
    None
}

impl Denial {
    /// `[sandbox: the command was denied ...; this session allows ... Write inside ...]`.
    pub fn line(&self, policy: &Policy, exceptions: bool) -> String {
        let what = match self {
            Denial::Write(path) => format!("writing to {}", path.display()),
            Denial::Read(path) => format!("reading {}", path.display()),
            Denial::Network => "network access".to_string(),
        };
        let network = match policy.network {
            Network::Off => " and no network",
            Network::On => "",
        };
        let ask =
            if exceptions { ", or ask for an exception with \"sandbox_permissions\"" } else { "" };
        format!(
            "[sandbox: the command was denied {what}; this session allows writes only inside {}{network}. \
             Write inside the workspace (for example set PIP_CACHE_DIR=/tmp/pip){ask}]",
            policy.roots_text()
        )
    }
}

/// Path-shaped words of a line: absolute, `~/`, `./` or a name before `: ` (bash's
/// `bash: f.txt: Permission denied`), quotes stripped.
fn paths_in(line: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for word in line.split(|c: char| c.is_whitespace() || c == ',' || c == '(' || c == ')') {
        let word = word.trim_matches(|c| matches!(c, '\'' | '"' | '`' | ':' | '‘' | '’'));
        if word.starts_with('/') || word.starts_with("./") || word.starts_with("../") {
            found.push(PathBuf::from(word));
        }
    }
    // `bash: line 1: out.txt: Permission denied` names a relative file before the words.
    let parts: Vec<&str> = line.split(": ").collect();
    if parts.len() >= 3 {
        let name = parts[parts.len() - 2].trim();
        if !name.is_empty() && !name.contains(' ') && !name.starts_with('/') {
            found.push(PathBuf::from(name));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Mode;

    fn policy(root: &Path) -> Policy {
        Policy {
            mode: Mode::WorkspaceWrite,
            writable_roots: vec![root.to_path_buf()],
            denied: vec![PathBuf::from("/root/.ssh")],
            ..Policy::default()
        }
    }

    #[test]
    fn a_write_outside_the_roots_is_a_denial_and_one_inside_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let policy = policy(&root);
        let out = "bash: line 1: /home/u/outside.txt: Permission denied\n";
        assert_eq!(
            find_denial(out, &policy, &root),
            Some(Denial::Write("/home/u/outside.txt".into()))
        );
        let inside = format!("bash: {}/x: Permission denied", root.display());
        assert_eq!(find_denial(&inside, &policy, &root), None);
        let py = "PermissionError: [Errno 13] Permission denied: '/etc/x'";
        assert_eq!(find_denial(py, &policy, &root), Some(Denial::Write("/etc/x".into())));
        let relative = "bash: line 1: out.txt: Read-only file system";
        assert_eq!(
            find_denial(relative, &policy, Path::new("/etc")),
            Some(Denial::Write("/etc/out.txt".into()))
        );
    }

    #[test]
    fn network_and_denied_reads_are_recognised() {
        let policy = policy(Path::new("/ws"));
        let curl = "curl: (6) Could not resolve host: example.com";
        assert_eq!(find_denial(curl, &policy, Path::new("/ws")), Some(Denial::Network));
        let py = "    sock = socket.socket()\nPermissionError: [Errno 1] Operation not permitted";
        assert_eq!(find_denial(py, &policy, Path::new("/ws")), Some(Denial::Network));
        let cat = "cat: /root/.ssh/id_ed25519: No such file or directory";
        assert_eq!(
            find_denial(cat, &policy, Path::new("/ws")),
            Some(Denial::Read("/root/.ssh/id_ed25519".into()))
        );
        assert_eq!(
            find_denial("grep: x: No such file or directory", &policy, Path::new("/ws")),
            None
        );
    }

    #[test]
    fn the_line_names_what_was_denied_and_the_way_out() {
        let line = Denial::Network.line(&policy(Path::new("/ws")), true);
        assert_eq!(
            line,
            "[sandbox: the command was denied network access; this session allows writes only inside \
             /ws and no network. Write inside the workspace (for example set PIP_CACHE_DIR=/tmp/pip), \
             or ask for an exception with \"sandbox_permissions\"]"
        );
    }
}
