//! The Landlock ruleset of a policy, built once in the parent.
//!
//! Read and execute everywhere; write, make, remove, rename and truncate beneath each writable
//! root, the run directory and the terminal devices. `IOCTL_DEV` is deliberately not handled
//! (ioctls on devices opened later, `/dev/tty` in PTY mode, would fail), and no scoping is
//! enabled: signal scoping would stop a later call from killing a server an earlier call
//! started, abstract-socket scoping breaks X11 and D-Bus clients.

use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreatedAttr,
};

/// Device files a confined process may still open for writing.
const WRITABLE_DEVICES: &[&str] =
    &["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"];

/// The highest Landlock ABI the kernel offers, or why there is none.
pub(crate) fn probe_abi() -> Result<i32, String> {
    // SAFETY: the version query takes no ruleset and returns a number or -1.
    let version = unsafe {
        libc::syscall(libc::SYS_landlock_create_ruleset, std::ptr::null::<u8>(), 0usize, 1u32)
    };
    if version >= 1 {
        return Ok(version as i32);
    }
    Err(match io::Error::last_os_error().raw_os_error() {
        Some(libc::EOPNOTSUPP) => "Landlock is built in but not enabled (EOPNOTSUPP)".into(),
        Some(libc::ENOSYS) => "no Landlock support (ENOSYS)".into(),
        _ => format!("Landlock unavailable ({})", io::Error::last_os_error()),
    })
}

/// What the ruleset grants.
pub(crate) struct Grants<'a> {
    pub writable: &'a [PathBuf],
    /// Deny every TCP bind and connect (ABI 4+): the fallback when no private loopback exists.
    pub deny_tcp: bool,
}

/// Builds the ruleset and hands back its descriptor for `landlock_restrict_self` in the child.
pub(crate) fn build(abi_version: i32, grants: &Grants) -> Result<OwnedFd, String> {
    let abi = ABI::from(abi_version);
    let handled = AccessFs::from_all(abi) & !AccessFs::IoctlDev;
    let write = AccessFs::from_write(abi) & handled;
    let read = handled & !write;
    let file_rights = BitFlags::from(AccessFs::ReadFile) | AccessFs::WriteFile | AccessFs::Truncate;
    let err = |e: landlock::RulesetError| format!("cannot build the Landlock ruleset: {e}");
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(handled)
        .map_err(err)?;
    if grants.deny_tcp {
        ruleset = ruleset.handle_access(AccessNet::from_all(abi)).map_err(err)?;
    }
    let mut created = ruleset.create().map_err(err)?;
    created = created.add_rule(beneath("/", read)?).map_err(err)?;
    for root in grants.writable {
        created = created.add_rule(beneath(root, handled)?).map_err(err)?;
    }
    for device in WRITABLE_DEVICES.iter().filter(|d| Path::new(d).exists()) {
        created = created.add_rule(beneath(device, file_rights & handled)?).map_err(err)?;
    }
    if Path::new("/dev/pts").is_dir() {
        created = created.add_rule(beneath("/dev/pts", file_rights & handled)?).map_err(err)?;
    }
    let fd: Option<OwnedFd> = created.into();
    fd.ok_or_else(|| "the kernel gave no Landlock ruleset".to_string())
}

fn beneath(
    path: impl AsRef<Path>,
    access: BitFlags<AccessFs>,
) -> Result<PathBeneath<PathFd>, String> {
    let path = path.as_ref();
    let fd = PathFd::new(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    Ok(PathBeneath::new(fd, access))
}
