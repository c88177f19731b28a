//! The start handshake: `initialize`, then `launch`/`attach` without waiting for its answer,
//! then configuration once `initialized` arrives, then the first stop.
//!
//! Adapters disagree on the order, and all of these must work:
//! - debugpy answers `launch` only after `configurationDone`, and sends `initialized` late;
//! - lldb-dap 19 answers `launch` before it sends `initialized` (LLVM 21+ switched to the
//!   debugpy order);
//! - delve sends `stopped` before its `configurationDone` response.
//!
//! So the launch answer is never awaited before configuring: the wait for `initialized` races
//! the launch answer, and a successful launch answer only shortens that wait to a grace
//! period (a debugpy child session may never send `initialized`). Early stops stay in the
//! event queue and are found by arrival number.

use std::pin::pin;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;

use crate::client::{Answer, Client};
use crate::error::{HandshakeError, RequestError};
use crate::events::EventRecord;
use crate::wire::{
    Breakpoint, Capabilities, FunctionBreakpoint, KnownEvent, Response, SetBreakpointsResponse,
    SourceBreakpoint,
};

/// After a successful launch/attach answer, how long `initialized` may still take before
/// configuration goes ahead without it.
pub const INITIALIZED_GRACE: Duration = Duration::from_secs(2);

/// After a configuration request failed, how long the launch answer may take to explain why
/// (adapters answer a doomed launch at once).
const LAUNCH_AFTER_FAILURE: Duration = Duration::from_millis(500);

/// How long to look for the first stop after the launch answer.
pub const FIRST_STOP_WAIT: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandshakeRequest {
    Launch,
    Attach,
}

impl HandshakeRequest {
    pub fn command(self) -> &'static str {
        match self {
            HandshakeRequest::Launch => "launch",
            HandshakeRequest::Attach => "attach",
        }
    }
}

/// The breakpoints sent during configuration.
#[derive(Debug, Clone, Default)]
pub struct BreakpointPlan {
    /// Absolute path → its whole list of line breakpoints.
    pub files: Vec<(String, Vec<SourceBreakpoint>)>,
    pub functions: Vec<FunctionBreakpoint>,
    /// Sent when `Some` (an empty list clears the adapter's defaults).
    pub exception_filters: Option<Vec<String>>,
    /// `setInstructionBreakpoints` entries, sent when non-empty.
    pub instructions: Vec<Value>,
    /// `setDataBreakpoints` entries, sent when non-empty.
    pub data: Vec<Value>,
}

#[derive(Debug, Clone)]
pub struct StartConfig {
    /// `adapterID` in `initialize`.
    pub adapter_id: String,
    pub request: HandshakeRequest,
    pub arguments: Value,
    pub breakpoints: BreakpointPlan,
    /// `supportsRunInTerminalRequest` (codelldb stalls on `launch` when it is set).
    pub advertise_run_in_terminal: bool,
    pub deadline: Instant,
    /// Look this long for the first stop after the launch answer (zero: do not look).
    pub stop_wait: Duration,
}

impl StartConfig {
    pub fn new(adapter_id: &str, request: HandshakeRequest, arguments: Value) -> StartConfig {
        StartConfig {
            adapter_id: adapter_id.to_string(),
            request,
            arguments,
            breakpoints: BreakpointPlan::default(),
            advertise_run_in_terminal: true,
            deadline: Instant::now() + Duration::from_secs(30),
            stop_wait: FIRST_STOP_WAIT,
        }
    }
}

/// Arrival numbers of the handshake's milestones, in the order the adapter produced them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HandshakeOrder {
    pub launch_sent_after: u64,
    pub initialized: Option<u64>,
    pub launch_response: u64,
    pub configuration_done_sent_after: Option<u64>,
    pub configuration_done_response: Option<u64>,
    pub first_stop: Option<u64>,
}

#[derive(Debug, Clone)]
pub struct HandshakeOutcome {
    pub capabilities: Capabilities,
    pub launch_response: Response,
    /// `setBreakpoints` answers, per file of the plan.
    pub breakpoints: Vec<(String, Vec<Breakpoint>)>,
    /// The first `stopped`/`exited`/`terminated` after the launch request, taken from the queue.
    pub first_stop: Option<EventRecord>,
    pub order: HandshakeOrder,
}

