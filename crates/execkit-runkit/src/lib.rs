//! The process-tool kit: running one supervised process to its end, written once.
//!
//! Every tool that runs a process to completion (bash's foreground calls, its `async` jobs, a
//! foreground call that moves to the background, processes a command leaves behind; later the
//! debug adapters' programs and ssh's client processes) goes through the same steps, and this
//! crate holds them so that no tool writes them again:
//!
//! 1. the tool launches its child through `execkit_process::Supervisor::spawn` (what to run,
//!    its environment and terminal are the tool's business) and makes an [`OutputSink`];
//! 2. [`run_to_end`] drives it under a [`execkit_process::run::RunLimits`] built by
//!    [`run_limits`] (deadline, cancellation, drain), feeding an [`Observer`]: the sink, progress
//!    events throttled to one per 100 ms with a heartbeat, and an optional [`Watcher`] the tool
//!    plugs in (bash's input-wait detector). Dropping the call's future kills the tree;
//!    [`BackgroundRun`] runs the same drive in a task, for a call that may become a job;
//! 3. processes still running after the leader exited are killed ([`kill_lingering`]) or
//!    adopted as a job ([`adopt_lingering`]) that follows them until they are gone;
//! 4. the typed [`Verdict`] of the run ([`Verdict::of`]) says how it ended; the tool renders
//!    its own texts from it, and [`Verdict::job_end`] gives a job's end from the same value, so
//!    nothing is read back from a rendered result.
//!
//! The kit knows no tool: no shell, no prelude, no exit-code meanings.
//!
//! [`OutputSink`]: execkit_output::sink::OutputSink

mod adopted;
mod background;
mod drive;
mod lingering;
mod observer;
mod text;
mod verdict;

pub use background::{BackgroundRun, Waited};
pub use drive::{run_limits, run_to_end};
pub use lingering::{Adoption, LingeringAction, adopt_lingering, kill_lingering, lingering_total};
pub use observer::{Observer, Watcher};
pub use text::{job_label, summary_text};
pub use verdict::{Ending, Verdict, mark_cancelled_kill};
