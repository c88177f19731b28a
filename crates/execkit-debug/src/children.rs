//! Child sessions. An adapter asks for one with the `startDebugging` reverse request (debugpy
//! for every Python subprocess, js-debug for every Node target). The request is answered with
//! success at once, so the adapter never waits on us, and the child is opened in its own task:
//!
//! 1. when `configuration.connect` has `{host, port}` (debugpy), connect there;
//! 2. else, when the root adapter listens on TCP (js-debug), open another connection to it;
//! 3. else start another instance of the same adapter definition.
//!
//! The child then runs the same start handshake as the root with the given request and
//! configuration and the tool's breakpoint set, and joins the tree. At most
//! [`MAX_CHILDREN`] children are opened per tree; more get `success:false`.

use std::ffi::OsString;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use execkit_dap::adapters::AdapterDef;
use execkit_dap::launch::{self, AdapterSpawn};
use execkit_dap::socket_dir::SocketPath;
use execkit_dap::transport::{self, Connection};
use execkit_dap::wire::{StartDebuggingArguments, ThreadsResponse};
use execkit_dap::{
    AdapterProcess, Client, ClientOptions, HandshakeRequest, Responder, ReverseRequests,
    StartConfig, handshake,
};
use execkit_process::Supervisor;
use serde_json::Value;
use tokio::time::Instant;

use crate::ring::OutputRing;
use crate::session::{ReverseContext, ReverseServer, Session, SessionParts, Shared};
use crate::terminate;
use crate::tree::{MAX_CHILDREN, Tree};

/// How long opening one child may take, connection and handshake together.
const CHILD_START: Duration = Duration::from_secs(30);

/// What the root was started with; every child of the tree is opened from it.
pub struct Origin {
    pub supervisor: Supervisor,
    pub def: AdapterDef,
    pub adapter_path: String,
    /// How the root adapter was spawned, for a child that needs an instance of its own.
    pub spawn: AdapterSpawn,
    /// The root adapter's listening address, when it has one.
    pub listen_addr: Option<SocketAddr>,
    pub trace: Option<PathBuf>,
    pub env: Vec<(OsString, OsString)>,
    pub cwd: PathBuf,
    pub ring: Shared<OutputRing>,
    pub tree: Arc<Tree>,
    /// Whether ending the tree ends the debuggees (the root was launched, not attached).
    pub terminate_debuggees: bool,
}

/// Opens the children one session asks for.
#[derive(Clone)]
pub struct ChildOpener {
    origin: Arc<Origin>,
    parent: String,
}

/// A child's connection, the adapter process behind it when one was started for it, and its
/// Unix socket.
type ChildConnection = (Connection, Option<AdapterProcess>, Option<SocketPath>);

impl ChildOpener {
    /// Answers `startDebugging` at once, then opens the child in the background; a child that
    /// cannot be opened is reported in the output as `important`.
    pub fn start_debugging(&self, args: StartDebuggingArguments, responder: Responder) {
        if !self.origin.tree.reserve() {
            responder.fail(&format!(
                "execkit opens at most {MAX_CHILDREN} child sessions per debug session"
            ));
            return;
        }
        responder.succeed(None);
        let opener = self.clone();
        tokio::spawn(async move {
            if let Err(problem) = opener.open(args).await {
                let text = format!("Child session of {} not opened: {problem}\n", opener.parent);
                let mut ring = opener.origin.ring.lock().unwrap_or_else(|e| e.into_inner());
                ring.push(&opener.parent, "important", &text);
            }
        });
    }

    async fn open(&self, args: StartDebuggingArguments) -> Result<(), String> {
        let o = &self.origin;
        let id = o.tree.next_id();
        let deadline = Instant::now() + CHILD_START;
        let (connection, process, socket) = self.connect(&args, &id, deadline).await?;
        let mut options = ClientOptions::new(&o.def.name);
        options.trace = o.trace.clone();
        let (client, reverse) = Client::start(connection, process, options);
        let server = o.serve(reverse, &id);
        let request = if args.request == "launch" {
            HandshakeRequest::Launch
        } else {
            HandshakeRequest::Attach
        };
        let mut config =
            StartConfig::new(&o.def.name, request, Value::Object(args.configuration.clone()));
        config.breakpoints = o.tree.plan();
        config.advertise_run_in_terminal = o.def.quirks.advertise_run_in_terminal;
        config.deadline = deadline;
        config.stop_wait = Duration::ZERO;
        let outcome = match handshake::start(&client, &config).await {
            Ok(outcome) => outcome,
            Err(err) => {
                server.handle.abort();
                abandon(&client).await;
                return Err(err.to_string());
            }
        };
        let parts = SessionParts {
            id,
            parent_id: Some(self.parent.clone()),
            tree: o.tree.clone(),
            def: o.def.clone(),
            adapter_path: o.adapter_path.clone(),
            client: client.clone(),
            attached: request == HandshakeRequest::Attach,
            program: None,
            cwd: o.cwd.clone(),
            capabilities: outcome.capabilities.with_aliases(&o.def.quirks.capability_aliases),
            ring: o.ring.clone(),
            socket,
        };
        let session = Arc::new(Session::start(parts, server));
        let sub_pid = args.configuration.get("subProcessId").and_then(Value::as_i64);
        session.with(|s| s.pid = s.pid.or(sub_pid));
        // debugpy holds a stop until a client asked for the threads, as editors do at once.
        if let Ok(threads) = client.call::<ThreadsResponse>("threads", None, deadline).await {
            session.with(|s| s.threads = threads.threads);
        }
        if !o.tree.add(session.clone()) {
            // The tree was ended while this child was opening.
            terminate::one(&session, o.terminate_debuggees).await;
        }
        Ok(())
    }

