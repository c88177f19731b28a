//! Background jobs: the one job table of a Toolkit and the `job` tool that watches it.
//!
//! A tool that starts background work (bash `async`, processes a command left behind)
//! registers it here and gets a [`JobSlot`]: the job's cancellation token, a place to publish
//! the tail of its output, and the way to record its final result. The table enforces the cap
//! on running jobs, keeps finished ones for a retention period, announces finished jobs once in
//! other tools' results, and serves `job` calls (poll, cancel, list). It knows nothing about
//! processes, so every tool can register work the same way.

mod config;
mod job;
mod render;
mod request;
mod result;
mod runner;
mod table;

pub use config::JobConfig;
pub use job::{JobEnd, JobStart, JobState};
pub use table::{JobSlot, JobTable, TableFull, TailHandle};
