//! The ssh tool through a real Toolkit (and once through `execkit call`), against a real
//! sshd on 127.0.0.1 that the tests start themselves (spec-ssh's test recipe, shared with
//! `crates/execkit-ssh/tests`). Without sshd the sshd tests skip with a visible reason; the
//! argument and hidden-tool tests need none.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use execkit::{CallContext, ToolResult, Toolkit};
use serde_json::{Value, json};
use tempfile::TempDir;

#[allow(dead_code, clippy::print_stderr)]
#[path = "../crates/execkit-ssh/tests/support/mod.rs"]
mod sshd;

use sshd::{Project, Sshd};

/// Skips the calling test, visibly, when no sshd can be started here.
macro_rules! need_sshd {
    () => {
        if let Some(reason) = sshd::skip_reason() {
            eprintln!("SKIPPED: no test sshd: {reason}");
            return;
        }
    };
}

/// A Toolkit on `project` (its root, HOME and control directory), artifacts in `artifacts`.
fn toolkit(project: &Project, artifacts: &TempDir) -> Toolkit {
    Toolkit::builder()
        .cwd(project.root.path())
        .var("HOME", project.home.path().to_string_lossy())
        .var("EXECKIT_SSH_CONTROL_DIR", project.control.to_string_lossy())
        .var("EXECKIT_ARTIFACT_DIR", artifacts.path().to_string_lossy())
        .var("EXECKIT_BASH_SNAPSHOT", "off")
        .var("EXECKIT_EVAL_PREWARM", "0")
        .build()
        .expect("toolkit")
}

/// A test sshd configured as the host `box`, and a Toolkit on its project.
struct OneBox {
    sshd: Sshd,
    kit: Toolkit,
    _project: Project,
    _artifacts: TempDir,
}

impl OneBox {
    fn start() -> OneBox {
        let sshd = Sshd::start(10);
        let project = Project::new(json!({ "box": sshd.entry(json!({})) }));
        let artifacts = tempfile::tempdir().unwrap();
        let kit = toolkit(&project, &artifacts);
        OneBox { sshd, kit, _project: project, _artifacts: artifacts }
    }
}

async fn call(kit: &Toolkit, args: Value) -> ToolResult {
    kit.call("ssh", args, CallContext::default()).await
}

fn field(result: &ToolResult, name: &str) -> Value {
    result.structured_content.as_ref().and_then(|s| s.get(name)).cloned().unwrap_or(Value::Null)
}

