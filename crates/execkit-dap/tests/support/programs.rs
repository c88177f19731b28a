//! The programs the real-adapter tests debug, how to build them, and how a test without an
//! adapter is skipped. One file for execkit-dap's own tests and for the debug tool's tests in
//! the workspace `tests/` package, which includes it by path, so both debug the same code at
//! the same lines.

// Each test binary that includes this file uses a different part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// A breakpoint goes on line 2 (`c = a + b`); `main` prints `total 3`.
pub const CALC_PY: &str = "\
def add(a, b):
    c = a + b
    return c


def main():
    total = add(1, 2)
    print(\"total\", total)


main()
";

/// A breakpoint goes on line 4 (`int c = a + b;`).
pub const CALC_C: &str = "\
#include <stdio.h>

int add(int a, int b) {
    int c = a + b;
    return c;
}

int main(void) {
    int total = add(1, 2);
    printf(\"total %d\\n\", total);
    return 0;
}
";

/// A breakpoint goes on line 6 (`c := a + b`).
pub const CALC_GO: &str = "\
package main

import \"fmt\"

func add(a int, b int) int {
\tc := a + b
\treturn c
}

func main() {
\ttotal := add(1, 2)
\tfmt.Println(\"total\", total)
}
";

/// Never stops on its own.
pub const LOOP_PY: &str = "\
import time

n = 0
while True:
    n += 1
    time.sleep(0.01)
";

/// Runs `child.py` as a Python subprocess, so debugpy opens a child session for it.
pub const PARENT_PY: &str = "\
import subprocess
import sys

subprocess.run([sys.executable, \"child.py\"], check=True)
print(\"parent done\")
";

/// A breakpoint goes on line 2 (`doubled = n * 2`, with `n` = 21); it prints `child 42`.
pub const CHILD_PY: &str = "\
def work(n):
    doubled = n * 2
    return doubled


print(\"child\", work(21))
";

/// The names lldb-dap 19 goes by.
pub const LLDB_DAP: &[&str] = &["lldb-dap-19", "/usr/lib/llvm-19/bin/lldb-dap", "lldb-dap"];

/// Prints why a test does not run; fails instead under `EXECKIT_DAP_REQUIRE_ADAPTERS=1` (CI).
#[allow(clippy::print_stderr)]
pub fn skip(reason: &str) {
    if std::env::var_os("EXECKIT_DAP_REQUIRE_ADAPTERS").is_some_and(|v| v == "1") {
        panic!("{reason}");
    }
    eprintln!("SKIP: {reason}");
}

/// `name` as an absolute path that exists, or found on PATH.
pub fn on_path(name: &str) -> Option<PathBuf> {
    let candidate = Path::new(name);
    if candidate.is_absolute() {
        return candidate.exists().then(|| candidate.to_path_buf());
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file())
}

/// Whether `python3` can import debugpy (asked once per test binary).
pub fn has_debugpy() -> bool {
    static OK: OnceLock<bool> = OnceLock::new();
    *OK.get_or_init(|| {
        Command::new("python3")
            .args(["-c", "import debugpy"])
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

pub fn has_lldb() -> bool {
    LLDB_DAP.iter().any(|name| on_path(name).is_some())
}

/// Writes `calc.c` into `dir` and builds `calc` from it with `gcc -g -O0`; `None` without gcc.
pub fn build_c(dir: &Path) -> Option<PathBuf> {
    on_path("gcc")?;
    std::fs::write(dir.join("calc.c"), CALC_C).ok()?;
    let out = dir.join("calc");
    let mut gcc = Command::new("gcc");
    gcc.args(["-g", "-O0", "-o"]).arg(&out).arg(dir.join("calc.c"));
    gcc.status().ok()?.success().then_some(out)
}

/// Writes `calc.go` into `dir` and builds `calc` from it without optimisations; `None`
/// without go.
pub fn build_go(dir: &Path) -> Option<PathBuf> {
    on_path("go")?;
    std::fs::write(dir.join("calc.go"), CALC_GO).ok()?;
    let out = dir.join("calc");
    let status = Command::new("go")
        .args(["build", "-gcflags=all=-N -l", "-o"])
        .arg(&out)
        .arg("calc.go")
        .current_dir(dir)
        .status()
        .ok()?;
    status.success().then_some(out)
}
