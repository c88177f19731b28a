//! `launch` and `attach`: choose the adapter, start it over its transport, run the start
//! handshake with the breakpoint set, and open the session on the first stop.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use execkit_dap::adapters::AdapterDef;
use execkit_dap::detect::{self, DetectError};
use execkit_dap::launch::{self, AdapterSpawn, LaunchInput, Placeholders};
use execkit_dap::socket_dir::SocketPath;
use execkit_dap::{AdapterProcess, Connection, transport};
use execkit_dap::{Client, ClientOptions, HandshakeRequest, StartConfig, handshake};
use execkit_process::env::EnvBuilder;
use serde_json::{Value, json};

use crate::children::Origin;
use crate::registry::{Available, Probe, Unavailable};
use crate::render::{self, Reply};
use crate::ring::OutputRing;
use crate::runner::Call;
use crate::session::{Session, SessionParts, Status, StopInfo};
use crate::tree::Tree;
use crate::{control, nodelay};

/// What the handshake starts.
pub(crate) struct Plan {
    pub def: AdapterDef,
    pub available: Available,
    pub request: HandshakeRequest,
    pub arguments: Value,
    pub program: Option<PathBuf>,
    pub cwd: PathBuf,
    pub stop_on_entry: bool,
    pub attached: bool,
    /// `attach` by port: the address of an adapter that is already listening, connected to
    /// directly instead of starting one.
    pub connect: Option<SocketAddr>,
}

/// A live root refuses a second start; an ended one is disposed of first.
pub(crate) async fn refuse_second(call: &mut Call<'_>) -> Option<Reply> {
    let session = call.state.session.as_ref()?;
    let status = session.status();
    if status.is_live() {
        return Some(Reply::error(format!(
            "Debug session {} is still active ({}). Terminate it before starting another.",
            session.id,
            status.as_str()
        )));
    }
    if let Some(session) = call.state.session.take() {
        crate::terminate::sequence(&session, None).await;
    }
    None
}

/// `~` expanded, relative paths against `base`.
pub(crate) fn absolute(path: &str, base: &Path, home: Option<&str>) -> PathBuf {
    let expanded = match (path.strip_prefix("~"), home) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            PathBuf::from(format!("{home}{rest}"))
        }
        _ => PathBuf::from(path),
    };
    if expanded.is_absolute() { expanded } else { base.join(expanded) }
}

/// The Toolkit cwd or its nearest ancestor with `.execkit/` or `.git`.
pub(crate) fn project_root(cwd: &Path) -> PathBuf {
    cwd.ancestors()
        .find(|dir| dir.join(".execkit").is_dir() || dir.join(".git").exists())
        .unwrap_or(cwd)
        .to_path_buf()
}

/// The adapter's environment: the Toolkit's, hardened.
pub(crate) fn adapter_env(call: &Call<'_>) -> Vec<(OsString, OsString)> {
    let vars = call.inner.deps.lookup.vars().map(|(k, v)| (k.clone(), v.clone()));
    let mut env = EnvBuilder::from_vars(vars);
    env.harden();
    env.into_vars()
}

pub(crate) fn probe<'a>(
    call: &'a Call<'_>,
    root: &'a Path,
    env: &'a [(OsString, OsString)],
) -> Probe<'a> {
    Probe {
        supervisor: &call.inner.deps.supervisor,
        lookup: &call.inner.deps.lookup,
        project_root: root,
        env,
    }
}

