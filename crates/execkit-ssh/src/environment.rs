//! The environment this crate sees: a snapshot handed in by the caller.
//!
//! Nothing here reads the process environment itself, so a Toolkit built with an explicit
//! environment (tests, the Python module) gets exactly that, and the value that expanded a
//! host entry at load is the one spawned ssh processes inherit.

use std::ffi::OsString;
use std::path::PathBuf;

use indexmap::IndexMap;

/// Variables by name, in the order given.
#[derive(Debug, Clone, Default)]
pub struct Environment {
    vars: IndexMap<String, String>,
}

impl Environment {
    pub fn from_vars<K: Into<String>, V: Into<String>>(
        vars: impl IntoIterator<Item = (K, V)>,
    ) -> Environment {
        Environment { vars: vars.into_iter().map(|(k, v)| (k.into(), v.into())).collect() }
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }

    /// A non-empty value, the way `${NAME:-default}` and directory candidates read it.
    pub fn non_empty(&self, name: &str) -> Option<&str> {
        self.get(name).filter(|v| !v.is_empty())
    }

    pub fn set(&mut self, name: impl Into<String>, value: impl Into<String>) {
        self.vars.insert(name.into(), value.into());
    }

    /// `$HOME`, when set to an absolute path.
    pub fn home(&self) -> Option<PathBuf> {
        self.non_empty("HOME").map(PathBuf::from).filter(|p| p.is_absolute())
    }

    pub fn to_os_vars(&self) -> Vec<(OsString, OsString)> {
        self.vars.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))).collect()
    }
}
