//! From a definition to a running adapter and its `launch` arguments: placeholder
//! substitution, launch-argument building, and starting the adapter over the definition's
//! transport.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use execkit_process::Supervisor;
use serde_json::{Map, Value};
use tokio::time::Instant;

use crate::adapters::{AdapterDef, EnvFormat, StopOnEntry, TransportKind};
use crate::error::TransportError;
use crate::process::{AdapterCommand, AdapterProcess};
use crate::socket_dir::SocketPath;
use crate::transport::{self, Connection};

/// Values for the placeholders of a definition. Transport values (`port`, `client_addr`,
/// `socket`) are filled in by [`spawn_adapter`].
#[derive(Debug, Clone, Default)]
pub struct Placeholders {
    pub python: Option<String>,
    pub program: Option<String>,
    pub args: Vec<String>,
    pub cwd: String,
    pub stop_on_entry: bool,
    pub host: String,
    pub port: Option<u16>,
    pub client_addr: Option<String>,
    pub socket: Option<String>,
    /// `${env:NAME}` values (the caller's environment).
    pub env: Vec<(String, String)>,
}

impl Placeholders {
    fn lookup(&self, name: &str) -> Option<String> {
        match name {
            "python" => self.python.clone(),
            "program" => self.program.clone(),
            "cwd" => Some(self.cwd.clone()),
            "stop_on_entry" => Some(self.stop_on_entry.to_string()),
            "host" => Some(self.host.clone()),
            "port" => self.port.map(|p| p.to_string()),
            "client_addr" => self.client_addr.clone(),
            "socket" => self.socket.clone(),
            other => {
                let var = other.strip_prefix("env:")?;
                self.env.iter().find(|(k, _)| k == var).map(|(_, v)| v.clone())
            }
        }
    }

    /// Fills every placeholder of `text`; the error names the one without a value.
    pub fn fill(&self, text: &str) -> Result<String, String> {
        let mut out = String::new();
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            let Some(len) = rest[start..].find('}') else { break };
            let name = &rest[start + 2..start + len];
            let value = self.lookup(name).ok_or_else(|| format!("${{{name}}} has no value"))?;
            out.push_str(&rest[..start]);
            out.push_str(&value);
            rest = &rest[start + len + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    /// An argv with `${args}` expanded to zero or more elements.
    pub fn fill_argv(&self, argv: &[String]) -> Result<Vec<String>, String> {
        let mut out = Vec::new();
        for arg in argv {
            if arg == "${args}" {
                out.extend(self.args.iter().cloned());
            } else {
                out.push(self.fill(arg)?);
            }
        }
        Ok(out)
    }

    /// A JSON value with placeholders filled in its strings; a string that is exactly
    /// `${stop_on_entry}` becomes a boolean.
    pub fn fill_value(&self, value: &Value) -> Result<Value, String> {
        Ok(match value {
            Value::String(s) if s == "${stop_on_entry}" => Value::Bool(self.stop_on_entry),
            Value::String(s) => Value::String(self.fill(s)?),
            Value::Array(items) => {
                Value::Array(items.iter().map(|v| self.fill_value(v)).collect::<Result<_, _>>()?)
            }
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| Ok((k.clone(), self.fill_value(v)?)))
                    .collect::<Result<_, String>>()?,
            ),
            other => other.clone(),
        })
    }
}

/// What the caller launches.
#[derive(Debug, Clone, Default)]
pub struct LaunchInput {
    /// Absolute.
    pub program: PathBuf,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    pub env: Vec<(String, String)>,
    pub stop_on_entry: bool,
}

/// The `launch` arguments: the definition's defaults, then `mode` for adapters that build
/// packages, then program, cwd, args, env (in the definition's format) and the stop-on-entry
/// key; later wins.
pub fn launch_arguments(
    def: &AdapterDef,
    input: &LaunchInput,
    placeholders: &Placeholders,
) -> Result<Map<String, Value>, String> {
    let mut args = match placeholders.fill_value(&Value::Object(def.launch_defaults.clone()))? {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    if def.directory_program {
        args.insert("mode".into(), Value::String(build_mode(def, &input.program).into()));
    }
    args.insert("program".into(), Value::String(input.program.display().to_string()));
    args.insert("cwd".into(), Value::String(input.cwd.display().to_string()));
    if !input.args.is_empty() {
        args.insert("args".into(), serde_json::json!(input.args));
    }
    if !input.env.is_empty() {
        args.insert("env".into(), env_value(def.env_format, &input.env));
    }
    if let Some(StopOnEntry::Key { key }) = &def.stop_on_entry {
        args.insert(key.clone(), Value::Bool(input.stop_on_entry));
    }
    Ok(args)
}

/// Adapters that build packages take sources and directories in `debug` mode, and a built
/// binary in `exec` mode.
fn build_mode(def: &AdapterDef, program: &Path) -> &'static str {
    let ext = program.extension().map(|e| format!(".{}", e.to_string_lossy().to_lowercase()));
    let is_source = ext.is_some_and(|ext| def.extensions.contains(&ext));
    if program.is_dir() || is_source { "debug" } else { "exec" }
}

