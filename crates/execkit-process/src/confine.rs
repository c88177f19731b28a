//! The confinement hook: what a child may do beyond the containment every child gets.
//!
//! Every spawn carries a [`Confinement`] ([`crate::SpawnSpec::confinement`]). It is prepared in
//! the parent before the clone ([`Confinement::prepare`]: anything that allocates, opens files
//! or compiles filters happens there) and applied in the cloned child after its stdio, working
//! directory and process setup and right before `execve` ([`Prepared::apply`]), where only raw,
//! async-signal-safe syscalls are allowed. Today the only policy is [`Confinement::None`]; a
//! sandbox fills in Landlock and seccomp here without any tool changing how it spawns.

use std::io;

/// How a child is confined. The default confines nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Confinement {
    /// No confinement beyond the session, process group and cgroup every child gets.
    #[default]
    None,
}

/// A confinement ready to apply in the child: built in the parent, holding everything the
/// child will need, so applying it allocates nothing.
#[derive(Debug)]
pub(crate) enum Prepared {
    None,
}

impl Confinement {
    /// Builds, in the parent, what applying this confinement in the child needs. An error
    /// fails the spawn before any child exists.
    pub(crate) fn prepare(&self) -> io::Result<Prepared> {
        match self {
            Confinement::None => Ok(Prepared::None),
        }
    }
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
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_confines_nothing() {
        let prepared = Confinement::default().prepare().unwrap();
        // SAFETY: `None` makes no syscall, so applying it outside a child is harmless.
        assert_eq!(unsafe { prepared.apply() }, Ok(()));
    }
}
