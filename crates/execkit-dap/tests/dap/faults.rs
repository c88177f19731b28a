//! Fault injection: a scripted in-memory peer, and real processes that die or go silent.

use std::time::Duration;

use execkit_dap::framing::FrameDecoder;
use execkit_dap::handshake::{self, HandshakeRequest, StartConfig};
use execkit_dap::wire::{self, Message, Request};
use execkit_dap::{
    Client, ClientOptions, Connection, HandshakeError, RequestError, ReverseRequests, transport,
};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream, ReadHalf, WriteHalf};

use crate::common::*;

/// The adapter side of an in-memory connection, scripted by the test.
struct FakeAdapter {
    reader: ReadHalf<DuplexStream>,
    writer: WriteHalf<DuplexStream>,
    decoder: FrameDecoder,
    seq: i64,
}

fn fake(capacity: usize) -> (Client, ReverseRequests, FakeAdapter) {
    let (ours, theirs) = tokio::io::duplex(1 << 20);
    let (r, w) = tokio::io::split(ours);
    let mut options = ClientOptions::new("fake");
    options.event_capacity = capacity;
    let (client, reverse) = Client::start(Connection::new(r, w), None, options);
    let (reader, writer) = tokio::io::split(theirs);
    (client, reverse, FakeAdapter { reader, writer, decoder: FrameDecoder::default(), seq: 0 })
}

impl FakeAdapter {
    async fn raw(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).await.unwrap();
    }

    async fn send(&mut self, mut value: Value) {
        self.seq += 1;
        value["seq"] = json!(self.seq);
        let body = value.to_string();
        self.raw(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes()).await;
    }

    async fn event(&mut self, event: &str, body: Value) {
        self.send(json!({"type": "event", "event": event, "body": body})).await;
    }

    async fn respond(&mut self, request: &Request, success: bool, body: Value) {
        let message = if success { Value::Null } else { json!("it broke") };
        let mut value = json!({"type": "response", "request_seq": request.seq,
            "command": request.command, "success": success, "body": body});
        if !success {
            value["message"] = message;
        }
        self.send(value).await;
    }

    /// The next message the client wrote.
    async fn next(&mut self) -> Message {
        let mut buf = [0u8; 4096];
        loop {
            if let Some(body) = self.decoder.next_frame() {
                return wire::decode(&body).unwrap();
            }
            let n = tokio::time::timeout(Duration::from_secs(10), self.reader.read(&mut buf))
                .await
                .expect("the client wrote within 10 s")
                .unwrap();
            assert!(n > 0, "client closed");
            self.decoder.push(&buf[..n]);
        }
    }

    async fn request(&mut self) -> Request {
        match self.next().await {
            Message::Request(request) => request,
            other => panic!("expected a request, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn garbage_between_frames_is_skipped_and_counted() {
    let (client, _rev, mut peer) = fake(64);
    let pending = client.send("threads", None).await.unwrap();
    let request = peer.request().await;
    peer.raw(b"Welcome banner\ngarbage\n").await;
    peer.raw(b"Content-Length: 4000000000\r\n\r\n").await;
    peer.raw(b"Content-Length: 3\r\n\r\n[1]").await;
    peer.raw(b"Content-Length: 5\r\n\r\n{nope").await;
    peer.raw(b"Content-Length: 2\r\n\r\n\xff\xfe").await;
    peer.respond(&request, true, json!({"threads": [{"id": 1, "name": "main"}]})).await;
    let answer = pending.wait(deadline(10)).await.unwrap();
    assert!(answer.response.success);
    let stats = client.stats();
    assert_eq!(stats.resyncs, 1, "one run of garbage: {stats:?}");
    assert_eq!(stats.dropped_bodies, 3, "{stats:?}");
}

#[tokio::test]
async fn every_pending_request_fails_when_the_stream_closes() {
    let (client, _rev, mut peer) = fake(64);
    let mut pending = Vec::new();
    for command in ["threads", "stackTrace", "scopes"] {
        pending.push(client.send(command, None).await.unwrap());
        peer.request().await;
    }
    drop(peer);
    for p in pending {
        let command = p.command().to_string();
        let err = p.wait(deadline(10)).await.unwrap_err();
        assert_eq!(err, RequestError::Closed { adapter: "fake".into(), command });
    }
    assert!(client.is_closed());
    let err = client.send("threads", None).await.unwrap_err();
    assert!(matches!(err, RequestError::Closed { .. }), "{err}");
}

#[tokio::test]
async fn a_timed_out_request_leaves_the_connection_usable() {
    let (client, _rev, mut peer) = fake(64);
    let slow = client.send("evaluate", None).await.unwrap();
    let slow_request = peer.request().await;
    let err =
        slow.wait(tokio::time::Instant::now() + Duration::from_millis(100)).await.unwrap_err();
    assert!(err.to_string().starts_with("DAP request evaluate timed out after "), "{err}");
    peer.respond(&slow_request, true, json!({"result": "late"})).await;
    let next = client.send("threads", None).await.unwrap();
    let request = peer.request().await;
    peer.respond(&request, true, json!({"threads": []})).await;
    next.wait(deadline(10)).await.unwrap();
    assert_eq!(client.stats().late_responses, 1);
}

#[tokio::test]
async fn failed_response_uses_its_message() {
    let (client, _rev, mut peer) = fake(64);
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.request("evaluate", None, deadline(10)).await }
    });
    let request = peer.request().await;
    peer.respond(&request, false, json!({})).await;
    let err = call.await.unwrap().unwrap_err();
    assert_eq!(err.to_string(), "DAP request evaluate failed: it broke");
}

