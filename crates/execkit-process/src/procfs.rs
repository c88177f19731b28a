//! Reading `/proc`: process state, parent links, command lines, open fds.

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
pub(crate) fn cmdline(pid: u32, max: usize) -> String {
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
pub(crate) fn holds(pid: u32, target: &Path) -> bool {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    dir.filter_map(Result::ok)
        .any(|entry| std::fs::read_link(entry.path()).is_ok_and(|link| link == target))
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
    fn truncates_on_char_boundary() {
        assert_eq!(truncate_chars("héllo", 2), "hé");
        assert_eq!(truncate_chars("ab", 5), "ab");
    }
}
