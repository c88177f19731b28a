//! execkit integration tests: real processes, no mocks. One binary, a module per area.

// The whole crate is tests: helpers may panic on broken fixtures, start processes with
// `std::process::Command`, and read `CARGO_BIN_EXE_execkit` and test switches from the
// environment.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

mod artifact_cli;
mod audit;
mod bash;
mod binary;
mod cli;
mod cli_live;
mod debug;
mod eval;
mod job;
mod mcp_raw;
mod output;
mod process;
mod sandbox;
mod sandbox_tty;
mod ssh;
mod support;
mod toolkit;