#[tokio::test]
async fn reverse_requests_reach_the_caller_and_others_are_refused() {
    let (client, mut reverse, mut peer) = fake(64);
    peer.send(json!({"type": "request", "command": "runInTerminal",
        "arguments": {"cwd": "/", "args": ["true"]}}))
        .await;
    let incoming = reverse.recv().await.unwrap();
    assert_eq!(incoming.request.command(), "runInTerminal");
    incoming.responder.succeed(Some(json!({"processId": 42})));
    let Message::Response(response) = peer.next().await else { panic!() };
    assert!(response.success);
    assert_eq!(response.body, Some(json!({"processId": 42})));

    peer.send(json!({"type": "request", "command": "vendorThing"})).await;
    let Message::Response(response) = peer.next().await else { panic!() };
    assert!(!response.success);
    assert_eq!(
        response.message.as_deref(),
        Some("execkit does not support the vendorThing request")
    );

    drop(reverse);
    peer.send(json!({"type": "request", "command": "startDebugging",
        "arguments": {"request": "attach", "configuration": {}}}))
        .await;
    let Message::Response(response) = peer.next().await else { panic!() };
    assert!(!response.success, "nobody serves reverse requests, so it is refused");
    drop(client);
}

#[tokio::test]
async fn event_flood_is_bounded_and_keeps_the_stop() {
    let (client, _rev, mut peer) = fake(100);
    peer.event("stopped", json!({"reason": "breakpoint", "threadId": 1})).await;
    for i in 0..5000 {
        peer.event("output", json!({"category": "stdout", "output": format!("line {i}\n")})).await;
    }
    peer.event("vendorDone", json!({})).await;
    client.wait_event(|r| r.name() == "vendorDone", deadline(10)).await.unwrap().unwrap();
    let stats = client.stats();
    assert_eq!(stats.dropped_events, 4902, "{stats:?}");
    let events = client.drain_events();
    assert_eq!(events.len(), 99);
    assert_eq!(events[0].name(), "stopped");
}

