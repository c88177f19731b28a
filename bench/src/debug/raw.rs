//! The baseline: a minimal raw DAP driver. Content-Length framing, a backlog of messages not
//! yet asked for, and the requests the debug tool sends, nothing else: no state, no output
//! capture, no rendering. It runs the same adapter binary the tool does, over the same
//! transport (stdio, or for dlv a listening socket the adapter dials).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// No single message should take longer, even on a loaded machine.
const MESSAGE_WAIT: Duration = Duration::from_secs(60);

/// How the raw driver starts one adapter and what it launches.
#[derive(Clone)]
pub struct RawAdapter {
    /// The adapter's command line; for a dialling adapter `{addr}` is replaced by the address
    /// it must connect to.
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    pub dials: bool,
    /// `adapterID` in `initialize`.
    pub adapter_id: &'static str,
    /// The `launch` arguments, as the tool builds them for the same program.
    pub launch: Value,
}

pub struct Raw {
    child: Child,
    writer: Box<dyn Write + Send>,
    incoming: mpsc::Receiver<Value>,
    backlog: Vec<Value>,
    seq: i64,
}

impl Raw {
    pub fn start(adapter: &RawAdapter) -> Result<Raw, String> {
        let listener = match adapter.dials {
            true => Some(TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?),
            false => None,
        };
        let addr = match &listener {
            Some(l) => l.local_addr().map_err(|e| e.to_string())?.to_string(),
            None => String::new(),
        };
        let argv: Vec<String> = adapter.argv.iter().map(|a| a.replace("{addr}", &addr)).collect();
        let (program, args) = argv.split_first().ok_or("empty adapter command")?;
        let mut command = Command::new(program);
        command.args(args).envs(adapter.env.iter().map(|(k, v)| (k, v))).stderr(Stdio::null());
        let piped = if listener.is_some() { Stdio::null } else { Stdio::piped };
        let mut child =
            command.stdin(piped()).stdout(piped()).spawn().map_err(|e| e.to_string())?;
        let (reader, writer): (Box<dyn Read + Send>, Box<dyn Write + Send>) = match listener {
            Some(listener) => {
                let stream = accept(listener, &mut child)?;
                let _ = stream.set_nodelay(true);
                (Box::new(stream.try_clone().map_err(|e| e.to_string())?), Box::new(stream))
            }
            None => (
                Box::new(child.stdout.take().ok_or("no stdout")?),
                Box::new(child.stdin.take().ok_or("no stdin")?),
            ),
        };
        let (tx, incoming) = mpsc::channel();
        std::thread::spawn(move || read_frames(BufReader::new(reader), tx));
        Ok(Raw { child, writer, incoming, backlog: Vec::new(), seq: 0 })
    }

    pub fn send(&mut self, command: &str, arguments: Value) -> i64 {
        self.seq += 1;
        let mut request = json!({"seq": self.seq, "type": "request", "command": command});
        if !arguments.is_null() {
            request["arguments"] = arguments;
        }
        let body = request.to_string();
        let _ = write!(self.writer, "Content-Length: {}\r\n\r\n{body}", body.len());
        let _ = self.writer.flush();
        self.seq
    }

    fn wait(&mut self, pred: impl Fn(&Value) -> bool) -> Result<Value, String> {
        if let Some(at) = self.backlog.iter().position(&pred) {
            return Ok(self.backlog.remove(at));
        }
        loop {
            let message = self.incoming.recv_timeout(MESSAGE_WAIT).map_err(|e| e.to_string())?;
            if pred(&message) {
                return Ok(message);
            }
            self.backlog.push(message);
        }
    }

    pub fn response(&mut self, seq: i64) -> Result<Value, String> {
        let answer = self.wait(|m| m["type"] == "response" && m["request_seq"] == seq)?;
        match answer["success"].as_bool() {
            Some(true) => Ok(answer),
            _ => Err(format!("{} failed: {}", answer["command"], answer["message"])),
        }
    }

    pub fn event(&mut self, name: &str) -> Result<Value, String> {
        self.wait(|m| m["type"] == "event" && m["event"] == name)
    }