pub(crate) async fn launch(call: &mut Call<'_>) -> Reply {
    if let Some(refused) = refuse_second(call).await {
        return refused;
    }
    let base = call.inner.deps.cwd.clone();
    let config = match &call.request.params.launch_config {
        Some(name) => match load_config(call, name, "launch") {
            Ok(config) => Some(config),
            Err(text) => return Reply::error(text),
        },
        None => None,
    };
    let from_config = |key: &str| config.as_ref().and_then(|c| c.arguments.get(key)).cloned();
    let p = &call.request.params;
    let home = call.inner.deps.lookup.get("HOME").map(str::to_string);
    let cwd_text = p.cwd.clone().or_else(|| from_config("cwd")?.as_str().map(str::to_string));
    let cwd = cwd_text.as_deref().map_or(base.clone(), |c| absolute(c, &base, home.as_deref()));
    if !cwd.is_dir() {
        return Reply::error(format!("Working directory not found: {}", cwd.display()));
    }
    let program_text =
        p.program.clone().or_else(|| from_config("program")?.as_str().map(str::to_string));
    let Some(program) = program_text else {
        return Reply::error("action \"launch\" requires \"program\".");
    };
    let program = absolute(&program, &cwd, home.as_deref());
    let root = project_root(&base);
    let env = adapter_env(call);
    let adapter = p.adapter.clone().or_else(|| config.as_ref().map(|c| c.adapter.clone()));
    let (def, available) = match choose(call, adapter.as_deref(), &program, &root, &env).await {
        Ok(found) => found,
        Err(reply) => return reply,
    };
    let config_args = from_config("args").and_then(|a| serde_json::from_value(a).ok());
    let config_stop = def.stop_on_entry.as_ref().and_then(|s| match s {
        execkit_dap::adapters::StopOnEntry::Key { key } => from_config(key)?.as_bool(),
        _ => None,
    });
    let input = LaunchInput {
        program: program.clone(),
        args: p.args.clone().or(config_args).unwrap_or_default(),
        cwd: cwd.clone(),
        env: p.env.iter().flatten().map(|(k, v)| (k.clone(), v.clone())).collect(),
        stop_on_entry: p.stop_on_entry.or(config_stop).unwrap_or(true),
    };
    let placeholders = placeholders(call, &available, &input);
    let mut arguments = match launch::launch_arguments(&def, &input, &placeholders) {
        Ok(arguments) => arguments,
        Err(problem) => return Reply::error(format!("Adapter {}: {problem}", def.name)),
    };
    if let Some(config) = &config {
        overlay_config(&mut arguments, config, &input);
    }
    let request = if def.launch_request == "attach" {
        HandshakeRequest::Attach
    } else {
        HandshakeRequest::Launch
    };
    let stop_on_entry = input.stop_on_entry;
    let plan = Plan {
        def,
        available,
        request,
        arguments: Value::Object(arguments),
        program: Some(program),
        cwd,
        stop_on_entry,
        attached: false,
        connect: None,
    };
    let mut reply = open(call, plan, placeholders, env).await;
    reply.lines.extend(config.into_iter().flat_map(|c| c.notes));
    reply
}

fn load_config(
    call: &Call<'_>,
    name: &str,
    request: &str,
) -> Result<crate::launch_json::LaunchConfig, String> {
    let lookup = &call.inner.deps.lookup;
    let env = |var: &str| lookup.get(var).map(str::to_string);
    let root = project_root(&call.inner.deps.cwd);
    let vars = crate::launch_json::Vars {
        root: &root,
        home: lookup.get("HOME"),
        cwd: &call.inner.deps.cwd,
        env: &env,
        pid: call.request.params.pid,
    };
    crate::launch_json::load(name, request, &vars)
}

/// The configuration's keys over the adapter's defaults; what the call itself gave (folded
/// into `input`: program, cwd, args, env, the stop-on-entry key) stays.
fn overlay_config(
    arguments: &mut serde_json::Map<String, Value>,
    config: &crate::launch_json::LaunchConfig,
    input: &LaunchInput,
) {
    for (key, value) in &config.arguments {
        let from_call = matches!(key.as_str(), "program" | "cwd" | "args")
            || (key == "env" && !input.env.is_empty())
            || (value.is_boolean()
                && arguments.get(key).is_some_and(Value::is_boolean)
                && key.to_lowercase().contains("entry"));
        if !from_call {
            arguments.insert(key.clone(), value.clone());
        }
    }
}

