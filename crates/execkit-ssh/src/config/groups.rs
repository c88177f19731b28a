//! Host groups (spec-ssh S37): names of hosts or other groups, resolved to host names.
//!
//! A group with an unknown member or a cycle is invalid as a whole: running a command on
//! "most of" a group the user named is worse than refusing.

use std::path::{Path, PathBuf};

use indexmap::{IndexMap, IndexSet};
use serde_json::Value;

use super::entry::HostEntry;
use super::expand::expand;
use super::valid_name;
use crate::environment::Environment;

/// One file's groups: (file, name, members as written). The first file defining a name wins.
pub fn collect(
    file: &Path,
    document: &Value,
    env: &Environment,
    out: &mut Vec<(PathBuf, String, Value)>,
    warnings: &mut Vec<String>,
) {
    let f = file.display();
    let groups = match document.get("groups") {
        None => return,
        Some(Value::Object(groups)) => groups,
        Some(_) => {
            warnings.push(format!("{f}: \"groups\" must be an object; groups ignored"));
            return;
        }
    };
    for (name, members) in groups {
        if !valid_name(name) {
            warnings.push(format!("{f}: invalid group name {name:?}; group ignored"));
            continue;
        }
        if let Some((first, _, _)) = out.iter().find(|(_, n, _)| n == name) {
            let other = first.display();
            warnings.push(format!(
                "{f}: group {name:?} is already defined in {other}; this definition is ignored"
            ));
            continue;
        }
        let expanded = match expand_members(members, env) {
            Ok(members) => Value::Array(members.into_iter().map(Value::String).collect()),
            Err(problem) => {
                warnings.push(format!("{f}: group {name:?}: {problem}; group ignored"));
                continue;
            }
        };
        out.push((file.to_path_buf(), name.clone(), expanded));
    }
}

fn expand_members(members: &Value, env: &Environment) -> Result<Vec<String>, String> {
    let Some(list) = members.as_array() else {
        return Err("must be an array of host or group names".into());
    };
    list.iter()
        .map(|member| {
            let text = member.as_str().ok_or("members must be strings")?;
            expand(text, env).map_err(|name| format!("environment variable {name} is not set"))
        })
        .collect()
}

/// Resolves every group to host names; invalid groups become warnings.
pub fn resolve(
    raw: Vec<(PathBuf, String, Value)>,
    hosts: &IndexMap<String, HostEntry>,
    warnings: &mut Vec<String>,
) -> IndexMap<String, Vec<String>> {
    let table: IndexMap<String, (PathBuf, Vec<String>)> = raw
        .into_iter()
        .map(|(file, name, members)| {
            let names = members
                .as_array()
                .map(|m| m.iter().filter_map(Value::as_str).map(str::to_string).collect())
                .unwrap_or_default();
            (name, (file, names))
        })
        .collect();
    let mut resolved = IndexMap::new();
    for (name, (file, _)) in &table {
        if hosts.contains_key(name) {
            let f = file.display();
            warnings.push(format!("{f}: group {name:?} has the name of a host; group ignored"));
            continue;
        }
        let mut out = IndexSet::new();
        match flatten(name, &table, hosts, &mut Vec::new(), &mut out) {
            Ok(()) => {
                resolved.insert(name.clone(), out.into_iter().collect());
            }
            Err(problem) => {
                let f = file.display();
                warnings.push(format!("{f}: group {name:?}: {problem}; group ignored"));
            }
        }
    }
    resolved
}

/// Depth-first expansion; `path` holds the groups being expanded, to find cycles.
fn flatten(
    group: &str,
    table: &IndexMap<String, (PathBuf, Vec<String>)>,
    hosts: &IndexMap<String, HostEntry>,
    path: &mut Vec<String>,
    out: &mut IndexSet<String>,
) -> Result<(), String> {
    if path.iter().any(|g| g == group) {
        path.push(group.to_string());
        return Err(format!("cycle {}", path.join(" -> ")));
    }
    let Some((_, members)) = table.get(group) else {
        return Err(format!("unknown member {group:?}"));
    };
    path.push(group.to_string());
    for member in members {
        if hosts.contains_key(member) {
            out.insert(member.clone());
        } else if table.contains_key(member) {
            flatten(member, table, hosts, path, out)?;
        } else {
            return Err(format!("unknown member {member:?}"));
        }
    }
    path.pop();
    Ok(())
}
