//! The `bash` tool: one shell command per call, supervised, bounded and explained.
//!
//! Each call is checked and normalised before anything runs ([`request`]: arguments, timeout,
//! the trailing `| tail` and leading `cd` rewrites, the working directory, artifact URIs,
//! rules), then runs as a fresh `bash -c` through `execkit-process` with a hardened, scrubbed
//! environment, its merged output flowing through an `OutputSink`. The result states exactly
//! what happened: the exit code and what it means, a timeout or cancellation, a changed working
//! directory that is not kept, processes left behind, output not shown and where it is kept.
//! Nothing persists between calls, so calls may run concurrently and mean the same whatever
//! ran before them.

mod background;
mod config;
mod cwd;
mod cwd_change;
mod extras;
mod input_wait;
mod jobs;
mod launch;
mod lexer;
mod meaning;
mod normalize;
mod posix_mode;
mod request;
mod result;
mod rules;
mod runner;
mod snapshot;
mod snapshot_cache;
mod snapshot_start;

pub use config::{BashConfig, LingeringPolicy, SnapshotMode};
pub use runner::{BashDeps, BashExtras, BashRunner};
