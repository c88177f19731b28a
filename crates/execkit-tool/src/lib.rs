//! The shape every execkit tool shares, below every tool crate.
//!
//! A tool crate reads its knobs into an `XConfig` through a [`Lookup`] (never the process
//! environment directly), and its runner serves `call(params, &CallContext)`. Keeping these
//! three types in one small crate lets the dispatcher drive every tool the same way, and lets
//! a new tool be written without depending on any other tool.
//!
//! The knob policy is the same for every tool: a number outside its range is clamped and a
//! [`Notes`] line says so (shown by `execkit doctor` and the first result); a value that does
//! not parse is a [`KnobError`] that fails the Toolkit's start, naming the knob and what it
//! accepts.

mod context;
mod knob;
mod lookup;
mod throttle;

pub use context::CallContext;
pub use knob::{Knob, KnobError, Notes};
pub use lookup::Lookup;
pub use throttle::ProgressThrottle;
