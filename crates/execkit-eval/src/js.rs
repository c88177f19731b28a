//! The JavaScript kernel backend (spec-eval.md JS1, JS13, JS16): where the
//! `execkit-js-kernel` binary is, how it is started, and how its cells are stopped.
//!
//! The kernel is a program of its own (crate `execkit-js`), so it is found, not embedded:
//! `EXECKIT_JS_KERNEL` when set (an explicit choice wins and never falls back), then next to
//! the running executable (where `cargo install` of both packages puts it; for a cargo test
//! binary in `target/<profile>/deps` also the profile directory above it), then `PATH`.
//! boa cannot be interrupted from another thread, so a busy cell is stopped by killing the
//! kernel; the pool restores the snapshot of its last `ok` cell into the replacement.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use execkit_protocol::eval::Language;

use crate::backend::{BackendEnv, BoxFuture, Interruption, KernelBackend};
use crate::error::StartError;
use crate::kernel::KernelSpawn;
use crate::kernel_env::{allowed_env, common_settings};
use crate::pool::KernelKey;

/// The kernel binary's file name.
pub const KERNEL_BINARY: &str = "execkit-js-kernel";
/// The variable that names the kernel binary explicitly.
pub const KERNEL_VAR: &str = "EXECKIT_JS_KERNEL";
/// The kernel's address-space limit, passed through to it (spec JS13).
const MEMORY_VAR: &str = "EXECKIT_EVAL_JS_MEMORY_MB";
const DEFAULT_MEMORY_MB: u64 = 2048;
/// The JavaScript handshake budget (spec E30): the kernel makes a context in milliseconds.
const READY_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a cell has to answer `interrupt` before its kernel is killed (spec JS16): a
/// waiting cell answers at once; only a busy one, which never reads the frame, takes longer.
const INTERRUPT_GRACE: Duration = Duration::from_millis(500);
/// How to get the kernel when none is found.
const HOW_TO_GET: &str = "install it next to execkit (`cargo install --path crates/execkit-js`, \
     or `cargo build -p execkit-js` in a checkout) or set EXECKIT_JS_KERNEL";

/// Where the kernel binary was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub path: PathBuf,
    /// `EXECKIT_JS_KERNEL`, `next to /usr/bin/execkit`, `PATH`.
    pub source: String,
}

/// JavaScript kernels: the `execkit-js-kernel` binary, no arguments.
#[derive(Debug, Default)]
pub struct JsBackend {
    found: OnceLock<Result<Found, String>>,
}

impl JsBackend {
    fn found(&self, env: BackendEnv<'_>) -> &Result<Found, String> {
        self.found.get_or_init(|| {
            let exe = std::env::current_exe().ok();
            find_kernel(env.lookup.get(KERNEL_VAR), exe.as_deref(), env.lookup.get("PATH"))
        })
    }
}

impl KernelBackend for JsBackend {
    fn language(&self) -> Language {
        Language::Js
    }

    fn executable<'a>(&'a self, env: BackendEnv<'a>) -> BoxFuture<'a, Result<PathBuf, String>> {
        Box::pin(async move { self.found(env).clone().map(|f| f.path) })
    }

    fn spawn(&self, key: &KernelKey, env: BackendEnv<'_>) -> Result<KernelSpawn, StartError> {
        let cfg = env.config;
        let base = env.lookup.vars().map(|(k, v)| (k.clone(), v.clone()));
        let mut vars = allowed_env(base, &cfg.env_allow);
        vars.set(MEMORY_VAR, memory_mb(env).to_string());
        common_settings(&mut vars, &key.session);
        Ok(KernelSpawn {
            language: Language::Js,
            program: key.executable.clone(),
            args: Vec::new(),
            cwd: key.cwd.clone(),
            env: vars.into_vars(),
            ready_timeout: cfg.ready_timeout.min(READY_TIMEOUT),
            trace: cfg.trace,
        })
    }

    fn doctor(&self) -> Vec<String> {
        match self.found.get() {
            Some(found) => doctor_lines(found),
            None => vec!["javascript: not looked up yet".into()],
        }
    }

    fn doctor_in(&self, env: BackendEnv<'_>) -> Vec<String> {
        doctor_lines(self.found(env))
    }

    fn interrupt_name(&self) -> &'static str {
        "Interrupted"
    }

    fn interruption(&self) -> Interruption {
        Interruption::Frame { grace: INTERRUPT_GRACE }
    }

    /// An allocation beyond `RLIMIT_AS` makes Rust print `memory allocation of <n> bytes
    /// failed` and abort: that is the kernel running out of memory (spec JS13).
    fn crash_cause(&self, diag: &str, env: BackendEnv<'_>) -> Option<String> {
        let oom = diag.lines().any(|l| l.starts_with("memory allocation of "));
        oom.then(|| format!("ran out of memory (limit {} MiB)", memory_mb(env)))
    }
}

