//! Reverse requests (adapter → client) handed to the caller, and the one-shot answer to each.

use serde_json::Value;
use tokio::sync::mpsc;

use crate::owner::Command;
use crate::wire::{KnownReverseRequest, Request, Response};

/// A reverse request the caller must answer (`runInTerminal`, `startDebugging`). Any other
/// command is refused by the connection itself and never reaches the caller.
#[derive(Debug)]
pub struct IncomingReverse {
    pub arrival: u64,
    pub request: KnownReverseRequest,
    pub responder: Responder,
}

/// Answers one reverse request. Dropping it unanswered sends a failure, so the adapter is
/// never left waiting.
#[derive(Debug)]
pub struct Responder {
    request_seq: i64,
    command: String,
    commands: Option<mpsc::Sender<Command>>,
}

impl Responder {
    pub(crate) fn new(request_seq: i64, command: String, commands: mpsc::Sender<Command>) -> Self {
        Responder { request_seq, command, commands: Some(commands) }
    }

    pub(crate) fn failure(request: &Request, message: &str) -> Response {
        Response {
            seq: 0,
            request_seq: request.seq,
            success: false,
            command: request.command.clone(),
            message: Some(message.to_string()),
            body: None,
        }
    }

    /// Forgets the request without answering (the owner answers it itself).
    pub(crate) fn disarm(mut self) {
        self.commands = None;
    }

    pub fn command(&self) -> &str {
        &self.command
    }

    /// `success:true` with this body (`{processId}` for `runInTerminal`).
    pub fn succeed(mut self, body: Option<Value>) {
        self.send(true, None, body);
    }

    /// `success:false` with this message.
    pub fn fail(mut self, message: &str) {
        self.send(false, Some(message.to_string()), None);
    }

    fn send(&mut self, success: bool, message: Option<String>, body: Option<Value>) {
        let Some(commands) = self.commands.take() else { return };
        let response = Response {
            seq: 0,
            request_seq: self.request_seq,
            success,
            command: self.command.clone(),
            message,
            body,
        };
        // The connection may be gone already; then nobody is waiting for the answer.
        let _ = commands.try_send(Command::Respond(response));
    }
}

impl Drop for Responder {
    fn drop(&mut self) {
        let message = format!("execkit did not answer the {} request", self.command);
        self.send(false, Some(message), None);
    }
}

/// Where reverse requests arrive; at most this many wait unanswered before the owner refuses
/// new ones (a caller that never reads must not stall the adapter).
pub const REVERSE_QUEUE: usize = 16;

/// The receiving end the caller serves.
pub type ReverseRequests = mpsc::Receiver<IncomingReverse>;
