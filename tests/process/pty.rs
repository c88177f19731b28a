//! process: PTY children (O43).

use super::*;

fn pty_spec(script: &str) -> SpawnSpec {
    let mut spec = bash(script);
    spec.pty = Some(PtySize { cols: 120, rows: 40 });
    spec
}

// OT15: the slave is the controlling terminal and fds 0-2, with the requested size; output
// arrives through the same OutputPipe and ends at EOF once the child exits.
#[tokio::test]
async fn pty_child_has_a_terminal() {
    let sup = fallback(false);
    let child = sup.spawn(pty_spec("tty; stty size; test -t 0 && test -t 2 && echo all-tty")).await;
    let child = child.expect("spawn");
    let tty = child.pty().expect("pty handle").tty().to_path_buf();
    let mut out = Collect(Vec::new());
    let started = Instant::now();
    let outcome = run::run(child, &mut out, limits()).await;
    let text = out.text().replace('\r', "");
    assert_eq!(outcome.end, RunEnd::Exited);
    assert_eq!(text, format!("{}\n40 120\nall-tty\n", tty.display()));
    assert!(tty.to_string_lossy().starts_with("/dev/pts/"));
    assert!(outcome.lingering.is_empty(), "{:?}", outcome.lingering);
    // EOF, not the drain limit, ended the run.
    assert!(started.elapsed() < Duration::from_millis(1500), "{:?}", started.elapsed());
    sup.close().await;
}

// O43: input through the master; fg_pgrp and termios for input-wait detection.
#[tokio::test]
async fn pty_input_fg_pgrp_and_termios() {
    let sup = fallback(false);
    let mut child =
        sup.spawn(pty_spec("echo ready; read -r line; echo \"got $line\"")).await.expect("spawn");
    let pty = child.pty().expect("pty handle");
    let mut pipe = child.take_output().expect("output");
    let mut seen = Vec::new();
    let mut buf = [0u8; 1024];
    while !String::from_utf8_lossy(&seen).contains("ready") {
        let n = tokio::time::timeout(Duration::from_secs(5), pipe.read(&mut buf))
            .await
            .expect("output in time")
            .expect("read");
        assert!(n > 0, "EOF before ready");
        seen.extend_from_slice(&buf[..n]);
    }
    assert_eq!(pty.fg_pgrp(), Some(child.pid() as i32));
    let mode = pty.termios().expect("termios");
    assert!(mode.echo && mode.icanon, "{mode:?}");
    pty.write_all(b"hello\n").await.expect("write");
    loop {
        let n = tokio::time::timeout(Duration::from_secs(5), pipe.read(&mut buf))
            .await
            .expect("output in time")
            .expect("read");
        if n == 0 {
            break;
        }
        seen.extend_from_slice(&buf[..n]);
    }
    assert!(
        String::from_utf8_lossy(&seen).contains("got hello"),
        "{}",
        String::from_utf8_lossy(&seen)
    );
    assert_eq!(child.wait().await.expect("status").code, Some(0));
    sup.close().await;
}

// OT15: EXECKIT_NO_PTY=1 (`no_pty`) gives the typed error the tools fall back on.
#[tokio::test]
async fn pty_refused_gives_a_typed_error() {
    let sup = Supervisor::start(SupervisorConfig {
        use_cgroup: false,
        no_pty: true,
        ..SupervisorConfig::default()
    })
    .expect("supervisor starts");
    let err = sup.spawn(pty_spec("true")).await.expect_err("refused");
    assert!(err.pty_unavailable().is_some(), "{err}");
    assert_eq!(err.to_string(), "Failed to start bash: PTY unavailable: EXECKIT_NO_PTY=1");
    sup.close().await;
}
