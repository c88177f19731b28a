//! The policy as given: raw options from one source, and their merge in precedence order.

use std::path::{Path, PathBuf};

use execkit_tool::Lookup;
use serde::Deserialize;

use crate::policy::PolicyError;

/// How much a confined process may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Nothing is confined (the default).
    #[default]
    Off,
    /// No writes except the run directory and the terminal devices.
    ReadOnly,
    /// Writes also beneath the writable roots.
    WorkspaceWrite,
}

impl Mode {
    pub fn parse(text: &str) -> Option<Mode> {
        match text.trim() {
            "off" => Some(Mode::Off),
            "read-only" => Some(Mode::ReadOnly),
            "workspace-write" => Some(Mode::WorkspaceWrite),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Off => "off",
            Mode::ReadOnly => "read-only",
            Mode::WorkspaceWrite => "workspace-write",
        }
    }
}

/// Whether a confined process reaches anything beyond the Toolkit's private loopback.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Network {
    /// Only the private loopback the Toolkit's processes share (the default when confined).
    #[default]
    Off,
    On,
}

impl Network {
    pub fn parse(text: &str) -> Option<Network> {
        match text.trim() {
            "off" => Some(Network::Off),
            "on" => Some(Network::On),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Network::Off => "off",
            Network::On => "on",
        }
    }
}

/// The policy as one source gives it, every field optional; the same keys as
/// `sandbox.json` (`mode`, `network`, `writable`, `protect`, `deny_read`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxOptions {
    pub mode: Option<String>,
    pub network: Option<String>,
    #[serde(default)]
    pub writable: Vec<PathBuf>,
    #[serde(default)]
    pub protect: Vec<PathBuf>,
    #[serde(default)]
    pub deny_read: Vec<PathBuf>,
}

impl SandboxOptions {
    /// `EXECKIT_SANDBOX`, `EXECKIT_SANDBOX_NETWORK`, and the colon-separated
    /// `EXECKIT_SANDBOX_WRITABLE`, `EXECKIT_SANDBOX_PROTECT`, `EXECKIT_SANDBOX_DENY_READ`.
    pub fn from_lookup(lookup: &Lookup) -> SandboxOptions {
        let list = |name: &str| -> Vec<PathBuf> {
            lookup.non_empty(name).map_or_else(Vec::new, |value| {
                value.split(':').filter(|s| !s.is_empty()).map(PathBuf::from).collect()
            })
        };
        SandboxOptions {
            mode: lookup.non_empty("EXECKIT_SANDBOX"),
            network: lookup.non_empty("EXECKIT_SANDBOX_NETWORK"),
            writable: list("EXECKIT_SANDBOX_WRITABLE"),
            protect: list("EXECKIT_SANDBOX_PROTECT"),
            deny_read: list("EXECKIT_SANDBOX_DENY_READ"),
        }
    }

    /// A `sandbox.json`; a missing file is no options, a malformed one an error naming it.
    pub fn from_file(path: &Path) -> Result<SandboxOptions, PolicyError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Ok(SandboxOptions::default());
            }
            Err(err) => {
                return Err(PolicyError::File {
                    path: path.to_path_buf(),
                    reason: err.to_string(),
                });
            }
        };
        serde_json::from_str(&text)
            .map_err(|err| PolicyError::File { path: path.to_path_buf(), reason: err.to_string() })
    }

    /// Each field from the first source (highest precedence first) that sets it.
    pub fn merged(sources: impl IntoIterator<Item = SandboxOptions>) -> SandboxOptions {
        let mut out = SandboxOptions::default();
        for source in sources {
            out.mode = out.mode.or(source.mode);
            out.network = out.network.or(source.network);
            for (mine, theirs) in [
                (&mut out.writable, source.writable),
                (&mut out.protect, source.protect),
                (&mut out.deny_read, source.deny_read),
            ] {
                if mine.is_empty() {
                    *mine = theirs;
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_source_that_sets_a_field_wins() {
        let flags = SandboxOptions { mode: Some("read-only".into()), ..SandboxOptions::default() };
        let env = Lookup::from_vars([
            ("EXECKIT_SANDBOX", "workspace-write"),
            ("EXECKIT_SANDBOX_NETWORK", "on"),
            ("EXECKIT_SANDBOX_WRITABLE", "/a::/b"),
        ]);
        let merged = SandboxOptions::merged([flags, SandboxOptions::from_lookup(&env)]);
        assert_eq!(merged.mode.as_deref(), Some("read-only"));
        assert_eq!(merged.network.as_deref(), Some("on"));
        assert_eq!(merged.writable, [PathBuf::from("/a"), PathBuf::from("/b")]);
    }

    #[test]
    fn sandbox_json_takes_the_same_keys_and_refuses_others() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sandbox.json");
        std::fs::write(&path, r#"{"mode":"workspace-write","deny_read":["/x"]}"#).unwrap();
        let options = SandboxOptions::from_file(&path).unwrap();
        assert_eq!(options.mode.as_deref(), Some("workspace-write"));
        assert_eq!(options.deny_read, [PathBuf::from("/x")]);
        std::fs::write(&path, r#"{"mood":"off"}"#).unwrap();
        let err = SandboxOptions::from_file(&path).unwrap_err().to_string();
        assert!(err.starts_with(&format!("{}: unknown field `mood`", path.display())), "{err}");
        let missing = SandboxOptions::from_file(&dir.path().join("none.json")).unwrap();
        assert_eq!(missing, SandboxOptions::default());
    }
}
