//! The Python kernel's own files (spec P3), embedded so the binary is self-contained and
//! written once per content hash to the cache directory.

use std::path::{Path, PathBuf};

use execkit_output::fsutil::write_private;

use crate::error::StartError;

/// The kernel's files, embedded so the binary is self-contained (style.md §7).
pub const KERNEL_FILES: [(&str, &str); 11] = [
    ("start.py", include_str!("../../../../python/kernel/start.py")),
    ("runner.py", include_str!("../../../../python/kernel/runner.py")),
    ("magics.py", include_str!("../../../../python/kernel/magics.py")),
    ("bundle.py", include_str!("../../../../python/kernel/bundle.py")),
    ("snapshot.py", include_str!("../../../../python/kernel/snapshot.py")),
    ("streams.py", include_str!("../../../../python/kernel/streams.py")),
    ("channel.py", include_str!("../../../../python/kernel/channel.py")),
    ("codec.py", include_str!("../../../../python/kernel/codec.py")),
    ("tracebacks.py", include_str!("../../../../python/kernel/tracebacks.py")),
    ("signals.py", include_str!("../../../../python/kernel/signals.py")),
    ("prelude.py", include_str!("../../../../prelude/prelude.py")),
];

/// Writes the embedded kernel files once to `<cache>/kernel-<hash>/` (mode 0600 files in a
/// 0700 directory) and returns the path of the entry the interpreter runs (`start.py`).
pub fn kernel_files(cache_dir: &Path) -> Result<PathBuf, StartError> {
    use std::os::unix::fs::DirBuilderExt;
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for (name, text) in KERNEL_FILES {
        for b in name.bytes().chain(text.bytes()) {
            hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    let dir = cache_dir.join(format!("kernel-{hash:016x}"));
    let fail = |e: std::io::Error| StartError::Files {
        path: dir.display().to_string(),
        reason: e.to_string(),
    };
    let runner = dir.join("start.py");
    if KERNEL_FILES.iter().all(|(name, text)| {
        std::fs::metadata(dir.join(name)).is_ok_and(|m| m.len() == text.len() as u64)
    }) {
        return Ok(runner);
    }
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&dir).map_err(fail)?;
    // Each write goes through its own temporary file and a rename, so concurrent starts never
    // see a half-written kernel file.
    for (name, text) in KERNEL_FILES {
        write_private(&dir.join(name), text.as_bytes()).map_err(fail)?;
    }
    Ok(runner)
}
