//! The sandbox against the real kernel: Landlock, seccomp, the private loopback and the mount
//! namespace, through the Supervisor's one spawn path.

use std::path::{Path, PathBuf};
use std::time::Duration;

use execkit_sandbox::{Enforcement, Mode, Network, Policy, Simulate};

use crate::run::{self, RunLimits, RunObserver};
use crate::{Confinement, SpawnSpec, Supervisor, SupervisorConfig};

struct Collect(Vec<u8>);

impl RunObserver for Collect {
    fn output(&mut self, chunk: &[u8]) {
        self.0.extend_from_slice(chunk);
    }
}

fn limits() -> RunLimits {
    RunLimits {
        deadline: Some(std::time::Instant::now() + Duration::from_secs(60)),
        cancel: crate::CancellationToken::new(),
        kill_grace: Duration::from_millis(500),
        drain_idle: Duration::from_millis(250),
        drain_max: Duration::from_millis(2000),
    }
}

fn workspace_write(root: &Path) -> Policy {
    let root = std::fs::canonicalize(root).unwrap();
    Policy {
        mode: Mode::WorkspaceWrite,
        network: Network::Off,
        protected: vec![root.join(".git")],
        writable_roots: vec![root],
        ..Policy::default()
    }
}

fn start(policy: Policy) -> Supervisor {
    Supervisor::start(SupervisorConfig { sandbox: policy, ..SupervisorConfig::default() }).unwrap()
}

async fn run_in(sup: &Supervisor, cwd: &Path, script: &str, confinement: Confinement) -> String {
    let spec = SpawnSpec {
        program: "/bin/bash".into(),
        args: vec!["-c".into(), script.into()],
        env: vec![("PATH".into(), "/usr/bin:/bin".into())],
        cwd: cwd.to_path_buf(),
        confinement,
        ..SpawnSpec::default()
    };
    let child = sup.spawn(spec).await.unwrap();
    let mut out = Collect(Vec::new());
    let end = run::run(child, &mut out, limits()).await;
    let text = String::from_utf8_lossy(&out.0).into_owned();
    format!("{text}exit={:?}", end.status.and_then(|s| s.code))
}

/// A directory outside `/tmp` and the workspace: the only writable roots of the policies here.
fn outside_dir() -> PathBuf {
    let dir = std::env::current_dir().unwrap().join("target").join("sandbox-test-outside");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test]
async fn writes_outside_the_roots_are_denied_even_to_root_and_inside_work() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path().join(".git")).unwrap();
    std::fs::write(ws.path().join(".git/config"), "[core]\n").unwrap();
    let sup = start(workspace_write(ws.path()));
    assert_eq!(sup.sandbox().enforcement(), &Enforcement::Full);
    let outside = outside_dir().join(format!("w{}", std::process::id()));
    let script = format!(
        "echo in > inside.txt && cat inside.txt; echo x > {0}; echo x >> .git/config; \
         (setsid sh -c 'echo late > {0}.late' &); sleep 0.3; true",
        outside.display()
    );
    let out = run_in(&sup, ws.path(), &script, Confinement::Policy).await;
    assert!(out.starts_with("in\n"), "{out}");
    assert!(out.contains("Permission denied"), "{out}");
    assert!(out.contains("Read-only file system"), "{out}");
    assert!(!outside.exists(), "{out}");
    assert!(
        !outside.with_extension("late").exists()
            && !PathBuf::from(format!("{}.late", outside.display())).exists()
    );
    assert_eq!(std::fs::read_to_string(ws.path().join(".git/config")).unwrap(), "[core]\n");
    // A cwd inside the protected path resolves in the shared mount namespace: read-only too.
    let out = run_in(&sup, &ws.path().join(".git"), "echo x >> config", Confinement::Policy).await;
    assert!(out.contains("Read-only file system"), "{out}");
    assert_eq!(std::fs::read_to_string(ws.path().join(".git/config")).unwrap(), "[core]\n");
    // The same Supervisor runs an exempt spawn unconfined.
    let out = run_in(
        &sup,
        ws.path(),
        &format!("echo x > {0} && rm {0}", outside.display()),
        Confinement::Exempt,
    )
    .await;
    assert!(out.ends_with("exit=Some(0)"), "{out}");
    sup.close().await;
}

