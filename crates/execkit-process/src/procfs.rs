//! Reading `/proc`: process state, parent links, command lines, open fds, CPU time, I/O
//! counters and the syscall a process is blocked in. The one place execkit parses `/proc`;
//! the crate's own membership walks use the `pub(crate)` part, tools the `pub` functions.

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The fields of `/proc/<pid>/stat` that membership and reporting need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stat {
    pub pid: u32,
    pub state: char,
    pub ppid: u32,
    pub pgrp: u32,
    pub session: u32,
    /// Clock ticks since boot.
    pub start_time: u64,
}

/// Parses one `/proc/<pid>/stat` line. `comm` may hold spaces and parentheses, so the fields
/// after it are found from the last `)`.
pub(crate) fn parse_stat(line: &str) -> Option<Stat> {
    let open = line.find('(')?;
    let close = line.rfind(')')?;
    let pid = line[..open].trim().parse().ok()?;
    let rest: Vec<&str> = line.get(close + 1..)?.split_whitespace().collect();
    // rest[0] is field 3 (state); field n is rest[n - 3].
    Some(Stat {
        pid,
        state: rest.first()?.chars().next()?,
        ppid: rest.get(1)?.parse().ok()?,
        pgrp: rest.get(2)?.parse().ok()?,
        session: rest.get(3)?.parse().ok()?,
        start_time: rest.get(19)?.parse().ok()?,
    })
}

pub(crate) fn stat(pid: u32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

/// A `/proc` scan is shared by every caller within this window: twenty trees polled every
/// 20 ms during one `close` would otherwise each read every process's stat file.
const SNAPSHOT_TTL: Duration = Duration::from_millis(10);

static SNAPSHOT: Mutex<Option<(Instant, Arc<Vec<Stat>>)>> = Mutex::new(None);

/// Every process visible in `/proc`; with `shared`, a scan at most [`SNAPSHOT_TTL`] old may
/// be reused (polls), else the scan is fresh (callers that must see a process just started).
pub(crate) fn all_stats(shared: bool) -> Arc<Vec<Stat>> {
    let mut cached = SNAPSHOT.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((at, stats)) = cached.as_ref()
        && shared
        && at.elapsed() < SNAPSHOT_TTL
    {
        return stats.clone();
    }
    let stats = Arc::new(scan());
    *cached = Some((Instant::now(), stats.clone()));
    stats
}

fn scan() -> Vec<Stat> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|entry| {
        let name = entry.ok()?.file_name();
        let pid: u32 = name.to_str()?.parse().ok()?;
        stat(pid)
    })
    .collect()
}

/// Alive and not a zombie (a zombie holds no fds and runs nothing; its parent reaps it).
pub(crate) fn is_live(stat: &Stat) -> bool {
    stat.state != 'Z' && stat.state != 'X'
}

/// `argv` joined by spaces, at most `max` characters (`[comm]` for kernel threads and zombies).
pub fn cmdline(pid: u32, max: usize) -> String {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let mut text = raw
        .split(|b| *b == 0)
        .filter(|part| !part.is_empty())
        .map(|part| String::from_utf8_lossy(part).into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    if text.is_empty() {
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        text = format!("[{}]", comm.trim_end());
    }
    truncate_chars(&text, max)
}

pub(crate) fn truncate_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((idx, _)) => text[..idx].to_string(),
        None => text.to_string(),
    }
}

/// True when one of `pid`'s fds links to `target` (`pipe:[<inode>]`, `/dev/pts/<n>`).
pub fn holds(pid: u32, target: &Path) -> bool {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    dir.filter_map(Result::ok)
        .any(|entry| std::fs::read_link(entry.path()).is_ok_and(|link| link == target))
}

/// The raw `/proc/<pid>/cmdline`: argv, each argument NUL-terminated (empty when unreadable).
pub fn cmdline_bytes(pid: u32) -> Vec<u8> {
    std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default()
}

/// The state letter (`R`, `S`, `D`, `T`, `Z` …) and the CPU time used so far (user plus
/// system, fields 14 and 15 of `/proc/<pid>/stat`) in clock ticks.
pub fn state_and_cpu_ticks(pid: u32) -> Option<(char, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_state_and_cpu(&text)
}

fn parse_state_and_cpu(line: &str) -> Option<(char, u64)> {
    let rest: Vec<&str> = line.get(line.rfind(')')? + 1..)?.split_whitespace().collect();
    let state = rest.first()?.chars().next()?;
    // rest[0] is field 3, so fields 14 and 15 (utime, stime) are rest[11] and rest[12].
    let cpu = rest.get(11)?.parse::<u64>().ok()? + rest.get(12)?.parse::<u64>().ok()?;
    Some((state, cpu))
}

/// The CPU time `pid` has used so far (user plus system), in milliseconds.
pub fn cpu_time_ms(pid: u32) -> Option<u64> {
    let (_, ticks) = state_and_cpu_ticks(pid)?;
    ticks_to_ms(ticks)
}

/// The CPU time `pid` and the children it has waited for have used so far (fields 14 to 17 of
/// `/proc/<pid>/stat`: user, system, children's user, children's system), in milliseconds.
/// A kernel that runs a subprocess for a cell counts that subprocess's time here.
pub fn cpu_time_with_children_ms(pid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    ticks_to_ms(cpu_with_children_ticks(&text)?)
}

