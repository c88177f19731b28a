//! `execkit._native`: the execkit dispatcher for Python, with no logic of its own.
//!
//! A [`toolkit::PyToolkit`] owns one `execkit::Toolkit` and the tokio runtime it runs on, so a
//! Python process needs no server and no event loop of ours. Arguments and results cross as
//! JSON (the ToolResult shape every front end returns); tool definitions, artifact reads and
//! the doctor come from the dispatcher unchanged. What this crate adds is only what a Python
//! host needs around a call: the GIL released while tools run, Ctrl-C turned into a cancel
//! that kills the call's process tree before `KeyboardInterrupt` is raised, a completion
//! callback for the package's `acall`, and a close on garbage collection.
//!
//! The `execkit` package (`python/execkit/`) wraps this module: `acall`, the context manager
//! and the bundled JavaScript kernel's path live there.

mod approve;
mod artifact;
mod convert;
mod options;
mod progress;
mod toolkit;
mod wait;

use pyo3::prelude::*;

#[pymodule]
fn _native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<toolkit::PyToolkit>()?;
    module.add_class::<toolkit::CallHandle>()?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
