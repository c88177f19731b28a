//! Custom adapters from `dap.json` files, layered over the built-ins: `~/.execkit/dap.json`,
//! then `<project root>/.execkit/dap.json`. Per name, objects merge key by key (a `null`
//! deletes the key), arrays and scalars replace; `"enabled": false` hides a definition; a new
//! name needs `command`. An entry that does not check is skipped with a warning, so the layer
//! below stays in force.

use std::path::{Path, PathBuf};

use execkit_dap::adapters::{self, AdapterDef};
use serde_json::{Map, Value};

/// The largest `dap.json` read.
const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// The keys a definition may have (anything else is warned about and dropped).
const KNOWN_KEYS: &[&str] = &[
    "name",
    "languages",
    "extensions",
    "root_markers",
    "shebang",
    "native",
    "command",
    "args",
    "transport",
    "host",
    "directory_program",
    "launch_request",
    "stop_on_entry",
    "env_format",
    "launch_defaults",
    "attach_defaults",
    "connect_defaults",
    "available",
    "install_hint",
    "quirks",
    "ci",
];

/// The definitions in force, most specific layer first, and the warnings of the files read.
pub fn layered(home: Option<&Path>, project_root: &Path) -> (Vec<AdapterDef>, Vec<String>) {
    let mut entries: Vec<(String, Value, u8)> = adapters::builtin_sources()
        .iter()
        .filter_map(|(name, text)| Some((name.to_string(), serde_json::from_str(text).ok()?, 0)))
        .collect();
    let mut warnings = Vec::new();
    let files =
        [home.map(|h| h.join(".execkit/dap.json")), Some(project_root.join(".execkit/dap.json"))];
    for (rank, file) in files.into_iter().flatten().enumerate() {
        if file.exists() {
            apply_file(&file, rank as u8 + 1, &mut entries, &mut warnings);
        }
    }
    let mut defs: Vec<(u8, AdapterDef)> = Vec::new();
    for (name, value, rank) in entries {
        if value.get("enabled") == Some(&Value::Bool(false)) {
            continue;
        }
        let mut value = value;
        if let Some(object) = value.as_object_mut() {
            object.remove("enabled");
        }
        match adapters::parse_definition(&name, &value.to_string()) {
            Ok(def) => defs.push((rank, def)),
            Err(err) => warnings.push(format!("adapter definition {err}")),
        }
    }
    // Stable: within a layer the built-in order stands.
    defs.sort_by_key(|(rank, _)| std::cmp::Reverse(*rank));
    (defs.into_iter().map(|(_, def)| def).collect(), warnings)
}

fn apply_file(
    file: &Path,
    rank: u8,
    entries: &mut Vec<(String, Value, u8)>,
    warnings: &mut Vec<String>,
) {
    let shown = file.display().to_string();
    let text = match std::fs::metadata(file) {
        Ok(meta) if meta.len() > MAX_FILE_BYTES => {
            return warnings.push(format!("dap.json {shown}: larger than 1 MiB; ignored"));
        }
        _ => match std::fs::read_to_string(file) {
            Ok(text) => text,
            Err(err) => return warnings.push(format!("dap.json {shown}: {err}")),
        },
    };
    let adapters = match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(mut root)) => match root.remove("adapters") {
            Some(Value::Object(adapters)) => adapters,
            _ => return warnings.push(format!("dap.json {shown}: needs an \"adapters\" object")),
        },
        Ok(_) => return warnings.push(format!("dap.json {shown}: not a JSON object")),
        Err(err) => return warnings.push(format!("dap.json {shown}: {err}")),
    };
    let dir = file.parent().unwrap_or(Path::new("/")).to_path_buf();
    for (name, entry) in adapters {
        let warn = |problem: String| format!("dap.json {shown}: adapter \"{name}\": {problem}");
        let Value::Object(entry) = entry else {
            warnings.push(warn("not an object".into()));
            continue;
        };
        let entry = known_keys_only(entry, &mut |key| {
            warnings.push(warn(format!("unknown key \"{key}\"")))
        });
        let existing = entries.iter().position(|(n, _, _)| *n == name);
        let mut merged = match existing {
            Some(at) => merge(entries[at].1.clone(), Value::Object(entry)),
            None if !entry.contains_key("command") => {
                warnings.push(warn("a new adapter needs \"command\"".into()));
                continue;
            }
            None => Value::Object(entry),
        };
        merged["name"] = Value::String(name.clone());
        resolve_relative_commands(&mut merged, &dir);
        let mut checked = merged.clone();
        if let Some(object) = checked.as_object_mut() {
            object.remove("enabled");
        }
        if let Err(err) = adapters::parse_definition(&name, &checked.to_string()) {
            warnings.push(warn(err.problem));
            continue;
        }
        match existing {
            Some(at) => entries[at] = (name, merged, rank),
            None => entries.push((name, merged, rank)),
        }
    }
}

