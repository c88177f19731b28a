//! Wire types shared by every execkit front end and tool.
//!
//! This crate holds data only: the per-tool `Params` the caller sends, the MCP-shaped
//! [`ToolResult`] every tool returns, content blocks, progress events, the eval kernel frames
//! ([`kernel`], shared by the host and the JavaScript kernel) and the one parser that turns raw
//! JSON arguments into typed params with model-readable errors. It depends on serde
//! and schemars alone, so the MCP server, the CLI and the Python module all speak exactly the
//! same JSON, and tool schemas are derived from the same types that parse the calls.

pub mod args;
pub mod bash;
pub mod debug;
pub mod eval;
pub mod job;
pub mod kernel;
pub mod progress;
pub mod result;
pub mod ssh;

pub use args::{ArgError, parse_params};
pub use progress::{Progress, ProgressFn};
pub use result::{Content, ToolResult};