fn placeholders(call: &Call<'_>, available: &Available, input: &LaunchInput) -> Placeholders {
    let lookup = &call.inner.deps.lookup;
    Placeholders {
        python: available.python.clone(),
        program: Some(input.program.display().to_string()),
        args: input.args.clone(),
        cwd: input.cwd.display().to_string(),
        stop_on_entry: input.stop_on_entry,
        env: lookup
            .vars()
            .filter_map(|(k, v)| Some((k.to_str()?.to_string(), v.to_str()?.to_string())))
            .collect(),
        ..Placeholders::default()
    }
}

/// The named adapter, or the best available candidate for `program`.
async fn choose(
    call: &Call<'_>,
    adapter: Option<&str>,
    program: &Path,
    root: &Path,
    env: &[(OsString, OsString)],
) -> Result<(AdapterDef, Available), Reply> {
    let registry = &call.inner.registry;
    let probe = probe(call, root, env);
    if let Some(name) = adapter {
        let Some(def) = registry.get(name) else {
            return Err(Reply::error(format!(
                "Unknown debug adapter '{name}'. Known adapters: {}.",
                registry.names().join(", ")
            )));
        };
        if !program.exists() && !def.directory_program {
            return Err(Reply::error(
                DetectError::NotFound { path: program.to_path_buf() }.to_string(),
            ));
        }
        return match registry.check(def, &probe).await {
            Ok(found) => Ok((def.clone(), found)),
            Err(unavailable) => Err(Reply::error(unavailable.text())),
        };
    }
    let candidates = match detect::candidates(&registry.defs, program, root) {
        Ok(candidates) => candidates,
        Err(DetectError::NoAdapter { path }) => {
            let installed = installed(call, &probe).await;
            return Err(Reply::error(format!(
                "No debug adapter handles {}. Installed adapters: {}.",
                path.display(),
                if installed.is_empty() { "none".to_string() } else { installed.join(", ") }
            )));
        }
        Err(err) => return Err(Reply::error(err.to_string())),
    };
    let mut first_unavailable: Option<Unavailable> = None;
    for candidate in candidates {
        match registry.check(candidate.def, &probe).await {
            Ok(found) => return Ok((candidate.def.clone(), found)),
            Err(unavailable) => {
                first_unavailable.get_or_insert(unavailable);
            }
        }
    }
    let text = first_unavailable
        .map_or_else(|| "No debug adapter is available.".to_string(), |u| u.text());
    Err(Reply::error(text))
}

async fn installed(call: &Call<'_>, probe: &Probe<'_>) -> Vec<String> {
    let mut names = Vec::new();
    for def in &call.inner.registry.defs {
        if call.inner.registry.check(def, probe).await.is_ok() {
            names.push(def.name.clone());
        }
    }
    names
}

