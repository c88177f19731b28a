//! `execkit mcp` under raw, hostile stdin: lines written straight to the real binary, replies
//! read straight from its stdout, no SDK in between.
#![allow(clippy::disallowed_methods)] // the server is started with std::process::Command
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::cli::{Sandbox, execkit_bin};

/// How long any one reply may take: generous, a reply is expected in well under a second.
const REPLY_WITHIN: Duration = Duration::from_secs(60);

/// One `execkit mcp` process, initialized, with its stdout read line by line.
struct RawServer {
    sandbox: Sandbox,
    child: Child,
    stdin: ChildStdin,
    replies: mpsc::Receiver<Value>,
}

impl RawServer {
    fn start() -> RawServer {
        let sandbox = Sandbox::new();
        let mut child = sandbox
            .command(execkit_bin())
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("execkit mcp starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let (tx, replies) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let line = line.expect("the server writes UTF-8 lines");
                let value = serde_json::from_str(&line).unwrap_or_else(|err| {
                    panic!("the server wrote a non-JSON line ({err}): {line}")
                });
                if tx.send(value).is_err() {
                    return;
                }
            }
        });
        let mut server = RawServer { sandbox, child, stdin, replies };
        server.send_json(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}));
        let init = server.reply();
        assert_eq!(init["id"], 0, "{init}");
        server.send_json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    fn send(&mut self, line: &[u8]) {
        self.stdin.write_all(line).expect("write a line");
        self.stdin.write_all(b"\n").expect("write a newline");
        self.stdin.flush().expect("flush");
    }

    fn send_json(&mut self, message: &Value) {
        self.send(message.to_string().as_bytes());
    }

    /// The next message the server writes, skipping notifications.
    fn reply(&self) -> Value {
        loop {
            let message = self.replies.recv_timeout(REPLY_WITHIN).expect("a reply in time");
            if message.get("id").is_some() {
                return message;
            }
        }
    }

    /// A ping with `id` is answered: the server is still serving.
    fn assert_serving(&mut self, id: u64) {
        self.send_json(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}));
        let pong = self.reply();
        assert_eq!(pong["id"], id, "{pong}");
        assert!(pong["result"].is_object(), "{pong}");
    }
}

impl Drop for RawServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn assert_error(reply: &Value, code: i64, id: &Value) {
    assert_eq!(reply["error"]["code"], code, "{reply}");
    assert_eq!(&reply["id"], id, "{reply}");
}

#[test]
fn lines_that_are_not_json_get_parse_errors_and_the_server_keeps_serving() {
    let mut server = RawServer::start();
    let deep = "[".repeat(100_000) + &"]".repeat(100_000);
    let lines: [&[u8]; 5] = [
        b"this is not json",
        br#"{"jsonrpc":"2.0","id":1,"method":"tools/list""#,
        b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"params\":{\"x\":\"\xff\xfe\"}}",
        b"\xc3\x28 not UTF-8 at all",
        deep.as_bytes(),
    ];
    for (n, line) in lines.into_iter().enumerate() {
        server.send(line);
        assert_error(&server.reply(), -32700, &Value::Null);
        server.assert_serving(100 + n as u64);
    }
}

#[test]
fn a_line_over_16_mib_gets_an_error_naming_the_limit() {
    let mut server = RawServer::start();
    let big = "x".repeat(17 * 1024 * 1024);
    let with_id = format!(
        r#"{{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{{"name":"bash","arguments":{{"command":"echo {big}"}}}}}}"#
    );
    server.send(with_id.as_bytes());
    let reply = server.reply();
    assert_error(&reply, -32600, &json!(77));
    assert!(reply["error"]["message"].as_str().unwrap().contains("16 MiB"), "{reply}");
    server.assert_serving(1);

    // The id comes after the first 64 KiB: it cannot be read without buffering the line.
    let id_last =
        format!(r#"{{"jsonrpc":"2.0","method":"ping","params":{{"x":"{big}"}},"id":78}}"#);
    server.send(id_last.as_bytes());
    assert_error(&server.reply(), -32600, &Value::Null);
    server.assert_serving(2);

    // Just under the limit is served.
    let under = "y".repeat(15 * 1024 * 1024);
    server.send_json(&json!({"jsonrpc": "2.0", "id": 79, "method": "ping",
        "params": {"_meta": {"filler": under}}}));
    let reply = server.reply();
    assert_eq!(reply["id"], 79, "{reply}");
    assert!(reply["result"].is_object(), "{reply}");
}

#[test]
fn malformed_params_are_invalid_params_not_method_not_found() {
    let mut server = RawServer::start();
    let cases = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"arguments": {}}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "bash", "arguments": "echo hi"}}),
        json!({"jsonrpc": "2.0", "id": "r", "method": "resources/read", "params": {}}),
    ];
    for case in &cases {
        server.send_json(case);
        assert_error(&server.reply(), -32602, &case["id"]);
    }
    server.send_json(&json!({"jsonrpc": "2.0", "id": 4, "method": "no/such/method"}));
    assert_error(&server.reply(), -32601, &json!(4));
    server.send_json(&json!({"jsonrpc": "2.0", "id": 5, "result": 1, "error": 2}));
    assert_error(&server.reply(), -32600, &json!(5));
    server.assert_serving(6);
}

#[test]
fn a_second_request_with_an_id_in_flight_is_refused_and_the_first_is_served() {
    let mut server = RawServer::start();
    let go = server.sandbox.home.path().join("go");
    let wait = format!("while [ ! -e '{}' ]; do sleep 0.05; done; echo first", go.display());
    let call = |command: &str| {
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
            "params": {"name": "bash", "arguments": {"command": command}}})
    };
    server.send_json(&call(&wait));
    server.send_json(&call("echo second"));
    let refused = server.reply();
    assert_error(&refused, -32600, &json!(5));
    assert!(
        refused["error"]["message"].as_str().unwrap().contains("duplicate request id"),
        "{refused}"
    );
    std::fs::write(&go, "").expect("release the first call");
    let first = server.reply();
    assert_eq!(first["id"], 5, "{first}");
    let text = first["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("first"), "{first}");
    // Once answered, the id is free again.
    server.assert_serving(5);
}
