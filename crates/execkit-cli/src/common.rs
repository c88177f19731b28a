//! Process-level plumbing shared by the subcommands: the Toolkit, exit statuses, the shutdown
//! signals and stdout.

use std::fmt;
use std::io::Write as _;
use std::path::Path;

use anyhow::Context as _;
use execkit::Toolkit;
use tokio::signal::unix::{Signal, SignalKind, signal};

pub const EXIT_OK: i32 = 0;
/// The tool reported `isError`, or the thing asked for was not found.
pub const EXIT_FAILURE: i32 = 1;
/// Bad arguments: clap uses the same status for its own parse errors.
pub const EXIT_USAGE: i32 = 2;

/// A mistake in how execkit was invoked; exits with [`EXIT_USAGE`].
#[derive(Debug)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Returns a usage error (exit status 2) with `message`.
pub fn usage<T>(message: impl Into<String>) -> anyhow::Result<T> {
    Err(UsageError(message.into()).into())
}

/// Builds the Toolkit of the MCP server: a child subreaper (O36) that pre-warms what its first
/// calls will need.
pub fn toolkit(cwd: Option<&Path>) -> anyhow::Result<Toolkit> {
    build(Toolkit::builder().subreaper(true), cwd)
}

/// Builds the Toolkit of a command-line front end (`call`, `bash`, `eval`, `tools`, `artifact`,
/// `doctor`): as [`toolkit`], but nothing starts before a call needs it, so a call starts only
/// what it uses (no login shell for a call that runs no bash, no kernel for one that runs no
/// code).
pub fn cli_toolkit(cwd: Option<&Path>) -> anyhow::Result<Toolkit> {
    build(Toolkit::builder().subreaper(true).prewarm(false), cwd)
}

/// Builds `builder` with the `--cwd` directory and the sandbox flags.
pub fn build(builder: execkit::ToolkitBuilder, cwd: Option<&Path>) -> anyhow::Result<Toolkit> {
    let mut builder = builder.sandbox(crate::sandbox_args::options());
    if let Some(cwd) = cwd {
        builder = builder.cwd(cwd);
    }
    builder.build().map_err(|reason| anyhow::anyhow!("failed to start the toolkit: {reason}"))
}

/// SIGTERM, SIGINT and SIGHUP: the signals on which execkit closes its Toolkit (O41).
pub struct ShutdownSignals {
    term: Signal,
    int: Signal,
    hup: Signal,
}

impl ShutdownSignals {
    /// Installs the handlers; from here on these signals no longer kill the process outright.
    pub fn install() -> anyhow::Result<Self> {
        let install = |kind: SignalKind, name: &str| {
            signal(kind).with_context(|| format!("failed to install a {name} handler"))
        };
        Ok(ShutdownSignals {
            term: install(SignalKind::terminate(), "SIGTERM")?,
            int: install(SignalKind::interrupt(), "SIGINT")?,
            hup: install(SignalKind::hangup(), "SIGHUP")?,
        })
    }

    /// Waits for the next of the three and returns its number.
    pub async fn recv(&mut self) -> i32 {
        tokio::select! {
            _ = self.term.recv() => libc::SIGTERM,
            _ = self.int.recv() => libc::SIGINT,
            _ = self.hup.recv() => libc::SIGHUP,
        }
    }
}

/// The conventional status of a command stopped by signal `signo`.
pub fn signal_status(signo: i32) -> i32 {
    128 + signo
}

/// Writes to stdout; a closed pipe (`| head`) ends the output quietly.
pub fn write_stdout(bytes: &[u8]) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Err(err) if err.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(err).context("failed to write to stdout")
        }
        _ => Ok(()),
    }
}

/// Writes `text` and a final newline when it has none.
pub fn print_text(text: &str) -> anyhow::Result<()> {
    if text.ends_with('\n') {
        write_stdout(text.as_bytes())
    } else {
        write_stdout(format!("{text}\n").as_bytes())
    }
}