/// Starts the adapter, runs the handshake, opens the session.
pub(crate) async fn open(
    call: &mut Call<'_>,
    plan: Plan,
    placeholders: Placeholders,
    mut env: Vec<(OsString, OsString)>,
) -> Reply {
    let tree = Arc::new(Tree::new(call.state.ids.clone(), call.state.breakpoints.plan()));
    let id = tree.next_id();
    if let (Some(dir), Some(_)) = (&call.inner.nodelay_dir, &plan.def.available.python_module) {
        nodelay::apply(&mut env, dir);
    }
    let spawn = AdapterSpawn {
        argv: plan.available.argv.clone(),
        cwd: plan.cwd.clone(),
        env: env.clone(),
        placeholders,
        deadline: call.deadline,
        session: id.clone(),
    };
    let started = match start_adapter(call, &plan, &spawn).await {
        Ok(started) => started,
        Err(err) => return Reply::error(err.to_string()),
    };
    let mut options = ClientOptions::new(&plan.def.name);
    options.trace = call.inner.config.trace.clone();
    let listen_addr = started.connection.listen_addr;
    let (client, reverse) = Client::start(started.connection, started.process, options);
    let ring = Arc::new(std::sync::Mutex::new(OutputRing::default()));
    call.state.ring = ring.clone();
    call.state.shown = 0;
    let origin = Origin {
        supervisor: call.inner.deps.supervisor.clone(),
        def: plan.def.clone(),
        adapter_path: plan.available.path.display().to_string(),
        spawn,
        listen_addr,
        trace: call.inner.config.trace.clone(),
        env,
        cwd: plan.cwd.clone(),
        ring: ring.clone(),
        tree: tree.clone(),
        terminate_debuggees: !plan.attached,
    };
    let server = Arc::new(origin).serve(reverse, &id);
    let mut outcome = match handshake::start(&client, &start_config(call, &plan)).await {
        Ok(outcome) => outcome,
        Err(err) => {
            tree.close();
            server.handle.abort();
            return start_failed(&client, &plan, err.to_string()).await;
        }
    };
    let after = outcome.order.launch_sent_after;
    let threads = await_first_stop(&client, &tree, call.deadline, after).await;
    outcome.first_stop = threads.1;
    for (path, results) in &outcome.breakpoints {
        call.state.breakpoints.apply_results(Path::new(path), results);
    }
    let capabilities =
        outcome.capabilities.clone().with_aliases(&plan.def.quirks.capability_aliases);
    let parts = SessionParts {
        id,
        parent_id: None,
        tree,
        def: plan.def.clone(),
        adapter_path: plan.available.path.display().to_string(),
        client,
        attached: plan.attached,
        program: plan.program.clone(),
        cwd: plan.cwd.clone(),
        capabilities,
        ring,
        socket: started.socket,
    };
    let session = Arc::new(Session::start(parts, server));
    session.with(|s| s.threads = threads.0);
    first_stop(call, &session, &plan, outcome.first_stop).await;
    let mut lines = render::snapshot(&session, &mut call.state.shown, &mut call.redactor);
    lines.extend(child_stopped(call, &session).await);
    let reply = Reply { lines, ..Reply::default() }
        .field("adapter", plan.def.name.clone())
        .field("capabilities", session.capability_summary.clone())
        .field("session", render::summary(&session));
    call.state.session = Some(session);
    call.state.last_ended = None;
    reply
}

/// The root's handshake: the plan's request and arguments, the breakpoint set, the call's
/// deadline; the first stop is looked for afterwards ([`await_first_stop`]).
fn start_config(call: &Call<'_>, plan: &Plan) -> StartConfig {
    let mut config = StartConfig::new(&plan.def.name, plan.request, plan.arguments.clone());
    config.breakpoints = call.state.breakpoints.plan();
    config.advertise_run_in_terminal = plan.def.quirks.advertise_run_in_terminal;
    config.deadline = call.deadline;
    config.stop_wait = std::time::Duration::ZERO;
    config
}

/// A connection to the adapter and what to dispose of with the session.
struct Started {
    connection: Connection,
    /// The adapter process, when this session started one.
    process: Option<AdapterProcess>,
    socket: Option<SocketPath>,
}

/// Connects to the plan's address (with a socket in the sandbox's network, so a server a
/// confined call started is reachable), or starts the adapter over its transport.
async fn start_adapter(
    call: &Call<'_>,
    plan: &Plan,
    spawn: &AdapterSpawn,
) -> Result<Started, execkit_dap::TransportError> {
    let supervisor = &call.inner.deps.supervisor;
    if let Some(addr) = plan.connect {
        let sockets = supervisor.sandbox().sockets();
        let connection =
            transport::connect_tcp(&sockets, &plan.def.name, addr, call.deadline).await?;
        return Ok(Started { connection, process: None, socket: None });
    }
    let started = launch::spawn_adapter(supervisor, &plan.def, spawn).await?;
    Ok(Started {
        connection: started.connection,
        process: Some(started.process),
        socket: started.socket,
    })
}