fn cpu_with_children_ticks(line: &str) -> Option<u64> {
    let rest: Vec<&str> = line.get(line.rfind(')')? + 1..)?.split_whitespace().collect();
    // rest[0] is field 3, so fields 14 to 17 are rest[11] to rest[14].
    rest.get(11..15)?.iter().map(|f| f.parse::<u64>().ok()).sum::<Option<u64>>()
}

fn ticks_to_ms(ticks: u64) -> Option<u64> {
    // SAFETY: sysconf only reads a configuration value.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let per_second = u64::try_from(per_second).ok().filter(|t| *t > 0)?;
    Some(ticks.saturating_mul(1000) / per_second)
}

/// A process's `/proc/<pid>/stat` held open, for CPU time read before and after every eval
/// cell: each read is one `pread` at offset 0 (the kernel writes the text afresh), where
/// [`cpu_time_with_children_ms`] opens, stats, reads twice and closes. The open file stays
/// tied to the process it was opened for: once that process is gone, reads fail, even if its
/// pid is reused.
#[derive(Debug)]
pub struct CpuClock {
    stat: std::fs::File,
}

/// Room for a whole stat line: 52 numeric fields and a `comm` of at most 64 bytes.
const STAT_LINE_MAX: usize = 4096;

impl CpuClock {
    pub fn open(pid: u32) -> Option<CpuClock> {
        Some(CpuClock { stat: std::fs::File::open(format!("/proc/{pid}/stat")).ok()? })
    }

    /// What [`cpu_time_with_children_ms`] reports, now.
    pub fn with_children_ms(&self) -> Option<u64> {
        use std::os::unix::fs::FileExt;
        let mut buf = [0u8; STAT_LINE_MAX];
        let n = self.stat.read_at(&mut buf, 0).ok()?;
        let line = std::str::from_utf8(buf.get(..n)?).ok()?;
        ticks_to_ms(cpu_with_children_ticks(line)?)
    }
}

/// Bytes read and written through syscalls so far (`rchar`, `wchar` of `/proc/<pid>/io`).
pub fn io_chars(pid: u32) -> Option<(u64, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
    let field = |name: &str| {
        text.lines().find_map(|l| l.strip_prefix(name)).and_then(|v| v.trim().parse().ok())
    };
    Some((field("rchar:")?, field("wchar:")?))
}

/// `/proc/<pid>/syscall`: the number and arguments of the syscall the process is blocked in.
/// An error when the file cannot be read (it needs ptrace access, which some kernels deny).
pub fn syscall(pid: u32) -> std::io::Result<String> {
    std::fs::read_to_string(format!("/proc/{pid}/syscall"))
}

/// The kernel function the process sleeps in (`/proc/<pid>/wchan`).
pub fn wchan(pid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/wchan")).ok()
}

/// What fd `fd` of `pid` links to (`/dev/pts/3`, `pipe:[123]`).
pub fn fd_link(pid: u32, fd: i64) -> Option<std::path::PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/fd/{fd}")).ok()
}

/// What every open fd of `pid` links to.
pub fn fd_links(pid: u32) -> Vec<std::path::PathBuf> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    dir.filter_map(Result::ok).filter_map(|e| std::fs::read_link(e.path()).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_with_odd_comm() {
        let line =
            "1234 (a (b) c) S 1 1234 1234 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 5555 1000 10";
        let stat = parse_stat(line).unwrap();
        assert_eq!(
            stat,
            Stat { pid: 1234, state: 'S', ppid: 1, pgrp: 1234, session: 1234, start_time: 5555 }
        );
    }

    #[test]
    fn rejects_garbage() {
        assert_eq!(parse_stat("nonsense"), None);
        assert_eq!(parse_stat("12 (x) S"), None);
    }

    #[test]
    fn reads_own_stat() {
        let me = std::process::id();
        let stat = stat(me).unwrap();
        assert_eq!(stat.pid, me);
        assert!(is_live(&stat));
        assert!(!cmdline(me, 120).is_empty());
    }

    #[test]
    fn reads_own_cpu_time_and_io() {
        let me = std::process::id();
        let (state, _) = state_and_cpu_ticks(me).unwrap();
        assert!(state.is_ascii_alphabetic(), "{state}");
        assert!(cpu_time_ms(me).is_some());
        assert!(io_chars(me).is_some());
        assert!(!fd_links(me).is_empty());
        assert!(!cmdline_bytes(me).is_empty());
    }

    #[test]
    fn the_held_cpu_clock_reads_what_a_fresh_read_reads() {
        let clock = CpuClock::open(std::process::id()).unwrap();
        let held = clock.with_children_ms().unwrap();
        let fresh = cpu_time_with_children_ms(std::process::id()).unwrap();
        // CPU time only grows; the later fresh read is at least the held one.
        assert!(fresh >= held, "{fresh} < {held}");
        let start = std::time::Instant::now();
        while start.elapsed() < Duration::from_millis(300) {}
        assert!(clock.with_children_ms().unwrap() > held, "the held file is read afresh");
    }

    #[test]
    fn parses_cpu_ticks_after_an_odd_comm() {
        let line =
            "1234 (a (b) c) S 1 1234 1234 0 -1 4194560 100 0 0 0 7 5 0 0 20 0 1 0 5555 1000 10";
        assert_eq!(parse_state_and_cpu(line), Some(('S', 12)));
    }

    #[test]
    fn truncates_on_char_boundary() {
        assert_eq!(truncate_chars("héllo", 2), "hé");
        assert_eq!(truncate_chars("ab", 5), "ab");
    }
}
