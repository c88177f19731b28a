//! Every way an ssh call can fail before a command's own exit status is known. Each text is
//! one line a model can act on.

/// A call that did not produce a remote exit status.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SshError {
    /// The name is not configured (S2); `configured` is every valid name, in order.
    #[error("{}", unknown_host_text(.name, .configured))]
    UnknownHost { name: String, configured: Vec<String> },
    /// A bad argument, already the full sentence (S3, S4).
    #[error("{0}")]
    Argument(String),
    /// A key-file problem (S13): `problem` follows `SSH key for host "<name>" `.
    #[error("SSH key for host \"{name}\" {problem}")]
    Key { name: String, problem: String },
    /// A value about to reach argv looks like an option or breaks a line (S12).
    #[error("Refusing to connect to {name}: {field} looks like an ssh option")]
    Injection { name: String, field: String },
    /// `ssh` missing or too old (S14).
    #[error("{0}")]
    Client(String),
    /// The master did not finish connecting in time (S19).
    #[error("Connecting to {name} ({host}:{port}) timed out after {secs} s.")]
    ConnectTimeout { name: String, host: String, port: u16, secs: u64 },
    /// Login failed; `detail` is the last meaningful line of the master log, with a hint (S34).
    #[error("Could not connect to {name} ({target}): {detail}")]
    Connect { name: String, target: String, detail: String },
    /// The server refused one more session on the shared connection (S21).
    #[error(
        "{name} refused another session on the shared connection (sshd MaxSessions). Lower max_sessions for this host or raise MaxSessions on the server."
    )]
    SessionRefused { name: String },
    /// The connection dropped after the command may have started (S25).
    #[error("Connection to {name} was lost while the command was running.")]
    Lost { name: String },
    /// The call's whole budget went before a session could start (queue, master start).
    #[error("Timed out after {secs} s before the command could start on {name}.")]
    NotStarted { name: String, secs: u64 },
    /// The caller cancelled before the command started.
    #[error("The call was cancelled before the command started on {name}.")]
    Cancelled { name: String },
    /// A local failure: spawning ssh, the control directory, a mux protocol error.
    #[error("{0}")]
    Local(String),
}

fn unknown_host_text(name: &str, configured: &[String]) -> String {
    if configured.is_empty() {
        format!(
            "Unknown ssh host \"{name}\". No ssh hosts are configured (add them to .execkit/ssh.json)."
        )
    } else {
        format!("Unknown ssh host \"{name}\". Configured hosts: {}.", configured.join(", "))
    }
}

impl SshError {
    /// A budget-spent error names the call's whole timeout, whichever step ran out.
    pub(crate) fn with_budget(self, secs: u64) -> SshError {
        match self {
            SshError::NotStarted { name, .. } => SshError::NotStarted { name, secs },
            other => other,
        }
    }

    /// True when no connection was attempted, so nothing remote can have happened.
    pub fn before_connecting(&self) -> bool {
        matches!(
            self,
            SshError::UnknownHost { .. }
                | SshError::Argument(_)
                | SshError::Key { .. }
                | SshError::Injection { .. }
                | SshError::Client(_)
        )
    }

    /// The one-word kind a group section header uses.
    pub fn is_connect_failure(&self) -> bool {
        matches!(self, SshError::ConnectTimeout { .. } | SshError::Connect { .. })
    }
}
