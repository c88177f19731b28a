//! execkit-dap against real adapters (debugpy, lldb-dap-19, dlv) and a scripted fake adapter
//! for fault injection. A missing adapter skips its test with a printed reason; with
//! `EXECKIT_DAP_REQUIRE_ADAPTERS=1` (CI) it fails instead.

// Test helpers outside #[test] functions panic on purpose and print skip reasons.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

mod autodetect;
mod common;
mod debugpy;
mod delve;
mod faults;
mod lldb;
mod transports;
