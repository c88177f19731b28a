//! The sandbox through the Toolkit: real Landlock, seccomp and namespaces on bash and the
//! Python kernel, what the model sees of it, and the fail-closed path.

use std::net::{TcpListener, UdpSocket};
use std::path::PathBuf;
use std::time::Duration;

use execkit::Toolkit;
use serde_json::{Value, json};

use crate::support::{Kit, Outcome};

/// A directory outside `/tmp` and the workspace, so outside every writable root.
fn outside(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("sandbox")
        .join(format!("{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::canonicalize(dir).unwrap()
}

/// A workspace-write Kit whose `HOME` is `home` (outside the roots).
fn confined(home: &std::path::Path, extra: &[(&str, &str)]) -> Kit {
    let home = home.to_str().unwrap();
    let mut vars = vec![("EXECKIT_SANDBOX", "workspace-write"), ("HOME", home)];
    vars.extend_from_slice(extra);
    Kit::with_vars(&vars)
}

fn sandbox(out: &Outcome) -> Value {
    out.field("sandbox")
}

#[tokio::test]
async fn a_write_outside_the_roots_is_denied_explained_and_leaves_nothing() {
    let home = outside("deny-home");
    let kit = confined(&home, &[]);
    let target = home.join("outside.txt");
    let out = kit.bash(json!({"command": format!("echo x > {}", target.display())})).await;
    assert!(!target.exists());
    assert_ne!(out.field("exit_code"), json!(0), "{}", out.text());
    let report = sandbox(&out);
    assert_eq!(report["mode"], "workspace-write");
    assert_eq!(report["network"], "off");
    assert_eq!(report["enforcement"], "full", "{report}");
    assert_eq!(report["denied"], true, "{}", out.text());
    let line = format!(
        "[sandbox: the command was denied writing to {}; this session allows writes only inside ",
        target.display()
    );
    assert!(out.text().contains(&line), "{}", out.text());
    // Inside the workspace writes work and nothing is denied.
    let ok = kit.bash(json!({"command": "echo in > f.txt && cat f.txt"})).await;
    assert_eq!(ok.text(), "in");
    assert_eq!(sandbox(&ok)["denied"], false);
}

#[tokio::test]
async fn a_setsid_grandchild_and_a_symlink_out_of_the_workspace_are_confined_too() {
    let home = outside("grandchild-home");
    let kit = confined(&home, &[]);
    let late = home.join("late.txt");
    let script = format!(
        "(setsid sh -c 'echo x > {} 2>/dev/null; echo done > grandchild' &); for i in $(seq 100); do [ -e grandchild ] && break; sleep 0.1; done",
        late.display()
    );
    kit.bash(json!({"command": script})).await;
    assert!(kit.work().join("grandchild").exists(), "the grandchild never ran");
    assert!(!late.exists());
    let link = format!("ln -s {} home && echo x > home/f", home.display());
    let out = kit.bash(json!({"command": link})).await;
    assert!(!home.join("f").exists(), "{}", out.text());
    assert_eq!(sandbox(&out)["denied"], true, "{}", out.text());
}

#[tokio::test]
async fn git_stays_read_only_inside_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(work.join(".git")).unwrap();
    std::fs::write(work.join(".git/config"), "[core]\n").unwrap();
    let toolkit = Toolkit::builder()
        .cwd(&work)
        .var("EXECKIT_ARTIFACT_DIR", dir.path().join("artifacts").to_string_lossy())
        .sandbox(execkit::SandboxOptions {
            mode: Some("workspace-write".into()),
            ..Default::default()
        })
        .build()
        .unwrap();
    let out =
        toolkit.call("bash", json!({"command": "echo x >> .git/config"}), Default::default()).await;
    assert!(out.text().contains("Read-only file system"), "{}", out.text());
    assert_eq!(std::fs::read_to_string(work.join(".git/config")).unwrap(), "[core]\n");
    let ok = toolkit
        .call("bash", json!({"command": "echo y > README && cat README"}), Default::default())
        .await;
    assert_eq!(ok.text(), "y");
    toolkit.close().await;
}

#[tokio::test]
async fn denied_paths_are_unreadable_and_other_reads_work() {
    let home = outside("secret-home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), "PRIVATE KEY").unwrap();
    let kit = confined(&home, &[]);
    let out = kit.bash(json!({"command": "cat ~/.ssh/id_ed25519"})).await;
    assert!(!out.text().contains("PRIVATE KEY"), "{}", out.text());
    assert_eq!(sandbox(&out)["denied"], true, "{}", out.text());
    let passwd = kit.bash(json!({"command": "head -c 5 /etc/passwd"})).await;
    assert_eq!(passwd.text(), "root:");
}

#[tokio::test]
async fn network_off_reaches_nothing_outside_but_a_server_of_an_earlier_call() {
    let home = outside("net-home");
    let kit = confined(&home, &[]);
    let host = TcpListener::bind("127.0.0.1:0").unwrap();
    host.set_nonblocking(true).unwrap();
    let port = host.local_addr().unwrap().port();
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
    let udp_port = udp.local_addr().unwrap().port();
    let connect = format!(
        "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 3); print('reached')\""
    );
    let out = kit.bash(json!({"command": connect})).await;
    assert!(!out.text().contains("reached"), "{}", out.text());
    assert!(host.accept().is_err(), "the host listener saw a connection");
    let send = format!(
        "python3 -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', {udp_port}))\""
    );
    kit.bash(json!({"command": send})).await;
    assert!(udp.recv(&mut [0; 8]).is_err(), "a datagram arrived from the sandbox");
    // A server an async call starts on the same port number stays reachable from later calls.
    let server = format!(
        "python3 -c \"import socket; s=socket.socket(); s.bind(('127.0.0.1', {port})); s.listen(); open('ready','w').close()\nwhile True:\n c,_=s.accept(); c.sendall(b'private'); c.close()\""
    );
    let job = kit.bash(json!({"command": server, "async": true})).await;
    assert!(!job.is_error(), "{}", job.text());
    let client = format!(
        "for i in $(seq 100); do [ -e ready ] && break; sleep 0.1; done; python3 -c \"import socket; print(socket.create_connection(('127.0.0.1', {port}), 5).recv(16).decode())\""
    );
    let out = kit.bash(json!({"command": client})).await;
    assert_eq!(out.text(), "private");
    assert!(host.accept().is_err(), "the host listener saw a connection");
    kit.toolkit.close().await;
}

#[tokio::test]
async fn a_python_cell_may_read_but_not_write_outside_and_its_kernel_keeps_its_state() {
    let home = outside("py-home");
    let target = home.join("cell.txt");
    let kit = Kit::with_vars(&[("EXECKIT_SANDBOX", "read-only"), ("HOME", home.to_str().unwrap())]);
    let read = kit
        .call(
            "eval",
            json!({"language": "py", "code": "kept = 41\nprint(open('/etc/passwd').read()[:5])"}),
        )
        .await;
    assert_eq!(read.text().trim(), "root:", "{}", read.text());
    let code = format!("open('{}', 'w').write('x')", target.display());
    let denied = kit.call("eval", json!({"language": "py", "code": code})).await;
    assert!(denied.text().contains("PermissionError"), "{}", denied.text());
    assert!(
        denied.text().contains("[sandbox: the command was denied writing to"),
        "{}",
        denied.text()
    );
    assert_eq!(denied.structured_content.as_ref().unwrap()["sandbox"]["denied"], true);
    assert!(!target.exists());
    let state = kit.call("eval", json!({"language": "py", "code": "print(kept + 1)"})).await;
    assert_eq!(state.text().trim(), "42", "{}", state.text());
    kit.toolkit.close().await;
}

#[tokio::test]
async fn read_only_mode_writes_only_its_temporary_directory_and_caches_move_there() {
    let home = outside("ro-home");
    let kit = Kit::with_vars(&[("EXECKIT_SANDBOX", "read-only"), ("HOME", home.to_str().unwrap())]);
    let out = kit
        .bash(json!({"command": "echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\"; echo x > here.txt"}))
        .await;
    assert!(out.text().starts_with("t\n"), "{}", out.text());
    assert!(!kit.work().join("here.txt").exists());
    let caches = kit.bash(json!({"command": "echo \"$XDG_CACHE_HOME $PIP_CACHE_DIR\"; mkdir -p \"$PIP_CACHE_DIR\" && echo ok"})).await;
    assert!(caches.text().contains("/cache "), "{}", caches.text());
    assert!(caches.text().ends_with("ok"), "{}", caches.text());
    let mine = kit
        .bash(json!({"command": "echo $PIP_CACHE_DIR", "env": {"PIP_CACHE_DIR": "/mine"}}))
        .await;
    assert_eq!(mine.text(), "/mine");
}

#[tokio::test]
async fn an_unenforceable_sandbox_runs_nothing_and_says_why() {
    let home = outside("unavailable-home");
    let kit = confined(&home, &[("EXECKIT_SANDBOX_TEST_UNAVAILABLE", "1")]);
    let marker = kit.work().join("ran");
    let out = kit.bash(json!({"command": format!("touch {}", marker.display())})).await;
    assert!(out.is_error());
    assert!(out.text().starts_with("Sandbox unavailable: workspace-write needs Landlock (Linux 5.13+, \"landlock\" in the kernel's LSM list); this kernel reports "), "{}", out.text());
    assert!(
        out.text().ends_with("Nothing was run. Start execkit without --sandbox to run unconfined."),
        "{}",
        out.text()
    );
    assert_eq!(sandbox(&out)["runner_failed"], true);
    let cell = kit.call("eval", json!({"language": "py", "code": "print(1)"})).await;
    assert!(cell.is_error && cell.text().starts_with("Sandbox unavailable"), "{}", cell.text());
    let job =
        kit.bash(json!({"command": format!("touch {}", marker.display()), "async": true})).await;
    assert!(job.is_error());
    assert!(!marker.exists());
    let doctor = kit.toolkit.doctor();
    let section = doctor.sections.iter().find(|s| s.title == "sandbox").unwrap();
    assert!(
        section.lines.iter().any(|l| l.starts_with("enforcement: unavailable (")),
        "{:?}",
        section.lines
    );
}

#[tokio::test]
async fn the_policy_is_in_the_descriptions_and_doctor_and_bad_settings_stop_the_start() {
    let home = outside("describe-home");
    let kit = confined(&home, &[("EXECKIT_SANDBOX_NETWORK", "off")]);
    let tools = kit.toolkit.tools();
    for name in ["bash", "eval"] {
        let spec = tools.iter().find(|t| t.name == name).unwrap();
        assert!(
            spec.description.contains("Commands run in a sandbox: they may write only inside "),
            "{name}"
        );
    }
    let job = tools.iter().find(|t| t.name == "job").unwrap();
    assert!(!job.description.contains("sandbox"));
    let doctor = kit.toolkit.doctor();
    let section = doctor.sections.iter().find(|s| s.title == "sandbox").unwrap();
    assert_eq!(section.lines[0], "mode: workspace-write");
    assert_eq!(section.lines[1], "network: off");
    assert!(
        section.lines.iter().any(|l| l == "enforcement: full (Landlock, seccomp, namespaces)"),
        "{:?}",
        section.lines
    );
    let off = Kit::new();
    let section = off.toolkit.doctor().sections.into_iter().find(|s| s.title == "sandbox").unwrap();
    assert!(section.lines[0].starts_with("mode: off"));
    let bad = Toolkit::builder().var("EXECKIT_SANDBOX", "sometimes").build().err().unwrap();
    assert_eq!(bad, "--sandbox: expected off, read-only or workspace-write, not \"sometimes\"");
    let missing = Toolkit::builder()
        .var("EXECKIT_SANDBOX", "workspace-write")
        .var("EXECKIT_SANDBOX_WRITABLE", "/does/not/exist")
        .build()
        .err()
        .unwrap();
    assert!(missing.starts_with("--writable /does/not/exist: "), "{missing}");
}

#[tokio::test]
async fn a_cwd_outside_the_roots_is_said_once() {
    let home = outside("cwd-home");
    let kit = confined(&home, &[]);
    let out = kit.bash(json!({"command": "true", "cwd": home.to_str().unwrap()})).await;
    let line = format!(
        "[sandbox: {} is outside the writable roots; writes here will be denied]",
        home.display()
    );
    assert_eq!(out.text().matches(&line).count(), 1, "{}", out.text());
}

#[test]
fn the_cli_flags_set_the_policy_doctor_shows_it_and_bad_ones_stop_the_start() {
    let cli = crate::cli::Sandbox::new();
    let home = cli.home.path().to_str().unwrap().to_string();
    let out = cli.execkit(&[
        "doctor",
        "--sandbox",
        "workspace-write",
        "--network",
        "on",
        "--writable",
        &home,
    ]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{text}");
    assert!(text.contains("sandbox\n  mode: workspace-write\n  network: on\n"), "{text}");
    assert!(text.contains("enforcement: full"), "{text}");
    let bad = cli.execkit(&["--sandbox", "sometimes", "doctor"]);
    assert_eq!(bad.status.code(), Some(1));
    let err = String::from_utf8_lossy(&bad.stderr).into_owned();
    assert!(
        err.contains("--sandbox: expected off, read-only or workspace-write, not \"sometimes\""),
        "{err}"
    );
    let missing =
        cli.execkit(&["mcp", "--sandbox", "workspace-write", "--writable", "/does/not/exist"]);
    let err = String::from_utf8_lossy(&missing.stderr).into_owned();
    assert!(err.contains("--writable /does/not/exist: No such file"), "{err}");
    let denied = cli.execkit(&[
        "bash",
        "--sandbox",
        "workspace-write",
        "--",
        "echo x > /etc/execkit-sandbox-test",
    ]);
    let text = String::from_utf8_lossy(&denied.stdout).into_owned();
    assert!(
        text.contains("[sandbox: the command was denied writing to /etc/execkit-sandbox-test;"),
        "{text}"
    );
    assert!(!std::path::Path::new("/etc/execkit-sandbox-test").exists());
}

/// An unprivileged user gets the same sandbox through its own user namespace (uid mapped 1:1,
/// so what it writes keeps its owner). Run as `nobody` through `setpriv` when the tests run
/// as root; otherwise the other tests here already run unprivileged.
#[test]
fn an_unprivileged_user_gets_full_enforcement_through_a_user_namespace() {
    // SAFETY: geteuid has no side effects.
    if unsafe { libc::geteuid() } != 0 {
        return;
    }
    if std::process::Command::new("setpriv").arg("--version").output().is_err() {
        assert!(std::env::var("EXECKIT_TEST_STRICT").as_deref() != Ok("1"), "setpriv missing");
        let notice = "SKIPPED an_unprivileged_user_gets_full_enforcement: no setpriv\n";
        let _ = std::io::Write::write_all(&mut std::io::stderr(), notice.as_bytes());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("execkit");
    std::fs::copy(crate::cli::execkit_bin(), &bin).unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    let chmod = |p: &std::path::Path, mode| {
        std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(mode)).unwrap()
    };
    for path in [dir.path(), &ws, &ws.join(".git")] {
        chmod(path, 0o777);
    }
    let run = |args: &[&str]| {
        let out = std::process::Command::new("setpriv")
            .args(["--reuid", "65534", "--regid", "65534", "--clear-groups"])
            .arg(&bin)
            .args(["--cwd", ws.to_str().unwrap(), "--sandbox", "workspace-write"])
            .args(args)
            .env("HOME", dir.path())
            .env("EXECKIT_ARTIFACT_DIR", dir.path().join("artifacts"))
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let (stdout, stderr) =
            (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        if stdout.is_empty() {
            format!("(no stdout; {}; stderr: {stderr})", out.status)
        } else {
            stdout.into_owned()
        }
    };
    let doctor = run(&["doctor"]);
    assert!(doctor.contains("enforcement: full"), "{doctor}");
    let out =
        run(&["bash", "--", "echo hi > f; stat -c %u f; echo x > .git/y; echo x > /var/tmp/x-$$"]);
    assert!(out.starts_with("65534\n"), "{out}");
    assert!(out.contains(".git/y: Read-only file system"), "{out}");
    assert!(out.contains("Permission denied"), "{out}");
}

#[tokio::test]
async fn pty_mode_keeps_its_terminal_under_the_sandbox() {
    let home = outside("pty-home");
    let kit = confined(&home, &[]);
    let out = kit.bash(json!({"command": "test -t 1 && echo terminal > /dev/tty && stty size >/dev/null && echo ok", "pty": true})).await;
    assert!(out.text().contains("terminal") && out.text().contains("ok"), "{}", out.text());
}

/// A workspace-write Toolkit whose approver answers `answer` and counts the questions.
fn with_approver(
    home: &std::path::Path,
    answer: Option<execkit::Approval>,
) -> (Toolkit, std::sync::Arc<std::sync::Mutex<Vec<String>>>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = asked.clone();
    let approver: execkit::Approver =
        std::sync::Arc::new(move |request: execkit::ApprovalRequest| {
            seen.lock().unwrap().push(request.message);
            Box::pin(async move {
                match answer {
                    Some(answer) => answer,
                    None => std::future::pending().await,
                }
            })
        });
    let toolkit = Toolkit::builder()
        .cwd(dir.path())
        .var("HOME", home.to_string_lossy())
        .var("EXECKIT_ARTIFACT_DIR", dir.path().join("artifacts").to_string_lossy())
        .var("EXECKIT_SANDBOX", "workspace-write")
        .var("EXECKIT_SANDBOX_APPROVAL_TIMEOUT_S", "1")
        .approver(approver)
        .build()
        .unwrap();
    (toolkit, asked, dir)
}

fn escalated(command: &str) -> Value {
    json!({"command": command, "sandbox_permissions": "require_escalated", "justification": "needs the home directory"})
}

#[tokio::test]
async fn an_escalation_runs_outside_only_with_a_persons_yes() {
    let home = outside("escalate-home");
    let target = home.join("approved.txt");
    let command = format!("echo ok > {0} && cat {0}", target.display());
    let (toolkit, asked, _dir) = with_approver(&home, Some(execkit::Approval::Once));
    let call = |args: Value| toolkit.call("bash", args, Default::default());
    let missing =
        call(json!({"command": "true", "sandbox_permissions": "require_escalated"})).await;
    assert_eq!(
        missing.text(),
        "Invalid argument \"justification\": required when sandbox_permissions is \"require_escalated\""
    );
    let out = call(escalated(&command)).await;
    assert_eq!(out.text(), "ok", "{}", out.text());
    assert_eq!(out.structured_content.as_ref().unwrap()["sandbox"]["escalated"], true);
    assert_eq!(asked.lock().unwrap().len(), 1);
    assert!(
        asked.lock().unwrap()[0]
            .starts_with("Allow this command to run outside the sandbox? echo ok > ")
    );
    assert!(asked.lock().unwrap()[0].ends_with(" — reason given: needs the home directory"));
    // Once is once: the same command asks again, and without the flag it stays confined.
    call(escalated(&command)).await;
    assert_eq!(asked.lock().unwrap().len(), 2);
    std::fs::remove_file(&target).unwrap();
    let plain = call(json!({"command": command})).await;
    assert!(
        plain.text().contains("ask for an exception with \"sandbox_permissions\""),
        "{}",
        plain.text()
    );
    assert!(!target.exists());
    toolkit.close().await;
}

#[tokio::test]
async fn a_session_approval_is_remembered_and_declines_and_silence_run_nothing() {
    let home = outside("session-home");
    let (toolkit, asked, _dir) = with_approver(&home, Some(execkit::Approval::Session));
    let command = format!("touch {}", home.join("s").display());
    for _ in 0..2 {
        let out = toolkit.call("bash", escalated(&command), Default::default()).await;
        assert!(!out.is_error, "{}", out.text());
    }
    assert_eq!(asked.lock().unwrap().len(), 1);
    let (declining, _, _dir2) = with_approver(&home, Some(execkit::Approval::Declined));
    let marker = home.join("declined");
    let out = declining
        .call("bash", escalated(&format!("touch {}", marker.display())), Default::default())
        .await;
    assert!(out.is_error);
    assert_eq!(out.text(), "The person declined to run this command outside the sandbox.");
    let (silent, _, _dir3) = with_approver(&home, None);
    let out = silent
        .call("bash", escalated(&format!("touch {}", marker.display())), Default::default())
        .await;
    assert_eq!(out.text(), "The person did not answer within 1 second.");
    assert!(!marker.exists());
    let kit = confined(&home, &[]);
    let out = kit.bash(escalated(&format!("touch {}", marker.display()))).await;
    assert_eq!(
        out.text(),
        "This command asked to run outside the sandbox, but this client cannot ask a person for approval. Nothing was run."
    );
    assert!(!marker.exists());
    for toolkit in [toolkit, declining, silent] {
        toolkit.close().await;
    }
}

/// The escalation flow over MCP elicitation with the official Python client: approve once,
/// approve for the session, decline, silence, and a client without the capability.
#[test]
fn escalation_through_mcp_elicitation_with_the_python_client() {
    let cli = crate::cli::Sandbox::new();
    let probe = cli.command("python3").args(["-c", "import mcp"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        assert!(std::env::var("EXECKIT_TEST_STRICT").as_deref() != Ok("1"), "python mcp missing");
        let notice = "SKIPPED escalation_through_mcp_elicitation: python mcp package missing\n";
        let _ = std::io::Write::write_all(&mut std::io::stderr(), notice.as_bytes());
        return;
    }
    let workspace = tempfile::tempdir().unwrap();
    let out_dir = outside("elicit-out");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp_client/mcp_elicit.py");
    let output = cli
        .command("python3")
        .arg(&script)
        .arg(crate::cli::execkit_bin())
        .arg(workspace.path())
        .arg(&out_dir)
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&output.stdout).into_owned();
    let errors = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success() && printed.ends_with("ALL OK\n"), "{printed}\n{errors}");
    assert!(errors.contains("execkit: sandbox: approved once: echo yes > "), "{errors}");
    assert!(errors.contains("execkit: sandbox: declined: touch "), "{errors}");
}