/// The debugpy order, scripted: `launch` is answered only after configurationDone.
#[tokio::test]
async fn handshake_configures_before_the_launch_answer() {
    let (client, _rev, mut peer) = fake(64);
    let config = StartConfig::new("fake", HandshakeRequest::Launch, json!({"program": "x"}));
    let run = tokio::spawn(async move { handshake::start(&client, &config).await });
    let init = peer.request().await;
    peer.respond(&init, true, json!({"supportsConfigurationDoneRequest": true})).await;
    let launch = peer.request().await;
    assert_eq!(launch.command, "launch");
    peer.event("initialized", json!(null)).await;
    let done = peer.request().await;
    assert_eq!(done.command, "configurationDone");
    peer.respond(&done, true, json!(null)).await;
    peer.event("stopped", json!({"reason": "entry", "threadId": 1})).await;
    peer.respond(&launch, true, json!(null)).await;
    let outcome = run.await.unwrap().unwrap();
    assert!(outcome.first_stop.is_some());
}

/// When both launch and configurationDone fail, the launch message says why.
#[tokio::test]
async fn failed_launch_message_wins_over_configuration_done() {
    let (client, _rev, mut peer) = fake(64);
    let config = StartConfig::new("fake", HandshakeRequest::Launch, json!({}));
    let run = tokio::spawn(async move { handshake::start(&client, &config).await });
    let init = peer.request().await;
    peer.respond(&init, true, json!({"supportsConfigurationDoneRequest": true})).await;
    let launch = peer.request().await;
    peer.event("initialized", json!(null)).await;
    let done = peer.request().await;
    peer.send(json!({"type": "response", "request_seq": done.seq, "command": "configurationDone",
        "success": false, "message": "no program"}))
        .await;
    peer.send(json!({"type": "response", "request_seq": launch.seq, "command": "launch",
        "success": false, "message": "Program not found: /x"}))
        .await;
    let err = run.await.unwrap().unwrap_err();
    assert_eq!(err.to_string(), "Launch failed: Program not found: /x");
}

/// An adapter that starts, reads a little and dies: the pending request names the exit code
/// and the stderr tail.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adapter_dying_mid_request_fails_it_with_code_and_stderr() {
    let Some(sh) = find_program(&["sh"]) else { return };
    let sup = supervisor();
    let dir = tempfile::tempdir().unwrap();
    let script = "head -c 10 >/dev/null; echo boom >&2; exit 3";
    let cmd = command("dying", &sh, &["-c", script], dir.path());
    let (conn, process) = transport::spawn_stdio(&sup, &cmd).await.unwrap();
    let (client, _rev) = Client::start(conn, Some(process), ClientOptions::new("dying"));
    let err = client.request("initialize", Some(json!({})), deadline(10)).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "Debug adapter dying exited (code 3) during initialize.\nLast stderr:\nboom"
    );
}

/// An adapter that never answers `initialize`: the handshake times out at its deadline, and
/// the caller kills the adapter with nothing left behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adapter_that_never_answers_initialize_times_out() {
    let Some(sh) = find_program(&["sh"]) else { return };
    let sup = supervisor();
    let dir = tempfile::tempdir().unwrap();
    let cmd = command("silent", &sh, &["-c", "cat >/dev/null"], dir.path());
    let (conn, process) = transport::spawn_stdio(&sup, &cmd).await.unwrap();
    let pid = process.pid();
    let (client, _rev) = Client::start(conn, Some(process.clone()), ClientOptions::new("silent"));
    let mut config = StartConfig::new("silent", HandshakeRequest::Launch, json!({}));
    config.deadline = tokio::time::Instant::now() + Duration::from_millis(500);
    let started = std::time::Instant::now();
    let err = handshake::start(&client, &config).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(3));
    let HandshakeError::Request(RequestError::Timeout { command, .. }) = &err else {
        panic!("{err}")
    };
    assert_eq!(command, "initialize");
    assert!(err.to_string().starts_with("DAP request initialize timed out after "), "{err}");
    // Closing the connection closes the adapter's stdin, which ends `cat`.
    client.close().await;
    assert!(process.wait_exit(deadline(10)).await.is_some());
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
}

