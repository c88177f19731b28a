//! Debug adapters as data: one JSON definition per adapter (`adapters/*.json`, embedded at
//! build time), read into typed values and checked once. Code per adapter exists only where
//! data cannot say it; behaviour differences are `quirks` flags, never tests of the name.

use serde::Deserialize;
use serde_json::{Map, Value};

/// How the client reaches the adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TransportKind {
    /// DAP on the adapter's stdin/stdout.
    #[default]
    Stdio,
    /// The adapter listens on `${port}`.
    Tcp,
    /// The adapter connects back to `${client_addr}`.
    TcpDial,
    /// The adapter creates the Unix socket `${socket}`.
    Unix,
}

/// How `launch_config` passes `env`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EnvFormat {
    /// `{"K": "V"}`.
    #[default]
    Map,
    /// `["K=V"]` (lldb-dap).
    List,
}

/// How stopping at entry is asked for.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum StopOnEntry {
    /// A launch argument set to true or false.
    Key { key: String },
    /// A command-line argument added when *not* stopping (rdbg's `--nonstop`).
    ArgWhenFalse { arg_when_false: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CiStatus {
    Tested,
    AvailabilityOnly,
    Untested,
}

/// What makes the adapter available beyond its command resolving.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Availability {
    /// `${python} -c "import <module>"` must exit 0.
    pub python_module: Option<String>,
    /// The lowest version that speaks DAP (gdb 13 has no DAP).
    pub min_version: Option<String>,
    #[serde(default)]
    pub version_args: Vec<String>,
    /// The first capture group is the version.
    pub version_regex: Option<String>,
}

/// Per-adapter behaviour the core normalises.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Quirks {
    /// The first stop after a stop-on-entry launch comes as `exception` (lldb-dap 19).
    pub entry_stop_as_exception: bool,
    /// Misspelled capability → the real name.
    pub capability_aliases: std::collections::BTreeMap<String, String>,
    /// Exit by signal after a clean `disconnect` is not an error.
    pub abort_on_disconnect_ok: bool,
    /// `supportsRunInTerminalRequest` in `initialize` (codelldb stalls on launch with it).
    pub advertise_run_in_terminal: bool,
    /// A logpoint pauses the program, so `log_message` is refused.
    pub logpoints_pause: bool,
}

impl Default for Quirks {
    fn default() -> Self {
        Quirks {
            entry_stop_as_exception: false,
            capability_aliases: Default::default(),
            abort_on_disconnect_ok: false,
            advertise_run_in_terminal: true,
            logpoints_pause: false,
        }
    }
}

/// One adapter definition.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdapterDef {
    pub name: String,
    #[serde(default)]
    pub languages: Vec<String>,
    /// Lower-case, with the dot.
    #[serde(default)]
    pub extensions: Vec<String>,
    /// File names or `*` globs (`*.csproj`).
    #[serde(default)]
    pub root_markers: Vec<String>,
    /// Interpreter basenames or globs (`python*`).
    #[serde(default)]
    pub shebang: Vec<String>,
    /// Debugs native binaries (ELF, Mach-O, PE without a Go marker).
    #[serde(default)]
    pub native: bool,
    /// Alternative argv prefixes; the first whose program resolves wins.
    pub command: Vec<Vec<String>>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub transport: TransportKind,
    #[serde(default = "default_host")]
    pub host: String,
    /// Accepts a directory as the program (dlv builds packages).
    #[serde(default)]
    pub directory_program: bool,
    /// The request `launch` sends (rdbg launches by attaching to the socket it opened).
    #[serde(default = "default_launch_request")]
    pub launch_request: String,
    pub stop_on_entry: Option<StopOnEntry>,
    #[serde(default)]
    pub env_format: EnvFormat,
    #[serde(default)]
    pub launch_defaults: Map<String, Value>,
    #[serde(default)]
    pub attach_defaults: Map<String, Value>,
    /// Over `attach_defaults` when `attach` connects to a port instead of starting the adapter
    /// (dlv's headless server wants `mode: remote`).
    #[serde(default)]
    pub connect_defaults: Map<String, Value>,
    #[serde(default)]
    pub available: Availability,
    pub install_hint: String,
    #[serde(default)]
    pub quirks: Quirks,
    pub ci: Option<CiStatus>,
}

