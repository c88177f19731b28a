//! Ways to reach an adapter: its stdio, a TCP port it listens on, a TCP connection it dials
//! back, a Unix socket it creates, or an address that is already listening.
//!
//! Every wait is a connect attempt raced against the adapter's exit and a deadline; the 50 ms
//! between attempts is the retry cadence, never a guess at readiness.
//!
//! Every TCP socket here comes from a [`SocketFactory`]: the Supervisor's, so that with the
//! sandbox's network off the port is reserved, the listener bound and the connection made
//! inside the private network namespace the adapter and its debuggee live in. Every outgoing
//! connection, to a root adapter or to a child session, is opened by [`connect_tcp`] or the
//! same attempt inside [`spawn_tcp`]'s retry loop.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use execkit_process::{SocketFactory, Supervisor};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpStream, UnixStream};
use tokio::time::Instant;

use crate::error::{StderrTail, TransportError};
use crate::process::{AdapterCommand, AdapterProcess, STDERR_TAIL_BYTES};

/// Between connect attempts or socket-file polls.
pub const RETRY_INTERVAL: Duration = Duration::from_millis(50);

pub type BoxRead = Box<dyn AsyncRead + Send + Unpin>;
pub type BoxWrite = Box<dyn AsyncWrite + Send + Unpin>;

/// Both directions of one DAP connection.
pub struct Connection {
    pub reader: BoxRead,
    pub writer: BoxWrite,
    /// The address the adapter listens on, when another connection can be opened there
    /// (a child session of an adapter such as js-debug asks for one).
    pub listen_addr: Option<SocketAddr>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Connection")
    }
}

impl Connection {
    pub fn new(
        reader: impl AsyncRead + Send + Unpin + 'static,
        writer: impl AsyncWrite + Send + Unpin + 'static,
    ) -> Connection {
        Connection { reader: Box::new(reader), writer: Box::new(writer), listen_addr: None }
    }

    /// `listen_addr` is the adapter's own listening address (not the peer of a connection it
    /// dialled back, which cannot be connected to again).
    fn tcp(stream: TcpStream, listen_addr: Option<SocketAddr>) -> Connection {
        let _ = stream.set_nodelay(true);
        let (reader, writer) = stream.into_split();
        Connection { listen_addr, ..Connection::new(reader, writer) }
    }
}

fn io_error(cmd: &AdapterCommand, what: &str) -> impl FnOnce(std::io::Error) -> TransportError {
    let (adapter, what) = (cmd.name.clone(), what.to_string());
    move |source| TransportError::Io { adapter, what, source }
}

/// Starts the adapter with DAP on its stdin/stdout; stderr feeds its ring.
pub async fn spawn_stdio(
    supervisor: &Supervisor,
    cmd: &AdapterCommand,
) -> Result<(Connection, AdapterProcess), TransportError> {
    let (stdin_read, stdin_write) = std::io::pipe().map_err(io_error(cmd, "creating a pipe"))?;
    let (stdout_read, stdout_write) = std::io::pipe().map_err(io_error(cmd, "creating a pipe"))?;
    // fds 0 and 1 are placed after the supervisor's own stdio setup, so these pipes replace
    // its null stdin and merged output; its output pipe then carries stderr alone.
    let extra = vec![(stdin_read.into(), 0), (stdout_write.into(), 1)];
    let process = AdapterProcess::spawn(supervisor, cmd, extra).await?;
    let reader = tokio::net::unix::pipe::Receiver::from_owned_fd(stdout_read.into())
        .map_err(io_error(cmd, "reading its stdout"))?;
    let writer = tokio::net::unix::pipe::Sender::from_owned_fd(stdin_write.into())
        .map_err(io_error(cmd, "writing its stdin"))?;
    Ok((Connection::new(reader, writer), process))
}

