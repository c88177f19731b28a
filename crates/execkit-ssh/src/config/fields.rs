//! Reading and checking one field of a host entry (spec-ssh S7, S9, S12).
//!
//! Every string is expanded first and checked after, so a value that came from the
//! environment meets the same guards as one written in the file.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::entry::{Compat, Shell, SshConfigFile};
use super::expand::expand;
use crate::environment::Environment;

/// Why an entry is ignored: the text after `host "<name>": `.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError(pub String);

impl FieldError {
    pub fn new(field: &str, problem: impl std::fmt::Display) -> FieldError {
        FieldError(format!("\"{field}\" {problem}"))
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A scalar field as written: numbers, booleans and (expanded) strings.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    Number(serde_json::Number),
    Bool(bool),
    Text(String),
}

/// Reads fields of one entry object.
pub struct Reader<'a> {
    pub object: &'a Map<String, Value>,
    pub env: &'a Environment,
    /// The config file's directory: relative paths resolve against it.
    pub dir: &'a Path,
}

impl Reader<'_> {
    /// A string field, expanded and free of NUL, CR and LF.
    pub fn string(&self, field: &str) -> Result<Option<String>, FieldError> {
        self.string_as(field, field)
    }

    /// Like [`Reader::string`], reported under another field's name (aliases).
    pub fn string_as(&self, field: &str, shown: &str) -> Result<Option<String>, FieldError> {
        match self.scalar_as(field, shown)? {
            None => Ok(None),
            Some(Scalar::Text(text)) => Ok(Some(text)),
            Some(_) => Err(FieldError::new(shown, "must be a string")),
        }
    }

    pub fn scalar(&self, field: &str) -> Result<Option<Scalar>, FieldError> {
        self.scalar_as(field, field)
    }

    fn scalar_as(&self, field: &str, shown: &str) -> Result<Option<Scalar>, FieldError> {
        match self.object.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => Ok(Some(Scalar::Number(n.clone()))),
            Some(Value::Bool(b)) => Ok(Some(Scalar::Bool(*b))),
            Some(Value::String(raw)) => {
                let text = expand(raw, self.env).map_err(|name| {
                    FieldError(format!("environment variable {name} is not set"))
                })?;
                if text.contains(['\0', '\r', '\n']) {
                    return Err(FieldError::new(shown, "must not contain NUL, CR or LF"));
                }
                Ok(Some(Scalar::Text(text)))
            }
            Some(_) => Err(FieldError::new(shown, "must be a string or a number")),
        }
    }

    /// An integer field within `min..=max`, or `default` when absent.
    pub fn bounded(
        &self,
        field: &str,
        min: u64,
        max: u64,
        default: u64,
    ) -> Result<u64, FieldError> {
        match self.scalar(field)? {
            None => Ok(default),
            Some(value) => integer(&value).filter(|n| (min..=max).contains(n)).ok_or_else(|| {
                FieldError::new(
                    field,
                    format!("must be an integer {min}..{max} (got {})", shown(&value)),
                )
            }),
        }
    }

    /// A path: `~` and `~/…` expand to `$HOME`, a relative path resolves against the file's
    /// directory, and the result is absolute.
    pub fn path(&self, field: &str, text: &str) -> Result<PathBuf, FieldError> {
        if text.is_empty() {
            return Err(FieldError::new(field, "must not be empty"));
        }
        let home =
            || self.env.home().ok_or_else(|| FieldError::new(field, "uses ~ but HOME is not set"));
        let path = if text == "~" {
            home()?
        } else if let Some(rest) = text.strip_prefix("~/") {
            home()?.join(rest)
        } else {
            self.dir.join(text)
        };
        Ok(path)
    }

    pub fn ssh_config(&self, text: &str) -> Result<SshConfigFile, FieldError> {
        if text == "none" {
            return Ok(SshConfigFile::None);
        }
        self.path("ssh_config", text).map(SshConfigFile::Path)
    }
}

