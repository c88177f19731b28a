//! Peak RSS of `execkit call bash` under a 2 GiB flood, with every byte counted.

use std::process::{Command, Stdio};
use std::time::Duration;

const FLOOD: &str = "head -c 2G /dev/zero | tr '\\0' a";
const FLOOD_LINES: &str = "yes aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa | head -c 2G";

fn vm_hwm_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn execkit_binary() -> Option<std::path::PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let candidate = exe.parent()?.join("execkit");
    candidate.exists().then_some(candidate)
}

pub fn flood() {
    let Some(execkit) = execkit_binary() else {
        return println!("flood-rss: build the CLI first: cargo build --release -p execkit-cli");
    };
    let Ok(dir) = tempfile::tempdir() else { return println!("flood-rss: no temp dir") };
    for (name, command) in [("no newlines", FLOOD), ("80-byte lines", FLOOD_LINES)] {
        let args = serde_json::json!({"command": command, "timeout": 600}).to_string();
        let child = Command::new(&execkit)
            .args(["call", "bash", &args])
            .env("EXECKIT_ARTIFACT_DIR", dir.path().join("artifacts"))
            .stdout(Stdio::piped())
            .spawn();
        let Ok(child) = child else { return println!("flood-rss: cannot start {execkit:?}") };
        let pid = child.id();
        let sampler = std::thread::spawn(move || {
            let mut peak = 0;
            while let Some(kib) = vm_hwm_kib(pid) {
                peak = peak.max(kib);
                std::thread::sleep(Duration::from_millis(20));
            }
            peak
        });
        let output = child.wait_with_output();
        let peak_kib = sampler.join().unwrap_or(0);
        let Ok(output) = output else { return println!("flood-rss: the call failed") };
        let result: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap_or_default();
        let truncation = &result["structuredContent"]["truncation"];
        println!(
            "flood-rss ({name}, 2 GiB): peak RSS {:.1} MiB (target <= 64 MiB); raw_bytes {} \
             total_bytes {} (expected 2147483648); artifact {}",
            peak_kib as f64 / 1024.0,
            truncation["raw_bytes"],
            truncation["total_bytes"],
            truncation["artifact"],
        );
    }
}
