//! From raw params to a checked request: one host or a group, the timeout clamped, the
//! command and `parallel` checked. Host names, cwd and keys are the client's checks, made
//! before anything is spawned.

use std::time::Duration;

use execkit_output::clamp::{TimeoutPolicy, resolve_timeout};
use execkit_protocol::ArgError;
use execkit_protocol::ssh::SshParams;

use crate::group::{PARALLEL_DEFAULT, PARALLEL_MAX};

/// Where the command runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    One(String),
    /// Host and group names, and how many hosts run at once.
    Many {
        names: Vec<String>,
        parallel: usize,
    },
}

/// A call that passed the argument checks.
#[derive(Debug, Clone)]
pub(crate) struct SshRequest {
    pub target: Target,
    pub command: String,
    pub cwd: Option<String>,
    pub timeout: Duration,
    /// Clamp notices (the timeout's), shown after the output.
    pub notices: Vec<String>,
}

/// Checks `params`; `max_timeout` is `EXECKIT_MAX_TIMEOUT`.
pub(crate) fn resolve(params: SshParams, max_timeout: Option<u64>) -> Result<SshRequest, ArgError> {
    let target = target(params.host, params.hosts, params.parallel)?;
    if params.command.trim().is_empty() {
        return Err(ArgError::new("command", "empty"));
    }
    if let Some(at) = params.command.find('\0') {
        return Err(ArgError::new("command", format!("contains a NUL byte at offset {at}")));
    }
    let timeout = resolve_timeout(params.timeout.as_ref(), TimeoutPolicy::SSH, max_timeout)?;
    let secs = timeout.secs.unwrap_or(TimeoutPolicy::SSH.max_s);
    Ok(SshRequest {
        target,
        command: params.command,
        cwd: params.cwd.filter(|c| !c.is_empty()),
        timeout: Duration::from_secs(secs),
        notices: timeout.notice.into_iter().collect(),
    })
}

fn target(
    host: Option<String>,
    hosts: Option<Vec<String>>,
    parallel: Option<u64>,
) -> Result<Target, ArgError> {
    match (host, hosts) {
        (Some(_), Some(_)) => {
            Err(ArgError::new("hosts", "give either \"host\" or \"hosts\", not both"))
        }
        (None, None) => Err(ArgError::new("host", "missing (a configured host name)")),
        (Some(_), None) if parallel.is_some() => {
            Err(ArgError::new("parallel", "only applies with \"hosts\""))
        }
        (Some(host), None) => Ok(Target::One(host)),
        (None, Some(names)) if names.is_empty() => {
            Err(ArgError::new("hosts", "must name at least one host or group"))
        }
        (None, Some(names)) => {
            let parallel = parallel.unwrap_or(PARALLEL_DEFAULT as u64);
            if !(1..=PARALLEL_MAX as u64).contains(&parallel) {
                let message = format!("must be from 1 to {PARALLEL_MAX} (got {parallel})");
                return Err(ArgError::new("parallel", message));
            }
            Ok(Target::Many { names, parallel: parallel as usize })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(args: serde_json::Value) -> Result<SshRequest, String> {
        let params =
            execkit_protocol::parse_params::<SshParams>(args).map_err(|e| e.to_string())?;
        resolve(params, None).map_err(|e| e.to_string())
    }

    #[test]
    fn targets_and_their_errors() {
        let one = check(json!({"host": "web", "command": "true"})).unwrap();
        assert_eq!((one.target, one.timeout), (Target::One("web".into()), Duration::from_secs(60)));
        let many = check(json!({"hosts": ["all"], "command": "true", "parallel": 16})).unwrap();
        assert_eq!(many.target, Target::Many { names: vec!["all".into()], parallel: 16 });
        let err = |v| check(v).unwrap_err();
        assert_eq!(
            err(json!({"command": "true"})),
            "Invalid argument \"host\": missing (a configured host name)"
        );
        assert_eq!(
            err(json!({"host": "a", "hosts": ["b"], "command": "true"})),
            "Invalid argument \"hosts\": give either \"host\" or \"hosts\", not both"
        );
        assert_eq!(
            err(json!({"hosts": ["a"], "command": "true", "parallel": 17})),
            "Invalid argument \"parallel\": must be from 1 to 16 (got 17)"
        );
        assert_eq!(
            err(json!({"host": "a", "command": "true", "parallel": 2})),
            "Invalid argument \"parallel\": only applies with \"hosts\""
        );
        assert_eq!(
            err(json!({"host": "a", "command": " "})),
            "Invalid argument \"command\": empty"
        );
    }

    #[test]
    fn timeouts_follow_the_shared_clamp() {
        let zero = check(json!({"host": "a", "command": "x", "timeout": 0})).unwrap();
        assert_eq!(zero.timeout, Duration::from_secs(3600));
        assert_eq!(zero.notices.len(), 1);
        let huge = check(json!({"host": "a", "command": "x", "timeout": 1e9})).unwrap();
        assert_eq!((huge.timeout, huge.notices.len()), (Duration::from_secs(3600), 1));
        let negative = check(json!({"host": "a", "command": "x", "timeout": -5})).unwrap_err();
        assert!(negative.starts_with("Invalid argument \"timeout\""), "{negative}");
        let fraction = check(json!({"host": "a", "command": "x", "timeout": 1.2})).unwrap();
        assert_eq!(fraction.timeout, Duration::from_secs(2));
    }
}
