//! The DAP envelope and the typed bodies execkit reads.
//!
//! Every message is `{seq, type, …}`; serde dispatches on `type`, then on `event` or `command`.
//! Events and reverse requests that execkit has no type for (vendor events such as debugpy's
//! `debugpySockets`, or a known event whose body does not match our type) land in an `Other`
//! variant that keeps the raw JSON, so one odd message never fails the parse of the stream.

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::bodies::*;

/// One incoming or outgoing message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Message {
    Request(Request),
    Response(Response),
    Event(Event),
}

/// A request, in either direction: ours to the adapter, or a reverse request from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub seq: i64,
    pub command: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Response {
    pub seq: i64,
    /// The one snake_case key of the protocol.
    #[serde(rename = "request_seq")]
    pub request_seq: i64,
    pub success: bool,
    pub command: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
}

impl Response {
    /// The failure text: the `message`, else `body.error.format` with its `{var}` placeholders
    /// filled from `body.error.variables`.
    pub fn error_text(&self) -> String {
        let error = self.body.as_ref().and_then(|b| b.get("error"));
        let format = error.and_then(|e| e.get("format")).and_then(Value::as_str);
        match (self.message.as_deref(), format) {
            (Some(message), _) if !message.is_empty() => message.to_string(),
            (_, Some(format)) => fill_placeholders(format, error.and_then(|e| e.get("variables"))),
            _ => "(no message)".to_string(),
        }
    }
}

fn fill_placeholders(format: &str, variables: Option<&Value>) -> String {
    let mut text = format.to_string();
    if let Some(Value::Object(vars)) = variables {
        for (name, value) in vars {
            let value = value.as_str().map_or_else(|| value.to_string(), str::to_string);
            text = text.replace(&format!("{{{name}}}"), &value);
        }
    }
    text
}

/// An event: `seq` plus the typed `event`/`body` pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub seq: i64,
    #[serde(flatten)]
    pub kind: EventKind,
}

/// Known events with typed bodies, else the raw name and body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum EventKind {
    Known(KnownEvent),
    Other {
        event: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        body: Option<Value>,
    },
}

impl EventKind {
    /// The event name as it came on the wire.
    pub fn name(&self) -> &str {
        match self {
            EventKind::Known(known) => known.name(),
            EventKind::Other { event, .. } => event,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", content = "body", rename_all = "camelCase")]
pub enum KnownEvent {
    Initialized,
    Stopped(StoppedBody),
    Continued(ContinuedBody),
    Exited(ExitedBody),
    Terminated(Option<TerminatedBody>),
    Output(OutputBody),
    Process(ProcessBody),
    Thread(ThreadBody),
    Invalidated(Option<Value>),
    Module(Value),
    Breakpoint(Value),
    LoadedSource(Value),
    Capabilities(Value),
}

impl KnownEvent {
    pub fn name(&self) -> &'static str {
        match self {
            KnownEvent::Initialized => "initialized",
            KnownEvent::Stopped(_) => "stopped",
            KnownEvent::Continued(_) => "continued",
            KnownEvent::Exited(_) => "exited",
            KnownEvent::Terminated(_) => "terminated",
            KnownEvent::Output(_) => "output",
            KnownEvent::Process(_) => "process",
            KnownEvent::Thread(_) => "thread",
            KnownEvent::Invalidated(_) => "invalidated",
            KnownEvent::Module(_) => "module",
            KnownEvent::Breakpoint(_) => "breakpoint",
            KnownEvent::LoadedSource(_) => "loadedSource",
            KnownEvent::Capabilities(_) => "capabilities",
        }
    }
}

/// A reverse request (adapter → client), typed by `command`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ReverseRequest {
    Known(KnownReverseRequest),
    Other {
        command: String,
        #[serde(default)]
        arguments: Option<Value>,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", content = "arguments", rename_all = "camelCase")]
pub enum KnownReverseRequest {
    RunInTerminal(RunInTerminalArguments),
    StartDebugging(StartDebuggingArguments),
}

impl ReverseRequest {
    /// Types a reverse request from its command and arguments.
    pub fn from_request(request: &Request) -> ReverseRequest {
        let mut object = serde_json::Map::new();
        object.insert("command".into(), Value::String(request.command.clone()));
        if let Some(arguments) = &request.arguments {
            object.insert("arguments".into(), arguments.clone());
        }
        serde_json::from_value(Value::Object(object)).unwrap_or_else(|_| ReverseRequest::Other {
            command: request.command.clone(),
            arguments: request.arguments.clone(),
        })
    }

    pub fn command(&self) -> &str {
        match self {
            ReverseRequest::Known(known) => known.command(),
            ReverseRequest::Other { command, .. } => command,
        }
    }
}

impl KnownReverseRequest {
    pub fn command(&self) -> &'static str {
        match self {
            KnownReverseRequest::RunInTerminal(_) => "runInTerminal",
            KnownReverseRequest::StartDebugging(_) => "startDebugging",
        }
    }
}

/// Why an incoming body was dropped: not UTF-8 JSON, not an object, or no known `type`.
#[derive(Debug, thiserror::Error)]
#[error("dropped DAP message: {0}")]
pub struct DecodeError(String);

/// Parses one framed body.
pub fn decode(body: &[u8]) -> Result<Message, DecodeError> {
    let value: Value = serde_json::from_slice(body).map_err(|e| DecodeError(e.to_string()))?;
    match value.get("type") {
        _ if !value.is_object() => Err(DecodeError("the body is not a JSON object".into())),
        None => Err(DecodeError("the message has no \"type\"".into())),
        Some(_) => serde_json::from_value(value).map_err(|e| DecodeError(e.to_string())),
    }
}

/// Frames one outgoing message: `Content-Length: <utf-8 bytes>\r\n\r\n<json>`.
pub fn encode(message: &Message) -> Vec<u8> {
    // Serialising these plain structs cannot fail: every key is a string.
    let json = serde_json::to_vec(message).unwrap_or_default();
    let mut out = format!("Content-Length: {}\r\n\r\n", json.len()).into_bytes();
    out.extend_from_slice(&json);
    out
}

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;
