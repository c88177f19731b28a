//! O41: when execkit dies by SIGKILL, the watchdog kills what the parent-death signal of its
//! direct children cannot reach: `setsid` grandchildren of bash and children of eval kernels.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use super::Home;

/// Far above the 1 s the watchdog is meant to take, for a loaded machine.
const BOUND: Duration = Duration::from_secs(15);
/// How long a command (or a Python kernel) may take to start and write its pid.
const START_BOUND: Duration = Duration::from_secs(60);

/// Starts `execkit call <tool> <args>` in the background with extra variables.
fn start(home: &Home, tool: &str, args: &serde_json::Value, env: &[(&str, &str)]) -> Child {
    let mut command = home.command();
    command.args(["call", tool, &args.to_string()]).stdout(Stdio::null()).stderr(Stdio::null());
    for (name, value) in env {
        command.env(name, value);
    }
    command.spawn().expect("execkit starts")
}

/// Waits for the pid a command wrote into `file`.
fn read_pid(file: &Path, execkit: &mut Child) -> u32 {
    let until = Instant::now() + START_BOUND;
    loop {
        if let Some(pid) = std::fs::read_to_string(file).ok().and_then(|t| t.trim().parse().ok()) {
            return pid;
        }
        assert!(execkit.try_wait().unwrap().is_none(), "execkit exited before the pid was written");
        assert!(Instant::now() < until, "no pid in {} after {START_BOUND:?}", file.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Alive and not a zombie (a zombie waits only for init to reap it).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(") ").map(|(_, rest)| !rest.starts_with('Z')))
        .unwrap_or(false)
}

/// SIGKILLs execkit and asserts that `pid` is gone within the bound.
fn kill_and_expect_gone(mut execkit: Child, pid: u32) {
    assert!(running(pid), "pid {pid} should run before execkit dies");
    execkit.kill().unwrap();
    execkit.wait().unwrap();
    let killed = Instant::now();
    while running(pid) {
        if killed.elapsed() > BOUND {
            // SAFETY: kill with a signal only; cleans up after a failed test.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            panic!("pid {pid} survived execkit's SIGKILL for {BOUND:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_setsid_grandchild_of_bash_dies_with_execkit() {
    let home = Home::new();
    let file = home.path().join("pid");
    let command = format!("setsid sleep 300 & echo $! > {}; sleep 300", file.display());
    let mut execkit = start(&home, "bash", &json!({ "command": command }), &[]);
    let pid = read_pid(&file, &mut execkit);
    kill_and_expect_gone(execkit, pid);
}

#[test]
fn a_background_child_dies_with_execkit_without_cgroups() {
    let home = Home::new();
    let file = home.path().join("pid");
    let command = format!("sleep 300 & echo $! > {}; sleep 300", file.display());
    let no_cgroup = [("EXECKIT_NO_CGROUP", "1")];
    let mut execkit = start(&home, "bash", &json!({ "command": command }), &no_cgroup);
    let pid = read_pid(&file, &mut execkit);
    kill_and_expect_gone(execkit, pid);
}

#[test]
fn a_child_of_an_eval_kernel_dies_with_execkit() {
    let home = Home::new();
    let file = home.path().join("pid");
    let code = format!(
        "import subprocess, time\n\
         p = subprocess.Popen(['sleep', '300'], start_new_session=True)\n\
         open({:?}, 'w').write(str(p.pid))\n\
         time.sleep(300)",
        file.display().to_string()
    );
    let args = json!({ "cells": [{ "language": "py", "code": code }] });
    let mut execkit = start(&home, "eval", &args, &[]);
    let pid = read_pid(&file, &mut execkit);
    kill_and_expect_gone(execkit, pid);
}
