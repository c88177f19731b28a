//! Host configuration from JSON files (spec-ssh S6–S11, S37 groups).
//!
//! Loading never fails: a broken file or entry becomes a warning for `execkit doctor` and the
//! rest still loads. The first file that defines a name wins.

mod entry;
mod expand;
mod fields;
mod files;
mod groups;

use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde_json::Value;

pub use entry::{Compat, HostEntry, Shell, SshConfigFile};
pub use expand::expand;
pub use files::{FileStamp, candidate_files, project_root};

use crate::environment::Environment;

/// Configuration files larger than this are ignored: a host list is small, and a huge file is
/// a mistake (or an attempt to make the toolkit read something it should not).
const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// Every valid host and group, and the warnings for everything that was not.
#[derive(Debug, Clone, Default)]
pub struct HostConfig {
    pub hosts: IndexMap<String, HostEntry>,
    /// Group name → host names, resolved through nested groups, in first-seen order.
    pub groups: IndexMap<String, Vec<String>>,
    pub warnings: Vec<String>,
    /// (path, size, mtime) of each candidate file at load, for change detection.
    pub stamps: Vec<FileStamp>,
}

/// Host names: a letter or digit, then up to 63 of letters, digits, `.`, `_`, `-`.
pub fn valid_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 64
        && bytes[0].is_ascii_alphanumeric()
        && bytes.iter().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(b))
}

impl HostConfig {
    /// Loads the files of the project at `cwd` and of the user, in the spec's order.
    pub fn discover(cwd: &Path, env: &Environment) -> HostConfig {
        let root = project_root(cwd);
        HostConfig::load(&candidate_files(&root, env.home().as_deref()), env)
    }

    /// Loads `files` in priority order; missing files are skipped silently.
    pub fn load(files: &[PathBuf], env: &Environment) -> HostConfig {
        let mut config = HostConfig::default();
        let mut raw_groups: Vec<(PathBuf, String, Value)> = Vec::new();
        for file in files {
            config.stamps.push(FileStamp::of(file));
            let Some(document) = files::read_document(file, MAX_FILE_BYTES, &mut config.warnings)
            else {
                continue;
            };
            config.add_hosts(file, &document, env);
            groups::collect(file, &document, env, &mut raw_groups, &mut config.warnings);
        }
        config.check_proxy_jumps();
        config.groups = groups::resolve(raw_groups, &config.hosts, &mut config.warnings);
        config
    }

    /// True when any candidate file's (path, size, mtime) differs from the load.
    pub fn changed(&self) -> bool {
        self.stamps.iter().any(|stamp| FileStamp::of(&stamp.path) != *stamp)
    }

    pub fn names(&self) -> Vec<&str> {
        self.hosts.keys().map(String::as_str).collect()
    }

    fn add_hosts(&mut self, file: &Path, document: &Value, env: &Environment) {
        let f = file.display();
        let hosts = match document.get("hosts") {
            None => return,
            Some(Value::Object(hosts)) => hosts,
            Some(_) => {
                self.warnings.push(format!("{f}: \"hosts\" must be an object; file ignored"));
                return;
            }
        };
        for (name, value) in hosts {
            if !valid_name(name) {
                self.warnings.push(format!("{f}: invalid host name {name:?}; entry ignored"));
                continue;
            }
            let parsed = entry::parse_entry(name, value, file, env);
            for field in &parsed.unknown {
                self.warnings.push(format!("{f}: host {name:?}: unknown field {field:?}"));
            }
            let entry = match parsed.entry {
                Ok(entry) => entry,
                Err(problem) => {
                    self.warnings.push(format!("{f}: host {name:?}: {problem}; entry ignored"));
                    continue;
                }
            };
            if let Some(first) = self.hosts.get(name) {
                let other = first.source.display();
                self.warnings.push(format!(
                    "{f}: host {name:?} is already defined in {other}; this definition is ignored"
                ));
                continue;
            }
            self.hosts.insert(name.clone(), entry);
        }
    }

    /// A jump host must be configured and must not jump itself (one hop only).
    fn check_proxy_jumps(&mut self) {
        let mut invalid = Vec::new();
        for (name, entry) in &self.hosts {
            let Some(jump) = &entry.proxy_jump else { continue };
            let problem = match self.hosts.get(jump) {
                None => format!("\"proxy_jump\" names {jump:?}, which is not a configured host"),
                Some(hop) if hop.proxy_jump.is_some() || jump == name => {
                    format!(
                        "\"proxy_jump\" host {jump:?} has a proxy_jump of its own (one hop only)"
                    )
                }
                Some(_) => continue,
            };
            let f = entry.source.display();
            self.warnings.push(format!("{f}: host {name:?}: {problem}; entry ignored"));
            invalid.push(name.clone());
        }
        for name in invalid {
            self.hosts.shift_remove(&name);
        }
    }
}

#[cfg(test)]
mod tests;
