//! The execkit ssh runner: one command on a host named in JSON configuration, over OpenSSH
//! master connections that outlive the call and the process.
//!
//! Shape: [`config`] turns JSON files into validated [`HostEntry`]s (warnings, never
//! errors). The system `ssh` starts one master per entry on a socket in a private control
//! directory, with ControlPersist, so later calls and later processes reuse it. Commands open
//! sessions on that socket with the `openssh` crate's native mux client, so no ssh process is
//! spawned per command; process-mux aimed at `none:9` is the fallback. Neither can fall back
//! to a fresh login, and a per-host channel cap keeps the server's session limit from being
//! reached by this client at all. Every local process starts through `execkit-process`.
//!
//! [`tool`] is the `ssh` tool on top: params, knob, runner and result, with each host's
//! output streamed into the shared OutputSink and its artifact.

mod args;
mod checks;
mod client;
mod collect;
mod compat;
pub mod config;
mod control;
mod describe;
mod environment;
mod error;
mod exec;
mod group;
mod keys;
mod local;
mod master;
mod probe;
mod run;
mod session;
pub mod tool;
mod until;
mod wrap;

pub use client::{MuxClient, SshClient, SshOptions};
pub use collect::{Collector, SinkFactory};
pub use config::{Compat, HostConfig, HostEntry, Shell, SshConfigFile};
pub use control::{ControlDir, MAX_SOCKET_PATH, choose_control_dir, socket_path};
pub use describe::TOOL_TEXT;
pub use environment::Environment;
pub use error::SshError;
pub use group::{
    GroupRequest, HostResult, MAX_GROUP_HOSTS, OutputFor, PARALLEL_DEFAULT, PARALLEL_MAX,
    group_summary,
};
pub use master::MuxUse;
pub use probe::{HostInfo, ProbeSource, parse_probe};
pub use run::{MAX_COMMAND_BYTES, RunEnd, RunOutcome, RunRequest};
pub use until::{Stop, Until};
pub use wrap::{Wrapper, wrap};
