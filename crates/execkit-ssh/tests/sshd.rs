//! The ssh runner against a real sshd on 127.0.0.1 (no mocks): masters, reuse, timeouts,
//! the channel cap, groups and the bad-input rows of spec-ssh.md.
#![allow(
    clippy::disallowed_methods,
    clippy::print_stderr,
    clippy::unwrap_used,
    clippy::expect_used
)]

#[allow(dead_code, reason = "the fixture also serves the dispatcher tests and bench/")]
mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use execkit_ssh::{
    GroupRequest, MuxClient, MuxUse, ProbeSource, RunEnd, RunRequest, SshError, SshOptions,
};
use serde_json::json;
use support::{Project, Sshd};

fn request(host: &str, command: &str) -> RunRequest {
    RunRequest::new(host, command, None, Duration::from_secs(30))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn first_call_starts_a_master_and_later_calls_and_clients_reuse_it() {
    require_sshd!();
    let sshd = Sshd::start(10);
    let project = Project::new(json!({ "box": sshd.entry(json!({})) }));
    let client = project.client();
    let port = sshd.port;
    let user = sshd.user.clone();
    assert_eq!(
        client.host_lines(),
        vec![format!("- box: {user}@127.0.0.1:{port} (not probed yet)")]
    );
    let first = client.run(&request("box", "echo hi")).await.unwrap();
    let described = client.tool_description().unwrap();
    assert!(
        described.ends_with(&format!(
            "Hosts:\n- box: {user}@127.0.0.1:{port} (linux/{})",
            first.info.shell
        )),
        "{described}"
    );
    assert_eq!(
        (text(&first.output).as_str(), first.end, first.mux),
        ("hi\n", RunEnd::Exited(0), MuxUse::New)
    );
    assert_eq!(first.info.source, ProbeSource::Probed);
    assert_eq!(first.info.os, "linux");
    let second = client.run(&request("box", "echo again")).await.unwrap();
    assert_eq!((second.mux, second.connect), (MuxUse::Reused, Duration::ZERO));
    assert!(project.home.path().join(".execkit/cache/ssh-hosts/box.json").is_file());
    let socket = client.control_path("box").unwrap();
    let pid = Project::master_pid(&socket).unwrap();
    drop(client);
    // A new client (as a new execkit process would) finds the same master and the cache.
    let other = project.client().run(&request("box", "true")).await.unwrap();
    assert_eq!(
        (other.mux, other.info.source, other.master_pid),
        (MuxUse::Reused, ProbeSource::Cached, Some(pid))
    );
    assert_eq!(sshd.logins(), 1, "one login, the master's");
}

#[tokio::test(flavor = "multi_thread")]
async fn exit_codes_and_both_streams_come_back() {
    require_sshd!();
    let sshd = Sshd::start(10);
    let project = Project::new(json!({ "box": sshd.entry(json!({})) }));
    let out =
        project.client().run(&request("box", "echo out; echo err >&2; exit 3")).await.unwrap();
    assert_eq!(out.end, RunEnd::Exited(3));
    let shown = text(&out.output);
    assert!(shown.contains("out\n") && shown.contains("err\n"), "{shown:?}");
    assert!(!shown.contains("__EXECKIT_PID__"), "{shown:?}");
    assert!(out.remote_pid.is_some());
    let missing = project.client().run(&request("box", "no-such-command-ek")).await.unwrap();
    assert_eq!(missing.end, RunEnd::Exited(127));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_timeout_kills_the_remote_process_group() {
    require_sshd!();
    let sshd = Sshd::start(10);
    let project = Project::new(json!({ "box": sshd.entry(json!({})) }));
    let client = project.client();
    client.run(&request("box", "true")).await.unwrap();
    let started = Instant::now();
    let call = RunRequest { timeout: Duration::from_secs(1), ..request("box", "sleep 3131") };
    let out = client.run(&call).await.unwrap();
    assert_eq!(out.end, RunEnd::TimedOut);
    assert!(started.elapsed() < Duration::from_secs(4), "{:?}", started.elapsed());
    assert!(out.remote_killed);
    // sshd runs on this machine, so the remote process is visible here.
    let until = Instant::now() + Duration::from_secs(5);
    while !support::processes_mentioning("sleep 3131").is_empty() && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(support::processes_mentioning("sleep 3131"), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread")]
async fn cwd_is_quoted_and_tilde_is_refused_before_connecting() {
    require_sshd!();
    let sshd = Sshd::start(10);
    let project = Project::new(json!({ "box": sshd.entry(json!({})) }));
    let client = project.client();
    let tilde = RunRequest { cwd: Some("~".into()), ..request("box", "pwd") };
    let err = client.run(&tilde).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "cwd must be an absolute remote path; \"~\" is not expanded. Omit cwd to start in the login directory."
    );
    assert_eq!(sshd.logins(), 0);
    assert!(!client.control_path("box").unwrap().exists());
    let hostile = sshd.dir.path().join("ek dir/it's $(touch pwned) -x");
    std::fs::create_dir_all(&hostile).unwrap();
    let call = RunRequest { cwd: Some(hostile.display().to_string()), ..request("box", "pwd") };
    let out = client.run(&call).await.unwrap();
    assert_eq!(text(&out.output), format!("{}\n", hostile.display()));
    assert!(!Path::new("pwned").exists() && !hostile.join("pwned").exists());
    let gone = RunRequest { cwd: Some("/nonexistent/ek".into()), ..request("box", "echo never") };
    let out = client.run(&gone).await.unwrap();
    assert_eq!(out.end, RunEnd::Exited(1));
    assert!(!text(&out.output).contains("never"));
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_hosts_and_keys_fail_before_any_process_starts() {
    require_sshd!();
    let sshd = Sshd::start(10);
    let loose_key = sshd.dir.path().join("loose_key");
    std::fs::copy(&sshd.key, &loose_key).unwrap();
    set_mode(&loose_key, 0o644);
    let project = Project::new(json!({
        "box": sshd.entry(json!({})),
        "inject": sshd.entry(json!({ "host": "-oProxyCommand=touch /tmp/ek-pwned" })),
        "userinject": sshd.entry(json!({ "username": "-F/tmp/c" })),
        "loose": sshd.entry(json!({ "key": loose_key })),
    }));
    let client = project.client();
    for host in ["root@10.0.0.1", "-oProxyCommand=touch /tmp/ek-pwned", "inject", "Box"] {
        let err = client.run(&request(host, "true")).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("Unknown ssh host \"{host}\". Configured hosts: box, loose.")
        );
    }
    let warnings = client.doctor().join("\n");
    assert!(
        warnings.contains("host \"inject\": \"host\" must not start with \"-\"; entry ignored"),
        "{warnings}"
    );
    assert!(
        warnings
            .contains("host \"userinject\": \"username\" must not start with \"-\"; entry ignored")
    );
    let err = client.run(&request("loose", "true")).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "SSH key for host \"loose\" must not be accessible by other users (mode 0644); run: chmod 600 {}",
            loose_key.display()
        )
    );
    assert!(matches!(err, SshError::Key { .. }));
    assert!(!Path::new("/tmp/ek-pwned").exists());
    assert_eq!(sshd.logins(), 0);
    assert!(!client.control_path("loose").unwrap().exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_host_that_never_speaks_ends_by_connect_timeout() {
    require_sshd!();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // Accepts and holds every connection without writing a byte.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    let sshd = Sshd::start(10);
    let project = Project::new(
        json!({ "wedged": sshd.entry(json!({ "port": port, "connect_timeout": 2 })) }),
    );
    let client = project.client();
    let started = Instant::now();
    let err = client.run(&request("wedged", "true")).await.unwrap_err();
    let took = started.elapsed();
    assert!(took < Duration::from_secs(8), "{took:?}");
    let shown = err.to_string();
    assert!(
        shown.starts_with(
            &format!("Could not connect to wedged (root@127.0.0.1:{port}): ")
                .replace("root", &sshd.user)
        ),
        "{shown}"
    );
    assert!(shown.ends_with("Connection timed out during banner exchange"), "{shown}");
    assert_eq!(support::processes_mentioning(&format!("-p {port} ")), Vec::<String>::new());
    assert!(!client.control_path("wedged").unwrap().exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_master_is_replaced() {
    require_sshd!();
    let sshd = Sshd::start(10);
    let project = Project::new(json!({ "box": sshd.entry(json!({})) }));
    project.client().run(&request("box", "true")).await.unwrap();
    let socket = project.client().control_path("box").unwrap();
    let pid = Project::master_pid(&socket).unwrap();
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    let until = Instant::now() + Duration::from_secs(5);
    while Path::new(&format!("/proc/{pid}")).exists() && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(socket.exists(), "the stale socket stays for the client to find");
    let out = project.client().run(&request("box", "echo back")).await.unwrap();
    assert_eq!((text(&out.output).as_str(), out.mux), ("back\n", MuxUse::New));
    let new_pid = Project::master_pid(&socket).unwrap();
    assert_ne!(new_pid, pid);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_master_lost_mid_command_is_reported_and_recovered() {
    require_sshd!();
    let sshd = Sshd::start(10);
    let project = Project::new(json!({ "box": sshd.entry(json!({})) }));
    let client = project.client();
    client.run(&request("box", "true")).await.unwrap();
    let socket = client.control_path("box").unwrap();
    let master = Project::master_pid(&socket).unwrap();
    // Unique per run, so a sleeper left by an earlier run is never mistaken for this one.
    let sleep = format!("sleep 3133.{}", std::process::id());
    let call = {
        let client = client.clone();
        let sleep = sleep.clone();
        tokio::spawn(async move { client.run(&request("box", &sleep)).await })
    };
    let until = Instant::now() + Duration::from_secs(10);
    while support::pids_running(&sleep).is_empty() && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Without a PTY the remote command outlives its connection; the guard ends it by pid.
    let sleepers = support::KillOnDrop(support::pids_running(&sleep));
    assert!(!sleepers.0.is_empty(), "the remote command started");
    unsafe { libc::kill(master as i32, libc::SIGKILL) };
    let err =
        tokio::time::timeout(Duration::from_secs(10), call).await.unwrap().unwrap().unwrap_err();
    assert_eq!(err.to_string(), "Connection to box was lost while the command was running.");
    let out = client.run(&request("box", "echo again")).await.unwrap();
    assert_eq!((text(&out.output).as_str(), out.mux), ("again\n", MuxUse::New));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hung_master_is_bypassed_within_the_check_bound() {
    require_sshd!();
    let sshd = Sshd::start(10);
    let project = Project::new(json!({ "box": sshd.entry(json!({ "shell": "sh" })) }));
    let client = project.client();
    let socket = client.control_path("box").unwrap();
    std::fs::create_dir_all(socket.parent().unwrap()).unwrap();
    set_mode(socket.parent().unwrap(), 0o700);
    // Accepts (through the backlog) and never answers.
    let _fake = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let started = Instant::now();
    let out = client.run(&request("box", "echo direct")).await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(15), "{:?}", started.elapsed());
    assert_eq!((text(&out.output).as_str(), out.mux), ("direct\n", MuxUse::Bypassed));
    assert!(socket.exists(), "a socket that hangs is never unlinked");
    let warning = format!("master for box is not answering ({})", socket.display());
    assert!(client.doctor().contains(&warning), "{:?}", client.doctor());
    assert_eq!(sshd.logins(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn many_concurrent_calls_share_one_master() {
    require_sshd!();
    let sshd = Sshd::start(10);
    let project = Project::new(json!({ "box": sshd.entry(json!({})) }));
    let client = project.client();
    let calls = (0..64).map(|n| {
        let client = client.clone();
        tokio::spawn(async move { client.run(&request("box", &format!("echo call-{n}"))).await })
    });
    let mut queued = 0;
    for (n, call) in calls.enumerate() {
        let out = call.await.unwrap().unwrap();
        assert_eq!(text(&out.output), format!("call-{n}\n"));
        queued += usize::from(out.queued > Duration::ZERO);
    }
    eprintln!("{queued} of 64 calls waited for a channel");
    assert!(queued > 0, "64 calls over 8 channels must queue");
    assert_eq!(sshd.logins(), 1, "every call over the one master");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_server_session_limit_never_causes_a_second_login() {
    require_sshd!();
    let sshd = Sshd::start(2);
    let project = Project::new(json!({
        "wide": sshd.entry(json!({ "max_sessions": 10, "shell": "sh" })),
        "capped": sshd.entry(json!({ "max_sessions": 2, "shell": "sh" })),
    }));
    let client = project.client();
    client.run(&request("wide", "true")).await.unwrap();
    let results = parallel(&client, "wide", 4).await;
    let refused =
        results.iter().filter(|r| matches!(r, Err(SshError::SessionRefused { .. }))).count();
    assert!(refused >= 1, "{results:?}");
    let texts: Vec<String> =
        results.iter().filter_map(|r| r.as_ref().err().map(ToString::to_string)).collect();
    assert!(
        texts.iter().all(|t| t.starts_with(
            "wide refused another session on the shared connection (sshd MaxSessions)."
        )),
        "{texts:?}"
    );
    assert_eq!(sshd.logins(), 1, "no fallback login");
    let results = parallel(&client, "capped", 4).await;
    assert!(results.iter().all(|r| r.as_ref().is_ok_and(|o| o.success())), "{results:?}");
    assert!(results.iter().any(|r| r.as_ref().is_ok_and(|o| o.queued > Duration::ZERO)));
    assert_eq!(sshd.logins(), 2, "the second entry's master only");
}

async fn parallel(
    client: &execkit_ssh::SshClient,
    host: &str,
    n: usize,
) -> Vec<Result<execkit_ssh::RunOutcome, SshError>> {
    let calls: Vec<_> = (0..n)
        .map(|_| {
            let client = client.clone();
            let call = request(host, "sleep 1");
            tokio::spawn(async move { client.run(&call).await })
        })
        .collect();
    let mut out = Vec::new();
    for call in calls {
        out.push(call.await.unwrap());
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn a_group_reports_every_host_with_one_down() {
    require_sshd!();
    let sshd = Sshd::start(10);
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let project = Project::new(json!({}));
    project.write(json!({
        "hosts": {
            "one": sshd.entry(json!({ "shell": "sh" })),
            "down": sshd.entry(json!({ "port": closed, "connect_timeout": 2 })),
            "two": sshd.entry(json!({ "shell": "sh" })),
        },
        "groups": { "pair": ["two", "one"], "all": ["pair", "down"] }
    }));
    let client = project.client();
    let call = GroupRequest {
        hosts: vec!["all".into()],
        command: "echo up".into(),
        cwd: None,
        timeout: Duration::from_secs(30),
        parallel: 4,
        cancel: Default::default(),
    };
    let results = client.run_group(&call).await.unwrap();
    let names: Vec<&str> = results.iter().map(|r| r.host.as_str()).collect();
    assert_eq!(names, vec!["one", "down", "two"], "configuration order");
    assert!(results[0].success() && results[2].success());
    assert_eq!(results[1].section_header(), "=== down: could not connect ===");
    assert!(results[0].section_header().starts_with("=== one: exit 0, "));
    assert_eq!(execkit_ssh::group_summary(&results), "2 of 3 hosts succeeded; failed: down");
    let down = results[1].result.as_ref().unwrap_err();
    assert!(down.is_connect_failure(), "{down}");
    assert!(down.to_string().contains("Connection refused"), "{down}");
    let unknown = GroupRequest { hosts: vec!["all".into(), "nope".into()], ..call };
    assert!(matches!(client.run_group(&unknown).await, Err(SshError::UnknownHost { .. })));
}

#[tokio::test(flavor = "multi_thread")]
async fn process_mux_runs_over_the_same_master() {
    require_sshd!();
    let sshd = Sshd::start(10);
    let project = Project::new(json!({ "box": sshd.entry(json!({})) }));
    let options = SshOptions { mux: MuxClient::Process, ..SshOptions::default() };
    let client = project.client_with(options);
    let out = client.run(&request("box", "echo out; echo err >&2; exit 4")).await.unwrap();
    assert_eq!(out.end, RunEnd::Exited(4));
    let shown = text(&out.output);
    assert!(
        shown.contains("out\n") && shown.contains("err\n") && !shown.contains("__EXECKIT"),
        "{shown:?}"
    );
    let call = RunRequest { timeout: Duration::from_secs(1), ..request("box", "sleep 3132") };
    let out = client.run(&call).await.unwrap();
    assert!(out.end == RunEnd::TimedOut && out.remote_killed);
    assert_eq!(sshd.logins(), 1);
    let big = client.run(&request("box", "head -c 300000 /dev/zero")).await.unwrap();
    assert_eq!((big.output_bytes, big.output.len()), (300000, 300000));
    // A dead master: the process-mux client cannot reach the socket, so nothing ran; the
    // master is replaced and the command retried once.
    let socket = client.control_path("box").unwrap();
    let pid = Project::master_pid(&socket).unwrap();
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    let until = Instant::now() + Duration::from_secs(5);
    while Path::new(&format!("/proc/{pid}")).exists() && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let out = client.run(&request("box", "echo back")).await.unwrap();
    assert_eq!((text(&out.output).as_str(), out.mux), ("back\n", MuxUse::New));
    assert_eq!(sshd.logins(), 2);
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}