/// Asks for the threads, then looks for the first stop. debugpy holds its stop-on-entry
/// `stopped` event until a client has asked for the threads, as editors do on the `thread`
/// event; the answer also fills the thread cache. A child session that stops first (a
/// subprocess at its breakpoint) ends the wait too.
async fn await_first_stop(
    client: &Client,
    tree: &Tree,
    deadline: tokio::time::Instant,
    after: u64,
) -> (Vec<execkit_dap::wire::Thread>, Option<execkit_dap::EventRecord>) {
    let until = deadline.min(tokio::time::Instant::now() + handshake::FIRST_STOP_WAIT);
    let threads: Vec<execkit_dap::wire::Thread> = client
        .call::<execkit_dap::wire::ThreadsResponse>("threads", None, until)
        .await
        .map(|t| t.threads)
        .unwrap_or_default();
    let mut halts = tree.subscribe();
    let child_stopped = async {
        loop {
            halts.borrow_and_update();
            if tree.children().iter().any(|c| c.status() == Status::Stopped) {
                return;
            }
            if halts.changed().await.is_err() {
                return std::future::pending().await;
            }
        }
    };
    tokio::select! {
        stop = client.wait_event(|r| r.arrival > after && r.is_stop_or_end(), until) => {
            (threads, stop.ok().flatten())
        }
        () = child_stopped => (threads, None),
    }
}

/// When a child session stopped while the root started, its snapshot follows the root's: the
/// next thread-level action goes to it.
async fn child_stopped(call: &mut Call<'_>, root: &Arc<Session>) -> Vec<String> {
    let target = crate::tree::target(root);
    if target.parent_id.is_none() || target.status() != Status::Stopped {
        return Vec::new();
    }
    let thread = target.with(|s| s.stop.as_ref().and_then(|st| st.thread_id));
    let _ = control::fetch_top_frame(&target, thread, call.deadline).await;
    render::snapshot(&target, &mut call.state.shown, &mut call.redactor)
}

/// The start failed: the adapter is ended and the reason said; a missing debugpy module is
/// turned into its install text.
async fn start_failed(client: &Client, plan: &Plan, text: String) -> Reply {
    let stderr = client.process().map(|p| p.stderr_tail(64 * 1024)).unwrap_or_default();
    client.close().await;
    if let Some(process) = client.process() {
        process.kill(std::time::Duration::from_secs(2)).await;
    }
    if let Some(module) = &plan.def.available.python_module {
        let missing = format!("No module named {module}");
        let quoted = format!("No module named '{module}'");
        if stderr.contains(&missing) || stderr.contains(&quoted) {
            let python = plan.available.python.clone().unwrap_or_default();
            return Reply::error(
                Unavailable {
                    name: plan.def.name.clone(),
                    reason: format!("{python} cannot import {module}"),
                    hint: plan.def.install_hint.replace("${python}", &python),
                }
                .text(),
            );
        }
    }
    Reply::error(text)
}

/// Records the stop the handshake found (an lldb-dap entry stop reported as an exception is
/// an entry stop) and fetches its top frame.
async fn first_stop(
    call: &Call<'_>,
    session: &Session,
    plan: &Plan,
    stop: Option<execkit_dap::EventRecord>,
) {
    use execkit_dap::wire::KnownEvent;
    let Some(record) = stop else { return };
    match record.known() {
        Some(KnownEvent::Stopped(body)) => {
            let mut reason = body.reason.clone();
            let mut description = body.description.clone();
            if plan.def.quirks.entry_stop_as_exception
                && plan.stop_on_entry
                && reason == "exception"
            {
                reason = "entry".to_string();
                description = None;
            }
            session.with(|s| {
                s.status = Status::Stopped;
                s.stop = Some(StopInfo {
                    reason,
                    description,
                    thread_id: body.thread_id,
                    ..StopInfo::default()
                });
            });
            let _ = control::fetch_top_frame(session, body.thread_id, call.deadline).await;
        }
        Some(KnownEvent::Exited(body)) => session.with(|s| s.exit_code = Some(body.exit_code)),
        Some(KnownEvent::Terminated(_)) => session.with(|s| s.status = Status::Terminated),
        _ => {}
    }
}

