//! The Python backend: interpreter resolution (P1–P2), kernel files (P3) and the kernel's
//! environment (P4).
//!
//! Each candidate is probed once with `-I -c`, and the kernel is spawned with the probed
//! `sys.executable`, never through the candidate path: a pyenv-style shim costs ~95 ms per
//! start, the interpreter behind it ~10 ms.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use execkit_process::env::{EnvBuilder, ScrubRules};
use execkit_process::{SpawnSpec, StdinMode, Supervisor};
use execkit_tool::Lookup;

use crate::error::StartError;
use crate::interp_cache::{InterpCache, ProbeKey};

/// The kernel's files, embedded so the binary is self-contained (style.md §7).
pub const KERNEL_FILES: [(&str, &str); 8] = [
    ("runner.py", include_str!("../../../python/kernel/runner.py")),
    ("magics.py", include_str!("../../../python/kernel/magics.py")),
    ("bundle.py", include_str!("../../../python/kernel/bundle.py")),
    ("snapshot.py", include_str!("../../../python/kernel/snapshot.py")),
    ("streams.py", include_str!("../../../python/kernel/streams.py")),
    ("channel.py", include_str!("../../../python/kernel/channel.py")),
    ("tracebacks.py", include_str!("../../../python/kernel/tracebacks.py")),
    ("prelude.py", include_str!("../../../prelude/prelude.py")),
];

const PROBE: &str = "import sys,json;print(json.dumps([list(sys.version_info[:3]),\
sys.executable,sys.prefix,getattr(sys,'base_prefix',sys.prefix)]))";
/// Budget for one candidate's probe (P1).
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// A probed, accepted interpreter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interpreter {
    /// What was found (the candidate path, maybe a shim).
    pub candidate: PathBuf,
    /// Where it came from: `EXECKIT_PYTHON`, `VIRTUAL_ENV`, `.venv`, `PATH`, ….
    pub source: String,
    /// The real binary (`sys.executable`), used for every spawn.
    pub executable: PathBuf,
    pub version: (u32, u32, u32),
    pub prefix: PathBuf,
    pub is_venv: bool,
}

/// The outcome of resolution: the chosen interpreter and every rejected candidate.
#[derive(Debug, Clone, Default)]
pub struct Resolution {
    pub chosen: Option<Interpreter>,
    pub rejected: Vec<(PathBuf, String)>,
}

impl Resolution {
    /// E27's message when nothing resolved.
    pub fn missing_message(&self) -> String {
        let tried: Vec<String> =
            self.rejected.iter().map(|(path, why)| format!("{} ({why})", path.display())).collect();
        format!(
            "no Python ≥ 3.8 found; tried: {}; set EXECKIT_PYTHON or create .venv",
            if tried.is_empty() { "nothing".to_string() } else { tried.join(", ") }
        )
    }
}

/// P1's candidates, in order.
pub fn candidates(
    cwd: &Path,
    explicit: Option<&str>,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    if let Some(p) = explicit {
        let expanded = match (p.strip_prefix("~/"), lookup("HOME")) {
            (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
            _ => PathBuf::from(p),
        };
        out.push((cwd.join(expanded), "EXECKIT_PYTHON".to_string()));
        return out;
    }
    for var in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        if let Some(prefix) = lookup(var).filter(|v| !v.is_empty()) {
            out.push((PathBuf::from(prefix).join("bin/python"), var.to_string()));
        }
    }
    for dir in cwd.ancestors() {
        for venv in [".venv", "venv"] {
            let py = dir.join(venv).join("bin/python");
            if py.exists() {
                out.push((py, format!("{venv} in {}", dir.display())));
            }
        }
        if dir.join(".git").exists() {
            break;
        }
    }
    if let Some(home) = lookup("HOME") {
        let managed = PathBuf::from(home).join(".execkit/python-env/bin/python");
        if managed.exists() {
            out.push((managed, "~/.execkit/python-env".to_string()));
        }
    }
    for name in ["python3", "python"] {
        if let Some(found) = find_on_path(name, lookup("PATH").as_deref()) {
            out.push((found, "PATH".to_string()));
        }
    }
    out
}

