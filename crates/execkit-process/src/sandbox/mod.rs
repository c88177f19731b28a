//! The sandbox's enforcement: the policy turned into what each confined child applies.
//!
//! [`Sandbox::start`] runs once per Supervisor: it probes Landlock, builds the ruleset and the
//! seccomp filter, creates the private namespaces and plans the mounts. What it cannot do is
//! recorded as an [`Enforcement`]: `partial` when only the protected paths or the private
//! loopback are missing (seccomp then refuses every socket but `AF_UNIX`), `unavailable` when
//! the filesystem rules themselves cannot be had, and then no confined process ever starts.
//! The child ([`Enforcer::apply`]) only joins namespaces, mounts, and restricts itself with
//! descriptors and a program built here.

mod filter;
mod mounts;
mod namespaces;
mod ruleset;
mod sockets;

pub use sockets::SocketFactory;

use std::ffi::{OsStr, OsString};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use execkit_sandbox::{Enforcement, Mode, Network, Policy, unavailable_text};

/// A Supervisor's sandbox: its policy, how much of it is enforced, and the prepared parts.
#[derive(Debug)]
pub struct Sandbox {
    policy: Policy,
    enforcement: Enforcement,
    enforcer: Option<Arc<Enforcer>>,
    /// `<run dir>/tmp`: `TMPDIR` of read-only mode, the one place it may write.
    tmp_dir: PathBuf,
    /// `<run dir>/cache`: caches when the user's cache directory is not writable.
    cache_dir: PathBuf,
    /// Why the private namespaces could not be made, when they could not (for doctor).
    namespace_error: Option<String>,
}

/// What a confined child needs, built in the parent.
#[derive(Debug)]
pub(crate) struct Enforcer {
    ruleset: OwnedFd,
    filter: Vec<libc::sock_filter>,
    namespaces: namespaces::Namespaces,
}