fn env_value(format: EnvFormat, env: &[(String, String)]) -> Value {
    match format {
        EnvFormat::Map => {
            Value::Object(env.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect())
        }
        EnvFormat::List => {
            Value::Array(env.iter().map(|(k, v)| Value::String(format!("{k}={v}"))).collect())
        }
    }
}

/// How to start one adapter process.
#[derive(Debug, Clone)]
pub struct AdapterSpawn {
    /// The chosen `command` alternative with its program resolved, then the definition's
    /// `args`; placeholders still in place.
    pub argv: Vec<String>,
    pub cwd: PathBuf,
    /// The adapter's complete environment.
    pub env: Vec<(OsString, OsString)>,
    pub placeholders: Placeholders,
    pub deadline: Instant,
    /// Names the Unix socket (`dap-<session>-…`).
    pub session: String,
}

/// A started adapter; `socket` (for Unix transports) is removed when this is dropped.
#[derive(Debug)]
pub struct StartedAdapter {
    pub connection: Connection,
    pub process: AdapterProcess,
    pub socket: Option<SocketPath>,
}

/// Starts the adapter over its definition's transport.
pub async fn spawn_adapter(
    supervisor: &Supervisor,
    def: &AdapterDef,
    spawn: &AdapterSpawn,
) -> Result<StartedAdapter, TransportError> {
    let build = |placeholders: &Placeholders| -> Result<AdapterCommand, TransportError> {
        let argv = placeholders.fill_argv(&spawn.argv).map_err(|problem| TransportError::Io {
            adapter: def.name.clone(),
            what: "filling its command line".into(),
            source: std::io::Error::other(problem),
        })?;
        Ok(command(def, &argv, spawn))
    };
    let mut placeholders = spawn.placeholders.clone();
    placeholders.host = def.host.clone();
    let (connection, process, socket) = match def.transport {
        TransportKind::Stdio => {
            let (c, p) = transport::spawn_stdio(supervisor, &build(&placeholders)?).await?;
            (c, p, None)
        }
        // Each transport value is known only once the transport has it: the command line is
        // checked with a stand-in first, so filling it with the real value cannot fail.
        TransportKind::Tcp => {
            let checked = build(&Placeholders { port: Some(0), ..placeholders.clone() })?;
            let make = |port: u16| {
                let filled = Placeholders { port: Some(port), ..placeholders.clone() };
                build(&filled).unwrap_or_else(|_| checked.clone())
            };
            let (c, p) = transport::spawn_tcp(supervisor, make, &def.host, spawn.deadline).await?;
            (c, p, None)
        }
        TransportKind::TcpDial => {
            let dummy = Some("127.0.0.1:1".to_string());
            let checked = build(&Placeholders { client_addr: dummy, ..placeholders.clone() })?;
            let make = |addr: std::net::SocketAddr| {
                let filled =
                    Placeholders { client_addr: Some(addr.to_string()), ..placeholders.clone() };
                build(&filled).unwrap_or(checked)
            };
            let (c, p) = transport::spawn_tcp_dial(supervisor, make, spawn.deadline).await?;
            (c, p, None)
        }
        TransportKind::Unix => {
            let socket =
                SocketPath::new(supervisor.run_dir(), &spawn.session).map_err(|source| {
                    TransportError::Io {
                        adapter: def.name.clone(),
                        what: "making a private socket directory".into(),
                        source,
                    }
                })?;
            placeholders.socket = Some(socket.path().display().to_string());
            let cmd = build(&placeholders)?;
            let path = socket.path().to_path_buf();
            let (c, p) = transport::spawn_unix(supervisor, |_| cmd, path, spawn.deadline).await?;
            (c, p, Some(socket))
        }
    };
    Ok(StartedAdapter { connection, process, socket })
}

fn command(def: &AdapterDef, argv: &[String], spawn: &AdapterSpawn) -> AdapterCommand {
    AdapterCommand {
        name: def.name.clone(),
        program: PathBuf::from(argv.first().cloned().unwrap_or_default()),
        args: argv.iter().skip(1).map(OsString::from).collect(),
        cwd: spawn.cwd.clone(),
        env: spawn.env.clone(),
    }
}

#[cfg(test)]
#[path = "launch_tests.rs"]
mod tests;
