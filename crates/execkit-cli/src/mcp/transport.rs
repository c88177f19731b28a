//! The stdio transport in front of the SDK's service loop.
//!
//! A reader task frames stdin ([`LineReader`]), answers what is not a servable message itself
//! ([`classify`]) and forwards the rest. It also keeps the ids of the requests being served,
//! so a second request with an id still in flight is refused instead of silently replacing
//! the first. Every line written to stdout, replies of the SDK and of the reader alike, goes
//! through one lock so they never interleave.

use std::collections::HashSet;
use std::io;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::RoleServer;
use rmcp::model::ServerJsonRpcMessage;
use rmcp::model::{ClientJsonRpcMessage, ClientNotification, JsonRpcMessage, RequestId};
use rmcp::transport::Transport;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::classify::{self, Incoming};
use super::frame::{Frame, LineReader};

/// Messages read ahead of the service loop; the reader waits when they are not taken.
const READ_AHEAD: usize = 16;

pub struct StdioTransport<W> {
    incoming: mpsc::Receiver<ClientJsonRpcMessage>,
    out: Output<W>,
    reader: JoinHandle<()>,
}

impl<W: AsyncWrite + Send + Unpin + 'static> StdioTransport<W> {
    /// Starts reading `input`; `eof` is cancelled when it ends or fails.
    pub fn start<R>(input: R, output: W, eof: CancellationToken) -> Self
    where
        R: AsyncRead + Send + Unpin + 'static,
    {
        let out = Output {
            writer: Arc::new(tokio::sync::Mutex::new(Some(output))),
            in_flight: Arc::default(),
        };
        let (tx, incoming) = mpsc::channel(READ_AHEAD);
        let lines = LineReader::new(BufReader::new(input));
        let reader = tokio::spawn(read_loop(lines, tx, out.clone(), eof));
        StdioTransport { incoming, out, reader }
    }
}

impl<W> Drop for StdioTransport<W> {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

async fn read_loop<R, W>(
    mut lines: LineReader<BufReader<R>>,
    tx: mpsc::Sender<ClientJsonRpcMessage>,
    out: Output<W>,
    eof: CancellationToken,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    loop {
        let reply = match lines.next().await {
            Frame::End => break,
            Frame::Oversized(prefix) => Some(classify::oversized_reply(&prefix)),
            Frame::Line(line) => match classify::classify(&line) {
                Incoming::Ignore => None,
                Incoming::Reply(reply) => Some(reply),
                Incoming::Message(message) => match out.admit(*message) {
                    Ok(message) => {
                        if tx.send(message).await.is_err() {
                            break; // the service loop is gone
                        }
                        None
                    }
                    Err(duplicate) => Some(classify::duplicate_reply(&duplicate)),
                },
            },
        };
        if let Some(reply) = reply
            && out.write_line(reply.to_string().into_bytes()).await.is_err()
        {
            break;
        }
    }
    eof.cancel();
}

/// stdout, shared by the SDK's sends and the reader's own replies.
struct Output<W> {
    writer: Arc<tokio::sync::Mutex<Option<W>>>,
    /// Ids of client requests forwarded and not yet answered.
    in_flight: Arc<Mutex<HashSet<RequestId>>>,
}

impl<W> Clone for Output<W> {
    fn clone(&self) -> Self {
        Output { writer: self.writer.clone(), in_flight: self.in_flight.clone() }
    }
}

impl<W: AsyncWrite + Unpin> Output<W> {
    async fn write_line(&self, mut line: Vec<u8>) -> io::Result<()> {
        line.push(b'\n');
        let mut writer = self.writer.lock().await;
        let writer = writer.as_mut().ok_or_else(|| {
            io::Error::new(io::ErrorKind::NotConnected, "the transport is closed")
        })?;
        writer.write_all(&line).await?;
        writer.flush().await
    }
}

impl<W> Output<W> {
    /// Records a request as in flight, or returns its id when one with that id already is. A
    /// cancelled request gets no response, so its id is free again at the cancellation.
    fn admit(&self, message: ClientJsonRpcMessage) -> Result<ClientJsonRpcMessage, RequestId> {
        let mut in_flight = self.in_flight.lock().unwrap_or_else(PoisonError::into_inner);
        match &message {
            JsonRpcMessage::Request(request) if !in_flight.insert(request.id.clone()) => {
                return Err(request.id.clone());
            }
            JsonRpcMessage::Notification(notification) => {
                if let ClientNotification::CancelledNotification(cancelled) =
                    &notification.notification
                    && let Some(id) = &cancelled.params.request_id
                {
                    in_flight.remove(id);
                }
            }
            _ => {}
        }
        Ok(message)
    }

    fn answered(&self, message: &ServerJsonRpcMessage) {
        let id = match message {
            JsonRpcMessage::Response(response) => Some(&response.id),
            JsonRpcMessage::Error(error) => error.id.as_ref(),
            _ => None,
        };
        if let Some(id) = id {
            self.in_flight.lock().unwrap_or_else(PoisonError::into_inner).remove(id);
        }
    }
}

impl<W: AsyncWrite + Send + Unpin + 'static> Transport<RoleServer> for StdioTransport<W> {
    type Error = io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let out = self.out.clone();
        async move {
            // Freed before the write: a client may reuse the id as soon as it reads the answer.
            out.answered(&item);
            let line = serde_json::to_vec(&item)?;
            out.write_line(line).await
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<ClientJsonRpcMessage>> + Send {
        self.incoming.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.out.writer.lock().await.take();
        Ok(())
    }
}
