//! The debugpy fixes: a `sitecustomize.py` (python/debug/) written to a private directory and
//! put first on the debugpy adapter's PYTHONPATH; the adapter passes its environment to the
//! debuggee. There it sets TCP_NODELAY on pydevd's socket (without it every request to a
//! debugpy debuggee waits ~40 ms for a delayed ACK, debugpy issue 2054), and skips debugpy's
//! environment report when nothing logs it (building it delays the entry stop by seconds).
//! `EXECKIT_DEBUGPY_NODELAY=0` turns both off.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

const SITECUSTOMIZE: &str = include_str!("../../../python/debug/sitecustomize.py");

/// Writes the file under `run_dir`; `None` (the fix is skipped) when that fails.
pub fn install(run_dir: &Path) -> Option<PathBuf> {
    let dir = run_dir.join("debugpy-nodelay");
    std::fs::create_dir_all(&dir).ok()?;
    execkit_output::fsutil::write_private(&dir.join("sitecustomize.py"), SITECUSTOMIZE.as_bytes())
        .ok()?;
    Some(dir)
}

/// Puts `dir` first on PYTHONPATH in `env`.
pub fn apply(env: &mut Vec<(OsString, OsString)>, dir: &Path) {
    let existing = env.iter().position(|(k, _)| k == "PYTHONPATH");
    let mut value = OsString::from(dir);
    if let Some(at) = existing {
        let (_, old) = env.remove(at);
        if !old.is_empty() {
            value.push(":");
            value.push(old);
        }
    }
    env.push(("PYTHONPATH".into(), value));
}
