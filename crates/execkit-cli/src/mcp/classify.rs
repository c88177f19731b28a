//! Deciding what one stdin line is: a message for the MCP service, or a JSON-RPC error the
//! transport answers itself (rmcp drops unparsable lines silently and answers a known method
//! with malformed params as "Method not found").

use rmcp::model::{
    CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, ErrorCode, InitializeRequestParams,
    JsonRpcMessage, ReadResourceRequestParams, RequestId,
};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::frame::MAX_LINE;
use super::scan;

/// What to do with one line.
#[derive(Debug)]
pub enum Incoming {
    Message(Box<ClientJsonRpcMessage>),
    /// An error reply to write, the line itself is dropped.
    Reply(Value),
    /// Blank lines and malformed notifications (a notification is never answered).
    Ignore,
}

/// Client requests whose params the SDK parses; a request for one of these that does not parse
/// has bad params, not an unknown method.
const KNOWN_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "resources/templates/list",
    "tools/call",
    "tools/list",
];

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

pub fn classify(line: &[u8]) -> Incoming {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(UTF8_BOM).unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Incoming::Ignore;
    }
    match serde_json::from_slice::<ClientJsonRpcMessage>(line) {
        Ok(JsonRpcMessage::Request(request)) => match &request.request {
            ClientRequest::CustomRequest(custom) if KNOWN_METHODS.contains(&&*custom.method) => {
                let message = invalid_params_message(&custom.method, custom.params.clone());
                Incoming::Reply(error_reply(Some(&request.id), ErrorCode::INVALID_PARAMS, message))
            }
            _ => Incoming::Message(Box::new(JsonRpcMessage::Request(request))),
        },
        Ok(message) => Incoming::Message(Box::new(message)),
        Err(shape_error) => not_a_message(line, &shape_error),
    }
}

/// The answer to a line that is not a JSON-RPC message the SDK takes.
fn not_a_message(line: &[u8], shape_error: &serde_json::Error) -> Incoming {
    let value = match serde_json::from_slice::<Value>(line) {
        Ok(value) => value,
        Err(err) => {
            let message = format!("Parse error: {err}");
            return Incoming::Reply(error_reply(None, ErrorCode::PARSE_ERROR, message));
        }
    };
    let reason = match &value {
        Value::Object(object) if object.contains_key("method") && !object.contains_key("id") => {
            return Incoming::Ignore;
        }
        Value::Object(_) => shape_error.to_string(),
        Value::Array(_) => "batches are not supported; send one message per line".to_string(),
        _ => "expected a JSON-RPC 2.0 object".to_string(),
    };
    let id = value.get("id").and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok());
    let message = format!("Invalid Request: {reason}");
    Incoming::Reply(error_reply(id.as_ref(), ErrorCode::INVALID_REQUEST, message))
}

fn invalid_params_message(method: &str, params: Option<Value>) -> String {
    fn problem<T: DeserializeOwned>(params: Value) -> Option<String> {
        serde_json::from_value::<T>(params).err().map(|err| err.to_string())
    }
    let params = params.unwrap_or(Value::Null);
    let detail = match method {
        "tools/call" => problem::<CallToolRequestParams>(params),
        "resources/read" => problem::<ReadResourceRequestParams>(params),
        "initialize" => problem::<InitializeRequestParams>(params),
        _ => None,
    };
    match detail {
        Some(detail) => format!("Invalid params for {method}: {detail}"),
        None => format!("Invalid params for {method}"),
    }
}

/// The error for a line over [`MAX_LINE`], given the start of it.
pub fn oversized_reply(prefix: &[u8]) -> Value {
    let id = scan::top_level_id(prefix);
    let message = format!(
        "Invalid Request: the message is longer than the {} MiB limit for one line and was \
         discarded",
        MAX_LINE / (1024 * 1024)
    );
    error_reply(id.as_ref(), ErrorCode::INVALID_REQUEST, message)
}

/// The error for a request whose id is still being served.
pub fn duplicate_reply(id: &RequestId) -> Value {
    let message = format!("duplicate request id {id}: a request with this id is still running");
    error_reply(Some(id), ErrorCode::INVALID_REQUEST, message)
}

/// A JSON-RPC error response; `id` is `null` when the request's id could not be read.
fn error_reply(id: Option<&RequestId>, code: ErrorCode, message: String) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code.0, "message": message},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(line: &str) -> Value {
        match classify(line.as_bytes()) {
            Incoming::Reply(reply) => reply,
            other => panic!("expected a reply to {line}, got {other:?}"),
        }
    }

    #[test]
    fn unparsable_lines_are_parse_errors_with_a_null_id() {
        let deep = "[".repeat(100_000);
        for line in ["not json", r#"{"jsonrpc":"2.0","id":1,"#, deep.as_str()] {
            let reply = answer(line);
            assert_eq!(reply["error"]["code"], -32700, "{line:.40}: {reply}");
            assert!(reply["id"].is_null(), "{reply}");
        }
        let Incoming::Reply(reply) =
            classify(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}")
        else {
            panic!("invalid UTF-8 must be answered")
        };
        assert_eq!(reply["error"]["code"], -32700, "{reply}");
    }

    #[test]
    fn bad_params_of_known_methods_are_invalid_params() {
        let reply = answer(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{}}"#);
        assert_eq!(reply["error"]["code"], -32602, "{reply}");
        assert_eq!(reply["id"], 3);
        assert!(reply["error"]["message"].as_str().unwrap().contains("`name`"), "{reply}");
        let reply = answer(
            r#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"bash","arguments":"ls"}}"#,
        );
        assert_eq!(reply["error"]["code"], -32602, "{reply}");
        assert_eq!(reply["id"], "x");
        let reply = answer(r#"{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{}}"#);
        assert_eq!(reply["error"]["code"], -32602, "{reply}");
    }

    #[test]
    fn well_formed_lines_pass_and_blank_lines_and_notifications_are_ignored() {
        let line = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bash"}}"#;
        assert!(matches!(classify(line.as_bytes()), Incoming::Message(_)));
        assert!(matches!(classify(b"  \r"), Incoming::Ignore));
        let notification = r#"{"jsonrpc":"2.0","method":"tools/call","params":3}"#;
        assert!(!matches!(classify(notification.as_bytes()), Incoming::Reply(_)));
        let reply = answer(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
        assert_eq!(reply["error"]["code"], -32600, "{reply}");
    }
}
