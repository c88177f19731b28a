//! execkit-dap against real adapters (debugpy, lldb-dap-19, dlv) and a scripted fake adapter
//! for fault injection. A missing adapter skips its test with a printed reason; with
//! `EXECKIT_DAP_REQUIRE_ADAPTERS=1` (CI) it fails instead.

// Test helpers outside #[test] functions panic on purpose and print skip reasons.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]
// The tests find adapters on this machine's PATH and read CI switches from their own
// environment; the rule that configuration comes through a Lookup is for library code.
#![allow(clippy::disallowed_methods)]

mod autodetect;
mod common;
mod debugpy;
mod delve;
mod faults;
mod lldb;
#[path = "../support/programs.rs"]
mod programs;
mod transports;