/// The `initialize` arguments execkit sends.
pub fn initialize_arguments(adapter_id: &str, run_in_terminal: bool) -> Value {
    json!({
        "clientID": "execkit",
        "clientName": "execkit",
        "adapterID": adapter_id,
        "locale": "en-US",
        "linesStartAt1": true,
        "columnsStartAt1": true,
        "pathFormat": "path",
        "supportsVariableType": true,
        "supportsVariablePaging": true,
        "supportsMemoryReferences": true,
        "supportsInvalidatedEvent": true,
        "supportsStartDebuggingRequest": true,
        "supportsRunInTerminalRequest": run_in_terminal,
    })
}

/// Runs the whole handshake. Reverse requests that come meanwhile (debugpy's
/// `runInTerminal`) must be served by another task from the client's [`crate::ReverseRequests`].
pub async fn start(
    client: &Client,
    config: &StartConfig,
) -> Result<HandshakeOutcome, HandshakeError> {
    let deadline = config.deadline;
    let init_args = initialize_arguments(&config.adapter_id, config.advertise_run_in_terminal);
    let capabilities: Capabilities = client.call("initialize", Some(init_args), deadline).await?;
    let command = config.request.command();
    let launch = client.send(command, Some(config.arguments.clone())).await?;
    let mut order = HandshakeOrder { launch_sent_after: launch.sent_after, ..Default::default() };
    let mut launch_fut = pin!(launch.wait(deadline));
    let (initialized, early_answer) = await_initialized(client, config, &mut launch_fut).await?;
    order.initialized = initialized.as_ref().map(|r| r.arrival);
    let breakpoints = configure(client, &capabilities, &config.breakpoints, deadline).await;
    let breakpoints = match breakpoints {
        Ok(breakpoints) => breakpoints,
        Err(err) => return Err(launch_error_first(early_answer, launch_fut, config, err).await),
    };
    let done = configuration_done(client, &capabilities, deadline, &mut order).await;
    let answer = match (early_answer, &done) {
        (Some(answer), _) => answer,
        (None, Ok(())) => launch_fut.await?,
        // configurationDone failed: the launch answer, if it comes at once, says more.
        (None, Err(err)) => match tokio::time::timeout(LAUNCH_AFTER_FAILURE, launch_fut).await {
            Ok(Ok(answer)) => answer,
            _ => return Err(err.clone().into()),
        },
    };
    order.launch_response = answer.arrival;
    let launch_response = launch_result(answer, config)?;
    done?;
    let first_stop = first_stop(client, config, order.launch_sent_after).await?;
    order.first_stop = first_stop.as_ref().map(|r| r.arrival);
    Ok(HandshakeOutcome { capabilities, launch_response, breakpoints, first_stop, order })
}

/// Waits for `initialized`, racing the launch answer: a failed answer ends the start, a
/// successful one leaves [`INITIALIZED_GRACE`] for `initialized` to follow.
async fn await_initialized(
    client: &Client,
    config: &StartConfig,
    launch: &mut std::pin::Pin<&mut impl Future<Output = Result<Answer, RequestError>>>,
) -> Result<(Option<EventRecord>, Option<Answer>), HandshakeError> {
    let is_initialized = |r: &EventRecord| matches!(r.known(), Some(KnownEvent::Initialized));
    let mut answer: Option<Answer> = None;
    let mut wait_until = config.deadline;
    let started = Instant::now();
    loop {
        tokio::select! {
            // At the shared deadline, report the missing `initialized`, not the launch timeout.
            biased;
            event = client.wait_event(is_initialized, wait_until) => {
                return match (event?, answer) {
                    (Some(event), answer) => Ok((Some(event), answer)),
                    (None, Some(answer)) => Ok((None, Some(answer))),
                    (None, None) => Err(HandshakeError::NoInitialized {
                        adapter: client.adapter().to_string(),
                        ms: started.elapsed().as_millis(),
                    }),
                };
            }
            launched = launch.as_mut(), if answer.is_none() => {
                let launched = launched?;
                if !launched.response.success {
                    return Err(launch_failed(&launched.response, config));
                }
                wait_until = config.deadline.min(Instant::now() + INITIALIZED_GRACE);
                answer = Some(launched);
            }
        }
    }
}

