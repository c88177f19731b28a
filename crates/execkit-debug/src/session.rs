//! One live debug session, root or child: the DAP client, the state its events keep current,
//! and the tasks that apply events and serve reverse requests (`runInTerminal`,
//! `startDebugging`) as they arrive.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use execkit_dap::adapters::AdapterDef;
use execkit_dap::socket_dir::SocketPath;
use execkit_dap::wire::{
    Capabilities, KnownEvent, KnownReverseRequest, RunInTerminalArguments, StoppedBody, Thread,
};
use execkit_dap::{Client, EventRecord, IncomingReverse, ReverseRequests};
use execkit_process::{ProcessTree, SpawnSpec, StdinMode, Supervisor};
use serde_json::Value;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::children::ChildOpener;
use crate::ring::OutputRing;
use crate::tree::Tree;

/// How many recent stops and ends a session remembers for waits that started before them.
const HALT_HISTORY: usize = 64;

/// The pump waits for events in slices this long, so it notices a closed connection.
const PUMP_SLICE: Duration = Duration::from_secs(3600);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Running,
    Stopped,
    Terminated,
    Dead,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Stopped => "stopped",
            Status::Terminated => "terminated",
            Status::Dead => "dead",
        }
    }

    pub fn is_live(self) -> bool {
        matches!(self, Status::Running | Status::Stopped)
    }
}

/// Where the program stopped, once its top frame is known.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StopInfo {
    pub reason: String,
    pub description: Option<String>,
    pub thread_id: Option<i64>,
    pub frame_id: Option<i64>,
    pub frame_name: Option<String>,
    pub path: Option<String>,
    pub line: Option<i64>,
    pub column: Option<i64>,
    pub instruction_pointer: Option<String>,
}

/// What ended a wait for the program: a stop, an exit, or the end of the session.
#[derive(Debug, Clone, PartialEq)]
pub enum Halt {
    Stopped(StoppedBody),
    Exited(i64),
    Terminated,
}

#[derive(Debug)]
pub struct SessionState {
    pub status: Status,
    pub stop: Option<StopInfo>,
    pub exit_code: Option<i64>,
    pub pid: Option<i64>,
    pub threads: Vec<Thread>,
    /// Stops and ends with their arrival numbers, oldest first.
    pub halts: VecDeque<(u64, Halt)>,
    /// Why the session ended, when it did on its own.
    pub ended: Option<String>,
    /// The tree's stamp of this session's last stop (0: never stopped).
    pub stop_stamp: u64,
    pub started_at: SystemTime,
    pub last_used: Instant,
}

impl SessionState {
    fn new() -> SessionState {
        SessionState {
            status: Status::Running,
            stop: None,
            exit_code: None,
            pid: None,
            threads: Vec::new(),
            halts: VecDeque::new(),
            ended: None,
            stop_stamp: 0,
            started_at: SystemTime::now(),
            last_used: Instant::now(),
        }
    }

    /// The first halt that arrived after `after`.
    pub fn halt_after(&self, after: u64) -> Option<(u64, Halt)> {
        self.halts.iter().find(|(arrival, _)| *arrival > after).cloned()
    }

    /// A live session whose connection is gone is dead; true when this changed it.
    fn mark_dead(&mut self, why: impl FnOnce() -> String) -> bool {
        if !self.status.is_live() {
            return false;
        }
        self.status = Status::Dead;
        self.ended.get_or_insert_with(why);
        true
    }

    /// The program exited or the adapter said `terminated`: the session is over.
    fn end(&mut self, arrival: u64, halt: Halt) {
        self.status = Status::Terminated;
        self.stop = None;
        let ended = match self.exit_code {
            Some(code) => format!("the program exited with code {code}"),
            None => "the program terminated".to_string(),
        };
        self.ended.get_or_insert(ended);
        self.record_halt(arrival, halt);
    }

    fn record_halt(&mut self, arrival: u64, halt: Halt) {
        if self.halts.len() >= HALT_HISTORY {
            self.halts.pop_front();
        }
        self.halts.push_back((arrival, halt));
    }
}

pub type Shared<T> = Arc<Mutex<T>>;

/// A started session.
pub struct Session {
    pub id: String,
    /// The session whose adapter asked for this one (`startDebugging`); none for the root.
    pub parent_id: Option<String>,
    pub tree: Arc<Tree>,
    pub def: AdapterDef,
    pub adapter_path: String,
    pub client: Client,
    pub attached: bool,
    pub program: Option<PathBuf>,
    pub cwd: PathBuf,
    pub capabilities: Capabilities,
    /// The capabilities as results show them, rendered once.
    pub capability_summary: Value,
    pub state: Shared<SessionState>,
    /// Bumped on every halt anywhere in the tree, so a waiter wakes.
    pub halts: watch::Receiver<u64>,
    pub ring: Shared<OutputRing>,
    /// Processes started for `runInTerminal`, killed when the session ends.
    pub terminals: Shared<Vec<ProcessTree>>,
    /// A Unix transport's socket, removed when the session is dropped.
    _socket: Option<SocketPath>,
    pump: JoinHandle<()>,
    reverse: JoinHandle<()>,
}

