//! ssh warm-call latency and host-group fan-out against a loopback sshd started here (the
//! test suite's recipe): execkit's native mux through `Toolkit::call`, process-mux through
//! the client, plain `ssh` over a ControlMaster and plain `ssh` with a fresh login each
//! time, in one run, with the ratios the spec sets (native ≤ 1.0× ControlMaster, ≤ 0.05×
//! fresh login; fan-out of 16 with `parallel: 16` ≤ 0.3× the same calls one after another).

use std::process::Command;
use std::time::{Duration, Instant};

use execkit::{CallContext, Toolkit};
use execkit_ssh::{MuxClient, RunRequest, SshOptions};
use serde_json::{Value, json};

use crate::stats::{ms, summarize};

#[allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    reason = "the test suite's sshd fixture, which panics on a broken setup"
)]
#[path = "../../crates/execkit-ssh/tests/support/mod.rs"]
mod sshd;

use sshd::{Project, Sshd};

const WARM_RUNS: usize = 100;
const FRESH_RUNS: usize = 10;
const FAN_OUT: usize = 16;

pub async fn latency() {
    if let Some(reason) = sshd::skip_reason() {
        return println!("ssh: skipped ({reason})");
    }
    let sshd = Sshd::start_with_plain_user(10);
    let mut hosts = serde_json::Map::new();
    hosts.insert("box".into(), sshd.entry(json!({ "shell": "sh" })));
    for n in 0..FAN_OUT {
        hosts.insert(format!("h{n}"), sshd.entry(json!({ "shell": "sh" })));
    }
    let project = Project::new(Value::Object(hosts));
    let Some(kit) = toolkit(&project) else { return println!("ssh: the toolkit did not start") };
    let native = time_calls(WARM_RUNS, || call(&kit, json!({"host": "box", "command": "true"})));
    let native = summarize(native.await);
    let client =
        project.client_with(SshOptions { mux: MuxClient::Process, ..SshOptions::default() });
    let request = RunRequest::new("box", "true", None, Duration::from_secs(30));
    let process = time_calls(WARM_RUNS, || async { client.run(&request).await.is_ok() });
    let process = summarize(process.await);
    let master = project.control.join("plain");
    let cm = format!("ControlPath={}", master.display());
    let with_cm = ["-o", "ControlMaster=auto", "-o", "ControlPersist=60", "-o", cm.as_str()];
    let plain_cm = summarize(time_plain(&sshd, &with_cm, WARM_RUNS));
    let fresh = summarize(time_plain(&sshd, &[], FRESH_RUNS));
    let _ = plain_ssh(&sshd, &["-o", cm.as_str(), "-O", "exit"])
        .stderr(std::process::Stdio::null())
        .status();
    let user =
        if sshd.user == "root" { "root (its rc files run per session)" } else { "a /bin/sh user" };
    println!("ssh warm `true`, logged in as {user}, medians (p99):");
    for (label, s) in [
        ("execkit ssh, native mux (Toolkit::call)", &native),
        ("execkit ssh, process-mux (SshClient::run)", &process),
        ("plain ssh over a ControlMaster", &plain_cm),
        ("plain ssh, fresh login", &fresh),
    ] {
        println!("  {label}: {:.2} ms ({:.2} ms)", ms(s.median), ms(s.p99));
    }
    let ratio = |a: &crate::stats::Summary, b: &crate::stats::Summary| ms(a.median) / ms(b.median);
    println!(
        "  native / ControlMaster {:.2}× (target ≤ 1.0×); native / fresh login {:.3}× (target ≤ \
         0.05×); process-mux / ControlMaster {:.2}×",
        ratio(&native, &plain_cm),
        ratio(&native, &fresh),
        ratio(&process, &plain_cm)
    );
    fan_out(&kit).await;
    kit.close().await;
}

/// 16 host entries with `parallel: 16`, against the same 16 calls one after another.
async fn fan_out(kit: &Toolkit) {
    let names: Vec<String> = (0..FAN_OUT).map(|n| format!("h{n}")).collect();
    let group = json!({"hosts": names, "command": "true", "parallel": FAN_OUT});
    // Warm: every master up.
    if !call(kit, group.clone()).await {
        return println!("ssh fan-out: the warm-up group call failed");
    }
    let mut parallel = Vec::new();
    let mut serial = Vec::new();
    for _ in 0..10 {
        let started = Instant::now();
        call(kit, group.clone()).await;
        parallel.push(started.elapsed());
        let started = Instant::now();
        for name in &names {
            call(kit, json!({"host": name, "command": "true"})).await;
        }
        serial.push(started.elapsed());
    }
    let (parallel, serial) = (summarize(parallel), summarize(serial));
    println!(
        "ssh fan-out of `true` to {FAN_OUT} hosts, 10 runs, medians: parallel {:.1} ms, one after \
         another {:.1} ms, {:.2}× (target ≤ 0.3×)",
        ms(parallel.median),
        ms(serial.median),
        ms(parallel.median) / ms(serial.median)
    );
}

fn toolkit(project: &Project) -> Option<Toolkit> {
    Toolkit::builder()
        .cwd(project.root.path())
        .var("HOME", project.home.path().to_string_lossy())
        .var("EXECKIT_SSH_CONTROL_DIR", project.control.to_string_lossy())
        .var("EXECKIT_ARTIFACT_DIR", project.home.path().join("artifacts").to_string_lossy())
        .var("EXECKIT_BASH_SNAPSHOT", "off")
        .var("EXECKIT_EVAL_PREWARM", "0")
        .build()
        .ok()
}

/// True when the call succeeded.
async fn call(kit: &Toolkit, args: Value) -> bool {
    !kit.call("ssh", args, CallContext::default()).await.is_error
}

/// One warm-up call, then `runs` timed ones.
async fn time_calls<F, Fut>(runs: usize, mut one: F) -> Vec<Duration>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    one().await;
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        one().await;
        times.push(started.elapsed());
    }
    times
}

fn plain_ssh(sshd: &Sshd, extra: &[&str]) -> Command {
    let mut cmd = Command::new("ssh");
    cmd.args(["-F", "none", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=accept-new"])
        .arg("-i")
        .arg(&sshd.key)
        .arg("-o")
        .arg(format!("UserKnownHostsFile={}", sshd.dir.path().join("known_hosts").display()))
        .args(["-p", &sshd.port.to_string(), "-l", &sshd.user])
        .args(extra)
        .args(["127.0.0.1", "true"]);
    cmd
}

fn time_plain(sshd: &Sshd, extra: &[&str], runs: usize) -> Vec<Duration> {
    let _ = plain_ssh(sshd, extra).status();
    (0..runs)
        .map(|_| {
            let started = Instant::now();
            let _ = plain_ssh(sshd, extra).status();
            started.elapsed()
        })
        .collect()
}
