//! `echo`: the example tool of crates/README.md's "Adding a tool", compiled only for tests.
//!
//! It follows the checklist exactly as a tool crate would (config, request, runner, result),
//! and the Toolkit wires it with one `#[cfg(test)]` line per dispatcher table. Its tests prove
//! that a tool added this way is listed, dispatched, configured, shown in doctor and closed.

mod config;
mod request;
mod result;
mod runner;

pub use config::EchoConfig;
pub use request::EchoParams;
pub use runner::{EchoDeps, EchoRunner};

#[cfg(test)]
mod tests;
