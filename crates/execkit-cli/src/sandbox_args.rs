//! The sandbox flags every subcommand takes (`--sandbox`, `--network`, `--writable`,
//! `--protect`, `--deny-read`): the highest-precedence source of the Toolkit's policy.
//!
//! They are global, so `execkit mcp --sandbox workspace-write` and `execkit --sandbox
//! read-only doctor` both work, and are handed to every Toolkit the process builds through
//! [`set`] / [`options`] rather than through each subcommand's signature.

use std::path::PathBuf;
use std::sync::OnceLock;

use execkit::SandboxOptions;

/// The flags as parsed; checked when the Toolkit starts, so a bad value names what is accepted.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SandboxArgs {
    /// Confine every process: off (default), read-only or workspace-write.
    #[arg(long, global = true, value_name = "MODE")]
    pub sandbox: Option<String>,
    /// Network of confined processes: off (default; a loopback private to this execkit) or on.
    #[arg(long, global = true, value_name = "on|off")]
    pub network: Option<String>,
    /// Another writable root in workspace-write mode (repeatable).
    #[arg(long, global = true, value_name = "DIR")]
    pub writable: Vec<PathBuf>,
    /// A path kept read-only inside the writable roots (repeatable; .git is always).
    #[arg(long, global = true, value_name = "PATH")]
    pub protect: Vec<PathBuf>,
    /// A path confined processes may not read (repeatable; ~/.ssh and other credentials always).
    #[arg(long = "deny-read", global = true, value_name = "PATH")]
    pub deny_read: Vec<PathBuf>,
}

static OPTIONS: OnceLock<SandboxOptions> = OnceLock::new();

/// Records the flags for every Toolkit this process builds; the first call wins.
pub fn set(args: SandboxArgs) {
    let _ = OPTIONS.set(SandboxOptions {
        mode: args.sandbox,
        network: args.network,
        writable: args.writable,
        protect: args.protect,
        deny_read: args.deny_read,
    });
}

/// The flags' options (none set when [`set`] was never called).
pub fn options() -> SandboxOptions {
    OPTIONS.get().cloned().unwrap_or_default()
}