fn default_host() -> String {
    "127.0.0.1".to_string()
}

fn default_launch_request() -> String {
    "launch".to_string()
}

/// The placeholders a definition may use; `${env:NAME}` is also allowed.
pub const PLACEHOLDERS: &[&str] =
    &["port", "host", "client_addr", "socket", "python", "program", "args", "cwd", "stop_on_entry"];

/// Why a definition was rejected: `adapter "<name>": <problem>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("adapter \"{name}\": {problem}")]
pub struct DefinitionError {
    pub name: String,
    pub problem: String,
}

/// The built-in definitions, in the built-in order (native code: lldb-dap > gdb > codelldb).
const BUILTIN: &[(&str, &str)] = &[
    ("debugpy", include_str!("../adapters/debugpy.json")),
    ("lldb-dap", include_str!("../adapters/lldb-dap.json")),
    ("gdb", include_str!("../adapters/gdb.json")),
    ("codelldb", include_str!("../adapters/codelldb.json")),
    ("dlv", include_str!("../adapters/dlv.json")),
    ("js-debug", include_str!("../adapters/js-debug.json")),
    ("netcoredbg", include_str!("../adapters/netcoredbg.json")),
    ("rdbg", include_str!("../adapters/rdbg.json")),
];

/// The built-in definitions' JSON texts, by name, in the built-in order (the base layer that
/// `dap.json` files are merged onto).
pub fn builtin_sources() -> &'static [(&'static str, &'static str)] {
    BUILTIN
}

/// Every built-in definition. A broken built-in is a build defect, caught by the tests; here
/// it is skipped with its error so the others still work.
pub fn builtin() -> (Vec<AdapterDef>, Vec<DefinitionError>) {
    let mut defs = Vec::new();
    let mut errors = Vec::new();
    for (name, text) in BUILTIN {
        match parse_definition(name, text) {
            Ok(def) => defs.push(def),
            Err(err) => errors.push(err),
        }
    }
    (defs, errors)
}

/// Reads and checks one definition: strict JSON, known keys, a command, known placeholders,
/// `${args}` standing alone.
pub fn parse_definition(name: &str, text: &str) -> Result<AdapterDef, DefinitionError> {
    let error = |problem: String| DefinitionError { name: name.to_string(), problem };
    let def: AdapterDef = serde_json::from_str(text).map_err(|e| error(e.to_string()))?;
    if def.command.is_empty() || def.command.iter().any(Vec::is_empty) {
        return Err(error("\"command\" needs at least one non-empty argv".into()));
    }
    let strings = def.command.iter().flatten().chain(&def.args);
    let defaults = def.launch_defaults.values().chain(def.attach_defaults.values());
    let defaults = defaults.chain(def.connect_defaults.values());
    for text in strings.cloned().chain(defaults.flat_map(json_strings)) {
        check_placeholders(&text).map_err(error)?;
    }
    if let Some(bad) =
        def.extensions.iter().find(|e| !e.starts_with('.') || e.to_lowercase() != **e)
    {
        return Err(error(format!("extension {bad:?} must be lower-case and start with a dot")));
    }
    Ok(def)
}

fn json_strings(value: &Value) -> Vec<String> {
    match value {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items.iter().flat_map(json_strings).collect(),
        Value::Object(map) => map.values().flat_map(json_strings).collect(),
        _ => Vec::new(),
    }
}

/// `Err(problem)` for an unknown placeholder or an `${args}` inside a longer string.
pub fn check_placeholders(text: &str) -> Result<(), String> {
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start..].find('}') else {
            return Err(format!("unterminated placeholder in {text:?}"));
        };
        let name = &rest[start + 2..start + len];
        let known = PLACEHOLDERS.contains(&name)
            || name.strip_prefix("env:").is_some_and(|var| !var.is_empty());
        if !known {
            return Err(format!("unknown placeholder ${{{name}}}"));
        }
        if name == "args" && text != "${args}" {
            return Err("${args} must stand alone as one argument".into());
        }
        rest = &rest[start + len + 1..];
    }
    Ok(())
}

#[cfg(test)]
#[path = "adapters_tests.rs"]
mod tests;
