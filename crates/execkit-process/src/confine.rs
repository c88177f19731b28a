//! The confinement of one spawn: the Supervisor's sandbox, or an exemption.
//!
//! Every spawn carries a [`Confinement`] ([`crate::SpawnSpec::confinement`]). The default is
//! the Supervisor's sandbox policy ([`crate::SupervisorConfig::sandbox`]), so a tool confines
//! its processes without saying anything; only [`Confinement::Exempt`] (the ssh client, whose
//! work is remote, or a call a person approved to run outside the sandbox) opts out, by name.
//! What the child applies is prepared in the parent before the clone ([`Prepared`]) and
//! applied in the cloned child right before `execve`, where only raw syscalls are allowed.

use std::sync::Arc;

use crate::sandbox::Enforcer;

/// How a child is confined.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Confinement {
    /// The Supervisor's sandbox policy (nothing beyond containment when its mode is `off`).
    #[default]
    Policy,
    /// Outside the sandbox: the ssh client, or a call a person approved.
    Exempt,
}

/// A confinement ready to apply in the child: built in the parent, holding everything the
/// child will need, so applying it allocates nothing.
#[derive(Debug)]
pub(crate) enum Prepared {
    None,
    Sandbox(Arc<Enforcer>),
}

impl Prepared {
    /// Applies the confinement: raw syscalls only, no allocation, no locks. Returns the errno
    /// of a failed step; the child then exits without running the program.
    ///
    /// # Safety
    /// Only in the cloned child, between its setup and `execve`.
    pub(crate) unsafe fn apply(&self) -> Result<(), libc::c_int> {
        match self {
            Prepared::None => Ok(()),
            // SAFETY: passed on from this function's own contract.
            Prepared::Sandbox(enforcer) => unsafe { enforcer.apply() },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_prepared_applies_nothing() {
        // SAFETY: `None` makes no syscall, so applying it outside a child is harmless.
        assert_eq!(unsafe { Prepared::None.apply() }, Ok(()));
    }
}
