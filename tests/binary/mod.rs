//! The `execkit` binary under attack: its own environment block and what outlives a SIGKILL.
//! Built by `cargo build -p execkit-cli` before these tests run.

mod rundir;
mod secrets;
mod watchdog;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::cli::execkit_bin;

use tempfile::TempDir;

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
