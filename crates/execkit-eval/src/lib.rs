//! The execkit `eval` tool: persistent Python and JavaScript kernels spoken to over NDJSON,
//! so an agent keeps variables, imports and loaded data across calls.
//!
//! Shape, from the wire inwards:
//! - [`frame`]: the kernel protocol, host and kernel side, as serde tagged enums. Kernel frames
//!   are untrusted: bounded lines, unknown types tolerated, bad lines counted, never acted on.
//! - [`kernel`]: one kernel process started through `execkit-process` — fds 3/4 carry frames,
//!   fds 1/2 a diagnostic pipe — with one owner task and bounded channels.
//! - `cell`: one cell on one kernel: the frame loop, SIGINT (or an `interrupt` frame) then
//!   SIGKILL on timeout, tool calls back into the dispatcher.
//! - [`pool`]: kernels keyed by (session, language, cwd, executable), at most N live per
//!   language with LRU eviction, idle expiry, the restart policy and loss announcements.
//! - [`backend`]: what one language supplies (its executable, its spawn, its doctor lines);
//!   [`languages`] lists the backends of this build. Nothing above knows a language.
//! - [`python`]: the Python backend — interpreter resolution to a real binary (never a shim),
//!   the embedded kernel files, and the kernel's filtered environment.
//! - [`js`]: the JavaScript backend — finding the `execkit-js-kernel` binary; its busy cells
//!   are stopped by killing the kernel, and the snapshot of the last `ok` cell is restored.
//! - [`EvalRunner`]: the tool — `config` (knobs), `request` (params checked whole), the runner
//!   (hold the session, run cells in order, stop at the first failure), `ending`, `report` and
//!   `result` (typed outcome first, one ToolResult last).

pub mod backend;
mod callart;
mod cell;
mod cell_snapshot;
mod collect;
pub mod config;
mod ending;
pub mod error;
pub mod frame;
pub mod js;
pub mod kernel;
pub mod kernel_env;
pub mod languages;
mod park;
pub mod pool;
pub mod python;
pub mod render;
mod report;
mod request;
mod result;
mod runner;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

pub use cell::{CellEnd, CellObserver, CellOutcome, CellRun, Stop, ToolCallRecord};
pub use config::{Backends, EvalConfig, KernelMode};
pub use park::{Restored, Snapshot};
pub use report::Status;
pub use runner::{EvalDeps, EvalRunner};

/// How prelude `tool.<name>(args)` calls back into the dispatcher.
pub type ToolCallback = Arc<
    dyn Fn(
            String,
            serde_json::Value,
        ) -> Pin<Box<dyn Future<Output = execkit_protocol::ToolResult> + Send>>
        + Send
        + Sync,
>;
