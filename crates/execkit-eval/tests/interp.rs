//! The interpreter and its environment with the real python3: the on-disk probe cache and its
//! invalidation (P2), `sys.path` equivalence with `python -c` (P3), `%pip install` of a local
//! wheel into a venv (P15).
#![allow(clippy::disallowed_methods, clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use common::*;
use pretty_assertions::assert_eq;
use serde_json::Value;

/// The real interpreter behind `python3` on PATH.
fn real_python() -> PathBuf {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 on PATH");
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// A shell shim that counts its runs: every probe goes through it, kernels never do.
fn counting_shim(dir: &Path, real: &Path) -> (PathBuf, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let shim = dir.join("python3");
    let count = dir.join("probes");
    let script = format!(
        "#!/bin/sh\necho probe >> '{}'\nexec '{}' \"$@\"\n",
        count.display(),
        real.display()
    );
    std::fs::write(&shim, script).unwrap();
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
    (shim, count)
}

fn probes(count: &Path) -> usize {
    std::fs::read_to_string(count).map_or(0, |s| s.lines().count())
}

#[tokio::test]
async fn interpreter_cache_is_used_and_invalidated() {
    let shared = tempfile::tempdir().unwrap();
    let (shim, count) = counting_shim(shared.path(), &real_python());
    let cache = shared.path().join("cache");
    let work = shared.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    // Each runner resolves once; only the disk cache links them.
    let fresh_call = || async {
        let kit = Kit::build(|c, deps| {
            c.python = Some(shim.display().to_string());
            c.cache_dir = cache.clone();
            deps.cwd = work.clone();
        });
        let r = kit.py("print('up')").await;
        assert_eq!(r.text(), "up");
        kit.runner.close().await;
    };
    fresh_call().await;
    assert_eq!(probes(&count), 1);
    let file = cache.join("interpreters.json");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
    let json: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(json["entries"][0]["key"]["candidate"], shim.display().to_string());
    assert_eq!(json["entries"][0]["executable"], real_python().display().to_string());
    fresh_call().await;
    assert_eq!(probes(&count), 1, "a second runner reads the cache");
    // The candidate's mtime is part of the key.
    let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
    std::fs::File::options().write(true).open(&shim).unwrap().set_modified(old).unwrap();
    fresh_call().await;
    assert_eq!(probes(&count), 2, "a changed mtime re-probes");
    // So is the nearest .python-version (pyenv picks the interpreter from it).
    std::fs::write(work.join(".python-version"), "execkit-test\n").unwrap();
    fresh_call().await;
    assert_eq!(probes(&count), 3, "a new .python-version re-probes");
    fresh_call().await;
    assert_eq!(probes(&count), 3);
    // An entry whose executable has disappeared is dropped and probed again.
    let text = std::fs::read_to_string(&file).unwrap();
    let real = real_python().display().to_string();
    std::fs::write(&file, text.replace(&format!("\"{real}\""), "\"/nonexistent/python3\""))
        .unwrap();
    fresh_call().await;
    assert_eq!(probes(&count), 4, "a vanished executable re-probes");
    let json: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(json["entries"].as_array().unwrap().len(), 1, "{json}");
    assert_eq!(json["entries"][0]["executable"], real);
}

#[tokio::test]
async fn sys_path_matches_python_c_as_a_set() {
    // A PYTHONPATH entry the kernel must put on sys.path exactly like `python -c` does.
    let extra = std::env::temp_dir().join(format!("execkit-syspath-{}", std::process::id()));
    std::fs::create_dir_all(&extra).unwrap();
    // SAFETY: set before this test's kernel starts; an extra empty directory on the path of
    // other tests' kernels in this binary changes nothing they check.
    unsafe { std::env::set_var("PYTHONPATH", &extra) };
    let kit = Kit::new();
    let code = "import json, os, subprocess, sys\n\
        norm = lambda ps: sorted({os.path.abspath(p or '.') for p in ps})\n\
        out = subprocess.run([sys.executable, '-c', 'import sys, json; print(json.dumps(sys.path))'], capture_output=True, text=True).stdout\n\
        mine, theirs = norm(sys.path), norm(json.loads(out))\n\
        print(mine == theirs, sorted(set(mine) ^ set(theirs)))\n\
        print(sys.path[0] == os.getcwd(), os.environ['PYTHONPATH'] in sys.path)";
    let r = kit.py(code).await;
    assert_eq!(r.text(), "True []\nTrue True");
    kit.runner.close().await;
}

/// Writes a minimal, valid wheel (zip with the module and its dist-info) using the real python.
fn build_wheel(dir: &Path, version: &str) -> PathBuf {
    let wheel = dir.join(format!("execkit_demo_pkg-{version}-py3-none-any.whl"));
    let script = format!(
        "import zipfile, sys\n\
         v = '{version}'\n\
         di = f'execkit_demo_pkg-{{v}}.dist-info'\n\
         files = {{'execkit_demo_pkg/__init__.py': f'VALUE = \"{{v}}\"\\n',\n\
                  f'{{di}}/METADATA': f'Metadata-Version: 2.1\\nName: execkit-demo-pkg\\nVersion: {{v}}\\n',\n\
                  f'{{di}}/WHEEL': 'Wheel-Version: 1.0\\nGenerator: execkit-test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n'}}\n\
         record = ''.join(f'{{name}},,\\n' for name in files) + f'{{di}}/RECORD,,\\n'\n\
         files[f'{{di}}/RECORD'] = record\n\
         with zipfile.ZipFile(sys.argv[1], 'w') as z:\n\
         \x20   for name, text in files.items():\n\
         \x20       z.writestr(name, text)\n"
    );
    let status = Command::new(real_python()).arg("-c").arg(script).arg(&wheel).status().unwrap();
    assert!(status.success());
    wheel
}

#[tokio::test]
#[allow(clippy::print_stderr)]
async fn pip_installs_a_local_wheel_into_the_venv() {
    let dir = tempfile::tempdir().unwrap();
    let venv = dir.path().join("venv");
    let made = Command::new(real_python()).args(["-m", "venv"]).arg(&venv).output().unwrap();
    let pip_ok = made.status.success()
        && Command::new(venv.join("bin/python"))
            .args(["-m", "pip", "--version"])
            .output()
            .is_ok_and(|o| o.status.success());
    if !pip_ok {
        let why = String::from_utf8_lossy(&made.stderr).lines().last().unwrap_or("").to_string();
        assert!(
            std::env::var("EXECKIT_TEST_STRICT").as_deref() != Ok("1"),
            "venv with pip unavailable: {why}"
        );
        // Written to fd 2 directly, so the notice shows even when the harness captures output.
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            format!("SKIPPED pip_installs_a_local_wheel_into_the_venv: no venv with pip ({why})\n")
                .as_bytes(),
        );
        return;
    }
    let v1 = build_wheel(dir.path(), "0.1");
    let v2 = build_wheel(dir.path(), "0.2");
    let kit = Kit::with(|c| c.python = Some(venv.join("bin/python").display().to_string()));
    let r = kit.py(&format!("%pip install --no-index {}", v1.display())).await;
    assert!(!r.is_error, "{}", r.text());
    assert!(r.text().contains("Successfully installed execkit-demo-pkg-0.1"), "{}", r.text());
    let r = kit.py("import sys, execkit_demo_pkg\nprint(execkit_demo_pkg.VALUE, sys.prefix)").await;
    assert_eq!(r.text(), format!("0.1 {}", venv.canonicalize().unwrap().display()));
    let r = kit.py(&format!("%pip install --no-index {}", v2.display())).await;
    assert!(
        r.text().ends_with(
            "[execkit_demo_pkg was already imported; run a cell with \"reset\": true to load the new version]"
        ),
        "{}",
        r.text()
    );
    let r = kit
        .call(serde_json::json!({"cells": [{"language": "py", "reset": true,
            "code": "import execkit_demo_pkg\nexeckit_demo_pkg.VALUE"}]}))
        .await;
    assert_eq!(r.text(), "'0.2'");
    let r = kit.py("%pip install --no-index execkit-no-such-package").await;
    assert!(r.is_error);
    assert!(
        r.text().starts_with("Cell 1 failed: PipError: pip exited with code 1."),
        "{}",
        r.text()
    );
    kit.runner.close().await;
}

/// The probe runs with the Toolkit's saved environment (the lookup), not with whatever the
/// process environment holds: a variable only the lookup has reaches the probed candidate.
#[tokio::test]
async fn the_probe_runs_with_the_lookup_environment() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("seen");
    let shim = dir.path().join("python3");
    let script = format!(
        "#!/bin/sh\necho \"mark=$EXECKIT_TEST_PROBE_MARK\" >> '{}'\nexec '{}' \"$@\"\n",
        seen.display(),
        real_python().display()
    );
    std::fs::write(&shim, script).unwrap();
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
    let kit = Kit::build(|c, deps| {
        c.python = Some(shim.display().to_string());
        deps.lookup.set("EXECKIT_TEST_PROBE_MARK", "from-lookup");
    });
    let r = kit.py("print('up')").await;
    assert_eq!(r.text(), "up");
    assert_eq!(std::fs::read_to_string(&seen).unwrap(), "mark=from-lookup\n");
    kit.runner.close().await;
}
