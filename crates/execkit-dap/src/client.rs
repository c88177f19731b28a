//! The caller's side of a connection: send requests, await answers under a deadline, wait for
//! events, close.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::{Notify, mpsc, oneshot, watch};
use tokio::time::Instant;

use crate::error::{RequestError, StderrTail};
use crate::events::{DEFAULT_EVENT_CAPACITY, EventQueue, EventRecord};
use crate::owner::{Command, Owner};
use crate::process::{AdapterProcess, STDERR_TAIL_BYTES};
use crate::reverse::{REVERSE_QUEUE, ReverseRequests};
use crate::trace::Trace;
use crate::transport::Connection;
use crate::wire::Response;

/// Commands from callers to the owner; they are handled at once, so this only bounds bursts.
const COMMAND_QUEUE: usize = 256;

/// How long a request that saw the connection close waits for the adapter's exit status, so
/// the error can name the exit code.
const EXIT_STATUS_WAIT: Duration = Duration::from_millis(500);

#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// The adapter's name, for messages.
    pub adapter: String,
    pub event_capacity: usize,
    /// NDJSON trace file, or none (front ends set it from `EXECKIT_DAP_TRACE`).
    pub trace: Option<PathBuf>,
}

impl ClientOptions {
    pub fn new(adapter: &str) -> ClientOptions {
        ClientOptions {
            adapter: adapter.to_string(),
            event_capacity: DEFAULT_EVENT_CAPACITY,
            trace: None,
        }
    }
}

/// State the owner task and the callers share.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) events: Mutex<EventQueue>,
    pub(crate) notify: Notify,
    pub(crate) closed: watch::Sender<bool>,
    pub(crate) arrivals: AtomicU64,
    pub(crate) resyncs: AtomicU64,
    pub(crate) dropped_bodies: AtomicU64,
    pub(crate) late_responses: AtomicU64,
    pub(crate) stopped_reading: AtomicBool,
}

impl Shared {
    pub(crate) fn push_event(&self, record: EventRecord) {
        if let Ok(mut events) = self.events.lock() {
            events.push(record);
        }
        self.notify.notify_waiters();
    }
}

/// Counters for the session summary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientStats {
    pub arrivals: u64,
    pub resyncs: u64,
    pub dropped_bodies: u64,
    pub dropped_events: u64,
    pub late_responses: u64,
}

/// A response and its arrival number.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub response: Response,
    pub arrival: u64,
}

impl Answer {
    /// The response, or [`RequestError::Failed`] when `success` is false.
    pub fn into_result(self) -> Result<Response, RequestError> {
        if self.response.success {
            Ok(self.response)
        } else {
            Err(RequestError::Failed {
                command: self.response.command.clone(),
                message: self.response.error_text(),
            })
        }
    }
}

/// One DAP connection. Cheap to clone; the owner task ends when the stream closes, on
/// [`Client::close`], or when every clone is dropped.
#[derive(Debug, Clone)]
pub struct Client {
    shared: Arc<Shared>,
    commands: mpsc::Sender<Command>,
    process: Option<AdapterProcess>,
    adapter: String,
    listen_addr: Option<std::net::SocketAddr>,
}

impl Client {
    /// Starts the owner task on `connection`. `process` is the adapter behind it, if we
    /// started one: its exit code and stderr tail then explain a closed connection.
    pub fn start(
        connection: Connection,
        process: Option<AdapterProcess>,
        options: ClientOptions,
    ) -> (Client, ReverseRequests) {
        let shared = Arc::new(Shared {
            events: Mutex::new(EventQueue::new(options.event_capacity)),
            notify: Notify::new(),
            closed: watch::Sender::new(false),
            arrivals: AtomicU64::new(0),
            resyncs: AtomicU64::new(0),
            dropped_bodies: AtomicU64::new(0),
            late_responses: AtomicU64::new(0),
            stopped_reading: AtomicBool::new(false),
        });
        let (commands, command_rx) = mpsc::channel(COMMAND_QUEUE);
        let (reverse_tx, reverse_rx) = mpsc::channel(REVERSE_QUEUE);
        let trace = options.trace.as_deref().and_then(Trace::open);
        let owner =
            Owner::new(Arc::clone(&shared), (command_rx, commands.downgrade()), reverse_tx, trace);
        let listen_addr = connection.listen_addr;
        tokio::spawn(owner.run(connection.reader, connection.writer));
        let client = Client { shared, commands, process, adapter: options.adapter, listen_addr };
        (client, reverse_rx)
    }

    pub fn adapter(&self) -> &str {
        &self.adapter
    }

    pub fn process(&self) -> Option<&AdapterProcess> {
        self.process.as_ref()
    }

    /// The address the adapter listens on, when another connection to it can be opened.
    pub fn listen_addr(&self) -> Option<std::net::SocketAddr> {
        self.listen_addr
    }

    /// Sends a request without waiting for its answer.
    pub async fn send(
        &self,
        command: &str,
        arguments: Option<Value>,
    ) -> Result<PendingRequest, RequestError> {
        let (registered, seq_rx) = oneshot::channel();
        let (reply, reply_rx) = oneshot::channel();
        let send = Command::Send { command: command.to_string(), arguments, registered, reply };
        if self.commands.send(send).await.is_err() {
            return Err(self.closed_error(command).await);
        }
        let Ok((seq, sent_after)) = seq_rx.await else {
            return Err(self.closed_error(command).await);
        };
        Ok(PendingRequest {
            seq,
            sent_after,
            command: command.to_string(),
            sent_at: Instant::now(),
            reply: reply_rx,
            client: self.clone(),
        })
    }

