//! Finding the interpreter kernels run (spec P1): the candidates in order, each probed once
//! with `-I -c`, the first Python ≥ 3.8 wins. The kernel is then spawned with the probed
//! `sys.executable`, never through the candidate path: a pyenv-style shim costs ~95 ms per
//! start, the interpreter behind it ~10 ms.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use execkit_process::{SpawnSpec, StdinMode, Supervisor};
use execkit_tool::Lookup;

use crate::python::cache::{InterpCache, ProbeKey};
use crate::python::interpreter::{Interpreter, Resolution};

const PROBE: &str = "import sys,json;print(json.dumps([list(sys.version_info[:3]),\
sys.executable,sys.prefix,getattr(sys,'base_prefix',sys.prefix)]))";
/// Budget for one candidate's probe (P1).
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);
/// The candidates in spec P1's order: `EXECKIT_PYTHON` alone when set; else `VIRTUAL_ENV`,
/// `CONDA_PREFIX`, a `.venv` or `venv` up to the repository root, `~/.execkit/python-env`,
/// then `python3` and `python` on PATH.
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
        let path_var = lookup("PATH").unwrap_or_default();
        if let Some(found) = execkit_process::find_on_path(&path_var, name) {
            out.push((found, "PATH".to_string()));
        }
    }
    out
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
}
