//! The seccomp filter of a policy, compiled once in the parent.
//!
//! Always refused (EPERM): `io_uring_*` (its socket operations bypass seccomp), `setns` (root
//! could rejoin the host's network namespace through `/proc/1/ns/net`), `open_by_handle_at`
//! (it opens files by handle, around path-based Landlock rules), and packet and raw sockets.
//! Without a private loopback, every socket family but `AF_UNIX` is refused too.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// `SOCK_TYPE_MASK`: the type bits of `socket()`'s second argument.
const SOCK_TYPE_MASK: u64 = 0xf;

/// The compiled filter as the kernel takes it.
pub(crate) fn build(only_unix_sockets: bool) -> Result<Vec<libc::sock_filter>, String> {
    let err = |e: seccompiler::BackendError| format!("cannot build the seccomp filter: {e}");
    let cond = |arg: u8, op: SeccompCmpOp, value: u64| {
        SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value).map_err(err)
    };
    let rule = |conditions| SeccompRule::new(conditions).map_err(err);
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for nr in [
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_setns,
        libc::SYS_open_by_handle_at,
    ] {
        rules.insert(nr, Vec::new());
    }
    let socket_rules = if only_unix_sockets {
        vec![rule(vec![cond(0, SeccompCmpOp::Ne, libc::AF_UNIX as u64)?])?]
    } else {
        vec![
            rule(vec![cond(0, SeccompCmpOp::Eq, libc::AF_PACKET as u64)?])?,
            rule(vec![cond(1, SeccompCmpOp::MaskedEq(SOCK_TYPE_MASK), libc::SOCK_RAW as u64)?])?,
        ]
    };
    rules.insert(libc::SYS_socket, socket_rules.clone());
    if only_unix_sockets {
        rules.insert(libc::SYS_socketpair, socket_rules);
    }
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(err)?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(err)?;
    let program: BpfProgram = filter.try_into().map_err(err)?;
    Ok(program
        .into_iter()
        .map(|i| libc::sock_filter { code: i.code, jt: i.jt, jf: i.jf, k: i.k })
        .collect())
}