/// The first executable `name` on `path`.
pub fn find_on_path(name: &str, path: Option<&str>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path?).map(|dir| dir.join(name)).find(|p| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

/// Probes candidates in order; the first Python ≥ 3.8 wins. Probe results come from and go
/// to the interpreter cache in `cache_dir` (P2).
pub async fn resolve(
    supervisor: &Supervisor,
    cwd: &Path,
    candidates: Vec<(PathBuf, String)>,
    cache_dir: &Path,
    lookup: &Lookup,
) -> Resolution {
    let mut cache = InterpCache::load(cache_dir);
    let mut res = Resolution::default();
    for (path, source) in candidates {
        let key = ProbeKey::new(&path, cwd, &lookup.as_fn());
        let probed = match cache.get(&key) {
            Some(hit) => Ok(hit),
            None => {
                let probed = probe(supervisor, &path, cwd, lookup).await;
                if let Ok(interp) = &probed {
                    cache.put(key, interp);
                }
                probed
            }
        };
        match probed {
            Ok(mut interp) if interp.version >= (3, 8, 0) => {
                interp.source = source;
                res.chosen = Some(interp);
                break;
            }
            Ok(interp) => {
                let (a, b, c) = interp.version;
                res.rejected.push((path, format!("Python {a}.{b}.{c} is older than 3.8")));
            }
            Err(why) => res.rejected.push((path, why)),
        }
    }
    cache.save();
    res
}

/// Runs the candidate once with the lookup's environment (what kernels would inherit, never
/// the unscrubbed process environment) and reads what it prints.
async fn probe(
    supervisor: &Supervisor,
    path: &Path,
    cwd: &Path,
    lookup: &Lookup,
) -> Result<Interpreter, String> {
    if !path.exists() {
        return Err("not found".into());
    }
    let env: Vec<(OsString, OsString)> =
        lookup.vars().map(|(k, v)| (k.clone(), v.clone())).collect();
    let spec = SpawnSpec {
        program: path.to_path_buf(),
        args: vec!["-I".into(), "-c".into(), PROBE.into()],
        arg0: None,
        cwd: cwd.to_path_buf(),
        env,
        stdin: StdinMode::Null,
        ..SpawnSpec::default()
    };
    let mut child = supervisor.spawn(spec).await.map_err(|e| e.to_string())?;
    let tree = child.tree();
    let mut pipe = child.take_output().ok_or("no output pipe")?;
    let work = async {
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = pipe.read(&mut buf).await {
            if n == 0 || out.len() > 64 * 1024 {
                break;
            }
            out.extend_from_slice(&buf[..n]);
        }
        let status = child.wait().await.ok();
        (out, status)
    };
    let (out, status) = match tokio::time::timeout(PROBE_TIMEOUT, work).await {
        Ok(done) => done,
        Err(_) => {
            tree.kill(Duration::ZERO).await;
            return Err("probe timed out after 5 s".into());
        }
    };
    if !status.is_some_and(|s| s.success()) {
        let text = String::from_utf8_lossy(&out);
        let last = text.lines().last().unwrap_or("no output").to_string();
        return Err(format!("probe failed: {last}"));
    }
    parse_probe(path, &out)
}

fn parse_probe(path: &Path, out: &[u8]) -> Result<Interpreter, String> {
    let text = String::from_utf8_lossy(out);
    let line = text.lines().rfind(|l| l.starts_with('[')).ok_or("probe printed nothing")?;
    let (version, exe, prefix, base): (Vec<u32>, String, String, String) =
        serde_json::from_str(line).map_err(|e| format!("probe output unreadable: {e}"))?;
    let v = |i: usize| version.get(i).copied().unwrap_or(0);
    let executable = if exe.is_empty() { path.to_path_buf() } else { PathBuf::from(exe) };
    Ok(Interpreter {
        candidate: path.to_path_buf(),
        source: String::new(),
        executable,
        version: (v(0), v(1), v(2)),
        is_venv: prefix != base,
        prefix: PathBuf::from(prefix),
    })
}

/// Writes the embedded kernel files once to `<cache>/kernel-<hash>/` (mode 0600 files in a
/// 0700 directory) and returns the runner's path.
pub fn kernel_files(cache_dir: &Path) -> Result<PathBuf, StartError> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
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
    let runner = dir.join("runner.py");
    if KERNEL_FILES.iter().all(|(name, text)| {
        std::fs::metadata(dir.join(name)).is_ok_and(|m| m.len() == text.len() as u64)
    }) {
        return Ok(runner);
    }
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&dir).map_err(fail)?;
    // Concurrent starts in one process write at the same time: each writer needs its own
    // temporary name, or one rename takes the file away from under another.
    static WRITERS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let writer = WRITERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    for (name, text) in KERNEL_FILES {
        let tmp = dir.join(format!(".{name}.{}.{writer}", std::process::id()));
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(fail)?;
        std::io::Write::write_all(&mut file, text.as_bytes()).map_err(fail)?;
        std::fs::rename(&tmp, dir.join(name)).map_err(fail)?;
    }
    Ok(runner)
}