/// Waits up to `secs` for no process to mention `needle`.
async fn none_mention(needle: &str, secs: u64) -> Vec<String> {
    let until = Instant::now() + Duration::from_secs(secs);
    while !sshd::processes_mentioning(needle).is_empty() && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    sshd::processes_mentioning(needle)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_command_runs_and_the_next_call_reuses_the_master() {
    need_sshd!();
    let one = OneBox::start();
    let (sshd, kit) = (&one.sshd, &one.kit);
    let first = call(kit, json!({"host": "box", "command": "echo hi"})).await;
    assert_eq!((first.text().as_str(), first.is_error), ("hi", false), "{first:?}");
    assert_eq!((field(&first, "mux"), field(&first, "exit_code")), (json!("new"), json!(0)));
    assert_eq!((field(&first, "os"), field(&first, "probe")), (json!("linux"), json!("probed")));
    let second = call(kit, json!({"host": "box", "command": "true"})).await;
    assert_eq!(second.text(), "(no output)");
    assert_eq!((field(&second, "mux"), field(&second, "connect_ms")), (json!("reused"), json!(0)));
    let listed = kit.tools().into_iter().find(|t| t.name == "ssh").expect("ssh is listed");
    let line = format!("- box: {}@127.0.0.1:{} (linux/", sshd.user, sshd.port);
    assert!(listed.description.contains(&line), "{}", listed.description);
    kit.close().await;
    assert_eq!(sshd.logins(), 1, "one login, the master's");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_command_is_an_error_with_its_exit_code() {
    need_sshd!();
    let one = OneBox::start();
    let kit = &one.kit;
    let result =
        call(kit, json!({"host": "box", "command": "echo out; echo err >&2; exit 3"})).await;
    let text = result.text();
    assert!(result.is_error);
    assert!(text.contains("out\n") && text.contains("err\n"), "{text}");
    assert!(text.ends_with("\n\nCommand exited with code 3"), "{text}");
    assert!(!text.contains("__EXECKIT_PID__"), "{text}");
    assert_eq!(field(&result, "exit_code"), json!(3));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_timeout_stops_the_remote_process() {
    need_sshd!();
    let one = OneBox::start();
    let kit = &one.kit;
    call(kit, json!({"host": "box", "command": "true"})).await;
    let sleep = format!("sleep 3131.{}", std::process::id());
    let started = Instant::now();
    let command = format!("echo before; {sleep}");
    let result = call(kit, json!({"host": "box", "command": command, "timeout": 1})).await;
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert!(result.is_error);
    assert_eq!(
        result.text(),
        "before\n\nCommand timed out after 1 s on box. The remote process group was terminated."
    );
    assert_eq!(
        (field(&result, "timed_out"), field(&result, "remote_killed")),
        (json!(true), json!(true))
    );
    // sshd runs on this machine, so the remote side is visible here.
    assert_eq!(none_mention(&sleep, 10).await, Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread")]
async fn cancelling_a_call_stops_the_remote_process() {
    need_sshd!();
    let one = OneBox::start();
    let kit = &one.kit;
    let sleep = format!("sleep 3132.{}", std::process::id());
    let ctx = CallContext::default();
    let cancel = ctx.cancel.clone();
    let running = {
        let kit = kit.clone();
        let args = json!({"host": "box", "command": sleep.clone()});
        tokio::spawn(async move { kit.call("ssh", args, ctx).await })
    };
    let until = Instant::now() + Duration::from_secs(20);
    while sshd::pids_running(&sleep).is_empty() && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!sshd::pids_running(&sleep).is_empty(), "the remote command started");
    cancel.cancel();
    let result = tokio::time::timeout(Duration::from_secs(10), running).await.unwrap().unwrap();
    assert!(result.is_error);
    assert_eq!(result.text(), "Command cancelled on box. The remote process group was terminated.");
    assert_eq!(none_mention(&sleep, 10).await, Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wedged_host_is_bounded_by_connect_timeout_and_by_the_call_timeout() {
    need_sshd!();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // Accepts and holds every connection without writing a byte.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    let sshd = Sshd::start(10);
    let project = Project::new(json!({
        "wedged": sshd.entry(json!({ "port": port, "connect_timeout": 2 })),
        "slow": sshd.entry(json!({ "port": port, "connect_timeout": 30 })),
    }));
    let artifacts = tempfile::tempdir().unwrap();
    let kit = toolkit(&project, &artifacts);
    let started = Instant::now();
    let result = call(&kit, json!({"host": "wedged", "command": "true"})).await;
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    let text = result.text();
    let lead = format!("Could not connect to wedged ({}@127.0.0.1:{port}): ", sshd.user);
    assert!(text.starts_with(&lead), "{text}");
    assert!(text.ends_with("Connection timed out during banner exchange"), "{text}");
    assert_eq!(field(&result, "exit_code"), Value::Null);
    let started = Instant::now();
    let result = call(&kit, json!({"host": "slow", "command": "true", "timeout": 2})).await;
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert!(result.is_error);
    let text = result.text();
    assert!(
        text == format!("Connecting to slow (127.0.0.1:{port}) timed out after 2 s.")
            || text == "Timed out after 2 s before the command could start on slow.",
        "{text}"
    );
    assert_eq!(none_mention(&format!("-p {port} "), 10).await, Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_group_fans_out_with_one_section_per_host() {
    need_sshd!();
    let sshd = Sshd::start(10);
    // A port that refuses connections: bound, then closed.
    let down = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let project = Project::new(json!({}));
    project.write(json!({
        "hosts": {
            "web1": sshd.entry(json!({})),
            "down": sshd.entry(json!({ "port": down, "connect_timeout": 5 })),
            "web2": sshd.entry(json!({})),
        },
        "groups": { "web": ["web1", "web2"], "all": ["web", "down"] },
    }));
    let artifacts = tempfile::tempdir().unwrap();
    let kit = toolkit(&project, &artifacts);
    let result = call(&kit, json!({"hosts": ["all"], "command": "echo up", "parallel": 3})).await;
    let text = result.text();
    assert!(result.is_error, "{text}");
    let sections: Vec<&str> = text.split("\n\n").collect();
    assert_eq!(sections.len(), 4, "{text}");
    assert!(
        sections[0].starts_with("=== web1: exit 0, ") && sections[0].ends_with(" ms ===\nup"),
        "{text}"
    );
    assert!(
        sections[1].starts_with("=== down: could not connect ===\nCould not connect to down"),
        "{text}"
    );
    assert!(sections[2].starts_with("=== web2: exit 0, "), "{text}");
    assert_eq!(sections[3], "2 of 3 hosts succeeded; failed: down");
    let results = field(&result, "results");
    let hosts: Vec<&str> =
        results.as_array().unwrap().iter().map(|r| r["host"].as_str().unwrap()).collect();
    assert_eq!(hosts, ["web1", "down", "web2"]);
    assert_eq!(results[0]["exit_code"], 0);
    assert_eq!(field(&result, "failed"), json!(["down"]));
    let ok = call(&kit, json!({"hosts": ["web"], "command": "true"})).await;
    assert!(!ok.is_error, "{}", ok.text());
    assert!(ok.text().ends_with("2 of 2 hosts succeeded"), "{}", ok.text());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_output_flood_goes_to_an_artifact_with_exact_totals() {
    need_sshd!();
    let one = OneBox::start();
    let kit = &one.kit;
    let result = call(kit, json!({"host": "box", "command": "seq 1 300000"})).await;
    assert!(!result.is_error, "{}", result.text());
    let expected: String = (1..=300_000).map(|n| format!("{n}\n")).collect();
    let truncation = field(&result, "truncation");
    assert_eq!(truncation["total_bytes"], json!(expected.len()), "{truncation}");
    let uri = truncation["artifact"].as_str().expect("an artifact").to_string();
    assert!(result.text().contains(&uri), "the footer names the artifact");
    let text = result.text();
    assert!(text.starts_with("1\n2\n3\n") && text.contains("\n300000\n"), "{}", &text[..200]);
    let store = kit.artifacts().expect("artifacts on");
    let (id, _) = execkit::ArtifactId::parse(&uri).unwrap();
    let stored = std::fs::read(store.out_path(&id).unwrap()).unwrap();
    assert_eq!(stored.len(), expected.len());
    assert!(stored == expected.as_bytes(), "the artifact holds every byte");
}

#[tokio::test]
async fn the_tool_is_hidden_until_a_host_is_configured() {
    let project = Project::new(json!({}));
    std::fs::remove_file(project.root.path().join(".execkit/ssh.json")).unwrap();
    let artifacts = tempfile::tempdir().unwrap();
    let kit = toolkit(&project, &artifacts);
    assert!(kit.tools().iter().all(|t| t.name != "ssh"));
    let why = "no ssh hosts are configured (add them to .execkit/ssh.json)";
    assert_eq!(kit.unlisted_tools(), [("ssh".to_string(), why.to_string())]);
    let result = call(&kit, json!({"host": "web", "command": "true"})).await;
    assert!(result.is_error);
    assert_eq!(
        result.text(),
        "Unknown ssh host \"web\". No ssh hosts are configured (add them to .execkit/ssh.json)."
    );
    let doctor = kit.doctor();
    let section = doctor.sections.iter().find(|s| s.title == "ssh").expect("an ssh section");
    assert!(section.lines[0].starts_with("hosts: none configured"), "{:?}", section.lines);
    project
        .write(json!({ "hosts": { "web": { "host": "web.internal", "description": "front" } } }));
    let listed = kit.tools().into_iter().find(|t| t.name == "ssh").expect("listed once configured");
    assert!(
        listed
            .description
            .starts_with("Run one non-interactive command on a configured remote host over ssh.")
    );
    assert!(
        listed.description.ends_with("Hosts:\n- web: web.internal:22 — front (not probed yet)"),
        "{}",
        listed.description
    );
    assert_eq!(listed.input_schema["required"], json!(["command"]));
    assert_eq!(kit.unlisted_tools(), []);
}

#[tokio::test]
async fn bad_arguments_fail_before_anything_connects() {
    let project = Project::new(json!({
        "web": { "host": "127.0.0.1", "port": 1, "ssh_config": "none" },
        "db": { "host": "-oProxyCommand=touch /tmp/ek-pwned" },
    }));
    let artifacts = tempfile::tempdir().unwrap();
    let kit = toolkit(&project, &artifacts);
    let cases = [
        (
            json!({"host": "web"}),
            "Invalid argument \"command\": missing (the command to run on the remote host)",
        ),
        (
            json!({"host": "web", "command": "x", "user": "root"}),
            "Invalid argument \"user\": unknown field; expected one of host, hosts, command, cwd, timeout, parallel",
        ),
        (
            json!({"host": "web", "hosts": ["web"], "command": "x"}),
            "Invalid argument \"hosts\": give either \"host\" or \"hosts\", not both",
        ),
        (json!({"host": "web", "command": ""}), "Invalid argument \"command\": empty"),
        (
            json!({"host": "root@10.0.0.1", "command": "x"}),
            "Unknown ssh host \"root@10.0.0.1\". Configured hosts: web.",
        ),
        (json!({"host": "db", "command": "x"}), "Unknown ssh host \"db\". Configured hosts: web."),
        (
            json!({"host": "web", "command": "x", "cwd": "~/src"}),
            "cwd must be an absolute remote path; \"~\" is not expanded. Omit cwd to start in the login directory.",
        ),
        (json!({"host": "web", "command": "x", "cwd": "src"}), "cwd must be an absolute path: src"),
        (
            json!({"hosts": ["web", "nope"], "command": "x"}),
            "Unknown ssh host \"nope\". Configured hosts: web.",
        ),
        (
            json!({"hosts": ["web"], "command": "x", "parallel": 0}),
            "Invalid argument \"parallel\": must be from 1 to 16 (got 0)",
        ),
    ];
    for (args, expected) in cases {
        let result = call(&kit, args.clone()).await;
        assert!(result.is_error, "{args}");
        assert_eq!(result.text(), expected, "{args}");
    }
    let negative = call(&kit, json!({"host": "web", "command": "x", "timeout": -5})).await;
    assert!(negative.text().starts_with("Invalid argument \"timeout\""), "{}", negative.text());
    assert!(!std::path::Path::new("/tmp/ek-pwned").exists());
    assert!(
        !project.control.exists() || std::fs::read_dir(&project.control).unwrap().next().is_none(),
        "no socket was made"
    );
    let doctor = kit.doctor();
    let section = doctor.sections.iter().find(|s| s.title == "ssh").unwrap();
    assert!(
        section
            .lines
            .iter()
            .any(|l| l.contains("host \"db\": \"host\" must not start with \"-\"; entry ignored")),
        "{:?}",
        section.lines
    );
}

#[test]
fn a_bad_mux_knob_fails_the_start() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let _guard = runtime.enter();
    let err = Toolkit::builder().var("EXECKIT_SSH_MUX", "fast").build().err();
    assert_eq!(err.as_deref(), Some(r#"EXECKIT_SSH_MUX="fast" is not one of native, process"#));
}

#[test]
fn execkit_call_runs_over_a_master_that_outlives_the_process() {
    need_sshd!();
    let sshd = Sshd::start(10);
    let project = Project::new(json!({ "box": sshd.entry(json!({})) }));
    let run = |command: &str| {
        let args = json!({"host": "box", "command": command}).to_string();
        let output = std::process::Command::new(crate::cli::execkit_bin())
            .args(["call", "ssh", &args])
            .current_dir(project.root.path())
            .env("HOME", project.home.path())
            .env("EXECKIT_SSH_CONTROL_DIR", &project.control)
            .env("EXECKIT_ARTIFACT_DIR", project.home.path().join("artifacts"))
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let result: Value = serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stderr)));
        (output.status.code(), result)
    };
    let (code, first) = run("echo from-cli");
    assert_eq!(code, Some(0), "{first}");
    assert_eq!(first["content"][0]["text"], "from-cli");
    assert_eq!(first["structuredContent"]["mux"], "new");
    let (code, second) = run("exit 4");
    assert_eq!(code, Some(1), "{second}");
    assert_eq!(
        second["structuredContent"]["mux"], "reused",
        "the master outlived the first process"
    );
    assert_eq!(second["structuredContent"]["exit_code"], 4);
    assert_eq!(sshd.logins(), 1);
    let execkit = |args: &[&str]| {
        let output = std::process::Command::new(crate::cli::execkit_bin())
            .args(args)
            .current_dir(project.root.path())
            .env("HOME", project.home.path())
            .env("EXECKIT_SSH_CONTROL_DIR", &project.control)
            .env("EXECKIT_ARTIFACT_DIR", project.home.path().join("artifacts"))
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        (output.status.code(), String::from_utf8_lossy(&output.stdout).into_owned())
    };
    let (code, probed) = execkit(&["ssh", "probe", "box"]);
    assert_eq!(code, Some(0), "{probed}");
    assert!(probed.starts_with("box: linux/") && probed.ends_with(" (probed)\n"), "{probed}");
    assert_eq!(
        execkit(&["ssh", "probe", "nope"]),
        (Some(1), "Unknown ssh host \"nope\". Configured hosts: box.\n".into())
    );
    let socket = std::fs::read_dir(&project.control)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_none())
        .expect("the master's socket");
    assert!(Project::master_pid(&socket).is_some());
    assert_eq!(execkit(&["ssh", "close", "--all"]), (Some(0), "box: master closed\n".into()));
    assert!(Project::master_pid(&socket).is_none(), "the master is gone");
    assert_eq!(execkit(&["ssh", "close", "box"]), (Some(0), "box: no master running\n".into()));
}