/// The adapter listens: start it with `make_cmd(port)` and connect until it accepts, it
/// exits, or `deadline` passes. For host `localhost`, attempts alternate between IPv4 and
/// IPv6 loopback. A port taken between reservation and listen is retried once with another.
pub async fn spawn_tcp(
    supervisor: &Supervisor,
    make_cmd: impl Fn(u16) -> AdapterCommand,
    host: &str,
    deadline: Instant,
) -> Result<(Connection, AdapterProcess), TransportError> {
    let sockets = supervisor.sandbox().sockets();
    let mut retried = false;
    loop {
        let port = sockets.reserve_port().map_err(io_error(&make_cmd(0), "reserving a port"))?;
        let cmd = make_cmd(port);
        let process = AdapterProcess::spawn(supervisor, &cmd, Vec::new()).await?;
        let addrs = loopback_addrs(host, port);
        match connect_while_alive(&sockets, &cmd.name, &addrs, &process, deadline).await {
            Err(TransportError::ExitedBeforeConnect { stderr, .. })
                if !retried && port_was_taken(&stderr.0) =>
            {
                retried = true;
            }
            Err(err) => {
                process.kill(Duration::from_secs(2)).await;
                return Err(err);
            }
            Ok(connection) => return Ok((connection, process)),
        }
    }
}

fn port_was_taken(stderr: &str) -> bool {
    let lower = stderr.to_ascii_lowercase();
    lower.contains("address already in use") || lower.contains("eaddrinuse")
}

fn loopback_addrs(host: &str, port: u16) -> Vec<SocketAddr> {
    match host {
        "localhost" => {
            vec![([127, 0, 0, 1], port).into(), (std::net::Ipv6Addr::LOCALHOST, port).into()]
        }
        other => match other.parse::<std::net::IpAddr>() {
            Ok(ip) => vec![SocketAddr::new(ip, port)],
            Err(_) => vec![([127, 0, 0, 1], port).into()],
        },
    }
}

async fn connect_while_alive(
    sockets: &SocketFactory,
    name: &str,
    addrs: &[SocketAddr],
    process: &AdapterProcess,
    deadline: Instant,
) -> Result<Connection, TransportError> {
    let started = Instant::now();
    for attempt in 0usize.. {
        let addr = addrs[attempt % addrs.len()];
        match connect_attempt(sockets, name, addr, deadline).await {
            Attempt::Connected(connection) => return Ok(connection),
            Attempt::NoSocket(err) => return Err(err),
            Attempt::Failed(_) => {}
        }
        let pause = (Instant::now() + RETRY_INTERVAL).min(deadline);
        if let Some(status) = process.wait_exit(pause).await {
            return Err(exited_before_connect(name, process, Some(status)));
        }
        if Instant::now() >= deadline {
            break;
        }
    }
    Err(TransportError::ConnectTimeout {
        adapter: name.to_string(),
        addr: addrs[0].to_string(),
        ms: (Instant::now() - started).as_millis(),
    })
}

fn exited_before_connect(
    name: &str,
    process: &AdapterProcess,
    status: Option<execkit_process::ExitStatus>,
) -> TransportError {
    TransportError::ExitedBeforeConnect {
        adapter: name.to_string(),
        exit: AdapterProcess::exit_text(status),
        stderr: StderrTail(process.stderr_tail(STDERR_TAIL_BYTES)),
    }
}

/// The adapter dials back: listen on a loopback port we keep (no port race), start it with
/// `make_cmd(listen address)`, accept one connection.
pub async fn spawn_tcp_dial(
    supervisor: &Supervisor,
    make_cmd: impl FnOnce(SocketAddr) -> AdapterCommand,
    deadline: Instant,
) -> Result<(Connection, AdapterProcess), TransportError> {
    let listener = supervisor.sandbox().sockets().listen(([127, 0, 0, 1], 0).into());
    let listener = listener.map_err(|source| TransportError::Io {
        adapter: "(tcp-dial)".into(),
        what: "listening on 127.0.0.1".into(),
        source,
    })?;
    let addr = listener.local_addr().map_err(|source| TransportError::Io {
        adapter: "(tcp-dial)".into(),
        what: "reading the listen address".into(),
        source,
    })?;
    let cmd = make_cmd(addr);
    let process = AdapterProcess::spawn(supervisor, &cmd, Vec::new()).await?;
    let started = Instant::now();
    let outcome = tokio::select! {
        accepted = tokio::time::timeout_at(deadline, listener.accept()) => match accepted {
            Ok(Ok((stream, _))) => Ok(stream),
            Ok(Err(source)) => Err(io_error(&cmd, "accepting its connection")(source)),
            Err(_) => Err(TransportError::ConnectTimeout {
                adapter: cmd.name.clone(),
                addr: addr.to_string(),
                ms: (Instant::now() - started).as_millis(),
            }),
        },
        status = process.wait_exit(deadline + Duration::from_secs(1)) => {
            Err(exited_before_connect(&cmd.name, &process, status))
        }
    };
    match outcome {
        Ok(stream) => Ok((Connection::tcp(stream, None), process)),
        Err(err) => {
            process.kill(Duration::from_secs(2)).await;
            Err(err)
        }
    }
}

