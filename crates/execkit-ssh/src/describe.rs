//! The tool description's host list (spec-ssh S36) and the probe reset behind
//! `execkit ssh probe`. Describing never probes: it reads only what is already known.

use crate::client::{SshClient, lock};
use crate::probe;

/// Why the tool is missing from the list while no host is configured.
const NO_TOOL: &str = "the ssh tool is left out of the tool list until one is";

/// Hosts listed in the description at most; the rest are counted.
const LISTED_MAX: usize = 50;

/// The fixed part of the ssh tool's description; the host list follows it.
pub const TOOL_TEXT: &str = "Run one non-interactive command on a configured remote host over ssh. \"host\" must be one of the names below, never an address. No PTY and no stdin; stdout and stderr come back together; a non-zero exit is an error. \"cwd\" must be an absolute remote path.";

impl SshClient {
    /// The ssh tool's description, or `None` while no valid host is configured (the tool
    /// is then left out of the tool list).
    pub fn tool_description(&self) -> Option<String> {
        let lines = self.host_lines();
        if lines.is_empty() {
            return None;
        }
        let mut text = format!("{TOOL_TEXT}\nHosts:\n{}", lines.join("\n"));
        let groups = self.group_lines();
        if !groups.is_empty() {
            text.push_str(&format!("\nGroups (pass them in \"hosts\"):\n{}", groups.join("\n")));
        }
        Some(text)
    }

    /// `- <group>: <host>, <host>`, one per group, at most as many as hosts are listed.
    fn group_lines(&self) -> Vec<String> {
        let config = self.config();
        let mut lines: Vec<String> = config
            .groups
            .iter()
            .take(LISTED_MAX)
            .map(|(name, members)| format!("- {name}: {}", members.join(", ")))
            .collect();
        if config.groups.len() > LISTED_MAX {
            lines.push(format!(
                "… and {} more (execkit doctor lists all)",
                config.groups.len() - LISTED_MAX
            ));
        }
        lines
    }

    /// `- <name>: <user>@<host>:<port> — <description> (<os>/<shell>)`, one per host, with
    /// `(not probed yet)` for hosts whose OS and shell are not known yet.
    pub fn host_lines(&self) -> Vec<String> {
        self.lines_up_to(LISTED_MAX)
    }

    /// What `execkit doctor` says about ssh besides warnings: every host (no cap), the
    /// groups, and where master sockets go.
    pub fn doctor_lines(&self) -> Vec<String> {
        let config = self.config();
        let mut lines = Vec::new();
        if config.hosts.is_empty() {
            lines
                .push(format!("hosts: none configured (add them to .execkit/ssh.json); {NO_TOOL}"));
        } else {
            lines.push(format!("hosts: {}", config.hosts.len()));
            lines.extend(self.lines_up_to(usize::MAX));
        }
        if !config.groups.is_empty() {
            let groups: Vec<String> = config
                .groups
                .iter()
                .map(|(name, members)| format!("{name} ({})", members.join(", ")))
                .collect();
            lines.push(format!("groups: {}", groups.join("; ")));
        }
        lines.push(match &self.inner.control.dir {
            Some(dir) => format!("control directory: {}", dir.display()),
            None => "control directory: none (connection reuse disabled)".to_string(),
        });
        lines
    }

    fn lines_up_to(&self, limit: usize) -> Vec<String> {
        let config = self.config();
        let mut lines: Vec<String> = config
            .hosts
            .values()
            .take(limit)
            .map(|entry| {
                let known = match entry.shell {
                    Some(shell) => Some(probe::HostInfo::configured(shell)),
                    None => self.known_info(entry),
                };
                let info = known
                    .map_or("(not probed yet)".to_string(), |i| format!("({}/{})", i.os, i.shell));
                let target = crate::master::target(entry);
                match &entry.description {
                    Some(text) => format!("- {}: {target} — {text} {info}", entry.name),
                    None => format!("- {}: {target} {info}", entry.name),
                }
            })
            .collect();
        if config.hosts.len() > limit {
            lines.push(format!(
                "… and {} more (execkit doctor lists all)",
                config.hosts.len() - limit
            ));
        }
        lines
    }

    /// Forgets what the probe found for `name`, in memory and on disk, so the next call
    /// probes again.
    pub fn forget_probe(&self, name: &str) {
        if let Some(state) = lock(&self.inner.hosts).get(name) {
            *lock(&state.info) = None;
        }
        if let Some(dir) = &self.inner.cache_dir {
            let _ = std::fs::remove_file(probe::cache_path(dir, name));
        }
    }

    fn known_info(&self, entry: &crate::HostEntry) -> Option<probe::HostInfo> {
        let remembered = lock(&self.inner.hosts)
            .get(&entry.name)
            .filter(|s| s.entry == *entry)
            .and_then(|s| lock(&s.info).clone());
        remembered.or_else(|| {
            self.inner.cache_dir.as_deref().and_then(|dir| probe::read_cache(dir, entry))
        })
    }
}
