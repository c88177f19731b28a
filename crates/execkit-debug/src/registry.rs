//! The adapter definitions in force and whether each can run here: built-ins from
//! `execkit-dap`, a resolved command line, the Python interpreter debugpy needs, gdb's DAP
//! version, and the install hint when something is missing.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use execkit_dap::adapters::AdapterDef;
use execkit_dap::resolve;
use execkit_process::{SpawnSpec, StdinMode, Supervisor};
use execkit_tool::Lookup;

/// How long an availability probe (`python -c "import debugpy"`, `gdb --version`) may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(15);

/// A definition that can run: its argv with the program resolved (placeholders still in the
/// rest), and the interpreter for `${python}`.
#[derive(Debug, Clone)]
pub struct Available {
    pub argv: Vec<String>,
    pub path: PathBuf,
    pub python: Option<String>,
}

/// Why a definition cannot run, and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    pub name: String,
    pub reason: String,
    pub hint: String,
}

impl Unavailable {
    pub fn text(&self) -> String {
        format!(
            "Debug adapter '{}' is not available: {}. Install: {}",
            self.name, self.reason, self.hint
        )
    }
}

/// Built-in definitions and the availability cache.
pub struct Registry {
    pub defs: Vec<AdapterDef>,
    pub warnings: Vec<String>,
    /// Positive results by name, valid while the resolved file's mtime is unchanged.
    cache: Mutex<HashMap<String, (Available, Option<SystemTime>)>>,
    /// The last answer per name, for doctor.
    last: Mutex<HashMap<String, Result<Available, Unavailable>>>,
}

impl Registry {
    /// The built-ins with the user's and the project's `dap.json` layered over them.
    pub fn new(home: Option<&Path>, project_root: &Path) -> Registry {
        let (defs, warnings) = crate::custom::layered(home, project_root);
        Registry { defs, warnings, cache: Mutex::default(), last: Mutex::default() }
    }

    pub fn get(&self, name: &str) -> Option<&AdapterDef> {
        self.defs.iter().find(|d| d.name == name)
    }

    pub fn names(&self) -> Vec<String> {
        self.defs.iter().map(|d| d.name.clone()).collect()
    }

    /// Whether `def` can run now. A positive answer is cached per resolved path and mtime; a
    /// negative one is checked again next time, so an adapter installed meanwhile is found.
    pub async fn check(
        &self,
        def: &AdapterDef,
        probe: &Probe<'_>,
    ) -> Result<Available, Unavailable> {
        if let Some(hit) = self.cached(&def.name) {
            return Ok(hit);
        }
        let result = check_uncached(def, probe).await;
        if let Ok(mut last) = self.last.lock() {
            last.insert(def.name.clone(), result.clone());
        }
        let found = result?;
        let mtime = mtime(&found.path);
        if let Ok(mut cache) = self.cache.lock() {
            cache.insert(def.name.clone(), (found.clone(), mtime));
        }
        Ok(found)
    }

    /// Checks every definition (for doctor).
    pub async fn check_all(&self, probe: &Probe<'_>) {
        for def in &self.defs {
            let _ = self.check(def, probe).await;
        }
    }

    /// `debugpy: /usr/bin/python3 -m debugpy.adapter`, or `dlv: missing: <reason>. Install: <hint>`.
    pub fn cached_line(&self, name: &str) -> Option<String> {
        let last = self.last.lock().ok()?;
        Some(match last.get(name)? {
            Ok(found) => format!("{name}: {}", found.argv.join(" ")),
            Err(u) => format!("{name}: missing: {}. Install: {}", u.reason, u.hint),
        })
    }

    fn cached(&self, name: &str) -> Option<Available> {
        let cache = self.cache.lock().ok()?;
        let (found, when) = cache.get(name)?;
        (mtime(&found.path) == *when && when.is_some()).then(|| found.clone())
    }
}

fn mtime(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// What a probe needs: where to search, with which environment, how to run helpers.
pub struct Probe<'a> {
    pub supervisor: &'a Supervisor,
    pub lookup: &'a Lookup,
    pub project_root: &'a Path,
    pub env: &'a [(OsString, OsString)],
}

impl Probe<'_> {
    /// The project's `.venv/bin`, its `node_modules/.bin`, then PATH.
    pub fn search_dirs(&self) -> Vec<PathBuf> {
        let mut dirs =
            vec![self.project_root.join(".venv/bin"), self.project_root.join("node_modules/.bin")];
        let path = self.lookup.get("PATH").unwrap_or("");
        dirs.extend(path.split(':').filter(|d| !d.is_empty()).map(PathBuf::from));
        dirs
    }

    /// `$VIRTUAL_ENV/bin/python`, else the project's `.venv/bin/python`, else `python3` from
    /// PATH.
    fn python_candidate(&self) -> Option<PathBuf> {
        if let Some(venv) = self.lookup.non_empty("VIRTUAL_ENV") {
            let python = Path::new(&venv).join("bin/python");
            if python.exists() {
                return Some(python);
            }
        }
        let local = self.project_root.join(".venv/bin/python");
        if local.exists() {
            return Some(local);
        }
        execkit_process::find_on_path(self.lookup.get("PATH").unwrap_or(""), "python3")
    }

    /// Runs a helper to its end (bounded); its exit code and merged output.
    pub async fn run(&self, program: &Path, args: &[&str]) -> Option<(i32, String)> {
        let spec = SpawnSpec {
            program: program.to_path_buf(),
            args: args.iter().map(OsString::from).collect(),
            cwd: self.project_root.to_path_buf(),
            env: self.env.to_vec(),
            stdin: StdinMode::Null,
            ..SpawnSpec::default()
        };
        let mut child = self.supervisor.spawn(spec).await.ok()?;
        let mut output = child.take_output()?;
        let tree = child.tree();
        let collect = async {
            let mut text = Vec::new();
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = output.read(&mut buf).await {
                text.extend_from_slice(&buf[..n.min(65_536usize.saturating_sub(text.len()))]);
            }
            let status = child.wait().await.ok()?;
            Some((status.code.unwrap_or(-1), String::from_utf8_lossy(&text).into_owned()))
        };
        match tokio::time::timeout(PROBE_TIMEOUT, collect).await {
            Ok(result) => result,
            Err(_) => {
                tree.kill(Duration::from_millis(500)).await;
                None
            }
        }
    }
}

