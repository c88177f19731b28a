//! One host entry: its typed fields and how a JSON object becomes one (spec-ssh S7, S12).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use super::fields::{self, FieldError};
use crate::environment::Environment;

/// Shells the runner knows how to wrap (the `shell` field, or what the probe found).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Shell {
    Sh,
    Bash,
    Zsh,
    Fish,
    Cmd,
    PowerShell,
}

impl Shell {
    pub fn parse(name: &str) -> Option<Shell> {
        Some(match name {
            "sh" | "dash" | "ash" | "ksh" | "mksh" => Shell::Sh,
            "bash" => Shell::Bash,
            "zsh" => Shell::Zsh,
            "fish" => Shell::Fish,
            "cmd" => Shell::Cmd,
            "powershell" | "pwsh" => Shell::PowerShell,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Shell::Sh => "sh",
            Shell::Bash => "bash",
            Shell::Zsh => "zsh",
            Shell::Fish => "fish",
            Shell::Cmd => "cmd",
            Shell::PowerShell => "powershell",
        }
    }
}

/// Whether commands on a Windows host go through a POSIX bash found there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compat {
    On,
    Off,
    Auto,
}

/// `ssh_config`: isolate from every ssh_config file, or use this one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SshConfigFile {
    None,
    Path(PathBuf),
}

/// A validated host entry. Every string here has passed the argv guards.
#[derive(Debug, Clone, PartialEq)]
pub struct HostEntry {
    pub name: String,
    /// As ssh takes it: IPv6 brackets removed.
    pub host: String,
    pub username: Option<String>,
    pub port: u16,
    pub key: Option<PathBuf>,
    pub description: Option<String>,
    pub compat: Compat,
    pub connect_timeout: Duration,
    pub max_sessions: usize,
    pub shell: Option<Shell>,
    pub proxy_jump: Option<String>,
    pub known_hosts: Option<PathBuf>,
    pub ssh_config: Option<SshConfigFile>,
    /// The file that defined it.
    pub source: PathBuf,
}

/// Fields every entry may have (`keyPath` is an alias of `key`).
const KNOWN_FIELDS: &[&str] = &[
    "host",
    "username",
    "port",
    "key",
    "keyPath",
    "description",
    "compat",
    "connect_timeout",
    "max_sessions",
    "shell",
    "proxy_jump",
    "known_hosts",
    "ssh_config",
];

/// What parsing one entry gave: the entry, or the reason it is ignored, plus notes on
/// unknown fields (which do not invalidate it).
pub struct Parsed {
    pub entry: Result<HostEntry, FieldError>,
    pub unknown: Vec<String>,
}

/// Reads one entry. `dir` is the config file's directory, for relative paths.
pub fn parse_entry(name: &str, value: &Value, file: &Path, env: &Environment) -> Parsed {
    let Some(object) = value.as_object() else {
        let entry = Err(FieldError::new("entry", "must be an object"));
        return Parsed { entry, unknown: Vec::new() };
    };
    let unknown = object.keys().filter(|k| !KNOWN_FIELDS.contains(&k.as_str())).cloned().collect();
    Parsed { entry: build(name, object, file, env), unknown }
}

fn build(
    name: &str,
    object: &Map<String, Value>,
    file: &Path,
    env: &Environment,
) -> Result<HostEntry, FieldError> {
    let reader = fields::Reader { object, env, dir: file.parent().unwrap_or(Path::new("/")) };
    let host = fields::host(reader.string("host")?)?;
    let key = match reader.string("key")? {
        Some(key) => Some(key),
        None => reader.string_as("keyPath", "key")?,
    };
    Ok(HostEntry {
        name: name.to_string(),
        host,
        username: reader.string("username")?.map(fields::username).transpose()?,
        port: fields::port(reader.scalar("port")?)?,
        key: key.map(|k| reader.path("key", &k)).transpose()?,
        description: reader.string("description")?.map(|d| d.chars().take(120).collect()),
        compat: fields::compat(reader.scalar("compat")?)?,
        connect_timeout: Duration::from_secs(reader.bounded("connect_timeout", 1, 60, 10)?),
        max_sessions: reader.bounded("max_sessions", 1, 64, 8)? as usize,
        shell: reader.string("shell")?.map(fields::shell).transpose()?,
        proxy_jump: reader.string("proxy_jump")?.map(fields::proxy_jump).transpose()?,
        known_hosts: reader
            .string("known_hosts")?
            .map(|p| reader.path("known_hosts", &p))
            .transpose()?,
        ssh_config: reader.string("ssh_config")?.map(|p| reader.ssh_config(&p)).transpose()?,
        source: file.to_path_buf(),
    })
}