    /// Waits for the next stop; the backlog (output, module events) is not kept past it.
    fn stopped(&mut self) -> Result<i64, String> {
        let stop = self.event("stopped")?;
        self.backlog.retain(|m| m["type"] != "event");
        Ok(stop["body"]["threadId"].as_i64().unwrap_or(1))
    }

    /// The start sequence the debug tool runs: `initialize`, `launch` (answer awaited last),
    /// `initialized`, the breakpoint, `configurationDone`, `threads`, the stop, its top frame.
    /// Returns the stopped thread.
    pub fn launch_to_stop(
        &mut self,
        adapter: &RawAdapter,
        source: &str,
        line: i64,
    ) -> Result<i64, String> {
        let init = self.send("initialize", initialize_arguments(adapter.adapter_id));
        self.response(init)?;
        let launch = self.send("launch", adapter.launch.clone());
        self.event("initialized")?;
        let bp = json!({"source": {"path": source}, "breakpoints": [{"line": line}]});
        let bp = self.send("setBreakpoints", bp);
        self.response(bp)?;
        let done = self.send("configurationDone", Value::Null);
        self.response(done)?;
        self.response(launch)?;
        let threads = self.send("threads", Value::Null);
        self.response(threads)?;
        let thread = self.stopped()?;
        self.top_frame(thread)?;
        Ok(thread)
    }

    pub fn clear_breakpoints(&mut self, source: &str) -> Result<(), String> {
        let clear =
            self.send("setBreakpoints", json!({"source": {"path": source}, "breakpoints": []}));
        self.response(clear).map(drop)
    }

    /// One step as the tool does it: `next`, its answer, the stop, `stackTrace {levels:1}`.
    pub fn step(&mut self, thread: i64) -> Result<(), String> {
        let next = self.send("next", json!({"threadId": thread}));
        self.response(next)?;
        self.stopped()?;
        self.top_frame(thread)
    }

    fn top_frame(&mut self, thread: i64) -> Result<(), String> {
        let trace = self.send("stackTrace", json!({"threadId": thread, "levels": 1}));
        self.response(trace).map(drop)
    }

    /// Ends the debuggee and the adapter (not timed).
    pub fn finish(mut self) {
        let bye = self.send("disconnect", json!({"terminateDebuggee": true}));
        let _ = self.response(bye);
        drop(self.writer);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the debug tool sends in `initialize`.
fn initialize_arguments(adapter_id: &str) -> Value {
    json!({
        "clientID": "raw", "clientName": "raw", "adapterID": adapter_id, "locale": "en-US",
        "linesStartAt1": true, "columnsStartAt1": true, "pathFormat": "path",
        "supportsVariableType": true, "supportsVariablePaging": true,
        "supportsMemoryReferences": true, "supportsInvalidatedEvent": true,
        "supportsStartDebuggingRequest": true, "supportsRunInTerminalRequest": true,
    })
}

/// The adapter's connection, or an error when it never dials.
fn accept(listener: TcpListener, child: &mut Child) -> Result<TcpStream, String> {
    let (tx, rx) = mpsc::channel();
    // A blocking accept on its own thread: the connection is taken the moment it comes.
    std::thread::spawn(move || {
        let _ = tx.send(listener.accept().map(|(stream, _)| stream));
    });
    match rx.recv_timeout(MESSAGE_WAIT) {
        Ok(Ok(stream)) => Ok(stream),
        Ok(Err(err)) => Err(err.to_string()),
        Err(_) => {
            let _ = child.kill();
            Err("the adapter never connected".to_string())
        }
    }
}

fn read_frames(mut reader: BufReader<Box<dyn Read + Send>>, tx: mpsc::Sender<Value>) {
    loop {
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let line = line.trim();
            if line.is_empty() {
                break;
            }
            if let Some(n) = line.strip_prefix("Content-Length:") {
                length = n.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0u8; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let Ok(value) = serde_json::from_slice::<Value>(&body) else { continue };
        if tx.send(value).is_err() {
            return;
        }
    }
}
