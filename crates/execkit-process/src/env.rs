//! Environment building (spec-output O44–O48): layers, hardening, credential scrub.

use std::ffi::{OsStr, OsString};

use execkit_protocol::ArgError;
use indexmap::IndexMap;

/// Which names and values the scrub removes and keeps (O47).
#[derive(Debug, Clone, Default)]
pub struct ScrubRules {
    /// Names or globs from `EXECKIT_ENV_KEEP` (comma- or whitespace-separated).
    pub keep: Vec<String>,
    /// Extra name patterns from `EXECKIT_ENV_SCRUB_EXTRA`.
    pub extra: Vec<String>,
}

impl ScrubRules {
    pub fn from_lookup(lookup: &dyn Fn(&str) -> Option<String>) -> ScrubRules {
        let _ = lookup;
        todo!()
    }
}

/// An environment under construction, layer by layer (O44). Keeps insertion order.
#[derive(Debug, Clone, Default)]
pub struct EnvBuilder {
    _private: (),
}

impl EnvBuilder {
    /// Layer 1: the inherited environment of this process.
    pub fn inherited() -> EnvBuilder {
        todo!()
    }

    /// Layer 1 from explicit variables (eval kernels' allowlist, tests).
    pub fn from_vars(vars: impl IntoIterator<Item = (OsString, OsString)>) -> EnvBuilder {
        let _ = vars;
        todo!()
    }

    /// Layer 2 without the scrub: shell-state variables and colour forcers.
    pub fn remove_shell_state(&mut self) {
        todo!()
    }

    /// Layer 2's scrub: removes credential-like variables, remembering their names.
    pub fn scrub(&mut self, rules: &ScrubRules) {
        let _ = rules;
        todo!()
    }

    /// Layer 3 (the shell snapshot) and any other plain overlay.
    pub fn overlay(&mut self, vars: impl IntoIterator<Item = (OsString, OsString)>) {
        let _ = vars;
        todo!()
    }

    /// Layer 4: O45 hardening and the O46 locale rule.
    pub fn harden(&mut self) {
        todo!()
    }

    pub fn set(&mut self, name: impl Into<OsString>, value: impl Into<OsString>) {
        let _ = (name, value);
        todo!()
    }

    pub fn remove(&mut self, name: &str) {
        let _ = name;
        todo!()
    }

    pub fn get(&self, name: &str) -> Option<&OsStr> {
        let _ = name;
        todo!()
    }

    /// Names the scrub removed, sorted; never values.
    pub fn scrubbed(&self) -> Vec<String> {
        todo!()
    }

    pub fn into_vars(self) -> Vec<(OsString, OsString)> {
        todo!()
    }
}

/// True when the scrub would remove `name=value` under `rules` (O47).
pub fn is_credential(name: &str, value: &str, rules: &ScrubRules) -> bool {
    let _ = (name, value, rules);
    todo!()
}

/// O48: names, NUL bytes, per-value and total size.
pub fn validate_caller_env(env: &IndexMap<String, String>) -> Result<(), ArgError> {
    let _ = env;
    todo!()
}
