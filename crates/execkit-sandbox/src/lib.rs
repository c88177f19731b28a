//! The sandbox policy of a Toolkit: what every process execkit starts may touch.
//!
//! The person who starts execkit says it once (flags, environment, `.execkit/sandbox.json`,
//! or the library's options, in that order of precedence); [`Policy::resolve`] checks it and
//! canonicalises its paths when the Toolkit starts, and it stays fixed for the Toolkit's life.
//! This crate holds only the policy and how it reads to the model (the description sentence,
//! the `structuredContent.sandbox` report, the one-line explanation of a denial). The kernel
//! enforcement (Landlock, seccomp, namespaces) lives in `execkit-process`, which every spawn
//! goes through, so no tool can start a process outside the policy by accident.

mod denial;
mod options;
mod policy;
mod report;

pub use denial::{Denial, find_denial};
pub use options::{Mode, Network, SandboxOptions};
pub use policy::{Policy, PolicyError, Simulate};
pub use report::{Enforcement, SandboxReport, unavailable_text};
