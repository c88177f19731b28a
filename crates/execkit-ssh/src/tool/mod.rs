//! The `ssh` tool on the shape every execkit tool has: params from `execkit-protocol`,
//! [`SshToolConfig`] from the Toolkit's lookup, `request` resolves and clamps, [`SshRunner`]
//! runs one host or a group through the [`crate::SshClient`], and `result` turns the typed
//! outcome into the ToolResult. Output streams into the shared OutputSink and its artifact.

mod config;
mod request;
mod result;
mod runner;

pub use config::SshToolConfig;
pub use runner::{SshDeps, SshRunner};