#[tokio::test]
async fn the_private_loopback_is_shared_by_the_children_and_nothing_outside_is_reached() {
    let ws = tempfile::tempdir().unwrap();
    let host = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = host.local_addr().unwrap().port();
    host.set_nonblocking(true).unwrap();
    let sup = start(workspace_write(ws.path()));
    let connect = format!(
        "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 2); print('connected')\""
    );
    let out = run_in(&sup, ws.path(), &connect, Confinement::Policy).await;
    assert!(!out.contains("connected"), "{out}");
    assert!(host.accept().is_err(), "the host listener was reached");
    // A server one child starts is reachable from the next.
    let server = format!(
        "python3 -c \"import socket; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); \
         s.bind(('127.0.0.1', {port})); s.listen(); open('ready','w').close(); c,_=s.accept(); c.sendall(b'hi')\" &
         for i in $(seq 100); do [ -e ready ] && break; sleep 0.1; done; \
         python3 -c \"import socket; print(socket.create_connection(('127.0.0.1', {port}), 5).recv(2))\""
    );
    let out = run_in(&sup, ws.path(), &server, Confinement::Policy).await;
    assert!(out.contains("b'hi'"), "{out}");
    assert!(host.accept().is_err(), "the host listener was reached");
    let curl = "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 80), 2)\"";
    let out = run_in(&sup, ws.path(), curl, Confinement::Policy).await;
    assert!(out.contains("Network is unreachable"), "{out}");
    sup.close().await;
}

#[tokio::test]
async fn denied_paths_cannot_be_read() {
    let ws = tempfile::tempdir().unwrap();
    let secrets = outside_dir().join(format!("secrets{}", std::process::id()));
    std::fs::create_dir_all(&secrets).unwrap();
    std::fs::write(secrets.join("id_ed25519"), "KEY").unwrap();
    let file = outside_dir().join(format!("token{}", std::process::id()));
    std::fs::write(&file, "TOKEN").unwrap();
    let mut policy = workspace_write(ws.path());
    policy.denied = vec![secrets.clone(), file.clone()];
    let sup = start(policy);
    let script = format!(
        "cat {}/id_ed25519; cat {}; cat /etc/hostname >/dev/null && echo readable",
        secrets.display(),
        file.display()
    );
    let out = run_in(&sup, ws.path(), &script, Confinement::Policy).await;
    assert!(!out.contains("KEY") && !out.contains("TOKEN"), "{out}");
    assert!(out.contains("readable"), "{out}");
    sup.close().await;
    std::fs::remove_dir_all(&secrets).unwrap();
    std::fs::remove_file(&file).unwrap();
}

#[tokio::test]
async fn without_namespaces_seccomp_refuses_sockets_and_the_enforcement_is_partial() {
    let ws = tempfile::tempdir().unwrap();
    let mut policy = workspace_write(ws.path());
    policy.simulate = Simulate { no_user_namespaces: true, ..Simulate::default() };
    let sup = start(policy);
    let Enforcement::Partial { missing } = sup.sandbox().enforcement() else {
        panic!("{:?}", sup.sandbox().enforcement());
    };
    assert!(missing.iter().any(|m| m.starts_with("private loopback")), "{missing:?}");
    assert!(missing.iter().any(|m| m.starts_with("protected paths")), "{missing:?}");
    let script =
        "python3 -c \"import socket; socket.socket()\" 2>&1 | tail -1; echo x > /tmp/../etc/nope";
    let out = run_in(&sup, ws.path(), script, Confinement::Policy).await;
    assert!(out.contains("PermissionError: [Errno 1] Operation not permitted"), "{out}");
    assert!(out.contains("Permission denied"), "{out}");
    sup.close().await;
}

#[tokio::test]
async fn an_unavailable_sandbox_starts_nothing() {
    let ws = tempfile::tempdir().unwrap();
    let mut policy = workspace_write(ws.path());
    policy.simulate = Simulate { landlock_unavailable: true, ..Simulate::default() };
    let sup = start(policy);
    let marker = ws.path().join("ran");
    let spec = SpawnSpec {
        program: "/bin/sh".into(),
        args: vec!["-c".into(), format!("touch {}", marker.display()).into()],
        ..SpawnSpec::default()
    };
    let err = sup.spawn(spec).await.unwrap_err().to_string();
    assert!(err.contains("Sandbox unavailable: workspace-write needs Landlock"), "{err}");
    assert!(!marker.exists());
    sup.close().await;
}
