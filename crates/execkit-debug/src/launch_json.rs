//! `launch_config`: a named configuration of `<project root>/.vscode/launch.json` (comments and
//! trailing commas allowed), with its block for this OS merged, its `type` mapped to an
//! adapter and its variables substituted. `preLaunchTask` is not run, and the result says so.

use std::path::Path;

use serde_json::{Map, Value};

use crate::custom::merge;

/// A configuration ready to launch.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchConfig {
    pub adapter: String,
    /// The configuration's own keys (name, type, request, OS blocks and preLaunchTask removed).
    pub arguments: Map<String, Value>,
    pub notes: Vec<String>,
}

/// What variable substitution knows.
pub struct Vars<'a> {
    pub root: &'a Path,
    pub home: Option<&'a str>,
    pub cwd: &'a Path,
    pub env: &'a dyn Fn(&str) -> Option<String>,
    pub pid: Option<i64>,
}

/// Reads and prepares configuration `name` for `request` (`launch` or `attach`).
pub fn load(name: &str, request: &str, vars: &Vars<'_>) -> Result<LaunchConfig, String> {
    let path = vars.root.join(".vscode/launch.json");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("Cannot read {}: {e}", path.display()))?;
    let root: Value = serde_json::from_str(&strip_jsonc(&text))
        .map_err(|e| format!("{} is not valid JSON: {e}", path.display()))?;
    let configs = root.get("configurations").and_then(Value::as_array).cloned().unwrap_or_default();
    let names: Vec<&str> = configs.iter().filter_map(|c| c.get("name")?.as_str()).collect();
    let Some(config) = configs.iter().find(|c| c.get("name").and_then(Value::as_str) == Some(name))
    else {
        return Err(format!(
            "launch.json has no configuration \"{name}\"; configurations: {}.",
            names.join(", ")
        ));
    };
    let os = if cfg!(target_os = "macos") { "osx" } else { "linux" };
    let mut config = config.clone();
    if let Some(block) = config.get(os).cloned() {
        config = merge(config, block);
    }
    let Value::Object(mut config) = config else {
        return Err(format!("launch.json configuration \"{name}\" is not an object"));
    };
    let kind = config.get("type").and_then(Value::as_str).unwrap_or("").to_string();
    let adapter = adapter_for(&kind, &config)
        .ok_or_else(|| format!("launch.json configuration \"{name}\" has type \"{kind}\", which execkit has no adapter for."))?;
    let wanted = config.get("request").and_then(Value::as_str).unwrap_or("launch").to_string();
    if wanted != request {
        return Err(format!(
            "launch.json configuration \"{name}\" is an {wanted} configuration; use action \"{wanted}\""
        ));
    }
    let mut notes = Vec::new();
    if let Some(task) = config.get("preLaunchTask").and_then(Value::as_str) {
        notes.push(format!("preLaunchTask \"{task}\" was not run."));
    }
    for key in ["name", "type", "request", "preLaunchTask", "linux", "osx", "windows"] {
        config.remove(key);
    }
    let arguments = match substitute(&Value::Object(config), vars).map_err(|var| {
        format!(
            "launch.json configuration \"{name}\" uses ${{{var}}}, which execkit cannot resolve."
        )
    })? {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    Ok(LaunchConfig { adapter: adapter.to_string(), arguments, notes })
}

fn adapter_for(kind: &str, config: &Map<String, Value>) -> Option<&'static str> {
    Some(match kind {
        "debugpy" | "python" => "debugpy",
        "go" => "dlv",
        "lldb-dap" => "lldb-dap",
        "lldb" => "codelldb",
        "gdb" => "gdb",
        "cppdbg" if config.get("MIMode").and_then(Value::as_str) == Some("gdb") => "gdb",
        "pwa-node" | "node" => "js-debug",
        "coreclr" => "netcoredbg",
        "rdbg" => "rdbg",
        _ => return None,
    })
}

/// Substitutes every `${…}` in the strings of `value`; `Err(name)` for one it cannot.
fn substitute(value: &Value, vars: &Vars<'_>) -> Result<Value, String> {
    Ok(match value {
        Value::String(s) => Value::String(substitute_str(s, vars)?),
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| substitute(v, vars)).collect::<Result<_, _>>()?)
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| Ok((k.clone(), substitute(v, vars)?)))
                .collect::<Result<_, String>>()?,
        ),
        other => other.clone(),
    })
}

