//! Errors, one enum per stage: starting the transport, one request, the start handshake.

use std::fmt;

/// `\nLast stderr:\n<tail>`, or nothing when the adapter printed nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StderrTail(pub String);

impl fmt::Display for StderrTail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() { Ok(()) } else { write!(f, "\nLast stderr:\n{}", self.0) }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    #[error("Failed to start debug adapter {adapter}: {source}")]
    Spawn {
        adapter: String,
        #[source]
        source: Box<execkit_process::SpawnError>,
    },
    #[error("Debug adapter {adapter}: {what}: {source}")]
    Io {
        adapter: String,
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("Debug adapter {adapter} exited before it accepted a connection ({exit}).{stderr}")]
    ExitedBeforeConnect { adapter: String, exit: String, stderr: StderrTail },
    #[error("Debug adapter {adapter} did not accept a connection on {addr} within {ms} ms.")]
    ConnectTimeout { adapter: String, addr: String, ms: u128 },
}

#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum RequestError {
    #[error("DAP request {command} timed out after {ms} ms.")]
    Timeout { command: String, ms: u128 },
    #[error("DAP request {command} failed: {message}")]
    Failed { command: String, message: String },
    #[error("DAP request {command} returned a body execkit cannot read: {problem}")]
    BadBody { command: String, problem: String },
    #[error("Debug adapter {adapter} exited ({exit}) during {command}.{stderr}")]
    AdapterExited { adapter: String, exit: String, command: String, stderr: StderrTail },
    #[error("The connection to debug adapter {adapter} closed during {command}.")]
    Closed { adapter: String, command: String },
    #[error("Debug adapter {adapter} stopped reading requests; the session was ended.")]
    StoppedReading { adapter: String },
}

#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum HandshakeError {
    #[error(transparent)]
    Request(#[from] RequestError),
    #[error("{} failed: {message}", if *.attach { "Attach" } else { "Launch" })]
    LaunchFailed { attach: bool, message: String },
    #[error("Debug adapter {adapter} sent no \"initialized\" event within {ms} ms.")]
    NoInitialized { adapter: String, ms: u128 },
}