/// What a new session is made of.
pub struct SessionParts {
    pub id: String,
    pub parent_id: Option<String>,
    pub tree: Arc<Tree>,
    pub def: AdapterDef,
    pub adapter_path: String,
    pub client: Client,
    pub attached: bool,
    pub program: Option<PathBuf>,
    pub cwd: PathBuf,
    pub capabilities: Capabilities,
    pub ring: Shared<OutputRing>,
    pub socket: Option<SocketPath>,
}

/// Serves reverse requests from the first message on: debugpy asks for `runInTerminal` before
/// it sends `initialized`, so this runs during the handshake already.
pub struct ReverseServer {
    pub terminals: Shared<Vec<ProcessTree>>,
    pub handle: JoinHandle<()>,
}

/// What serving a session's reverse requests needs.
pub struct ReverseContext {
    pub supervisor: Supervisor,
    pub env: Vec<(OsString, OsString)>,
    pub cwd: PathBuf,
    pub ring: Shared<OutputRing>,
    /// The session the requests come for (its id names its output).
    pub session: String,
    /// Opens the children `startDebugging` asks for.
    pub children: ChildOpener,
}

impl ReverseServer {
    pub fn start(reverse: ReverseRequests, ctx: ReverseContext) -> ReverseServer {
        let terminals: Shared<Vec<ProcessTree>> = Arc::default();
        let handle = tokio::spawn(serve_reverse(reverse, ctx, terminals.clone()));
        ReverseServer { terminals, handle }
    }
}

impl Session {
    pub fn start(parts: SessionParts, server: ReverseServer) -> Session {
        let state = Arc::new(Mutex::new(SessionState::new()));
        let halts = parts.tree.subscribe();
        let pump = tokio::spawn(pump(
            parts.client.clone(),
            state.clone(),
            parts.ring.clone(),
            parts.id.clone(),
            parts.tree.clone(),
        ));
        Session {
            id: parts.id,
            parent_id: parts.parent_id,
            tree: parts.tree,
            def: parts.def,
            adapter_path: parts.adapter_path,
            client: parts.client,
            attached: parts.attached,
            program: parts.program,
            cwd: parts.cwd,
            capability_summary: crate::render::capability_summary(&parts.capabilities),
            capabilities: parts.capabilities,
            state,
            halts,
            ring: parts.ring,
            terminals: server.terminals,
            _socket: parts.socket,
            pump,
            reverse: server.handle,
        }
    }

    /// Runs `f` on the state (a poisoned lock is taken over: the state is plain data).
    pub fn with<R>(&self, f: impl FnOnce(&mut SessionState) -> R) -> R {
        let mut guard = self.state.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut guard)
    }

    /// The status; a live session whose connection has closed is dead, even before the pump
    /// has seen the close.
    pub fn status(&self) -> Status {
        let closed = self.client.is_closed();
        self.with(|s| {
            if closed {
                s.mark_dead(|| format!("the debug adapter {} exited", self.def.name));
            }
            s.status
        })
    }

    pub fn touch(&self) {
        self.with(|s| s.last_used = Instant::now());
    }

    /// Ends the background tasks (the terminate sequence has run or the adapter is gone).
    pub fn stop_tasks(&self) {
        self.pump.abort();
        self.reverse.abort();
    }
}

/// Applies every event to the session state as it arrives.
async fn pump(
    client: Client,
    state: Shared<SessionState>,
    ring: Shared<OutputRing>,
    id: String,
    tree: Arc<Tree>,
) {
    loop {
        let record = match client.wait_event(|_| true, Instant::now() + PUMP_SLICE).await {
            Ok(Some(record)) => record,
            Ok(None) => continue,
            Err(err) => {
                let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
                // Only a session that was still live halts here: one that already ended
                // (a child whose program exited) must not end a later wait again.
                if s.mark_dead(|| err.to_string()) {
                    s.record_halt(u64::MAX, Halt::Terminated);
                }
                tree.halted();
                return;
            }
        };
        if apply(&record, &state, &ring, &id, &tree) {
            tree.halted();
        }
    }
}