    /// Where the child's adapter is: the configuration's `connect`, the root's address, or a
    /// new instance of the root's adapter.
    async fn connect(
        &self,
        args: &StartDebuggingArguments,
        id: &str,
        deadline: Instant,
    ) -> Result<ChildConnection, String> {
        let o = &self.origin;
        let name = &o.def.name;
        let addr = match args.configuration.get("connect") {
            Some(connect) => Some(connect_addr(connect)?),
            None => o.listen_addr,
        };
        if let Some(addr) = addr {
            let sockets = o.supervisor.sandbox().sockets();
            let connection = transport::connect_tcp(&sockets, name, addr, deadline).await;
            return connection.map(|c| (c, None, None)).map_err(|e| e.to_string());
        }
        let spawn = AdapterSpawn { deadline, session: id.to_string(), ..o.spawn.clone() };
        let started = launch::spawn_adapter(&o.supervisor, &o.def, &spawn).await;
        let started = started.map_err(|e| e.to_string())?;
        Ok((started.connection, Some(started.process), started.socket))
    }
}

impl Origin {
    /// Serves the reverse requests of session `id` of this tree (`runInTerminal`, and
    /// `startDebugging` for its own children).
    pub fn serve(self: &Arc<Self>, reverse: ReverseRequests, id: &str) -> ReverseServer {
        let ctx = ReverseContext {
            supervisor: self.supervisor.clone(),
            env: self.env.clone(),
            cwd: self.cwd.clone(),
            ring: self.ring.clone(),
            session: id.to_string(),
            children: ChildOpener { origin: self.clone(), parent: id.to_string() },
        };
        ReverseServer::start(reverse, ctx)
    }
}

/// `{host, port}` as an address; `localhost` (and no host) is IPv4 loopback.
fn connect_addr(connect: &Value) -> Result<SocketAddr, String> {
    let port = connect["port"].as_u64().and_then(|p| u16::try_from(p).ok());
    let Some(port) = port.filter(|p| *p > 0) else {
        return Err(format!("startDebugging connect has no valid port: {connect}"));
    };
    let ip = match connect["host"].as_str() {
        None | Some("localhost") => IpAddr::V4(Ipv4Addr::LOCALHOST),
        Some(host) => host
            .parse()
            .map_err(|_| format!("startDebugging connect host {host:?} is not an IP address"))?,
    };
    Ok(SocketAddr::new(ip, port))
}

/// A child whose handshake failed: its connection is closed and its own adapter, if any,
/// killed.
async fn abandon(client: &Client) {
    client.close().await;
    if let Some(process) = client.process() {
        process.kill(Duration::from_secs(2)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn connect_addresses_take_ips_and_localhost() {
        let v4 = connect_addr(&json!({"host": "127.0.0.1", "port": 5678})).unwrap();
        assert_eq!(v4.to_string(), "127.0.0.1:5678");
        let named = connect_addr(&json!({"host": "localhost", "port": 80})).unwrap();
        assert_eq!(named.to_string(), "127.0.0.1:80");
        let v6 = connect_addr(&json!({"host": "::1", "port": 9})).unwrap();
        assert_eq!(v6.to_string(), "[::1]:9");
    }

    #[test]
    fn bad_connect_addresses_say_what_is_wrong() {
        let no_port = connect_addr(&json!({"host": "127.0.0.1"})).unwrap_err();
        assert!(no_port.contains("no valid port"), "{no_port}");
        let too_big = connect_addr(&json!({"port": 70000})).unwrap_err();
        assert!(too_big.contains("no valid port"), "{too_big}");
        let name = connect_addr(&json!({"host": "db.internal", "port": 1})).unwrap_err();
        assert!(name.contains("\"db.internal\" is not an IP address"), "{name}");
    }
}
