//! The `debug` tool: a program run under a real debugger through the Debug Adapter Protocol,
//! one root session at a time, driven by one action per call.
//!
//! `execkit-dap` speaks the protocol (framing, transports, correlator, start handshake, the
//! adapter definitions); this crate turns it into tool calls. The shape: `request` checks the
//! params, `runner` serialises calls and lets `pause`/`terminate` end a wait in flight, `start`
//! chooses and starts the adapter, `session` keeps the state that events update as they
//! arrive (a pump task per session), `children` opens the child sessions an adapter asks for
//! with `startDebugging`, `tree` holds them with the root and says which session is the
//! target, `control` runs the program and waits for the next stop anywhere in the tree,
//! `inspect` reads frames and variables, `actions` holds the breakpoint set and the
//! dispatcher, `render` and `redact` make the texts. Every process goes through the
//! Supervisor of `execkit-process`; every wait races the call's deadline.

mod actions;
mod breakpoints;
mod children;
mod config;
mod control;
mod custom;
mod doctor;
mod inspect;
mod launch_json;
mod nodelay;
mod progress;
mod redact;
mod registry;
mod render;
mod request;
mod ring;
mod runner;
mod session;
mod start;
mod terminate;
mod tree;
mod watch;

pub use config::DebugConfig;
pub use redact::Redactor;
pub use runner::{DebugDeps, DebugRunner};
