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
        RawServer::start_in(Sandbox::new())
    }

    fn start_in(sandbox: Sandbox) -> RawServer {
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

    /// The next reply, and the methods of the notifications written before it.
    fn reply_after_notifications(&self) -> (Value, Vec<String>) {
        let mut methods = Vec::new();
        loop {
            let message = self.replies.recv_timeout(REPLY_WITHIN).expect("a reply in time");
            if message.get("id").is_some() {
                return (message, methods);
            }
            methods.extend(message["method"].as_str().map(str::to_string));
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

fn artifact_of(result: &Value) -> String {
    result["structuredContent"]["artifact"].as_str().expect("the call made an artifact").to_string()
}

#[test]
fn resources_list_pages_newest_first_through_this_servers_own_artifacts() {
    let sandbox = Sandbox::new();
    let foreign = sandbox.execkit(&["call", "bash", r#"{"command":"seq 1 4000"}"#]);
    let foreign: Value = serde_json::from_slice(&foreign.stdout).expect("a result");
    let foreign = artifact_of(&foreign);
    let mut server = RawServer::start_in(sandbox);

    // One at a time, so the order they were made in is known.
    let mut made = Vec::new();
    for id in 1..=103 {
        server.send_json(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "bash", "arguments": {"command": "seq 1 4000"}}}));
        let reply = server.reply();
        assert_eq!(reply["id"], id, "{reply}");
        made.push(artifact_of(&reply["result"]));
    }
    made.reverse();

    let mut listed = Vec::new();
    let mut cursor = Value::Null;
    for page in 0.. {
        let mut params = json!({});
        if !cursor.is_null() {
            params["cursor"] = cursor.clone();
        }
        server.send_json(&json!({"jsonrpc": "2.0", "id": 500 + page, "method": "resources/list",
            "params": params}));
        let reply = server.reply();
        let resources = reply["result"]["resources"].as_array().expect("resources");
        assert!(resources.len() <= 100, "{reply}");
        listed.extend(resources.iter().map(|r| r["uri"].as_str().unwrap().to_string()));
        cursor = reply["result"]["nextCursor"].clone();
        if cursor.is_null() {
            break;
        }
    }
    assert_eq!(listed, made, "newest first, every one of this server's artifacts, once");
    assert!(!listed.contains(&foreign), "another process's artifact was listed");

    // Another process's artifact is still readable by id.
    server.send_json(&json!({"jsonrpc": "2.0", "id": 600, "method": "resources/read",
        "params": {"uri": format!("{foreign}?lines=1-2")}}));
    let read = server.reply();
    assert_eq!(read["result"]["contents"][0]["text"].as_str().unwrap().lines().next(), Some("1"));

    server.send_json(&json!({"jsonrpc": "2.0", "id": 601, "method": "resources/list",
        "params": {"cursor": "nonsense"}}));
    assert_error(&server.reply(), -32602, &json!(601));
}

fn tool_names(reply: &Value) -> Vec<String> {
    let tools = reply["result"]["tools"].as_array().expect("tools");
    tools.iter().map(|t| t["name"].as_str().unwrap().to_string()).collect()
}

#[test]
fn configuring_an_ssh_host_is_announced_as_a_tool_list_change() {
    let mut server = RawServer::start();
    server.send_json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    assert!(!tool_names(&server.reply()).contains(&"ssh".to_string()));
    let call = |id: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "bash", "arguments": {"command": "true"}}})
    };
    server.send_json(&call(2));
    let (_, quiet) = server.reply_after_notifications();
    assert!(!quiet.contains(&"notifications/tools/list_changed".to_string()), "{quiet:?}");
    let config = server.sandbox.home.path().join(".execkit");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("ssh.json"), r#"{"hosts": {"web": {"host": "web.internal"}}}"#)
        .unwrap();
    server.send_json(&call(3));
    let (reply, methods) = server.reply_after_notifications();
    assert_eq!(reply["id"], 3, "{reply}");
    assert!(methods.contains(&"notifications/tools/list_changed".to_string()), "{methods:?}");
    server.send_json(&json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}));
    assert!(tool_names(&server.reply()).contains(&"ssh".to_string()));
}
