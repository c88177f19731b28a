//! The resolved policy: checked modes, canonical roots, the protected and denied paths.

use std::path::{Path, PathBuf};

use execkit_tool::Lookup;

use crate::options::{Mode, Network, SandboxOptions};

/// Read-denied paths under the home directory in every confined mode: credentials.
const HOME_SECRETS: &[&str] =
    &[".ssh", ".aws", ".config/gcloud", ".docker/config.json", ".netrc", ".git-credentials"];

/// Read-denied system paths in every confined mode.
const SYSTEM_SECRETS: &[&str] = &["/etc/shadow"];

/// A policy that cannot be used; the Toolkit does not start.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("--sandbox: expected off, read-only or workspace-write, not \"{0}\"")]
    Mode(String),
    #[error("--network: expected on or off, not \"{0}\"")]
    Network(String),
    #[error("{flag} {}: {reason}", path.display())]
    Path { flag: &'static str, path: PathBuf, reason: String },
    #[error("{}: {reason}", path.display())]
    File { path: PathBuf, reason: String },
}

/// Test aids that make the Toolkit behave as on a kernel lacking a feature
/// (`EXECKIT_SANDBOX_TEST_UNAVAILABLE=1`, `EXECKIT_SANDBOX_TEST_NO_USERNS=1`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Simulate {
    pub landlock_unavailable: bool,
    pub no_user_namespaces: bool,
}

/// What every process of one Toolkit may touch; fixed for the Toolkit's life.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    pub mode: Mode,
    pub network: Network,
    /// Canonical; empty in read-only mode (the run directory is added by the enforcement).
    pub writable_roots: Vec<PathBuf>,
    /// Kept read-only inside the writable roots (`.git`, `.execkit`, `--protect`); existing.
    pub protected: Vec<PathBuf>,
    /// Unreadable in confined modes (credentials, `--deny-read`); existing.
    pub denied: Vec<PathBuf>,
    pub simulate: Simulate,
}

impl Policy {
    /// Checks `options` (already merged from every source) against the machine: the Toolkit's
    /// working directory `cwd`, `HOME` and `TMPDIR` from `lookup`.
    pub fn resolve(
        options: &SandboxOptions,
        cwd: &Path,
        lookup: &Lookup,
    ) -> Result<Policy, PolicyError> {
        let mode = match options.mode.as_deref() {
            None => Mode::Off,
            Some(text) => Mode::parse(text).ok_or_else(|| PolicyError::Mode(text.to_string()))?,
        };
        let network = match options.network.as_deref() {
            None => Network::Off,
            Some(text) => {
                Network::parse(text).ok_or_else(|| PolicyError::Network(text.to_string()))?
            }
        };
        let simulate = Simulate {
            landlock_unavailable: lookup.is_on("EXECKIT_SANDBOX_TEST_UNAVAILABLE"),
            no_user_namespaces: lookup.is_on("EXECKIT_SANDBOX_TEST_NO_USERNS"),
        };
        if mode == Mode::Off {
            return Ok(Policy { simulate, ..Policy::default() });
        }
        let writable_roots = match mode {
            Mode::WorkspaceWrite => writable_roots(options, cwd, lookup)?,
            _ => Vec::new(),
        };
        let mut protected = Vec::new();
        for root in &writable_roots {
            protected.extend(protected_in(root));
        }
        for path in &options.protect {
            push_unique(&mut protected, canonical("--protect", path, cwd)?);
        }
        let mut denied = default_denied(lookup);
        for path in &options.deny_read {
            push_unique(&mut denied, canonical("--deny-read", path, cwd)?);
        }
        Ok(Policy { mode, network, writable_roots, protected, denied, simulate })
    }

    pub fn is_confined(&self) -> bool {
        self.mode != Mode::Off
    }

    /// Whether a write to `path` (absolute) is allowed beneath a writable root and outside
    /// every protected path. Symlinks in the existing part of the path are resolved.
    pub fn allows_write(&self, path: &Path) -> bool {
        if !self.is_confined() {
            return true;
        }
        let path = resolve_existing_prefix(path);
        self.writable_roots.iter().any(|root| path.starts_with(root))
            && !self.protected.iter().any(|p| path.starts_with(p))
    }