/// `attach` with `port` (connect) or `pid` (through the adapter).
pub(crate) async fn attach(call: &mut Call<'_>) -> Reply {
    if let Some(refused) = refuse_second(call).await {
        return refused;
    }
    let p = call.request.params.clone();
    if p.pid == Some(i64::from(std::process::id())) {
        return Reply::error("Refusing to attach to the execkit process itself.");
    }
    if let Some(pid) = p.pid.filter(|pid| !Path::new(&format!("/proc/{pid}")).exists()) {
        return Reply::error(format!("No process with pid {pid}."));
    }
    let base = call.inner.deps.cwd.clone();
    let cwd = p.cwd.as_deref().map_or(base.clone(), |c| absolute(c, &base, None));
    let root = project_root(&base);
    let env = adapter_env(call);
    let name = p.adapter.clone().unwrap_or_else(|| pid_adapter(p.pid));
    let Some(def) = call.inner.registry.get(&name).cloned() else {
        let known = call.inner.registry.names().join(", ");
        return Reply::error(format!("Unknown debug adapter '{name}'. Known adapters: {known}."));
    };
    let available = match call.inner.registry.check(&def, &probe(call, &root, &env)).await {
        Ok(found) => found,
        Err(unavailable) => return Reply::error(unavailable.text()),
    };
    let mut arguments = def.attach_defaults.clone();
    if let Some(pid) = p.pid {
        arguments.insert("pid".into(), json!(pid));
        arguments.insert("processId".into(), json!(pid));
    }
    let mut connect = None;
    if let Some(port) = p.port {
        let host = p.host.clone().unwrap_or_else(|| "127.0.0.1".to_string());
        arguments.insert("connect".into(), json!({"host": host, "port": port}));
        arguments.extend(def.connect_defaults.clone());
        let Ok(port) = u16::try_from(port) else {
            return Reply::error("port must be 1..65535");
        };
        match resolve_address(&host, port).await {
            Ok(addr) => connect = Some(addr),
            Err(text) => return Reply::error(text),
        }
    }
    let input = LaunchInput { cwd: cwd.clone(), ..LaunchInput::default() };
    let placeholders = placeholders(call, &available, &input);
    let arguments = placeholders.fill_value(&Value::Object(arguments)).unwrap_or(Value::Null);
    let plan = Plan {
        def,
        available,
        request: HandshakeRequest::Attach,
        arguments,
        program: None,
        cwd,
        stop_on_entry: false,
        attached: true,
        connect,
    };
    open(call, plan, placeholders, env).await
}

/// The first address of `host:port` (a literal address, or a name such as `localhost`).
async fn resolve_address(host: &str, port: u16) -> Result<SocketAddr, String> {
    let failed = |why: String| format!("Attach failed: cannot resolve {host}: {why}");
    let mut found =
        tokio::net::lookup_host((host, port)).await.map_err(|e| failed(e.to_string()))?;
    found.next().ok_or_else(|| failed("no address".to_string()))
}

/// The adapter for a running process, from its executable: python → debugpy, a Go binary →
/// dlv, anything else → lldb-dap.
fn pid_adapter(pid: Option<i64>) -> String {
    let exe = pid.and_then(|pid| std::fs::read_link(format!("/proc/{pid}/exe")).ok());
    let Some(exe) = exe else { return "debugpy".to_string() };
    let base = exe.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if base.starts_with("python") {
        return "debugpy".to_string();
    }
    match detect::classify(&exe) {
        Ok(detect::ProgramKind::Native { go: true }) => "dlv".to_string(),
        _ => "lldb-dap".to_string(),
    }
}
