//! The Toolkit's constructor options, turned into an `execkit::ToolkitBuilder` in one place:
//! a new dispatcher setting is one field here and one line in [`ToolkitOptions::builder`].

use std::collections::HashMap;
use std::path::PathBuf;

use execkit::{Approver, SandboxOptions, Toolkit, ToolkitBuilder};

/// What `Toolkit(cwd=None, *, vars=None, one_shot=False, subreaper=False, sandbox=None, ...)`
/// accepts.
#[derive(Default)]
pub struct ToolkitOptions {
    /// The base working directory of every call (default: the process's).
    pub cwd: Option<PathBuf>,
    /// `EXECKIT_*` knobs and variables children inherit, for this Toolkit only, on top of the
    /// process environment.
    pub vars: HashMap<String, String>,
    /// The host ends with its one call: bash refuses `async` and stops what a command leaves
    /// running.
    pub one_shot: bool,
    /// Make the host process a child subreaper, as the `execkit` binary is, so double-forked
    /// orphans stay findable and are killed on close.
    pub subreaper: bool,
    /// The sandbox policy, above the environment and `sandbox.json` field by field, as the
    /// CLI's `--sandbox`, `--network`, `--writable`, `--protect` and `--deny-read` are.
    pub sandbox: SandboxOptions,
    /// Who answers a bash call's request to run outside the sandbox.
    pub approver: Option<Approver>,
}

impl ToolkitOptions {
    pub fn builder(self) -> ToolkitBuilder {
        let mut builder = Toolkit::builder()
            .one_shot(self.one_shot)
            .subreaper(self.subreaper)
            .sandbox(self.sandbox);
        if let Some(approver) = self.approver {
            builder = builder.approver(approver);
        }
        if let Some(cwd) = self.cwd {
            builder = builder.cwd(cwd);
        }
        for (name, value) in self.vars {
            builder = builder.var(name, value);
        }
        builder
    }
}
