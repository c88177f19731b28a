//! The execkit dispatcher: one [`Toolkit`] routes tool calls to the tool runners.
//!
//! A call is parsed into the tool's params, resolved and clamped, run, and returned as an
//! MCP-shaped [`ToolResult`]. The set of tools is closed: [`tools::Tool`] is one enum matched
//! exhaustively, so a new tool does not compile until it is wired everywhere. The Toolkit owns
//! the long-lived state (process supervisor, artifact store, job table) and shuts it down on
//! [`Toolkit::close`]. Every knob is read once, through one [`Lookup`], when it is built.

pub mod audit;
mod doctor;
#[cfg(test)]
mod echo;
mod escalation;
mod formats;
mod sandbox;
mod settings;
mod toolkit;
pub mod tools;

pub use doctor::{Doctor, DoctorSection};
pub use escalation::{Approval, ApprovalRequest, Approver};
pub use execkit_bash::BashExtras;
pub use execkit_output::artifact::{
    ArtifactError, ArtifactId, ArtifactStore, ReadOutput, Selection, SelectionOptions,
};
pub use execkit_protocol::ProgressFn;
pub use execkit_protocol::{Content, Progress, ToolResult};
pub use execkit_sandbox::{Mode as SandboxMode, Network as SandboxNetwork, SandboxOptions};
pub use execkit_tool::{CallContext, Lookup, Notes};
pub use formats::ToolFormat;
pub use toolkit::{Toolkit, ToolkitBuilder};
pub use tools::ToolSpec;