fn known_keys_only(entry: Map<String, Value>, warn: &mut dyn FnMut(&str)) -> Map<String, Value> {
    entry
        .into_iter()
        .filter(|(key, _)| {
            let known = KNOWN_KEYS.contains(&key.as_str()) || key == "enabled";
            if !known {
                warn(key);
            }
            known
        })
        .collect()
}

/// Objects merge key by key with `null` deleting; anything else replaces.
pub fn merge(base: Value, over: Value) -> Value {
    match (base, over) {
        (Value::Object(mut base), Value::Object(over)) => {
            for (key, value) in over {
                if value.is_null() {
                    base.remove(&key);
                    continue;
                }
                let merged = match base.remove(&key) {
                    Some(old) => merge(old, value),
                    None => value,
                };
                base.insert(key, merged);
            }
            Value::Object(base)
        }
        (_, over) => over,
    }
}

/// `./x` and `../x` as a command's program are relative to the `dap.json` that names them.
fn resolve_relative_commands(def: &mut Value, dir: &Path) {
    let Some(commands) = def.get_mut("command").and_then(Value::as_array_mut) else { return };
    for argv in commands.iter_mut().filter_map(Value::as_array_mut) {
        let Some(Value::String(program)) = argv.first_mut() else { continue };
        if program.starts_with("./") || program.starts_with("../") {
            *program = PathBuf::from(dir).join(&*program).display().to_string();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn project(text: &str) -> (tempfile::TempDir, Vec<AdapterDef>, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".execkit")).unwrap();
        std::fs::write(dir.path().join(".execkit/dap.json"), text).unwrap();
        let (defs, warnings) = layered(None, dir.path());
        (dir, defs, warnings)
    }

    #[test]
    fn merge_is_per_key_with_null_deleting() {
        let merged = merge(
            json!({"a": {"x": 1, "y": 2}, "b": [1]}),
            json!({"a": {"y": null, "z": 3}, "b": [2]}),
        );
        assert_eq!(merged, json!({"a": {"x": 1, "z": 3}, "b": [2]}));
    }

    #[test]
    fn a_project_adapter_comes_first_and_overrides_merge() {
        let text = r#"{"adapters": {
            "mydbg": {"command": [["./bin/mydbg"]], "extensions": [".py"], "install_hint": "build it"},
            "dlv": {"launch_defaults": {"showLog": true}},
            "gdb": {"enabled": false}
        }}"#;
        let (dir, defs, warnings) = project(text);
        assert!(warnings.is_empty(), "{warnings:?}");
        let at = |name: &str| defs.iter().position(|d| d.name == name).unwrap();
        assert!(at("mydbg") < at("debugpy"), "a project adapter outranks the built-in");
        assert_eq!(
            defs[at("mydbg")].command[0][0],
            dir.path().join(".execkit/./bin/mydbg").display().to_string()
        );
        let dlv = defs.iter().find(|d| d.name == "dlv").unwrap();
        assert_eq!(dlv.launch_defaults["showLog"], json!(true));
        assert_eq!(dlv.transport, execkit_dap::adapters::TransportKind::TcpDial);
        assert!(!defs.iter().any(|d| d.name == "gdb"));
    }

    #[test]
    fn invalid_entries_are_skipped_with_a_warning() {
        let text = r#"{"adapters": {
            "nocmd": {"extensions": [".x"]},
            "dlv": {"transport": "pigeon"},
            "lldb-dap": {"colour": "blue"}
        }}"#;
        let (dir, defs, warnings) = project(text);
        let path = dir.path().join(".execkit/dap.json").display().to_string();
        assert!(
            warnings.contains(&format!(
                "dap.json {path}: adapter \"nocmd\": a new adapter needs \"command\""
            )),
            "{warnings:?}"
        );
        assert!(
            warnings.iter().any(|w| w.contains("adapter \"dlv\": unknown variant `pigeon`")),
            "{warnings:?}"
        );
        assert!(
            warnings.contains(&format!(
                "dap.json {path}: adapter \"lldb-dap\": unknown key \"colour\""
            )),
            "{warnings:?}"
        );
        let dlv = defs.iter().find(|d| d.name == "dlv").unwrap();
        assert_eq!(dlv.transport, execkit_dap::adapters::TransportKind::TcpDial);
        let (_, _, warnings) = project("{not json");
        assert!(warnings[0].contains("dap.json "), "{warnings:?}");
    }
}
