//! Params of the `bash` tool (spec-bash.md B1).

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::args::{FieldHints, describe_value};

/// Arguments of one `bash` call, as the caller sent them. Resolution (clamping, cwd,
/// normalisation) happens in the tool crate.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashParams {
    /// The shell command to run with `bash -c`. Nothing persists between calls: pass `cwd`
    /// (or start with `cd dir &&`) instead of relying on an earlier `cd`.
    pub command: String,
    /// Working directory, absolute or relative to the toolkit's directory. `~` expands to $HOME.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Extra environment variables for this command.
    #[serde(default)]
    pub env: Option<IndexMap<String, String>>,
    /// Seconds before the whole process tree is killed. Default 300, allowed 1-3600; 0 means
    /// the longest allowed. With `async`, default 3600 and 0 means no deadline.
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub timeout: Option<Value>,
    /// Show only the first N lines of output (the rest stays in the artifact).
    #[serde(default, deserialize_with = "lines")]
    #[schemars(with = "Option<u64>")]
    pub head: Option<u64>,
    /// Show only the last N lines of output (the rest stays in the artifact).
    #[serde(default, deserialize_with = "lines")]
    #[schemars(with = "Option<u64>")]
    pub tail: Option<u64>,
    /// Run on a pseudo-terminal (for programs that need isatty). Nothing can type into it.
    #[serde(default)]
    pub pty: Option<bool>,
    /// Start as a background job and return its id at once; check it with the `job` tool.
    #[serde(default, rename = "async")]
    pub run_async: Option<bool>,
    /// `require_escalated` asks a person to let this one command run outside the sandbox
    /// (with `justification`); `use_default` (the default) runs it inside.
    #[serde(default)]
    pub sandbox_permissions: Option<SandboxPermissions>,
    /// Why the command must run outside the sandbox, shown to the person asked (at most 500
    /// characters); required with `require_escalated`.
    #[serde(default)]
    pub justification: Option<String>,
}

/// Whether a bash call runs in the sandbox or asks to leave it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SandboxPermissions {
    #[default]
    UseDefault,
    RequireEscalated,
}

impl FieldHints for BashParams {
    fn hint(field: &str) -> Option<&'static str> {
        (field == "command").then_some("the shell command to run")
    }
}

/// A line count: a whole number, 0 or more. `null` counts as absent.
fn lines<'de, D: Deserializer<'de>>(de: D) -> Result<Option<u64>, D::Error> {
    let value = Option::<Value>::deserialize(de)?;
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) if n.as_u64().is_some() => Ok(n.as_u64()),
        Some(Value::Number(n)) if n.as_f64().is_some_and(|f| f >= 0.0 && f.fract() == 0.0) => {
            Ok(n.as_f64().map(|f| f as u64))
        }
        Some(other) => {
            let got = match &other {
                Value::Number(n) => n.to_string(),
                v => describe_value(v),
            };
            Err(serde::de::Error::custom(format!(
                "expected a whole number of lines, 0 or more (got {got})"
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_params;
    use serde_json::json;

    fn err(v: Value) -> String {
        parse_params::<BashParams>(v).unwrap_err().to_string()
    }

    #[test]
    fn spec_messages() {
        assert_eq!(
            err(json!({"command": "x", "head": -3})),
            "Invalid argument \"head\": expected a whole number of lines, 0 or more (got -3)"
        );
        assert_eq!(
            err(json!({"command": "x", "tail": 2.5})),
            "Invalid argument \"tail\": expected a whole number of lines, 0 or more (got 2.5)"
        );
        assert_eq!(
            err(json!({"command": "x", "timout": 5})),
            "Invalid argument \"timout\": unknown field; expected one of command, cwd, env, \
             timeout, head, tail, pty, async, sandbox_permissions, justification"
        );
        let ok =
            parse_params::<BashParams>(json!({"command": "ls", "async": true, "tail": 3})).unwrap();
        assert_eq!(ok.run_async, Some(true));
        assert_eq!(ok.tail, Some(3));
    }
}