fn substitute_str(text: &str, vars: &Vars<'_>) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start..].find('}') else { break };
        let name = &rest[start + 2..start + len];
        let root = vars.root.display().to_string();
        let value = match name {
            "workspaceFolder" => root,
            "workspaceFolderBasename" => {
                vars.root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
            }
            "userHome" => vars.home.ok_or_else(|| name.to_string())?.to_string(),
            "cwd" => vars.cwd.display().to_string(),
            "pathSeparator" | "/" => "/".to_string(),
            "command:pickProcess" => vars.pid.ok_or_else(|| name.to_string())?.to_string(),
            other => match other.strip_prefix("env:") {
                Some(var) => (vars.env)(var).unwrap_or_default(),
                None => return Err(other.to_string()),
            },
        };
        out.push_str(&rest[..start]);
        out.push_str(&value);
        rest = &rest[start + len + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// JSON with `//` and `/* */` comments and trailing commas, made strict; strings are kept.
pub fn strip_jsonc(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let (mut i, mut in_string) = (0, false);
    while i < chars.len() {
        let c = chars[i];
        if in_string {
            out.push(c);
            if c == '\\' && i + 1 < chars.len() {
                out.push(chars[i + 1]);
                i += 1;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        } else if c == '/' && chars.get(i + 1) == Some(&'*') {
            i += 2;
            while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                i += 1;
            }
            i += 2;
            continue;
        } else if c == ',' && next_significant(&chars, i + 1).is_some_and(|n| n == '}' || n == ']')
        {
            // A trailing comma: dropped.
        } else {
            out.push(c);
        }
        i += 1;
    }
    out
}

/// The next character that is not whitespace or inside a comment.
fn next_significant(chars: &[char], mut i: usize) -> Option<char> {
    while i < chars.len() {
        match chars[i] {
            c if c.is_whitespace() => i += 1,
            '/' if chars.get(i + 1) == Some(&'/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if chars.get(i + 1) == Some(&'*') => {
                i += 2;
                while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                    i += 1;
                }
                i += 2;
            }
            c => return Some(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAUNCH: &str = r#"{
        // comments are allowed
        "version": "0.2.0",
        "configurations": [
            {"name": "Run calc", "type": "debugpy", "request": "launch",
             "program": "${workspaceFolder}${/}calc.py", /* inline */ "url": "http://x//y",
             "preLaunchTask": "build", "linux": {"env": {"A": "1"}},},
            {"name": "Attach", "type": "python", "request": "attach"},
            {"name": "Input", "type": "go", "request": "launch", "program": "${input:x}"},
        ],
    }"#;

    fn load_in(name: &str, request: &str) -> Result<LaunchConfig, String> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".vscode")).unwrap();
        std::fs::write(dir.path().join(".vscode/launch.json"), LAUNCH).unwrap();
        let env = |_: &str| None;
        let vars = Vars {
            root: Path::new("/proj"),
            home: None,
            cwd: Path::new("/proj"),
            env: &env,
            pid: None,
        };
        let vars = Vars { root: dir.path(), ..vars };
        load(name, request, &vars).map(|mut c| {
            // The temporary root, normalised for the assertion.
            let program = c.arguments["program"]
                .as_str()
                .unwrap_or("")
                .replace(&dir.path().display().to_string(), "/proj");
            c.arguments.insert("program".into(), Value::String(program));
            c
        })
    }

    #[test]
    fn a_jsonc_configuration_is_read_merged_and_substituted() {
        let config = load_in("Run calc", "launch").unwrap();
        assert_eq!(config.adapter, "debugpy");
        assert_eq!(config.arguments["program"], "/proj/calc.py");
        assert_eq!(config.arguments["url"], "http://x//y");
        assert_eq!(config.arguments["env"]["A"], "1");
        assert!(!config.arguments.contains_key("linux") && !config.arguments.contains_key("type"));
        assert_eq!(config.notes, ["preLaunchTask \"build\" was not run."]);
    }

    #[test]
    fn errors_name_what_is_wrong() {
        assert_eq!(
            load_in("Attach", "launch").unwrap_err(),
            "launch.json configuration \"Attach\" is an attach configuration; use action \"attach\""
        );
        assert_eq!(
            load_in("Input", "launch").unwrap_err(),
            "launch.json configuration \"Input\" uses ${input:x}, which execkit cannot resolve."
        );
        assert_eq!(
            load_in("Nope", "launch").unwrap_err(),
            "launch.json has no configuration \"Nope\"; configurations: Run calc, Attach, Input."
        );
    }
}
