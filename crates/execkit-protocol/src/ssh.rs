//! Params of the `ssh` tool (spec-ssh.md, call surface and host groups).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::args::FieldHints;

/// Arguments of one `ssh` call, as the caller sent them. Exactly one of `host` and `hosts`;
/// the tool crate checks that and everything else before connecting.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SshParams {
    /// A configured host name (listed in this tool's description), never an address or
    /// user@host.
    #[serde(default)]
    pub host: Option<String>,
    /// Run on several configured hosts or groups at once instead of `host`: one section per
    /// host, in configuration order, and a summary line.
    #[serde(default)]
    pub hosts: Option<Vec<String>>,
    /// The command for the remote login shell. No PTY and no stdin.
    pub command: String,
    /// Absolute remote directory to run in; `~` is not expanded. Default: the login
    /// directory.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Seconds before the command is stopped, on each host. Default 60, allowed 1-3600; 0
    /// means the longest allowed.
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub timeout: Option<Value>,
    /// With `hosts`: how many hosts run at once. Default 4, allowed 1-16.
    #[serde(default)]
    pub parallel: Option<u64>,
}

impl FieldHints for SshParams {
    fn hint(field: &str) -> Option<&'static str> {
        (field == "command").then_some("the command to run on the remote host")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_params;
    use serde_json::json;

    #[test]
    fn fields_and_errors() {
        let ok = parse_params::<SshParams>(json!({"host": "web", "command": "uptime"})).unwrap();
        assert_eq!((ok.host.as_deref(), ok.command.as_str()), (Some("web"), "uptime"));
        let err = |v: Value| parse_params::<SshParams>(v).unwrap_err().to_string();
        assert_eq!(
            err(json!({"host": "web"})),
            "Invalid argument \"command\": missing (the command to run on the remote host)"
        );
        assert_eq!(
            err(json!({"host": "web", "command": "x", "user": "root"})),
            "Invalid argument \"user\": unknown field; expected one of host, hosts, command, \
             cwd, timeout, parallel"
        );
    }
}