fn launch_failed(response: &Response, config: &StartConfig) -> HandshakeError {
    HandshakeError::LaunchFailed {
        attach: config.request == HandshakeRequest::Attach,
        message: response.error_text(),
    }
}

fn launch_result(answer: Answer, config: &StartConfig) -> Result<Response, HandshakeError> {
    if answer.response.success {
        Ok(answer.response)
    } else {
        Err(launch_failed(&answer.response, config))
    }
}

/// A configuration request failed: when the launch answer also failed, its message wins
/// (it says why, e.g. "program not found"); otherwise the configuration error stands.
async fn launch_error_first(
    early: Option<Answer>,
    launch: std::pin::Pin<&mut impl Future<Output = Result<Answer, RequestError>>>,
    config: &StartConfig,
    err: RequestError,
) -> HandshakeError {
    let answer = match early {
        Some(answer) => Some(answer),
        None => tokio::time::timeout(LAUNCH_AFTER_FAILURE, launch).await.ok().and_then(Result::ok),
    };
    match answer {
        Some(answer) if !answer.response.success => launch_failed(&answer.response, config),
        _ => err.into(),
    }
}

/// Sends the breakpoint plan: every request first, then every answer, so the round trips
/// overlap.
async fn configure(
    client: &Client,
    capabilities: &Capabilities,
    plan: &BreakpointPlan,
    deadline: Instant,
) -> Result<Vec<(String, Vec<Breakpoint>)>, RequestError> {
    let mut file_requests = Vec::new();
    for (path, lines) in &plan.files {
        let args = json!({"source": {"path": path}, "breakpoints": lines});
        file_requests.push((path.clone(), client.send("setBreakpoints", Some(args)).await?));
    }
    let mut other = Vec::new();
    if !plan.functions.is_empty() && capabilities.flag("supportsFunctionBreakpoints") {
        let args = json!({"breakpoints": plan.functions});
        other.push(client.send("setFunctionBreakpoints", Some(args)).await?);
    }
    if let Some(filters) = &plan.exception_filters {
        let args = json!({"filters": filters});
        other.push(client.send("setExceptionBreakpoints", Some(args)).await?);
    }
    if !plan.instructions.is_empty() {
        let args = json!({"breakpoints": plan.instructions});
        other.push(client.send("setInstructionBreakpoints", Some(args)).await?);
    }
    if !plan.data.is_empty() {
        let args = json!({"breakpoints": plan.data});
        other.push(client.send("setDataBreakpoints", Some(args)).await?);
    }
    let mut results = Vec::new();
    for (path, pending) in file_requests {
        let response = pending.wait(deadline).await?.into_result()?;
        let body: SetBreakpointsResponse =
            serde_json::from_value(response.body.unwrap_or(Value::Null)).unwrap_or_default();
        results.push((path, body.breakpoints));
    }
    for pending in other {
        pending.wait(deadline).await?.into_result()?;
    }
    Ok(results)
}

async fn configuration_done(
    client: &Client,
    capabilities: &Capabilities,
    deadline: Instant,
    order: &mut HandshakeOrder,
) -> Result<(), RequestError> {
    if !capabilities.flag("supportsConfigurationDoneRequest") {
        return Ok(());
    }
    let pending = client.send("configurationDone", None).await?;
    order.configuration_done_sent_after = Some(pending.sent_after);
    let answer = pending.wait(deadline).await?;
    order.configuration_done_response = Some(answer.arrival);
    answer.into_result().map(drop)
}

async fn first_stop(
    client: &Client,
    config: &StartConfig,
    after: u64,
) -> Result<Option<EventRecord>, HandshakeError> {
    if config.stop_wait.is_zero() {
        return Ok(None);
    }
    let until = config.deadline.min(Instant::now() + config.stop_wait);
    let found = client.wait_event(|r| r.arrival > after && r.is_stop_or_end(), until).await?;
    Ok(found)
}
