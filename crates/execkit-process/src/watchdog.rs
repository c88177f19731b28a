//! The watchdog (spec-output O41): what kills a `setsid` grandchild when execkit dies by
//! SIGKILL or a crash, which the parent-death signal of the direct children cannot reach.
//!
//! One small `sh` process per execkit process, started before any other child, in its own
//! session, outside every execkit cgroup and without a parent-death signal. It reads
//! registrations from a socket whose other end only this process holds: `cg <dir>` (a cgroup
//! whose `cgroup.kill` ends everything under it, the `execkit-<pid>` parent of the leaves) and
//! `pg <pgid> <start time>` (a process group, in the fallback without cgroups). On EOF (this
//! process is gone, however it died) it kills every cgroup and every group whose leader is
//! gone or still has the registered start time, so a reused pgid is never hit, and exits.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;

use crate::tree::lock;

/// The watchdog itself. After the loop, `$cg` and `$pg` hold one registration a line.
const SCRIPT: &str = r#"
nl='
'
cg='' pg=''
while IFS= read -r line; do
  case $line in
    'cg '*) case "$nl$cg$nl" in *"$nl${line#cg }$nl"*) ;; *) cg=$cg$nl${line#cg } ;; esac ;;
    'pg '*) pg=$pg$nl${line#pg } ;;
    'un '*) pg=$(printf '%s\n' "$pg" | grep -v -x -F -e "${line#un }") ;;
  esac
done
IFS=$nl
for dir in $cg; do echo 1 > "$dir/cgroup.kill"; done 2>/dev/null
for entry in $pg; do
  group=${entry%% *} start=${entry#* }
  if read -r stat < "/proc/$group/stat"; then
    IFS=' '; set -- ${stat##*) }; IFS=$nl
    shift 19
    [ "$1" = "$start" ] || continue
  fi 2>/dev/null
  kill -9 "-$group" 2>/dev/null
done
"#;

struct Watchdog {
    socket: UnixStream,
    pid: u32,
}

/// The watchdog of this process, or why there is none.
static WATCHDOG: Mutex<Option<Result<Watchdog, String>>> = Mutex::new(None);

/// Starts the watchdog once per process; later calls report how the first went.
pub(crate) fn ensure() -> Result<u32, String> {
    let mut slot = lock(&WATCHDOG);
    match slot.get_or_insert_with(|| start().map_err(|e| format!("watchdog not started: {e}"))) {
        Ok(dog) => Ok(dog.pid),
        Err(why) => Err(why.clone()),
    }
}

// The one child outside the spawner: it must outlive this process, so it gets no parent-death
// signal, no cgroup leaf and no tree, and which thread forks it does not matter.
#[allow(clippy::disallowed_methods)]
fn start() -> io::Result<Watchdog> {
    let (ours, theirs) = UnixStream::pair()?;
    let mut command = Command::new("/bin/sh");
    command
        .args(["-c", SCRIPT])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .current_dir("/")
        .stdin(Stdio::from(OwnedFd::from(theirs)))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: setsid and close_range are async-signal-safe system calls.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, libc::CLOSE_RANGE_CLOEXEC);
            Ok(())
        });
    }
    let child = command.spawn()?;
    Ok(Watchdog { socket: ours, pid: child.id() })
}

fn send(line: &str) {
    let slot = lock(&WATCHDOG);
    let Some(Ok(dog)) = slot.as_ref() else { return };
    let bytes = format!("{line}\n");
    let mut rest = bytes.as_bytes();
    while !rest.is_empty() {
        // A stopped watchdog must never stall a spawn: a full buffer drops the line instead.
        let flags = libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT;
        // SAFETY: `rest` is valid for its length; MSG_NOSIGNAL turns a gone reader into EPIPE
        // instead of SIGPIPE.
        let sent =
            unsafe { libc::send(dog.socket.as_raw_fd(), rest.as_ptr().cast(), rest.len(), flags) };
        if sent <= 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        rest = &rest[sent as usize..];
    }
}

/// Everything under `dir` (a cgroup v2 directory) dies with this process.
pub(crate) fn register_cgroup(dir: &Path) {
    if let Some(dir) = dir.to_str().filter(|d| !d.contains('\n')) {
        send(&format!("cg {dir}"));
    }
}

/// The process group `pgid`, led by a process started at `start` (clock ticks since boot),
/// dies with this process.
pub(crate) fn register_group(pgid: u32, start: u64) {
    send(&format!("pg {pgid} {start}"));
}

/// The group has ended: the watchdog forgets it.
pub(crate) fn unregister_group(pgid: u32, start: u64) {
    send(&format!("un {pgid} {start}"));
}
