//! Sockets made inside the private network namespace, against the real kernel: they reach the
//! confined children's loopback and not the host's.

use std::fs::File;
use std::io::{ErrorKind, Read};
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use execkit_sandbox::{Mode, Network, Policy};
use tokio::io::AsyncReadExt;

use super::*;
use crate::run::{self, RunLimits, RunObserver};
use crate::{SpawnSpec, Supervisor, SupervisorConfig};

struct Discard;

impl RunObserver for Discard {
    fn output(&mut self, _chunk: &[u8]) {}
}

fn start(root: &Path, network: Network) -> Supervisor {
    let root = std::fs::canonicalize(root).unwrap();
    let sandbox = Policy {
        mode: Mode::WorkspaceWrite,
        network,
        writable_roots: vec![root],
        ..Policy::default()
    };
    Supervisor::start(SupervisorConfig { sandbox, ..SupervisorConfig::default() }).unwrap()
}

/// A confined bash writes `hi` to `127.0.0.1:port` of its own network.
async fn confined_client_says_hi(sup: &Supervisor, cwd: &Path, port: u16) {
    let spec = SpawnSpec {
        program: "/bin/bash".into(),
        args: vec!["-c".into(), format!("exec 3<>/dev/tcp/127.0.0.1/{port}; echo hi >&3").into()],
        env: vec![("PATH".into(), "/usr/bin:/bin".into())],
        cwd: cwd.to_path_buf(),
        ..SpawnSpec::default()
    };
    let child = sup.spawn(spec).await.unwrap();
    let limits = RunLimits {
        deadline: Some(std::time::Instant::now() + Duration::from_secs(60)),
        cancel: crate::CancellationToken::new(),
        kill_grace: Duration::from_millis(500),
        drain_idle: Duration::from_millis(250),
        drain_max: Duration::from_millis(2000),
    };
    run::run(child, &mut Discard, limits).await;
}

fn host_listener() -> (std::net::TcpListener, SocketAddr) {
    let host = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    host.set_nonblocking(true).unwrap();
    let addr = host.local_addr().unwrap();
    (host, addr)
}

#[tokio::test]
async fn private_sockets_reach_the_confined_loopback_and_not_the_host() {
    let ws = tempfile::tempdir().unwrap();
    let sup = start(ws.path(), Network::Off);
    let sockets = sup.sandbox().sockets();
    assert!(sockets.is_private());
    let (host, host_addr) = host_listener();
    let refused = sockets.connect(host_addr).await.unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::ConnectionRefused, "{refused}");
    assert_eq!(host.accept().unwrap_err().kind(), ErrorKind::WouldBlock);

    let listener = sockets.listen(SocketAddr::from(([127, 0, 0, 1], 0))).unwrap();
    let port = listener.local_addr().unwrap().port();
    let host_try = std::net::TcpStream::connect(("127.0.0.1", port));
    assert!(host_try.is_err(), "the host reached a listener of the private network");
    let (accepted, ()) = tokio::join!(
        tokio::time::timeout(Duration::from_secs(60), listener.accept()),
        confined_client_says_hi(&sup, ws.path(), port)
    );
    let (mut stream, _) = accepted.expect("a confined child connects within 60 s").unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).await.unwrap();
    assert_eq!(text, "hi\n");

    // Two private sockets meet each other; a reserved port is free to listen on there.
    let port = sockets.reserve_port().unwrap();
    let again = sockets.listen(SocketAddr::from(([127, 0, 0, 1], port))).unwrap();
    let client = sockets.connect(SocketAddr::from(([127, 0, 0, 1], port))).await.unwrap();
    let (server_side, _) = again.accept().await.unwrap();
    assert_eq!(server_side.peer_addr().unwrap(), client.local_addr().unwrap());
    sup.close().await;
}

#[tokio::test]
async fn with_network_on_the_sockets_are_the_hosts() {
    let ws = tempfile::tempdir().unwrap();
    let sup = start(ws.path(), Network::On);
    let sockets = sup.sandbox().sockets();
    assert!(!sockets.is_private());
    let (host, host_addr) = host_listener();
    let client = sockets.connect(host_addr).await.unwrap();
    host.set_nonblocking(false).unwrap();
    let (mut seen, _) = host.accept().unwrap();
    drop(client);
    let mut rest = Vec::new();
    seen.read_to_end(&mut rest).unwrap();
    sup.close().await;
}

#[test]
fn a_descriptor_that_is_not_a_namespace_fails_in_one_line() {
    let not_a_namespace = OwnedFd::from(File::open("/dev/null").unwrap());
    let namespaces = Namespaces { user: None, net: Some(not_a_namespace), mnt: None };
    let err = socket_in(&namespaces, libc::AF_INET).unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with(
            "cannot open a socket in the sandbox's private network: joining the sandbox's \
             network namespace failed: "
        ),
        "{text}"
    );
    assert!(!text.contains('\n'), "{text}");
}

#[test]
fn many_sockets_in_a_row_each_get_their_own_descriptor() {
    let namespaces = match super::super::namespaces::create(true, Vec::new()) {
        Ok(namespaces) => namespaces,
        Err(reason) => {
            return println!(
                "SKIPPED many_sockets_in_a_row_each_get_their_own_descriptor: {reason}"
            );
        }
    };
    let fds: Vec<OwnedFd> =
        (0..200).map(|_| socket_in(&namespaces, libc::AF_INET6).unwrap()).collect();
    let mut numbers: Vec<RawFd> = fds.iter().map(AsRawFd::as_raw_fd).collect();
    numbers.sort_unstable();
    numbers.dedup();
    assert_eq!(numbers.len(), 200);
}

/// An unprivileged user's sockets need the held user namespace joined first: the test above,
/// run again as `nobody` through `setpriv` when the tests run as root.
#[test]
#[allow(clippy::disallowed_methods)]
fn private_sockets_work_for_an_unprivileged_user() {
    // SAFETY: geteuid has no side effects.
    if unsafe { libc::geteuid() } != 0 {
        return;
    }
    let setpriv = std::process::Command::new("setpriv").arg("--version").output();
    if setpriv.is_err() {
        return println!("SKIPPED private_sockets_work_for_an_unprivileged_user: no setpriv");
    }
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("tests");
    std::fs::copy(std::env::current_exe().unwrap(), &bin).unwrap();
    let open = std::os::unix::fs::PermissionsExt::from_mode(0o777);
    std::fs::set_permissions(dir.path(), open).unwrap();
    let name =
        "sandbox::sockets::tests::private_sockets_reach_the_confined_loopback_and_not_the_host";
    let run = || {
        let out = std::process::Command::new("setpriv")
            .args(["--reuid", "65534", "--regid", "65534", "--clear-groups"])
            .arg(&bin)
            .args(["--exact", name, "--test-threads", "1"])
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", dir.path())
            .env("TMPDIR", dir.path())
            .current_dir(dir.path())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        (out.status.success(), text)
    };
    // A child another test forks while the copy is open for writing holds it until it execs,
    // and exec of a file open for writing fails (ETXTBSY): that race is retried.
    let (mut ok, mut text) = run();
    for _ in 0..20 {
        if !text.contains("Text file busy") {
            break;
        }
        (ok, text) = run();
    }
    assert!(ok && text.contains("1 passed"), "{text}");
}