fn doctor_lines(found: &Result<Found, String>) -> Vec<String> {
    match found {
        Ok(f) => vec![format!("javascript: {} (from {})", f.path.display(), f.source)],
        Err(e) => vec![format!("javascript: {e}")],
    }
}

/// `EXECKIT_EVAL_JS_MEMORY_MB`, as the kernel will read it (it falls back to the default on
/// a value that is not a positive number, and says so on its diagnostic pipe).
fn memory_mb(env: BackendEnv<'_>) -> u64 {
    let value = env.lookup.get(MEMORY_VAR).and_then(|v| v.trim().parse::<u64>().ok());
    value.filter(|&n| n > 0).unwrap_or(DEFAULT_MEMORY_MB)
}

/// Finds the kernel: `explicit` (EXECKIT_JS_KERNEL), then next to `exe`, then on `path`.
pub fn find_kernel(
    explicit: Option<&str>,
    exe: Option<&Path>,
    path: Option<&str>,
) -> Result<Found, String> {
    if let Some(explicit) = explicit.filter(|v| !v.is_empty()) {
        let found = Found { path: PathBuf::from(explicit), source: KERNEL_VAR.into() };
        return match is_executable(&found.path) {
            true => Ok(found),
            false => Err(format!(
                "{KERNEL_VAR}={explicit} is not an executable file; point it at an \
                 {KERNEL_BINARY} binary or unset it"
            )),
        };
    }
    let mut tried = Vec::new();
    for dir in beside(exe) {
        let candidate = dir.join(KERNEL_BINARY);
        if is_executable(&candidate) {
            let source = match exe {
                Some(exe) => format!("next to {}", exe.display()),
                None => "next to the executable".into(),
            };
            return Ok(Found { path: candidate, source });
        }
        tried.push(candidate.display().to_string());
    }
    if let Some(hit) = path.and_then(|p| execkit_process::find_on_path(p, KERNEL_BINARY)) {
        return Ok(Found { path: hit, source: "PATH".into() });
    }
    tried.push("PATH".into());
    Err(format!(
        "no JavaScript kernel ({KERNEL_BINARY}) found; tried: {KERNEL_VAR} (unset), {}; {HOW_TO_GET}",
        tried.join(", ")
    ))
}

/// The directories "next to the executable": its own, and for a cargo test binary (in
/// `target/<profile>/deps`) the profile directory where cargo puts the workspace's binaries.
fn beside(exe: Option<&Path>) -> Vec<PathBuf> {
    let Some(dir) = exe.and_then(Path::parent) else { return Vec::new() };
    let mut dirs = vec![dir.to_path_buf()];
    if dir.file_name().is_some_and(|n| n == "deps")
        && let Some(profile) = dir.parent()
    {
        dirs.push(profile.to_path_buf());
    }
    dirs
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn touch_exe(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn lookup_order_and_messages() {
        let dir = tempfile::tempdir().unwrap();
        let profile = dir.path().join("target/debug");
        let exe = profile.join("deps/e2e-1234");
        let on_path = dir.path().join("bin");
        touch_exe(&on_path.join(KERNEL_BINARY));
        let path_var = on_path.display().to_string();

        let found = find_kernel(None, Some(&exe), Some(&path_var)).unwrap();
        assert_eq!((found.path, found.source.as_str()), (on_path.join(KERNEL_BINARY), "PATH"));

        touch_exe(&profile.join(KERNEL_BINARY));
        let found = find_kernel(None, Some(&exe), Some(&path_var)).unwrap();
        assert_eq!(found.path, profile.join(KERNEL_BINARY));
        assert!(found.source.starts_with("next to "), "{}", found.source);

        let explicit = on_path.join(KERNEL_BINARY).display().to_string();
        let found = find_kernel(Some(&explicit), Some(&exe), None).unwrap();
        assert_eq!(found.source, KERNEL_VAR);

        let err = find_kernel(Some("/nonexistent/k"), Some(&exe), None).unwrap_err();
        assert_eq!(
            err,
            "EXECKIT_JS_KERNEL=/nonexistent/k is not an executable file; point it at an \
             execkit-js-kernel binary or unset it"
        );
        let lonely = dir.path().join("elsewhere/execkit");
        let err = find_kernel(None, Some(&lonely), Some("")).unwrap_err();
        assert!(
            err.starts_with("no JavaScript kernel (execkit-js-kernel) found; tried: "),
            "{err}"
        );
        assert!(err.contains("elsewhere/execkit-js-kernel, PATH; install it"), "{err}");
    }
}
