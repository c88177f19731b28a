//! The process's original environment block: the `NAME=value\0…` strings the kernel placed
//! at exec, between `env_start` and `env_end` of `/proc/self/stat`. `/proc/<pid>/environ`
//! shows exactly these bytes, and the C `environ` array still points into them.

use std::collections::HashSet;
use std::io;

fn invalid(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}

/// `env_start` and `env_end` (fields 50 and 51 of `/proc/self/stat`, counting from 1).
fn block_range() -> io::Result<(usize, usize)> {
    let stat = std::fs::read_to_string("/proc/self/stat")?;
    // The command name (field 2) may contain spaces and parentheses: count after the last ')'.
    let after = stat.rfind(')').map(|at| &stat[at + 1..]).ok_or_else(|| invalid("no comm"))?;
    let fields: Vec<&str> = after.split_whitespace().collect();
    let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<usize>().ok());
    match (field(50), field(51)) {
        (Some(start), Some(end)) if start > 0 && end > start => Ok((start, end)),
        _ => Err(invalid("/proc/self/stat gives no environment range")),
    }
}

/// Overwrites with NUL bytes the value of every `NAME=value` in the block whose name is in
/// `names`. The block is compared with `/proc/self/environ` first, so nothing is written
/// anywhere else. Returns how many values were wiped.
pub(crate) fn wipe_values(names: &HashSet<Vec<u8>>) -> io::Result<usize> {
    if names.is_empty() {
        return Ok(0);
    }
    let (start, end) = block_range()?;
    let shown = std::fs::read("/proc/self/environ")?;
    // SAFETY: the kernel reports [start, end) as this process's environment strings, mapped
    // and writable (the initial stack); `shown` proves they read as the block right now. No
    // Rust reference to these bytes exists (std copies what it reads from `environ`), and the
    // caller runs before any other thread could read them.
    let block = unsafe { std::slice::from_raw_parts_mut(start as *mut u8, end - start) };
    if block != shown.as_slice() {
        return Err(invalid("the environment block differs from /proc/self/environ"));
    }
    let mut wiped = 0;
    for entry in block.split_mut(|b| *b == 0) {
        let Some(eq) = entry.iter().position(|b| *b == b'=') else { continue };
        if names.contains(&entry[..eq]) {
            entry[eq + 1..].fill(0);
            wiped += 1;
        }
    }
    Ok(wiped)
}
