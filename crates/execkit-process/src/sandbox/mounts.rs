//! Protected and denied paths through a private mount namespace.
//!
//! Landlock only grants; it cannot carve a read-only `.git` out of a writable workspace. So
//! the Toolkit holds one private mount namespace (propagation from it turned off; see
//! `namespaces.rs`), with every protected path bind-mounted read-only over itself and every
//! denied one covered: an empty, read-only tmpfs over a directory, `/dev/null` over a file.
//! Confined children join it; Landlock, applied after, forbids them to undo any of it (a
//! Landlock domain may not mount or unmount).

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// `MOUNT_ATTR_RDONLY` of `mount_setattr(2)`.
const MOUNT_ATTR_RDONLY: u64 = 0x1;

/// `struct mount_attr` of `mount_setattr(2)`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// One mount of the plan, its path prepared in the parent.
#[derive(Debug)]
pub(crate) enum Step {
    ReadOnly(CString),
    HideDir(CString),
    HideFile(CString),
}

/// The steps for `protected` and `denied`; paths with a NUL cannot exist and are skipped.
pub(crate) fn plan(protected: &[std::path::PathBuf], denied: &[std::path::PathBuf]) -> Vec<Step> {
    let c = |p: &Path| CString::new(p.as_os_str().as_bytes()).ok();
    let mut steps: Vec<Step> = protected.iter().filter_map(|p| c(p)).map(Step::ReadOnly).collect();
    for path in denied {
        let Some(cpath) = c(path) else { continue };
        steps.push(if path.is_dir() { Step::HideDir(cpath) } else { Step::HideFile(cpath) });
    }
    steps
}

/// In the namespace holder: a private mount namespace with the plan applied. Returns the
/// failing errno.
///
/// # Safety
/// Only in the forked holder, before exec.
pub(crate) unsafe fn apply(steps: &[Step]) -> Result<(), libc::c_int> {
    let null = std::ptr::null::<libc::c_char>();
    // SAFETY: unshare and mount with prepared C strings; no allocation.
    unsafe {
        check(libc::unshare(libc::CLONE_NEWNS))?;
        check(libc::mount(null, c"/".as_ptr(), null, libc::MS_REC | libc::MS_SLAVE, null.cast()))?;
        for step in steps {
            // A path removed since the Toolkit started has nothing left to protect or hide.
            let gone = |rc: Result<(), libc::c_int>| match rc {
                Err(libc::ENOENT) => Ok(()),
                other => other,
            };
            gone(apply_step(step))?;
        }
    }
    Ok(())
}

/// One step of the plan.
///
/// # Safety
/// Only in the forked holder, inside its own mount namespace.
unsafe fn apply_step(step: &Step) -> Result<(), libc::c_int> {
    let null = std::ptr::null::<libc::c_char>();
    // SAFETY: mount and mount_setattr with prepared C strings; no allocation.
    unsafe {
        match step {
            Step::ReadOnly(path) => {
                check(libc::mount(
                    path.as_ptr(),
                    path.as_ptr(),
                    null,
                    libc::MS_BIND | libc::MS_REC,
                    null.cast(),
                ))?;
                read_only(path)?;
            }
            Step::HideDir(path) => {
                let flags = libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
                let data = c"size=4k,nr_inodes=1,mode=000";
                check(libc::mount(
                    c"tmpfs".as_ptr(),
                    path.as_ptr(),
                    c"tmpfs".as_ptr(),
                    flags,
                    data.as_ptr().cast(),
                ))?;
            }
            Step::HideFile(path) => {
                check(libc::mount(
                    c"/dev/null".as_ptr(),
                    path.as_ptr(),
                    null,
                    libc::MS_BIND,
                    null.cast(),
                ))?;
                read_only(path)?;
            }
        }
    }
    Ok(())
}

/// Makes the mount at `path`, and every mount beneath it, read-only.
unsafe fn read_only(path: &CString) -> Result<(), libc::c_int> {
    let attr = MountAttr { attr_set: MOUNT_ATTR_RDONLY, attr_clr: 0, propagation: 0, userns_fd: 0 };
    // SAFETY: mount_setattr with a valid path and a correctly sized attribute struct.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path.as_ptr(),
            libc::AT_RECURSIVE as libc::c_uint,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    check(rc as libc::c_int)
}

fn check(rc: libc::c_int) -> Result<(), libc::c_int> {
    if rc < 0 {
        // SAFETY: this thread's errno slot.
        Err(unsafe { *libc::__errno_location() })
    } else {
        Ok(())
    }
}