/// `host`: a DNS name or an address, never an option or a `user@host`.
pub fn host(value: Option<String>) -> Result<String, FieldError> {
    let Some(host) = value.filter(|h| !h.is_empty()) else {
        return Err(FieldError(r#""host" is required"#.into()));
    };
    if host.starts_with('-') {
        return Err(FieldError::new("host", "must not start with \"-\""));
    }
    if host.contains('@') {
        return Err(FieldError::new(
            "host",
            "must not contain \"@\" (put the user in \"username\")",
        ));
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || "._:%[]-".contains(c);
    if let Some(bad) = host.chars().find(|c| !allowed(*c)) {
        return Err(FieldError::new(
            "host",
            format!("contains {bad:?}, which no host name or address has"),
        ));
    }
    let bare = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(&host);
    if bare.is_empty() || bare.contains(['[', ']']) {
        return Err(FieldError::new("host", format!("is not a host name or address: {host}")));
    }
    Ok(bare.to_string())
}

pub fn username(name: String) -> Result<String, FieldError> {
    if name.is_empty() {
        return Err(FieldError::new("username", "must not be empty"));
    }
    if name.starts_with('-') {
        return Err(FieldError::new("username", "must not start with \"-\""));
    }
    if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(FieldError::new(
            "username",
            "must not contain whitespace or control characters",
        ));
    }
    Ok(name)
}

pub fn port(value: Option<Scalar>) -> Result<u16, FieldError> {
    let Some(value) = value else { return Ok(22) };
    integer(&value).and_then(|n| u16::try_from(n).ok()).filter(|n| *n >= 1).ok_or_else(|| {
        FieldError::new("port", format!("must be an integer 1..65535 (got {})", shown(&value)))
    })
}

pub fn compat(value: Option<Scalar>) -> Result<Compat, FieldError> {
    let text = match &value {
        None => return Ok(Compat::Auto),
        Some(Scalar::Bool(true)) => return Ok(Compat::On),
        Some(Scalar::Bool(false)) => return Ok(Compat::Off),
        Some(Scalar::Number(n)) => n.to_string(),
        Some(Scalar::Text(t)) => t.clone(),
    };
    match text.as_str() {
        "true" | "yes" | "1" => Ok(Compat::On),
        "false" | "no" | "0" => Ok(Compat::Off),
        "auto" => Ok(Compat::Auto),
        _ => Err(FieldError::new(
            "compat",
            format!(
                "must be true, false or \"auto\" (got {})",
                value.as_ref().map_or_else(String::new, shown)
            ),
        )),
    }
}

pub fn shell(name: String) -> Result<Shell, FieldError> {
    match name.as_str() {
        "sh" | "bash" | "zsh" | "fish" | "cmd" | "powershell" => {
            Shell::parse(&name).ok_or_else(|| FieldError::new("shell", "is not a known shell"))
        }
        _ => Err(FieldError::new(
            "shell",
            format!("must be one of sh, bash, zsh, fish, cmd, powershell (got {name:?})"),
        )),
    }
}

pub fn proxy_jump(name: String) -> Result<String, FieldError> {
    if super::valid_name(&name) {
        Ok(name)
    } else {
        Err(FieldError::new(
            "proxy_jump",
            format!("must name another configured host (got {name:?})"),
        ))
    }
}

/// An integer from a JSON number or a string of decimal digits (`"22"`, not `"22abc"`).
fn integer(value: &Scalar) -> Option<u64> {
    match value {
        Scalar::Number(n) => n.as_u64(),
        Scalar::Text(t) if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) => t.parse().ok(),
        _ => None,
    }
}

/// A value as the warning quotes it: strings in quotes, numbers and booleans bare.
fn shown(value: &Scalar) -> String {
    match value {
        Scalar::Number(n) => n.to_string(),
        Scalar::Bool(b) => b.to_string(),
        Scalar::Text(t) => format!("{t:?}"),
    }
}