/// Names kept from the host environment (P4); `LC_*` and `XDG_*` by prefix.
const ALLOW: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TERM",
    "TMPDIR",
    "TEMP",
    "TMP",
    "PYTHONPATH",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "CONDA_DEFAULT_ENV",
    "LD_LIBRARY_PATH",
    "SSH_AUTH_SOCK",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
];

fn allowed(name: &str, extra: &[String]) -> bool {
    ALLOW.contains(&name)
        || name.starts_with("LC_")
        || name.starts_with("XDG_")
        || extra.iter().any(|pat| match pat.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => pat == name,
        })
}

/// The kernel's environment (P4): allowlist, credential scrub, fixed settings.
pub fn kernel_env(
    vars: impl IntoIterator<Item = (OsString, OsString)>,
    allow: &[String],
    interp: &Interpreter,
    session: &str,
) -> Vec<(OsString, OsString)> {
    let kept = vars.into_iter().filter(|(k, _)| k.to_str().is_some_and(|k| allowed(k, allow)));
    let mut env = EnvBuilder::from_vars(kept);
    let exact: Vec<String> = allow.iter().filter(|a| !a.ends_with('*')).cloned().collect();
    env.scrub(&ScrubRules { keep: exact, extra: Vec::new() });
    if interp.is_venv {
        let bin = interp.prefix.join("bin");
        let path = env.get("PATH").map(|p| p.to_os_string()).unwrap_or_default();
        let mut joined = bin.into_os_string();
        if !path.is_empty() {
            joined.push(":");
            joined.push(path);
        }
        env.set("PATH", joined);
        env.set("VIRTUAL_ENV", interp.prefix.clone().into_os_string());
    }
    for (k, v) in [
        ("MPLBACKEND", "Agg"),
        ("PYTHONIOENCODING", "utf-8"),
        ("PYTHONUNBUFFERED", "1"),
        ("TERM", "dumb"),
        ("NO_COLOR", "1"),
        ("PAGER", "cat"),
        ("GIT_PAGER", "cat"),
        ("PIP_NO_INPUT", "1"),
        ("PIP_DISABLE_PIP_VERSION_CHECK", "1"),
    ] {
        env.set(k, v);
    }
    env.set("EXECKIT_SESSION", session);
    env.into_vars()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_output_parses() {
        let out = b"[[3, 11, 7], \"/usr/bin/python3.11\", \"/v\", \"/usr\"]\n";
        let i = parse_probe(Path::new("/x/python3"), out).unwrap();
        assert_eq!(i.version, (3, 11, 7));
        assert_eq!(i.executable, PathBuf::from("/usr/bin/python3.11"));
        assert!(i.is_venv);
    }

    #[test]
    fn explicit_candidate_wins_alone() {
        let c = candidates(Path::new("/tmp"), Some("py/bin/python"), &|_| None);
        assert_eq!(c, vec![(PathBuf::from("/tmp/py/bin/python"), "EXECKIT_PYTHON".into())]);
    }

    #[test]
    fn allowlist_and_globs() {
        assert!(allowed("PATH", &[]));
        assert!(allowed("LC_ALL", &[]));
        assert!(!allowed("CARGO_HOME", &[]));
        assert!(allowed("MYAPP_X", &["MYAPP_*".into()]));
        assert!(allowed("FOO", &["FOO".into()]));
    }

    #[test]
    fn missing_message_lists_candidates() {
        let r = Resolution {
            chosen: None,
            rejected: vec![(
                PathBuf::from("/usr/bin/python3"),
                "Python 3.7.3 is older than 3.8".into(),
            )],
        };
        assert_eq!(
            r.missing_message(),
            "no Python ≥ 3.8 found; tried: /usr/bin/python3 (Python 3.7.3 is older than 3.8); \
             set EXECKIT_PYTHON or create .venv"
        );
    }
}
