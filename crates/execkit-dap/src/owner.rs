//! The owner task of one connection: it alone reads the stream and owns the `seq → oneshot`
//! map of pending requests. Incoming messages are sorted as they arrive: responses complete
//! their request, events go to the queue, reverse requests go to the caller (or are refused).
//! Nothing ever "reads the next message" expecting a kind, so any adapter order works. Writes
//! run in their own task so an adapter that stops reading cannot stall the reader.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

use crate::client::{Answer, Shared};
use crate::events::EventRecord;
use crate::framing::FrameDecoder;
use crate::reverse::{IncomingReverse, Responder};
use crate::trace::Trace;
use crate::transport::{BoxRead, BoxWrite};
use crate::wire::{self, Message, Request, Response, ReverseRequest};

/// Outgoing messages waiting for the writer. A full queue means the adapter stopped reading.
pub(crate) const WRITE_QUEUE: usize = 256;

pub(crate) enum Command {
    Send {
        command: String,
        arguments: Option<Value>,
        registered: oneshot::Sender<(i64, u64)>,
        reply: oneshot::Sender<Answer>,
    },
    Respond(Response),
    Forget(i64),
    Close,
}

struct Pending {
    reply: oneshot::Sender<Answer>,
}

pub(crate) struct Owner {
    pub(crate) shared: Arc<Shared>,
    pub(crate) commands: mpsc::Receiver<Command>,
    pub(crate) command_tx: mpsc::WeakSender<Command>,
    pub(crate) reverse_tx: mpsc::Sender<IncomingReverse>,
    pub(crate) trace: Option<Trace>,
    pending: HashMap<i64, Pending>,
    next_seq: i64,
    decoder: FrameDecoder,
    writes: Option<mpsc::Sender<Vec<u8>>>,
}

impl Owner {
    pub(crate) fn new(
        shared: Arc<Shared>,
        commands: (mpsc::Receiver<Command>, mpsc::WeakSender<Command>),
        reverse_tx: mpsc::Sender<IncomingReverse>,
        trace: Option<Trace>,
    ) -> Owner {
        Owner {
            shared,
            commands: commands.0,
            command_tx: commands.1,
            reverse_tx,
            trace,
            pending: HashMap::new(),
            next_seq: 1,
            decoder: FrameDecoder::default(),
            writes: None,
        }
    }

    pub(crate) async fn run(mut self, mut reader: BoxRead, writer: BoxWrite) {
        let (write_tx, write_rx) = mpsc::channel(WRITE_QUEUE);
        let (write_failed_tx, mut write_failed) = oneshot::channel::<()>();
        tokio::spawn(write_loop(writer, write_rx, write_failed_tx));
        self.writes = Some(write_tx);
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            tokio::select! {
                command = self.commands.recv() => match command {
                    Some(Command::Close) | None => break,
                    Some(command) => {
                        if !self.handle_command(command) {
                            break;
                        }
                    }
                },
                read = reader.read(&mut buf) => match read {
                    Ok(0) | Err(_) => break,
                    Ok(n) => self.handle_bytes(&buf[..n]),
                },
                _ = &mut write_failed => break,
            }
        }
        self.shutdown();
    }

    /// False when the connection must end (the adapter stopped reading).
    fn handle_command(&mut self, command: Command) -> bool {
        match command {
            Command::Send { command, arguments, registered, reply } => {
                let seq = self.take_seq();
                let request = Request { seq, command, arguments };
                let _ = registered.send((seq, self.shared.arrivals.load(Ordering::SeqCst)));
                self.pending.insert(seq, Pending { reply });
                self.write(Message::Request(request))
            }
            Command::Respond(mut response) => {
                response.seq = self.take_seq();
                self.write(Message::Response(response))
            }
            Command::Forget(seq) => {
                self.pending.remove(&seq);
                true
            }
            Command::Close => false,
        }
    }

    fn take_seq(&mut self) -> i64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    fn write(&mut self, message: Message) -> bool {
        if let Some(trace) = &mut self.trace {
            trace.record("out", self.shared.arrivals.load(Ordering::SeqCst), &message);
        }
        let Some(writes) = &self.writes else { return false };
        match writes.try_send(wire::encode(&message)) {
            Ok(()) => true,
            Err(_) => {
                self.shared.stopped_reading.store(true, Ordering::SeqCst);
                false
            }
        }
    }

    fn handle_bytes(&mut self, bytes: &[u8]) {
        self.decoder.push(bytes);
        while let Some(body) = self.decoder.next_frame() {
            match wire::decode(&body) {
                Ok(message) => self.dispatch(message, &body),
                Err(_) => {
                    self.shared.dropped_bodies.fetch_add(1, Ordering::SeqCst);
                }
            }
        }
        self.shared.resyncs.store(self.decoder.stats().resyncs, Ordering::SeqCst);
    }

    fn dispatch(&mut self, message: Message, raw: &[u8]) {
        let arrival = self.shared.arrivals.fetch_add(1, Ordering::SeqCst) + 1;
        if let Some(trace) = &mut self.trace {
            trace.record_raw("in", arrival, raw);
        }
        match message {
            Message::Response(response) => {
                // No pending entry, or its waiter gave up (timed out): a late answer.
                let delivered = match self.pending.remove(&response.request_seq) {
                    Some(pending) => pending.reply.send(Answer { response, arrival }).is_ok(),
                    None => false,
                };
                if !delivered {
                    self.shared.late_responses.fetch_add(1, Ordering::SeqCst);
                }
            }
            Message::Event(event) => self.shared.push_event(EventRecord { arrival, event }),
            Message::Request(request) => self.reverse_request(request, arrival),
        }
    }

    /// Reverse requests are served in every phase (debugpy sends `runInTerminal` before
    /// `initialized`): typed ones go to the caller, anything else is refused at once.
    fn reverse_request(&mut self, request: Request, arrival: u64) {
        let typed = ReverseRequest::from_request(&request);
        let refusal = format!("execkit does not support the {} request", request.command);
        let responder = self
            .command_tx
            .upgrade()
            .map(|tx| Responder::new(request.seq, request.command.clone(), tx));
        let (ReverseRequest::Known(known), Some(responder)) = (typed, responder) else {
            self.write(Message::Response(Responder::failure(&request, &refusal)));
            return;
        };
        let incoming = IncomingReverse { arrival, request: known, responder };
        if let Err(rejected) = self.reverse_tx.try_send(incoming) {
            // Nobody serves reverse requests (or too many wait): answer instead of stalling
            // the adapter, which would otherwise wait forever.
            let incoming = match rejected {
                mpsc::error::TrySendError::Full(i) | mpsc::error::TrySendError::Closed(i) => i,
            };
            incoming.responder.disarm();
            self.write(Message::Response(Responder::failure(&request, &refusal)));
        }
    }

    fn shutdown(mut self) {
        self.shared.closed.send_replace(true);
        self.pending.clear();
        self.writes = None;
        self.shared.notify.notify_waiters();
    }
}

async fn write_loop(
    mut writer: BoxWrite,
    mut queue: mpsc::Receiver<Vec<u8>>,
    failed: oneshot::Sender<()>,
) {
    while let Some(bytes) = queue.recv().await {
        if writer.write_all(&bytes).await.is_err() || writer.flush().await.is_err() {
            let _ = failed.send(());
            return;
        }
    }
    let _ = writer.shutdown().await;
}
