//! The programs the debug benchmark stops and steps, one per adapter, and how the raw driver
//! starts each adapter with the `launch` arguments the debug tool builds for it.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use super::raw::RawAdapter;

const PYTHON: &str = "\
total = 0
for i in range(100000):
    total += i
    total -= 1
print(total)
";

const C: &str = "\
#include <stdio.h>
int main(void) {
    long total = 0;
    for (long i = 0; i < 1000000; i++) {
        total += i;
        total -= 1;
    }
    printf(\"%ld\\n\", total);
    return 0;
}
";

const GO: &str = "\
package main

import \"fmt\"

func main() {
\ttotal := 0
\tfor i := 0; i < 1000000; i++ {
\t\ttotal += i
\t\ttotal -= 1
\t}
\tfmt.Println(total)
}
";

/// One adapter's case: what is launched, where it stops, and the raw driver's view of it.
pub struct Case {
    pub name: &'static str,
    /// The tool's adapter name.
    pub adapter: &'static str,
    pub program: PathBuf,
    pub source: PathBuf,
    /// The loop's first line: the breakpoint, then the lines the steps walk.
    pub line: i64,
    pub raw: RawAdapter,
}

/// debugpy on the interpreter the tool resolves (the real executable behind `python3`), with
/// the tool's `sitecustomize` on the adapter's PYTHONPATH when `fix` names its directory.
pub fn debugpy(dir: &Path, fix: Option<&Path>) -> Result<Case, String> {
    let source = write(dir, "steps.py", PYTHON)?;
    let python = output("python3", &["-c", "import sys, debugpy; print(sys.executable)"])?;
    let launch = json!({
        "justMyCode": false, "console": "internalConsole", "python": python,
        "pythonArgs": ["-Xfrozen_modules=off"], "program": source, "cwd": dir,
        "stopOnEntry": false,
    });
    let env = fix.map(|d| ("PYTHONPATH".to_string(), d.display().to_string()));
    let raw = RawAdapter {
        argv: vec![python.clone(), "-m".into(), "debugpy.adapter".into()],
        env: env.into_iter().collect(),
        dials: false,
        adapter_id: "debugpy",
        launch,
    };
    Ok(Case { name: "debugpy", adapter: "debugpy", program: source.clone(), source, line: 3, raw })
}

/// lldb-dap 19 on a C loop built with `gcc -g -O0`.
pub fn lldb(dir: &Path) -> Result<Case, String> {
    let source = write(dir, "steps.c", C)?;
    let program = dir.join("steps-c");
    run(Command::new("gcc").args(["-g", "-O0", "-o"]).arg(&program).arg(&source))?;
    let adapter = output("sh", &["-c", "command -v lldb-dap-19"])?;
    let launch = json!({"program": program, "cwd": dir, "stopOnEntry": false});
    let raw = RawAdapter {
        argv: vec![adapter],
        env: Vec::new(),
        dials: false,
        adapter_id: "lldb-dap",
        launch,
    };
    Ok(Case { name: "lldb-dap-19", adapter: "lldb-dap", program, source, line: 5, raw })
}

/// dlv on a Go loop built without optimisations, launched in `exec` mode as the tool does
/// for a built binary; dlv dials the driver's socket.
pub fn dlv(dir: &Path) -> Result<Case, String> {
    let src_dir = dir.join("go");
    std::fs::create_dir_all(&src_dir).map_err(|e| e.to_string())?;
    let source = write(&src_dir, "main.go", GO)?;
    write(&src_dir, "go.mod", "module steps\n\ngo 1.19\n")?;
    let program = dir.join("steps-go");
    let mut build = Command::new("go");
    build.args(["build", "-gcflags=all=-N -l", "-o"]).arg(&program).arg(".").current_dir(&src_dir);
    run(build.env("GOFLAGS", "-mod=mod"))?;
    let adapter = output("sh", &["-c", "command -v dlv"])?;
    let launch = json!({"mode": "exec", "program": program, "cwd": dir, "stopOnEntry": false});
    let raw = RawAdapter {
        argv: vec![adapter, "dap".into(), "--client-addr={addr}".into()],
        env: Vec::new(),
        dials: true,
        adapter_id: "dlv",
        launch,
    };
    Ok(Case { name: "dlv", adapter: "dlv", program, source, line: 8, raw })
}

fn write(dir: &Path, name: &str, text: &str) -> Result<PathBuf, String> {
    let path = dir.join(name);
    std::fs::write(&path, text).map_err(|e| format!("cannot write {name}: {e}"))?;
    Ok(path)
}

fn run(command: &mut Command) -> Result<(), String> {
    let out = command.output().map_err(|e| e.to_string())?;
    match out.status.success() {
        true => Ok(()),
        false => Err(String::from_utf8_lossy(&out.stderr).trim().to_string()),
    }
}

/// The first line a command prints, which must succeed.
fn output(program: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(program).args(args).output().map_err(|e| e.to_string())?;
    let first = String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or("").to_string();
    match out.status.success() && !first.is_empty() {
        true => Ok(first),
        false => Err(format!("{program} {}: not available", args.join(" "))),
    }
}