    /// Sends a request and waits for a successful response.
    pub async fn request(
        &self,
        command: &str,
        arguments: Option<Value>,
        deadline: Instant,
    ) -> Result<Response, RequestError> {
        self.send(command, arguments).await?.wait(deadline).await?.into_result()
    }

    /// [`Client::request`], with the body read as `T` (a missing body reads as `null`).
    pub async fn call<T: DeserializeOwned>(
        &self,
        command: &str,
        arguments: Option<Value>,
        deadline: Instant,
    ) -> Result<T, RequestError> {
        let response = self.request(command, arguments, deadline).await?;
        serde_json::from_value(response.body.unwrap_or(Value::Null)).map_err(|e| {
            RequestError::BadBody { command: command.to_string(), problem: e.to_string() }
        })
    }

    /// Removes and returns the first queued event matching `pred`, waiting for one until
    /// `deadline`. `Ok(None)` on timeout; an error when the connection closed first.
    pub async fn wait_event(
        &self,
        pred: impl Fn(&EventRecord) -> bool,
        deadline: Instant,
    ) -> Result<Option<EventRecord>, RequestError> {
        loop {
            let notified = self.shared.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(record) = self.take_event(&pred) {
                return Ok(Some(record));
            }
            if self.is_closed() {
                return Err(self.closed_error("waiting for events").await);
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return Ok(None);
            }
        }
    }

    /// Removes and returns the first queued event matching `pred`, without waiting.
    pub fn take_event(&self, pred: &dyn Fn(&EventRecord) -> bool) -> Option<EventRecord> {
        self.shared.events.lock().ok()?.take_first(pred)
    }

    /// Every queued event, oldest first, emptying the queue.
    pub fn drain_events(&self) -> Vec<EventRecord> {
        self.shared.events.lock().map(|mut q| q.drain()).unwrap_or_default()
    }

    /// The arrival number of the latest incoming message.
    pub fn arrivals(&self) -> u64 {
        self.shared.arrivals.load(Ordering::SeqCst)
    }

    pub fn stats(&self) -> ClientStats {
        ClientStats {
            arrivals: self.arrivals(),
            resyncs: self.shared.resyncs.load(Ordering::SeqCst),
            dropped_bodies: self.shared.dropped_bodies.load(Ordering::SeqCst),
            dropped_events: self.shared.events.lock().map_or(0, |q| q.dropped),
            late_responses: self.shared.late_responses.load(Ordering::SeqCst),
        }
    }

    pub fn is_closed(&self) -> bool {
        *self.shared.closed.borrow()
    }

    /// Resolves once the connection has closed.
    pub async fn closed(&self) {
        let mut closed = self.shared.closed.subscribe();
        let _ = closed.wait_for(|c| *c).await;
    }

    /// Ends the connection: pending requests fail, the writer shuts down (closing an stdio
    /// adapter's stdin). Does not kill the adapter process.
    pub async fn close(&self) {
        let _ = self.commands.send(Command::Close).await;
        self.closed().await;
    }

    /// The error for a request that lost its connection: the adapter's exit code and stderr
    /// tail when it exited, else a plain "closed".
    pub(crate) async fn closed_error(&self, command: &str) -> RequestError {
        if self.shared.stopped_reading.load(Ordering::SeqCst) {
            return RequestError::StoppedReading { adapter: self.adapter.clone() };
        }
        let Some(process) = &self.process else {
            return RequestError::Closed { adapter: self.adapter.clone(), command: command.into() };
        };
        match process.wait_exit(Instant::now() + EXIT_STATUS_WAIT).await {
            Some(status) => RequestError::AdapterExited {
                adapter: self.adapter.clone(),
                exit: AdapterProcess::exit_text(Some(status)),
                command: command.to_string(),
                stderr: StderrTail(process.stderr_tail(STDERR_TAIL_BYTES)),
            },
            None => RequestError::Closed { adapter: self.adapter.clone(), command: command.into() },
        }
    }

    fn forget(&self, seq: i64) {
        let _ = self.commands.try_send(Command::Forget(seq));
    }
}

/// A request on the wire whose answer has not been awaited yet.
#[derive(Debug)]
pub struct PendingRequest {
    pub seq: i64,
    /// The arrival number of the last message received before this request was written:
    /// events with a higher number came after it.
    pub sent_after: u64,
    command: String,
    sent_at: Instant,
    reply: oneshot::Receiver<Answer>,
    client: Client,
}

impl PendingRequest {
    pub fn command(&self) -> &str {
        &self.command
    }

    /// Waits for the answer until `deadline`. A timeout leaves the connection usable; a late
    /// answer is counted and dropped.
    pub async fn wait(mut self, deadline: Instant) -> Result<Answer, RequestError> {
        match tokio::time::timeout_at(deadline, &mut self.reply).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(_)) => Err(self.client.closed_error(&self.command).await),
            Err(_) => {
                self.client.forget(self.seq);
                Err(RequestError::Timeout {
                    command: self.command.clone(),
                    ms: (Instant::now() - self.sent_at).as_millis(),
                })
            }
        }
    }
}
