//! A minimal MCP client over the stdio of `execkit mcp`: newline-delimited JSON-RPC, one
//! request at a time, as an agent harness drives it. Notifications are skipped.

use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

pub struct McpServer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

/// The `execkit` binary next to this benchmark (both are built by the same `cargo build`).
pub fn execkit_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let candidate = exe.parent()?.join("execkit");
    candidate.exists().then_some(candidate)
}

impl McpServer {
    /// Starts `execkit mcp` in `cwd` and completes the initialize handshake.
    pub fn start(execkit: &Path, cwd: &Path, vars: &[(&str, String)]) -> io::Result<McpServer> {
        let mut command = Command::new(execkit);
        command.arg("mcp").current_dir(cwd).stdin(Stdio::piped()).stdout(Stdio::piped());
        command.stderr(Stdio::null());
        for (name, value) in vars {
            command.env(name, value);
        }
        let mut child = command.spawn()?;
        let missing = || io::Error::other("no stdio pipe");
        let stdin = child.stdin.take().ok_or_else(missing)?;
        let stdout = BufReader::new(child.stdout.take().ok_or_else(missing)?);
        let mut server = McpServer { child, stdin, stdout, next_id: 0 };
        let params = json!({"protocolVersion": "2025-06-18", "capabilities": {},
                            "clientInfo": {"name": "execkit-bench", "version": "0"}});
        server.request("initialize", params)?;
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(server)
    }

    fn send(&mut self, message: &Value) -> io::Result<()> {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        self.stdin.write_all(&line)?;
        self.stdin.flush()
    }

    /// Sends one request and returns its response's `result`.
    pub fn request(&mut self, method: &str, params: Value) -> io::Result<Value> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        let mut line = String::new();
        loop {
            line.clear();
            if self.stdout.read_line(&mut line)? == 0 {
                return Err(io::Error::other("the server closed its stdout"));
            }
            let Ok(message) = serde_json::from_str::<Value>(&line) else { continue };
            if message.get("id") == Some(&json!(id)) {
                return message
                    .get("result")
                    .cloned()
                    .ok_or_else(|| io::Error::other(format!("{method} failed: {message}")));
            }
        }
    }

    /// One `tools/call`; an `isError` result is an error here.
    pub fn call(&mut self, tool: &str, arguments: Value) -> io::Result<Value> {
        let result = self.request("tools/call", json!({"name": tool, "arguments": arguments}))?;
        if result.get("isError") == Some(&Value::Bool(true)) {
            return Err(io::Error::other(format!("{tool} call failed: {result}")));
        }
        Ok(result)
    }

    /// Closes stdin (the server closes on EOF) and waits for it.
    pub fn close(mut self) {
        drop(self.stdin);
        let _ = self.child.wait();
    }
}