/// A real process that prints garbage before speaking DAP: the scripted adapter answers
/// initialize after a banner and a bad header.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn process_printing_garbage_before_its_first_frame_works() {
    let Some(sh) = find_program(&["sh"]) else { return };
    let sup = supervisor();
    let dir = tempfile::tempdir().unwrap();
    let body = r#"{"seq":1,"type":"response","request_seq":1,"command":"initialize","success":true,"body":{"supportsConfigurationDoneRequest":true}}"#;
    let script = format!(
        "printf 'garbage\\nContent-Length: x\\r\\n\\r\\n'; head -c 20 >/dev/null; printf 'Content-Length: {}\\r\\n\\r\\n%s' '{body}'; cat >/dev/null",
        body.len()
    );
    let cmd = command("noisy", &sh, &["-c", &script], dir.path());
    let (conn, process) = transport::spawn_stdio(&sup, &cmd).await.unwrap();
    let (client, _rev) = Client::start(conn, Some(process), ClientOptions::new("noisy"));
    let caps: execkit_dap::wire::Capabilities =
        client.call("initialize", Some(json!({})), deadline(10)).await.unwrap();
    assert!(caps.flag("supportsConfigurationDoneRequest"));
    assert_eq!(client.stats().resyncs, 1);
    shut_down(&client).await;
}

/// The launch is answered but `initialized` never comes (a debugpy child-session gap):
/// configuration goes ahead after the grace period.
#[tokio::test]
async fn missing_initialized_after_a_good_launch_answer_is_tolerated() {
    let (client, _rev, mut peer) = fake(64);
    let mut config = StartConfig::new("fake", HandshakeRequest::Attach, json!({}));
    config.stop_wait = Duration::ZERO;
    let run = tokio::spawn(async move { handshake::start(&client, &config).await });
    let init = peer.request().await;
    peer.respond(&init, true, json!({"supportsConfigurationDoneRequest": true})).await;
    let attach = peer.request().await;
    peer.respond(&attach, true, json!(null)).await;
    let started = std::time::Instant::now();
    let done = peer.request().await;
    assert_eq!(done.command, "configurationDone");
    assert!(started.elapsed() >= Duration::from_millis(1500), "{:?}", started.elapsed());
    peer.respond(&done, true, json!(null)).await;
    let outcome = run.await.unwrap().unwrap();
    assert_eq!(outcome.order.initialized, None);
}

/// Neither `initialized` nor a launch answer before the deadline.
#[tokio::test]
async fn no_initialized_and_no_launch_answer_fails_at_the_deadline() {
    let (client, _rev, mut peer) = fake(64);
    let mut config = StartConfig::new("fake", HandshakeRequest::Launch, json!({}));
    config.deadline = tokio::time::Instant::now() + Duration::from_millis(700);
    let run = tokio::spawn(async move { handshake::start(&client, &config).await });
    let init = peer.request().await;
    peer.respond(&init, true, json!({})).await;
    let _launch = peer.request().await;
    let err = run.await.unwrap().unwrap_err();
    assert!(matches!(err, HandshakeError::NoInitialized { .. }), "{err}");
    assert!(
        err.to_string().starts_with("Debug adapter fake sent no \"initialized\" event within ")
    );
}

/// A peer that never reads: the write queue fills and the connection ends with a clear error
/// instead of blocking the reader or the caller.
#[tokio::test]
async fn adapter_that_stops_reading_ends_the_connection() {
    let (ours, theirs) = tokio::io::duplex(1024);
    let (r, w) = tokio::io::split(ours);
    let (client, _rev) = Client::start(Connection::new(r, w), None, ClientOptions::new("stuck"));
    let big = json!({"expression": "x".repeat(4096)});
    let mut failure = None;
    for _ in 0..1000 {
        match client.send("evaluate", Some(big.clone())).await {
            Ok(pending) => {
                let until = tokio::time::Instant::now() + Duration::from_millis(1);
                if let Err(err @ RequestError::StoppedReading { .. }) = pending.wait(until).await {
                    failure = Some(err);
                    break;
                }
            }
            Err(err) => {
                failure = Some(err);
                break;
            }
        }
    }
    let err = failure.expect("the connection gave up on the stuck peer");
    assert_eq!(
        err.to_string(),
        "Debug adapter stuck stopped reading requests; the session was ended."
    );
    assert!(client.is_closed());
    drop(theirs);
}
