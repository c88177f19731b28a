//! The MCP request handler: tools from the Toolkit, artifacts as resources.

use std::borrow::Cow;
use std::sync::Arc;

use execkit::{CallContext, Progress, ProgressFn, ToolResult, ToolSpec, Toolkit};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, JsonObject,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ProgressToken, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, Peer, RoleServer, ServerHandler};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::owned::OwnedArtifacts;
use super::resources;

const INSTRUCTIONS: &str = "execkit runs commands for you. Outputs too long to show inline are \
    kept whole as artifact://<id> resources: read them with resources/read, optionally with a \
    query (?lines=a-b, ?head=n, ?tail=n, ?grep=<regex>&context=n&max=n).";

/// Serves one MCP session. Cheap to clone: the Toolkit is shared.
#[derive(Clone)]
pub struct ExecServer {
    toolkit: Toolkit,
    /// What `resources/list` shows: artifacts this server's calls made.
    owned: OwnedArtifacts,
    /// The tool list (names and descriptions) the client was last told about.
    listed: Arc<std::sync::Mutex<Vec<(String, String)>>>,
}

impl ExecServer {
    pub fn new(toolkit: Toolkit) -> Self {
        let listed = Arc::new(std::sync::Mutex::new(listing(&toolkit)));
        ExecServer { toolkit, owned: OwnedArtifacts::default(), listed }
    }

    /// Sends `notifications/tools/list_changed` when the tool list differs from what the
    /// client last saw: ssh host files are re-read at each call, so hosts come and go (and a
    /// host's description gains its OS and shell once probed).
    async fn announce_tool_changes(&self, peer: &Peer<RoleServer>) {
        let now = listing(&self.toolkit);
        let changed = {
            let mut listed = self.listed.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let changed = *listed != now;
            *listed = now;
            changed
        };
        if changed {
            let _ = peer.notify_tool_list_changed().await;
        }
    }
}

fn listing(toolkit: &Toolkit) -> Vec<(String, String)> {
    toolkit.tool_descriptions()
}

impl ServerHandler for ExecServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("execkit", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let specs = self.toolkit.tools();
        let now = specs.iter().map(|t| (t.name.clone(), t.description.clone())).collect();
        *self.listed.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = now;
        let tools = specs.into_iter().map(mcp_tool).collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = Value::Object(request.arguments.unwrap_or_default());
        let forwarder = context
            .meta
            .get_progress_token()
            .map(|token| ProgressForwarder::start(context.peer.clone(), token));
        // A `notifications/cancelled` cancels `context.ct`: the Toolkit kills what the call
        // started, and the SDK drops the response, as the protocol asks (B30).
        let ctx = CallContext {
            progress: forwarder.as_ref().map(ProgressForwarder::callback),
            cancel: context.ct.clone(),
        };
        let approver = super::elicit::approver(&context.peer);
        let result = self.toolkit.call_with_approver(&request.name, args, ctx, approver).await;
        self.owned.record(&result);
        if let Some(forwarder) = forwarder {
            forwarder.finish().await;
        }
        self.announce_tool_changes(&context.peer).await;
        to_call_tool_result(&result).map(CallToolResponse::from)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        resources::list(&self.toolkit, self.owned.snapshot(), cursor).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        resources::read(&self.toolkit, &request.uri).await.map(ReadResourceResponse::from)
    }
}

fn mcp_tool(spec: ToolSpec) -> Tool {
    let schema: JsonObject = match spec.input_schema {
        Value::Object(map) => map,
        // Every execkit tool takes an object; keep the listing valid if a schema is not one.
        _ => serde_json::from_value(serde_json::json!({"type": "object"})).unwrap_or_default(),
    };
    Tool::new(Cow::Owned(spec.name), Cow::Owned(spec.description), Arc::new(schema))
}

/// The ToolResult already has the wire shape of a CallToolResult; this is a re-typing.
fn to_call_tool_result(result: &ToolResult) -> Result<CallToolResult, McpError> {
    serde_json::to_value(result).and_then(serde_json::from_value).map_err(|err| {
        McpError::internal_error(format!("failed to encode the tool result: {err}"), None)
    })
}

/// Events queued for a slow client. The Toolkit emits at most one every 100 ms, so a few
/// cover any hiccup; when the queue is full the newest event is dropped (progress is lossy).
const PROGRESS_QUEUE: usize = 8;

/// Forwards one call's progress events as MCP progress notifications, in order, and stops
/// before the result goes out (nothing is sent after the result, B36).
struct ProgressForwarder {
    tx: mpsc::Sender<Progress>,
    done: CancellationToken,
    task: JoinHandle<()>,
}

impl ProgressForwarder {
    fn start(peer: Peer<RoleServer>, token: ProgressToken) -> Self {
        let (tx, mut rx) = mpsc::channel::<Progress>(PROGRESS_QUEUE);
        let done = CancellationToken::new();
        let stop = done.clone();
        let task = tokio::spawn(async move {
            loop {
                let progress = tokio::select! {
                    biased;
                    () = stop.cancelled() => break,
                    progress = rx.recv() => match progress {
                        Some(progress) => progress,
                        None => break,
                    },
                };
                let mut param = ProgressNotificationParam::new(token.clone(), progress.progress)
                    .with_message(progress.message);
                if let Some(total) = progress.total {
                    param = param.with_total(total);
                }
                if peer.notify_progress(param).await.is_err() {
                    break; // the session is gone
                }
            }
        });
        ProgressForwarder { tx, done, task }
    }

    fn callback(&self) -> ProgressFn {
        let tx = self.tx.clone();
        Arc::new(move |progress| {
            let _ = tx.try_send(progress);
        })
    }

    async fn finish(self) {
        self.done.cancel();
        let _ = self.task.await;
    }
}