/// The adapter creates a Unix socket at `socket` (a path in a private directory the caller
/// chose): start it with `make_cmd(socket)`, poll until the path is a socket, connect.
pub async fn spawn_unix(
    supervisor: &Supervisor,
    make_cmd: impl FnOnce(&Path) -> AdapterCommand,
    socket: PathBuf,
    deadline: Instant,
) -> Result<(Connection, AdapterProcess), TransportError> {
    let cmd = make_cmd(&socket);
    let process = AdapterProcess::spawn(supervisor, &cmd, Vec::new()).await?;
    let started = Instant::now();
    loop {
        if is_socket(&socket)
            && let Ok(stream) = UnixStream::connect(&socket).await
        {
            let (reader, writer) = stream.into_split();
            return Ok((Connection::new(reader, writer), process));
        }
        let pause = (Instant::now() + RETRY_INTERVAL).min(deadline);
        if let Some(status) = process.wait_exit(pause).await {
            return Err(exited_before_connect(&cmd.name, &process, Some(status)));
        }
        if Instant::now() >= deadline {
            process.kill(Duration::from_secs(2)).await;
            return Err(TransportError::ConnectTimeout {
                adapter: cmd.name,
                addr: socket.display().to_string(),
                ms: (Instant::now() - started).as_millis(),
            });
        }
    }
}

fn is_socket(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_socket())
}

/// Connects to an adapter that is already listening (`debugpy.listen()`, `dlv --headless`, a
/// child session's `connect` address): one attempt under `deadline`, with a socket from
/// `sockets` (the Supervisor's `sandbox().sockets()`, so that it reaches the network the
/// confined adapters live in). Every TCP connection to an adapter goes through here.
pub async fn connect_tcp(
    sockets: &SocketFactory,
    name: &str,
    addr: SocketAddr,
    deadline: Instant,
) -> Result<Connection, TransportError> {
    match connect_attempt(sockets, name, addr, deadline).await {
        Attempt::Connected(connection) => Ok(connection),
        Attempt::NoSocket(err) | Attempt::Failed(err) => Err(err),
    }
}

/// How one connection attempt ended. A socket that cannot be made (the sandbox's namespace
/// unusable) is not worth another attempt; a refused connection may be.
enum Attempt {
    Connected(Connection),
    NoSocket(TransportError),
    Failed(TransportError),
}

async fn connect_attempt(
    sockets: &SocketFactory,
    name: &str,
    addr: SocketAddr,
    deadline: Instant,
) -> Attempt {
    let started = Instant::now();
    let io = |source| TransportError::Io {
        adapter: name.to_string(),
        what: format!("connecting to {addr}"),
        source,
    };
    let socket = match sockets.tcp_socket(&addr) {
        Ok(socket) => socket,
        Err(source) => return Attempt::NoSocket(io(source)),
    };
    match tokio::time::timeout_at(deadline, socket.connect(addr)).await {
        Ok(Ok(stream)) => Attempt::Connected(Connection::tcp(stream, Some(addr))),
        Ok(Err(source)) => Attempt::Failed(io(source)),
        Err(_) => Attempt::Failed(TransportError::ConnectTimeout {
            adapter: name.to_string(),
            addr: addr.to_string(),
            ms: (Instant::now() - started).as_millis(),
        }),
    }
}
