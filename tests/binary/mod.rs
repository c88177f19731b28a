//! The `execkit` binary under attack: its own environment block and what outlives a SIGKILL.
//! Built by `cargo build -p execkit-cli` before these tests run.

mod rundir;
mod secrets;
mod watchdog;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use tempfile::TempDir;

/// `CARGO_BIN_EXE_execkit` when set, else `target/<profile>/execkit` beside this test binary.
fn execkit_bin() -> PathBuf {
    if let Some(path) = std::env::var_os("CARGO_BIN_EXE_execkit") {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().expect("the test binary has a path");
    let profile = exe.parent().and_then(Path::parent).expect("target/<profile>/deps");
    let bin = profile.join("execkit");
    assert!(bin.is_file(), "build the binary first: cargo build -p execkit-cli");
    bin
}

/// A private HOME and artifact directory; no login-shell snapshot, so calls are quick.
struct Home {
    dir: TempDir,
}

impl Home {
    fn new() -> Home {
        Home { dir: tempfile::tempdir().expect("temp dir") }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn command(&self) -> Command {
        let mut command = Command::new(execkit_bin());
        command
            .env("HOME", self.path())
            .env("EXECKIT_ARTIFACT_DIR", self.path().join("artifacts"))
            .env("EXECKIT_BASH_SNAPSHOT", "off")
            .current_dir(self.path())
            .stdin(Stdio::null());
        command
    }

    /// `execkit call <tool> <json>` with extra variables in execkit's own environment.
    fn call(&self, tool: &str, args: &serde_json::Value, env: &[(&str, &str)]) -> Output {
        let mut command = self.command();
        command.args(["call", tool, &args.to_string()]);
        for (name, value) in env {
            command.env(name, value);
        }
        command.output().expect("execkit runs")
    }
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}