    /// The sentence the bash and eval descriptions carry, when confined.
    pub fn description(&self) -> Option<String> {
        let network = match self.network {
            Network::Off => "have no network (127.0.0.1 is private to this session)",
            Network::On => "may use the network",
        };
        let writes = match self.mode {
            Mode::Off => return None,
            Mode::ReadOnly => {
                "may write only inside their temporary directory ($TMPDIR)".to_string()
            }
            Mode::WorkspaceWrite => format!("may write only inside {}", self.roots_text()),
        };
        Some(format!("Commands run in a sandbox: they {writes}, and {network}."))
    }

    /// The writable roots as prose: `/a, /b and /tmp`.
    pub fn roots_text(&self) -> String {
        let roots: Vec<String> =
            self.writable_roots.iter().map(|r| r.display().to_string()).collect();
        match roots.split_last() {
            None => "their temporary directory".to_string(),
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        }
    }
}

/// The working directory, `/tmp`, `$TMPDIR` and every `--writable` entry, canonical and once each.
fn writable_roots(
    options: &SandboxOptions,
    cwd: &Path,
    lookup: &Lookup,
) -> Result<Vec<PathBuf>, PolicyError> {
    let mut roots = Vec::new();
    push_unique(&mut roots, canonical("working directory", cwd, cwd)?);
    push_unique(&mut roots, canonical("/tmp", Path::new("/tmp"), cwd)?);
    if let Some(tmp) = lookup.non_empty("TMPDIR")
        && let Ok(tmp) = std::fs::canonicalize(&tmp)
    {
        push_unique(&mut roots, tmp);
    }
    for path in &options.writable {
        let root = canonical("--writable", path, cwd)?;
        if !root.is_dir() {
            let reason = "not a directory".to_string();
            return Err(PolicyError::Path { flag: "--writable", path: path.clone(), reason });
        }
        push_unique(&mut roots, root);
    }
    Ok(roots)
}

/// `.git` (a directory, or a pointer file and the `gitdir:` it names) and `.execkit` of a root.
fn protected_in(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let git = root.join(".git");
    if git.is_file()
        && let Ok(text) = std::fs::read_to_string(&git)
        && let Some(target) = text.lines().find_map(|l| l.strip_prefix("gitdir:"))
        && let Ok(target) = std::fs::canonicalize(root.join(target.trim()))
    {
        found.push(target);
    }
    for name in [".git", ".execkit"] {
        if let Ok(path) = std::fs::canonicalize(root.join(name)) {
            found.push(path);
        }
    }
    found
}

/// The credentials under `HOME` and the system's, those that exist.
fn default_denied(lookup: &Lookup) -> Vec<PathBuf> {
    let home = lookup.non_empty("HOME").map(PathBuf::from);
    let home_paths = home.iter().flat_map(|home| HOME_SECRETS.iter().map(move |s| home.join(s)));
    let mut denied = Vec::new();
    for path in home_paths.chain(SYSTEM_SECRETS.iter().map(PathBuf::from)) {
        if let Ok(path) = std::fs::canonicalize(path) {
            push_unique(&mut denied, path);
        }
    }
    denied
}

fn canonical(flag: &'static str, path: &Path, cwd: &Path) -> Result<PathBuf, PolicyError> {
    std::fs::canonicalize(cwd.join(path)).map_err(|err| PolicyError::Path {
        flag,
        path: path.to_path_buf(),
        reason: err.to_string(),
    })
}

fn push_unique(list: &mut Vec<PathBuf>, path: PathBuf) {
    if !list.contains(&path) {
        list.push(path);
    }
}

/// `path` with its longest existing prefix canonicalised (the rest cannot hold symlinks yet).
fn resolve_existing_prefix(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut head = path.to_path_buf();
    loop {
        if let Ok(real) = std::fs::canonicalize(&head) {
            return rest.iter().rev().fold(real, |acc: PathBuf, part| acc.join(part));
        }
        match (head.file_name().map(|n| n.to_os_string()), head.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                head = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