impl Sandbox {
    /// Prepares `policy` for children of a Supervisor whose run directory is `run_dir`.
    pub fn start(policy: Policy, run_dir: &Path) -> Sandbox {
        let tmp_dir = run_dir.join("tmp");
        let cache_dir = run_dir.join("cache");
        let mut sandbox = Sandbox {
            policy,
            enforcement: Enforcement::Full,
            enforcer: None,
            tmp_dir,
            cache_dir,
            namespace_error: None,
        };
        if !sandbox.policy.is_confined() {
            return sandbox;
        }
        match prepare(&sandbox.policy, run_dir) {
            Ok(Built { enforcer, missing, namespace_error }) => {
                sandbox.enforcer = Some(Arc::new(enforcer));
                sandbox.namespace_error = namespace_error;
                if !missing.is_empty() {
                    sandbox.enforcement = Enforcement::Partial { missing };
                }
                let _ = std::fs::create_dir_all(&sandbox.tmp_dir);
                let _ = std::fs::create_dir_all(&sandbox.cache_dir);
            }
            Err(reason) => sandbox.enforcement = Enforcement::Unavailable { reason },
        }
        sandbox
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    pub fn enforcement(&self) -> &Enforcement {
        &self.enforcement
    }

    /// Makes the TCP sockets execkit itself uses to reach its confined processes: inside the
    /// private network namespace when there is one, plain host sockets otherwise.
    pub fn sockets(&self) -> SocketFactory {
        SocketFactory::for_enforcer(self.enforcer.as_ref())
    }

    /// Why the private namespaces are missing, when they are.
    pub fn namespace_error(&self) -> Option<&str> {
        self.namespace_error.as_deref()
    }

    /// The text every call that would start a process gets when the mode cannot be enforced.
    pub fn unavailable(&self) -> Option<String> {
        match (&self.enforcement, self.policy.is_confined()) {
            (Enforcement::Unavailable { reason }, true) => {
                Some(unavailable_text(self.policy.mode, reason))
            }
            _ => None,
        }
    }

    /// What a child of `confinement` applies; an error when a confined child cannot be.
    pub(crate) fn prepared(
        &self,
        confinement: &crate::Confinement,
    ) -> Result<crate::confine::Prepared, String> {
        if *confinement == crate::Confinement::Exempt || !self.policy.is_confined() {
            return Ok(crate::confine::Prepared::None);
        }
        match (&self.enforcer, self.unavailable()) {
            (_, Some(text)) => Err(text),
            (Some(enforcer), None) => Ok(crate::confine::Prepared::Sandbox(enforcer.clone())),
            (None, None) => Err(unavailable_text(self.policy.mode, "no prepared ruleset")),
        }
    }

    /// The environment a confined child needs to work: `TMPDIR` inside the run directory in
    /// read-only mode, and caches there when the user's cache directory is not writable. A
    /// variable already in `env` (the user's, or the caller's) wins for the caches.
    pub(crate) fn adjust_env(&self, env: &mut Vec<(OsString, OsString)>) {
        if !self.policy.is_confined() {
            return;
        }
        let get = |env: &[(OsString, OsString)], name: &str| {
            env.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        };
        if self.policy.mode == Mode::ReadOnly {
            env.push(("TMPDIR".into(), self.tmp_dir.clone().into()));
        }
        let cache = get(env, "XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| get(env, "HOME").map(|h| PathBuf::from(h).join(".cache")));
        if cache.is_some_and(|c| self.policy.allows_write(&c)) {
            return;
        }
        for (name, sub) in
            [("XDG_CACHE_HOME", ""), ("PIP_CACHE_DIR", "pip"), ("npm_config_cache", "npm")]
        {
            if get(env, name).is_none() {
                let dir =
                    if sub.is_empty() { self.cache_dir.clone() } else { self.cache_dir.join(sub) };
                env.push((OsStr::new(name).to_os_string(), dir.into()));
            }
        }
    }
}

/// What [`prepare`] made, and what it could not.
struct Built {
    enforcer: Enforcer,
    missing: Vec<String>,
    namespace_error: Option<String>,
}

/// Builds every part; returns what is not enforced, or why nothing can be.
fn prepare(policy: &Policy, run_dir: &Path) -> Result<Built, String> {
    if policy.simulate.landlock_unavailable {
        return Err("Landlock unavailable (EXECKIT_SANDBOX_TEST_UNAVAILABLE=1)".into());
    }
    if !cfg!(target_os = "linux") {
        return Err("a system other than Linux".into());
    }
    let abi = ruleset::probe_abi()?;
    let mut missing = Vec::new();
    let wants_mounts = !policy.protected.is_empty() || !policy.denied.is_empty();
    let wants_net = policy.network == Network::Off;
    let needs_holder = wants_net || wants_mounts;
    let none = namespaces::Namespaces::none;
    let mut namespace_error = None;
    let (namespaces, namespaced) = if policy.simulate.no_user_namespaces {
        namespace_error = Some("EXECKIT_SANDBOX_TEST_NO_USERNS=1".to_string());
        (none(), false)
    } else if !needs_holder {
        (none(), true)
    } else {
        let plan = mounts::plan(&policy.protected, &policy.denied);
        match namespaces::create(wants_net, plan) {
            Ok(ns) => (ns, true),
            Err(reason) => {
                namespace_error = Some(reason);
                (none(), false)
            }
        }
    };
    if wants_mounts && !namespaced {
        missing.push("protected paths (no user namespaces)".to_string());
    }
    let only_unix = wants_net && !namespaced;
    if only_unix {
        missing
            .push("private loopback (no user namespaces); debug adapters keep network".to_string());
        if abi < 4 {
            missing.push(format!("tcp rules (landlock abi {abi}; seccomp covers it)"));
        }
    }
    let mut writable = policy.writable_roots.clone();
    writable.push(run_dir.to_path_buf());
    let ruleset =
        ruleset::build(abi, &ruleset::Grants { writable: &writable, deny_tcp: only_unix })?;
    let filter = filter::build(only_unix)?;
    Ok(Built { enforcer: Enforcer { ruleset, filter, namespaces }, missing, namespace_error })
}

impl Enforcer {
    /// In the child: join the namespaces, then Landlock and seccomp. Raw syscalls only. The
    /// cwd is the mount namespace's root afterwards, so the child's chdir must come after.
    ///
    /// # Safety
    /// Only in the cloned child, after its setup and before exec.
    pub(crate) unsafe fn apply(&self) -> Result<(), libc::c_int> {
        let err = || {
            // SAFETY: this thread's errno slot.
            unsafe { *libc::__errno_location() }
        };
        // SAFETY: setns, prctl and the Landlock and seccomp syscalls on descriptors and a
        // program that live in the parent, which is suspended until we exec.
        unsafe {
            if let Some(user) = &self.namespaces.user
                && libc::setns(user.as_raw_fd(), libc::CLONE_NEWUSER) != 0
            {
                return Err(err());
            }
            if let Some(net) = &self.namespaces.net
                && libc::setns(net.as_raw_fd(), libc::CLONE_NEWNET) != 0
            {
                return Err(err());
            }
            // Joining a mount namespace moves the cwd to its root; the caller's chdir follows.
            if let Some(mnt) = &self.namespaces.mnt
                && libc::setns(mnt.as_raw_fd(), libc::CLONE_NEWNS) != 0
            {
                return Err(err());
            }
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(err());
            }
            if libc::syscall(libc::SYS_landlock_restrict_self, self.ruleset.as_raw_fd(), 0u32) != 0
            {
                return Err(err());
            }
            let program = libc::sock_fprog {
                len: self.filter.len() as libc::c_ushort,
                filter: self.filter.as_ptr().cast_mut(),
            };
            let set_mode_filter = 1u32;
            if libc::syscall(libc::SYS_seccomp, set_mode_filter, 0u32, &program) != 0 {
                return Err(err());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "../sandbox_tests.rs"]
mod tests;