/// Applies one event; true when it was a halt (a waiter should look).
fn apply(
    record: &EventRecord,
    state: &Shared<SessionState>,
    ring: &Shared<OutputRing>,
    id: &str,
    tree: &Tree,
) -> bool {
    let Some(event) = record.known() else { return false };
    if let KnownEvent::Output(body) = event {
        let category = body.category.as_deref().unwrap_or("console");
        ring.lock().unwrap_or_else(|e| e.into_inner()).push(id, category, &body.output);
        return false;
    }
    let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
    match event {
        KnownEvent::Stopped(body) => {
            s.status = Status::Stopped;
            s.stop = Some(StopInfo {
                reason: body.reason.clone(),
                description: body.description.clone(),
                thread_id: body.thread_id,
                ..StopInfo::default()
            });
            s.stop_stamp = tree.stamp();
            s.record_halt(record.arrival, Halt::Stopped(body.clone()));
            true
        }
        KnownEvent::Continued(_) => {
            s.status = Status::Running;
            s.stop = None;
            false
        }
        KnownEvent::Exited(body) => {
            // The program is gone; the adapter's `terminated` follows (or, for some, not).
            s.exit_code = Some(body.exit_code);
            s.end(record.arrival, Halt::Exited(body.exit_code));
            true
        }
        KnownEvent::Terminated(_) => {
            s.end(record.arrival, Halt::Terminated);
            true
        }
        KnownEvent::Process(body) => {
            s.pid = body.system_process_id;
            false
        }
        KnownEvent::Thread(body) => {
            if body.reason == "exited" {
                s.threads.retain(|t| t.id != body.thread_id);
            } else if !s.threads.iter().any(|t| t.id == body.thread_id) {
                s.threads.push(Thread { id: body.thread_id, name: String::new() });
            }
            false
        }
        KnownEvent::Invalidated(_) => {
            if let Some(stop) = s.stop.as_mut() {
                stop.frame_id = None;
            }
            false
        }
        _ => false,
    }
}

async fn serve_reverse(
    mut reverse: ReverseRequests,
    ctx: ReverseContext,
    terminals: Shared<Vec<ProcessTree>>,
) {
    while let Some(incoming) = reverse.recv().await {
        let IncomingReverse { request, responder, .. } = incoming;
        // Other commands never get here: the connection refuses them itself.
        match request {
            KnownReverseRequest::RunInTerminal(args) => {
                match ctx.run_in_terminal(&args, &terminals).await {
                    Ok(pid) => responder.succeed(Some(serde_json::json!({"processId": pid}))),
                    Err(message) => responder.fail(&message),
                }
            }
            KnownReverseRequest::StartDebugging(args) => {
                ctx.children.start_debugging(args, responder)
            }
        }
    }
}

impl ReverseContext {
    /// Starts the command with no terminal and stdin null; its output enters the ring.
    async fn run_in_terminal(
        &self,
        args: &RunInTerminalArguments,
        terminals: &Shared<Vec<ProcessTree>>,
    ) -> Result<u32, String> {
        let Some((program, rest)) = args.args.split_first() else {
            return Err("runInTerminal request has no command".to_string());
        };
        let mut env = self.env.clone();
        for (name, value) in args.env.iter().flatten() {
            env.retain(|(k, _)| k != name.as_str());
            if let Value::String(value) = value {
                env.push((name.into(), value.into()));
            }
        }
        let cwd = if args.cwd.is_empty() { self.cwd.clone() } else { self.cwd.join(&args.cwd) };
        let program = resolve_terminal_program(program, &env);
        let spec = SpawnSpec {
            program,
            args: rest.iter().map(OsString::from).collect(),
            cwd,
            env,
            stdin: StdinMode::Null,
            ..SpawnSpec::default()
        };
        let mut child = self.supervisor.spawn(spec).await.map_err(|e| e.to_string())?;
        let pid = child.pid();
        terminals.lock().unwrap_or_else(|e| e.into_inner()).push(child.tree());
        if let Some(mut output) = child.take_output() {
            let (ring, session) = (self.ring.clone(), self.session.clone());
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                while let Ok(n @ 1..) = output.read(&mut buf).await {
                    let text = String::from_utf8_lossy(&buf[..n]).into_owned();
                    ring.lock().unwrap_or_else(|e| e.into_inner()).push(&session, "stdout", &text);
                }
            });
        }
        tokio::spawn(async move {
            let _ = child.wait().await;
        });
        Ok(pid)
    }
}

/// A bare program name is looked up on the PATH the process will get.
fn resolve_terminal_program(program: &str, env: &[(OsString, OsString)]) -> PathBuf {
    if program.contains('/') {
        return PathBuf::from(program);
    }
    let path = env.iter().find(|(k, _)| k == "PATH").and_then(|(_, v)| v.to_str()).unwrap_or("");
    execkit_process::find_on_path(path, program).unwrap_or_else(|| PathBuf::from(program))
}
