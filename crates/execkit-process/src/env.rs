//! Environment building (spec-output O44–O48): layers, hardening, credential scrub.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use execkit_protocol::ArgError;
use indexmap::IndexMap;

pub use crate::saved_env::{SavedEnvironment, inherited_vars, protect_own_environment};
pub use crate::scrub::{ScrubRules, WITHHELD, is_credential};

/// Shell-state variables that would change how a spawned shell behaves (O44 layer 2).
const SHELL_STATE: &[&str] =
    &["BASH_ENV", "ENV", "PROMPT_COMMAND", "CDPATH", "SHELLOPTS", "BASHOPTS", "GLOBIGNORE"];
/// Exported bash functions (`BASH_FUNC_ls%%=() { …; }`): every bash would define them at start,
/// so an inherited one could replace `ls` or `cd` in every call.
const EXPORTED_FUNCTION_PREFIX: &str = "BASH_FUNC_";
/// Variables that force colour on output the model reads.
const COLOUR_FORCERS: &[&str] = &["FORCE_COLOR", "CLICOLOR_FORCE", "COLORTERM"];

/// O45, except `SSH_ASKPASS`, which depends on the machine.
const HARDENING: &[(&str, &str)] = &[
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    ("MANPAGER", "cat"),
    ("SYSTEMD_PAGER", "cat"),
    ("BAT_PAGER", "cat"),
    ("DELTA_PAGER", "cat"),
    ("GH_PAGER", "cat"),
    ("GLAB_PAGER", "cat"),
    ("PSQL_PAGER", "cat"),
    ("MYSQL_PAGER", "cat"),
    ("HOMEBREW_PAGER", "cat"),
    ("AWS_PAGER", ""),
    ("LESS", "FRX"),
    ("TERM", "dumb"),
    ("NO_COLOR", "1"),
    ("PYTHONUNBUFFERED", "1"),
    ("GIT_EDITOR", "true"),
    ("EDITOR", "true"),
    ("VISUAL", "true"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GCM_INTERACTIVE", "never"),
    ("GH_PROMPT_DISABLED", "1"),
    ("CI", "1"),
    ("DEBIAN_FRONTEND", "noninteractive"),
    ("PIP_NO_INPUT", "1"),
    ("PIP_DISABLE_PIP_VERSION_CHECK", "1"),
    ("TF_INPUT", "0"),
    ("TF_IN_AUTOMATION", "1"),
    ("COMPOSER_NO_INTERACTION", "1"),
    ("CLOUDSDK_CORE_DISABLE_PROMPTS", "1"),
    ("HOMEBREW_NO_AUTO_UPDATE", "1"),
    ("npm_config_yes", "true"),
    ("npm_config_update_notifier", "false"),
    ("npm_config_fund", "false"),
    ("npm_config_audit", "false"),
    ("npm_config_progress", "false"),
    ("PNPM_DISABLE_SELF_UPDATE_CHECK", "true"),
    ("YARN_ENABLE_TELEMETRY", "0"),
    ("YARN_ENABLE_PROGRESS_BARS", "0"),
    ("CARGO_TERM_PROGRESS_WHEN", "never"),
];

/// Linux exec's limit on one `NAME=value` string (MAX_ARG_STRLEN).
const MAX_VALUE_BYTES: usize = 131072;
/// Caller environments beyond this are refused; exec's total limit is far higher, but an
/// environment this large is a mistake, and it eats into the room left for arguments.
const MAX_ENV_BYTES: usize = 1048576;

/// An environment under construction, layer by layer (O44). Keeps insertion order.
#[derive(Debug, Clone, Default)]
pub struct EnvBuilder {
    vars: IndexMap<OsString, OsString>,
    scrubbed: Vec<String>,
}

impl EnvBuilder {
    /// Layer 1: the inherited environment of this process (its saved copy, when the binary
    /// saved one).
    pub fn inherited() -> EnvBuilder {
        EnvBuilder::from_vars(inherited_vars())
    }

    /// Layer 1 from explicit variables (eval kernels' allowlist, tests). A variable whose value
    /// was withheld from the saved environment ([`WITHHELD`]) is left out and counted as
    /// scrubbed: its secret was not kept, so nothing can pass it on.
    pub fn from_vars(vars: impl IntoIterator<Item = (OsString, OsString)>) -> EnvBuilder {
        let mut scrubbed = Vec::new();
        let vars = vars
            .into_iter()
            .filter(|(name, value)| {
                let withheld = value == WITHHELD;
                if withheld {
                    scrubbed.push(name.to_string_lossy().into_owned());
                }
                !withheld
            })
            .collect();
        scrubbed.sort();
        scrubbed.dedup();
        EnvBuilder { vars, scrubbed }
    }

    /// Layer 2 without the scrub: shell-state variables, exported bash functions and colour
    /// forcers.
    pub fn remove_shell_state(&mut self) {
        for name in SHELL_STATE.iter().chain(COLOUR_FORCERS) {
            self.remove(name);
        }
        self.vars
            .retain(|name, _| !name.as_bytes().starts_with(EXPORTED_FUNCTION_PREFIX.as_bytes()));
    }

    /// Layer 2's scrub: removes credential-like variables, remembering their names.
    pub fn scrub(&mut self, rules: &ScrubRules) {
        let mut removed = Vec::new();
        self.vars.retain(|name, value| {
            let name = name.to_string_lossy();
            if is_credential(&name, &value.to_string_lossy(), rules) {
                removed.push(name.into_owned());
                false
            } else {
                true
            }
        });
        self.scrubbed.extend(removed);
        self.scrubbed.sort();
        self.scrubbed.dedup();
    }

    /// Layer 3 (the shell snapshot) and any other plain overlay.
    pub fn overlay(&mut self, vars: impl IntoIterator<Item = (OsString, OsString)>) {
        for (name, value) in vars {
            self.vars.insert(name, value);
        }
    }

    /// Layer 4: O45 hardening and the O46 locale rule.
    pub fn harden(&mut self) {
        for (name, value) in HARDENING {
            self.set(*name, *value);
        }
        if let Some(askpass) =
            ["/usr/bin/false", "/bin/false"].into_iter().find(|p| Path::new(p).exists())
        {
            self.set("SSH_ASKPASS", askpass);
        }
        if ["LANG", "LC_ALL", "LC_CTYPE"].iter().all(|name| self.get(name).is_none()) {
            self.set("LANG", "C.UTF-8");
        }
    }

    pub fn set(&mut self, name: impl Into<OsString>, value: impl Into<OsString>) {
        self.vars.insert(name.into(), value.into());
    }

    pub fn remove(&mut self, name: &str) {
        self.vars.shift_remove(OsStr::new(name));
    }

    pub fn get(&self, name: &str) -> Option<&OsStr> {
        self.vars.get(OsStr::new(name)).map(OsString::as_os_str)
    }

    /// Names the scrub removed, sorted; never values.
    pub fn scrubbed(&self) -> Vec<String> {
        self.scrubbed.clone()
    }

    pub fn into_vars(self) -> Vec<(OsString, OsString)> {
        self.vars.into_iter().collect()
    }
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// O48: names, NUL bytes, per-value and total size.
pub fn validate_caller_env(env: &IndexMap<String, String>) -> Result<(), ArgError> {
    let mut total = 0;
    for (name, value) in env {
        if !valid_name(name) {
            return Err(ArgError::new(
                "env",
                format!(
                    "{name:?} is not a valid variable name (letters, digits, _; not starting with a digit)"
                ),
            ));
        }
        let field = format!("env.{name}");
        if value.contains('\0') {
            return Err(ArgError::new(field, "value contains a NUL byte"));
        }
        if value.len() > MAX_VALUE_BYTES {
            return Err(ArgError::new(
                field,
                format!("value is {} bytes; the limit is {MAX_VALUE_BYTES}", value.len()),
            ));
        }
        // `NAME=value` plus its terminating NUL, as exec counts it.
        total += name.len() + value.len() + 2;
    }
    if total > MAX_ENV_BYTES {
        return Err(ArgError::new(
            "env",
            format!("environment would be {total} bytes; the limit is {MAX_ENV_BYTES}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
#[path = "env_tests.rs"]
mod tests;