async fn check_uncached(def: &AdapterDef, probe: &Probe<'_>) -> Result<Available, Unavailable> {
    let unavailable = |reason: String, python: Option<&str>| Unavailable {
        name: def.name.clone(),
        reason,
        hint: def.install_hint.replace("${python}", python.unwrap_or("python3")),
    };
    if def.command.first().and_then(|argv| argv.first()).is_some_and(|p| p == "${python}") {
        return check_python(def, probe)
            .await
            .map_err(|(reason, python)| unavailable(reason, python.as_deref()));
    }
    let Some((index, path)) = resolve::resolve_command(def, &probe.search_dirs()) else {
        let tried: Vec<String> =
            def.command.iter().filter_map(|argv| argv.first().cloned()).collect();
        return Err(unavailable(format!("{} not found on PATH", tried.join(", ")), None));
    };
    let unset = def.command[index].iter().find_map(|arg| {
        let var = arg.split("${env:").nth(1)?.split('}').next()?;
        probe.lookup.non_empty(var).is_none().then(|| var.to_string())
    });
    if let Some(var) = unset {
        return Err(unavailable(format!("{var} is not set"), None));
    }
    if let Some(min) = &def.available.min_version {
        check_version(def, probe, &path, min).await.map_err(|reason| unavailable(reason, None))?;
    }
    let mut argv = def.command[index].clone();
    argv[0] = path.display().to_string();
    argv.extend(def.args.iter().cloned());
    Ok(Available { argv, path, python: None })
}

/// The interpreter resolved to its real executable, with the adapter's module importable.
async fn check_python(
    def: &AdapterDef,
    probe: &Probe<'_>,
) -> Result<Available, (String, Option<String>)> {
    let Some(python) = probe.python_candidate() else {
        return Err(("no python3 on PATH".to_string(), None));
    };
    let shown = python.display().to_string();
    let module = def.available.python_module.as_deref().unwrap_or("sys");
    let code = format!("import sys; print(sys.executable); import {module}");
    match probe.run(&python, &["-c", &code]).await {
        Some((0, out)) => {
            let real =
                out.lines().next().map(str::trim).filter(|l| !l.is_empty()).unwrap_or(&shown);
            let mut argv = def.command[0].clone();
            argv[0] = real.to_string();
            argv.extend(def.args.iter().cloned());
            Ok(Available { argv, path: PathBuf::from(real), python: Some(real.to_string()) })
        }
        _ => Err((format!("{shown} cannot import {module}"), Some(shown))),
    }
}

/// gdb 13 has no DAP: its version must be at least `min`.
async fn check_version(
    def: &AdapterDef,
    probe: &Probe<'_>,
    path: &Path,
    min: &str,
) -> Result<(), String> {
    let args: Vec<&str> = def.available.version_args.iter().map(String::as_str).collect();
    let out = probe.run(path, &args).await.map(|(_, out)| out).unwrap_or_default();
    let pattern = def.available.version_regex.as_deref().unwrap_or(r"(\d+(?:\.\d+)*)");
    let found = regex::Regex::new(pattern)
        .ok()
        .and_then(|re| re.captures(&out).and_then(|c| c.get(1)).map(|m| m.as_str().to_string()));
    match found {
        Some(version) if version_at_least(&version, min) => Ok(()),
        Some(version) => {
            Err(format!("{} is version {version}, DAP needs version {min}", path.display()))
        }
        None => Err(format!("{} did not report a version", path.display())),
    }
}

/// `14.2` >= `14`, compared number by number.
pub fn version_at_least(version: &str, min: &str) -> bool {
    let parts = |v: &str| -> Vec<u64> { v.split('.').filter_map(|p| p.parse().ok()).collect() };
    parts(version) >= parts(min)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_by_number() {
        assert!(version_at_least("14.2", "14"));
        assert!(!version_at_least("13.1", "14"));
        assert!(version_at_least("15", "14"));
    }

    #[test]
    fn unavailable_text_names_reason_and_hint() {
        let u = Unavailable {
            name: "dlv".into(),
            reason: "dlv not found on PATH".into(),
            hint: "go install x".into(),
        };
        assert_eq!(
            u.text(),
            "Debug adapter 'dlv' is not available: dlv not found on PATH. Install: go install x"
        );
    }
}
