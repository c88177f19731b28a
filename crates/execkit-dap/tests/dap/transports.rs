//! The socket transports against real adapters and real failures.

use std::time::Duration;

use execkit_dap::{Client, ClientOptions, TransportError, handshake, transport};

use crate::common::*;
use crate::lldb::{drive_lldb, lldb_launch_config};

/// lldb-dap listening on a TCP port (`--port`): connect-retry until it accepts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lldb_dap_over_tcp() {
    let Some(lldb) = find_program(LLDB_DAP) else { return };
    let sup = supervisor();
    let dir = tempfile::tempdir().unwrap();
    let Some(program) = c_program(dir.path()) else { return };
    let make = |port: u16| command("lldb-dap", &lldb, &["--port", &port.to_string()], dir.path());
    let (conn, process) =
        transport::spawn_tcp(&sup, make, "127.0.0.1", deadline(20)).await.expect("connect");
    let (client, reverse) = Client::start(conn, Some(process), ClientOptions::new("lldb-dap"));
    serve_reverse_requests(reverse);
    let outcome = handshake::start(&client, &lldb_launch_config(&program, dir.path()))
        .await
        .expect("handshake");
    drive_lldb(&client, outcome).await;
}

/// lldb-dap behind socat on a Unix socket.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lldb_dap_over_unix_socket() {
    let Some(lldb) = find_program(LLDB_DAP) else { return };
    let Some(socat) = find_program(&["socat"]) else { return };
    let sup = supervisor();
    let dir = tempfile::tempdir().unwrap();
    let Some(program) = c_program(dir.path()) else { return };
    let base = tempfile::tempdir().unwrap();
    let socket = execkit_dap::socket_dir::SocketPath::new(base.path(), "test").unwrap();
    let make = |path: &std::path::Path| {
        let listen = format!("UNIX-LISTEN:{}", path.display());
        let exec = format!("EXEC:{}", lldb.display());
        command("lldb-dap", &socat, &[&listen, &exec], dir.path())
    };
    let (conn, process) =
        transport::spawn_unix(&sup, make, socket.path().to_path_buf(), deadline(20))
            .await
            .expect("connect");
    let (client, reverse) = Client::start(conn, Some(process), ClientOptions::new("lldb-dap"));
    serve_reverse_requests(reverse);
    let outcome = handshake::start(&client, &lldb_launch_config(&program, dir.path()))
        .await
        .expect("handshake");
    drive_lldb(&client, outcome).await;
    let path = socket.path().to_path_buf();
    drop(socket);
    assert!(!path.exists(), "the socket is removed on drop");
}

/// An adapter that exits before it listens: the error names its code and stderr, fast.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tcp_adapter_exiting_before_connect_is_reported_at_once() {
    let Some(sh) = find_program(&["sh"]) else { return };
    let sup = supervisor();
    let dir = tempfile::tempdir().unwrap();
    let make = |_port: u16| command("broken", &sh, &["-c", "echo boom >&2; exit 3"], dir.path());
    let started = std::time::Instant::now();
    let err = transport::spawn_tcp(&sup, make, "127.0.0.1", deadline(20)).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(1), "{:?}", started.elapsed());
    assert_eq!(
        err.to_string(),
        "Debug adapter broken exited before it accepted a connection (code 3).\nLast stderr:\nboom"
    );
}

/// An adapter that never listens: the deadline ends the wait, and the adapter is killed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tcp_adapter_that_never_listens_times_out_and_is_killed() {
    let Some(sh) = find_program(&["sh"]) else { return };
    let sup = supervisor();
    let dir = tempfile::tempdir().unwrap();
    let make = |_port: u16| command("deaf", &sh, &["-c", "exec sleep 60"], dir.path());
    let until = tokio::time::Instant::now() + Duration::from_millis(600);
    let err = transport::spawn_tcp(&sup, make, "localhost", until).await.unwrap_err();
    assert!(matches!(err, TransportError::ConnectTimeout { .. }), "{err}");
    assert!(
        err.to_string().starts_with("Debug adapter deaf did not accept a connection on 127.0.0.1:")
    );
}

/// An adapter whose wrapper prints a banner before the first frame: one resync, and the
/// session works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lldb_dap_behind_a_banner_resyncs_once() {
    let Some(lldb) = find_program(LLDB_DAP) else { return };
    let Some(sh) = find_program(&["sh"]) else { return };
    let sup = supervisor();
    let dir = tempfile::tempdir().unwrap();
    let Some(program) = c_program(dir.path()) else { return };
    let script = format!("printf 'garbage\\n'; exec {}", lldb.display());
    let cmd = command("lldb-dap", &sh, &["-c", &script], dir.path());
    let (conn, process) = transport::spawn_stdio(&sup, &cmd).await.expect("start");
    let (client, reverse) = Client::start(conn, Some(process), ClientOptions::new("lldb-dap"));
    serve_reverse_requests(reverse);
    let outcome = handshake::start(&client, &lldb_launch_config(&program, dir.path()))
        .await
        .expect("handshake");
    assert_eq!(client.stats().resyncs, 1);
    drive_lldb(&client, outcome).await;
}
