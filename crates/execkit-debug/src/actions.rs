//! The dispatcher of actions, and the actions that need no adapter round trip of their own:
//! breakpoints, `output`, `sessions`, `terminate`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use execkit_dap::wire::SetBreakpointsResponse;
use execkit_protocol::debug::DebugAction;
use serde_json::{Value, json};

use crate::breakpoints::LineBreakpoint;
use crate::render::{self, Reply, relative};
use crate::runner::Call;
use crate::session::Session;
use crate::{control, inspect, ring, start, terminate, tree, watch};

/// Actions that work without a session.
fn needs_session(action: DebugAction) -> bool {
    use DebugAction as A;
    !matches!(
        action,
        A::Launch
            | A::Attach
            | A::Sessions
            | A::Terminate
            | A::Output
            | A::SetBreakpoint
            | A::RemoveBreakpoint
            | A::SetExceptionBreakpoints
            | A::SetInstructionBreakpoint
            | A::RemoveInstructionBreakpoint
            | A::SetDataBreakpoint
            | A::RemoveDataBreakpoint
    )
}

pub(crate) async fn run(call: &mut Call<'_>) -> Reply {
    use DebugAction as A;
    let action = call.request.action;
    dispose_ended(call);
    if needs_session(action) && call.state.session.is_none() {
        return no_session(call);
    }
    if let Some(session) = &call.state.session {
        session.touch();
    }
    let reply = match action {
        A::Launch => start::launch(call).await,
        A::Attach => start::attach(call).await,
        A::Terminate => terminate(call).await,
        A::Sessions => sessions(call),
        A::SetBreakpoint => set_breakpoint(call).await,
        A::RemoveBreakpoint => remove_breakpoint(call).await,
        A::SetExceptionBreakpoints => exception_breakpoints(call).await,
        A::Continue | A::StepOver | A::StepIn | A::StepOut => control::resume(call).await,
        A::Pause => control::pause(call).await,
        A::StackTrace => inspect::stack_trace(call).await,
        A::Threads => inspect::threads(call).await,
        A::Scopes => inspect::scopes(call).await,
        A::Variables => inspect::variables(call).await,
        A::Evaluate => inspect::evaluate(call).await,
        A::Modules | A::LoadedSources | A::Disassemble | A::ReadMemory | A::WriteMemory => {
            inspect::simple(call).await
        }
        A::Output => output(call),
        A::CustomRequest => inspect::custom_request(call).await,
        A::DataBreakpointInfo => watch::data_info(call).await,
        A::SetInstructionBreakpoint
        | A::RemoveInstructionBreakpoint
        | A::SetDataBreakpoint
        | A::RemoveDataBreakpoint => watch::set_or_remove(call).await,
    };
    if let Some(session) = &call.state.session {
        session.touch();
    }
    reply
}

/// A session that ended on its own (terminated, dead) is disposed of; its reason is kept.
fn dispose_ended(call: &mut Call<'_>) {
    let ended = call.state.session.as_ref().is_some_and(|s| !s.status().is_live());
    if !ended || call.request.action == DebugAction::Output {
        return;
    }
    if let Some(session) = call.state.session.take() {
        let reason = session.with(|s| s.ended.clone()).unwrap_or_else(|| "it ended".to_string());
        session.stop_tasks();
        call.state.last_ended = Some((session.id.clone(), reason));
        // The adapter may still be exiting; the rest of the sequence runs in the background.
        tokio::spawn(async move {
            terminate::sequence(&session, None).await;
        });
    }
}

fn no_session(call: &Call<'_>) -> Reply {
    let mut text = "No debug session. Start one with action \"launch\" or \"attach\".".to_string();
    if let Some((id, reason)) = &call.state.last_ended {
        text.push_str(&format!(" The last session ({id}) ended: {reason}."));
    }
    Reply::error(text)
}

async fn terminate(call: &mut Call<'_>) -> Reply {
    let Some(session) = call.state.session.take() else {
        return Reply::text("No debug session to terminate.").field("ended", json!(null));
    };
    let ended = terminate::sequence(&session, call.request.params.terminate_debuggee).await;
    let code = ended.exit_code.map(|c| format!("; debuggee exit code {c}")).unwrap_or_default();
    let summary = render::summary(&session);
    Reply::text(format!("Terminated {} ({}){code}.", session.id, session.def.name))
        .field("ended", json!({"id": session.id, "exit_code": ended.exit_code}))
        .field("session", summary)
}

/// One line per session of the tree, the target marked `*`, then the breakpoint set.
fn sessions(call: &mut Call<'_>) -> Reply {
    let mut lines = Vec::new();
    let mut list = Vec::new();
    let target = call.state.target();
    for session in call.state.session.iter().flat_map(tree::members) {
        let stop = session.with(|s| s.stop.clone());
        let place = stop
            .map(|st| {
                format!(" {}", render::stop_line(&st, &session.cwd).replacen("Stopped", "at", 1))
            })
            .unwrap_or_default();
        let mark = if target.as_ref().is_some_and(|t| t.id == session.id) { "* " } else { "" };
        let parent =
            session.parent_id.as_ref().map(|p| format!(", child of {p}")).unwrap_or_default();
        lines.push(format!(
            "{mark}{} ({}{parent}): {}{place}",
            session.id,
            session.def.name,
            session.status().as_str()
        ));
        list.push(render::summary(&session));
    }
    if lines.is_empty() {
        lines.push("No debug session.".to_string());
    }
    let bps = breakpoint_list(call);
    for bp in &bps {
        lines.push(format!("Breakpoint {}", bp["text"].as_str().unwrap_or("")));
    }
    let last =
        call.state.last_ended.as_ref().map(|(id, reason)| json!({"id": id, "reason": reason}));
    Reply { lines, ..Reply::default() }
        .field("sessions", list)
        .field("breakpoints", bps)
        .field("last_ended", json!(last))
}

fn base(call: &Call<'_>) -> PathBuf {
    let base = call.inner.deps.cwd.clone();
    match &call.request.params.cwd {
        Some(cwd) => start::absolute(cwd, &base, call.inner.deps.lookup.get("HOME")),
        None => call.state.session.as_ref().map_or(base, |s| s.cwd.clone()),
    }
}

fn shown_cwd(call: &Call<'_>) -> PathBuf {
    call.state.session.as_ref().map_or_else(|| call.inner.deps.cwd.clone(), |s| s.cwd.clone())
}

/// Every line breakpoint: `{file, line, verified, message}` plus its one-line text.
fn breakpoint_list(call: &Call<'_>) -> Vec<Value> {
    let cwd = shown_cwd(call);
    let mut out = Vec::new();
    for (file, list) in &call.state.breakpoints.files {
        for bp in list {
            let line = bp.actual_line.unwrap_or(bp.line);
            let text = bp_text(&relative(&file.display().to_string(), &cwd), bp);
            out.push(json!({"file": file, "line": line, "verified": bp.verified, "message": bp.message, "text": text}));
        }
    }
    for function in &call.state.breakpoints.functions {
        out.push(json!({"function": function.name, "text": format!("in {}", function.name)}));
    }
    out
}

fn bp_text(file: &str, bp: &LineBreakpoint) -> String {
    let line = bp.actual_line.unwrap_or(bp.line);
    let state = if bp.verified {
        "verified".to_string()
    } else {
        format!("pending: {}", bp.message.as_deref().unwrap_or("not yet bound"))
    };
    let moved = bp.actual_line.map(|_| format!("; requested line {}", bp.line)).unwrap_or_default();
    format!("at {file}:{line} ({state}{moved})")
}

/// The live sessions of the tree, root first: breakpoints go to every one.
fn live_sessions(call: &Call<'_>) -> Vec<Arc<Session>> {
    let all = call.state.session.iter().flat_map(tree::members);
    all.filter(|s| s.status().is_live()).collect()
}

/// How long a child session may take to answer a breakpoint update: a child that is ending
/// must not hold the call until its deadline.
const CHILD_SYNC: std::time::Duration = std::time::Duration::from_secs(5);

/// Sends `request` to every live session; the root's answer is returned (none without a
/// live root). A child that fails is skipped: it may be ending.
async fn send_to_tree(
    call: &Call<'_>,
    command: &str,
    args: Value,
) -> Result<Option<execkit_dap::wire::Response>, Reply> {
    let mut root_answer = None;
    for session in live_sessions(call) {
        let deadline = match session.parent_id {
            Some(_) => call.deadline.min(tokio::time::Instant::now() + CHILD_SYNC),
            None => call.deadline,
        };
        let answer = session.client.request(command, Some(args.clone()), deadline).await;
        match (session.parent_id.is_none(), answer) {
            (true, Ok(response)) => root_answer = Some(response),
            (true, Err(err)) => return Err(Reply::error(err.to_string())),
            (false, _) => {}
        }
    }
    Ok(root_answer)
}

/// Sends `file`'s whole list to every live session and records the root's answer.
async fn sync_file(call: &mut Call<'_>, file: &Path) -> Result<(), Reply> {
    let args = call.state.breakpoints.file_request(file);
    let Some(response) = send_to_tree(call, "setBreakpoints", args).await? else {
        return Ok(());
    };
    let body: SetBreakpointsResponse =
        serde_json::from_value(response.body.unwrap_or(Value::Null)).unwrap_or_default();
    call.state.breakpoints.apply_results(file, &body.breakpoints);
    Ok(())
}

async fn set_breakpoint(call: &mut Call<'_>) -> Reply {
    let p = call.request.params.clone();
    if let Some(session) = &call.state.session {
        let gates = [
            (p.condition.is_some(), "supportsConditionalBreakpoints", "conditional breakpoints"),
            (p.hit_condition.is_some(), "supportsHitConditionalBreakpoints", "hit conditions"),
            (p.log_message.is_some(), "supportsLogPoints", "log points"),
            (p.function.is_some(), "supportsFunctionBreakpoints", "function breakpoints"),
        ];
        for (_, cap, feature) in gates.iter().filter(|g| g.0) {
            if let Some(refused) = inspect::gate(session, cap, feature) {
                return refused;
            }
        }
        if p.log_message.is_some() && session.def.quirks.logpoints_pause {
            return Reply::error(format!(
                "Adapter {} pauses at log points, so log_message is refused.",
                session.def.name
            ));
        }
    }
    if let Some(function) = p.function {
        return set_function_breakpoint(call, function, p.condition, p.hit_condition).await;
    }
    let file = start::absolute(
        p.file.as_deref().unwrap_or(""),
        &base(call),
        call.inner.deps.lookup.get("HOME"),
    );
    let mut bp = LineBreakpoint::new(p.line.unwrap_or(1));
    (bp.condition, bp.hit_condition, bp.log_message) =
        (p.condition, p.hit_condition, p.log_message);
    let line = bp.line;
    call.state.breakpoints.set_line(&file, bp);
    let missing = if file.exists() { "" } else { " (file does not exist locally)" };
    if call.state.session.as_ref().is_none_or(|s| !s.status().is_live()) {
        return Reply::text(format!(
            "Breakpoint recorded; it will be sent when a session starts.{missing}"
        ))
        .field("breakpoints", breakpoint_list(call));
    }
    if let Err(reply) = sync_file(call, &file).await {
        return reply;
    }
    let recorded = call
        .state
        .breakpoints
        .files
        .get(&file)
        .and_then(|l| l.iter().find(|b| b.line == line))
        .cloned();
    let shown = relative(&file.display().to_string(), &shown_cwd(call));
    let text =
        recorded.map(|bp| bp_text(&shown, &bp)).unwrap_or_else(|| format!("at {shown}:{line}"));
    Reply::text(format!("Breakpoint {text}.{missing}")).field("breakpoints", breakpoint_list(call))
}

async fn set_function_breakpoint(
    call: &mut Call<'_>,
    name: String,
    condition: Option<String>,
    hit_condition: Option<String>,
) -> Reply {
    let functions = &mut call.state.breakpoints.functions;
    functions.retain(|f| f.name != name);
    functions.push(execkit_dap::wire::FunctionBreakpoint {
        name: name.clone(),
        condition,
        hit_condition,
    });
    if call.state.session.as_ref().is_none_or(|s| !s.status().is_live()) {
        return Reply::text("Breakpoint recorded; it will be sent when a session starts.");
    }
    let args = json!({"breakpoints": call.state.breakpoints.functions});
    let answer = send_to_tree(call, "setFunctionBreakpoints", args).await;
    let body = answer.map(|r| {
        let body = r.and_then(|r| r.body).unwrap_or(Value::Null);
        serde_json::from_value::<SetBreakpointsResponse>(body).unwrap_or_default()
    });
    match body {
        Ok(body) => {
            let verified = body.breakpoints.last().is_some_and(|b| b.verified);
            let state = if verified { "verified" } else { "pending" };
            Reply::text(format!("Breakpoint in {name} ({state})."))
                .field("breakpoints", breakpoint_list(call))
        }
        Err(reply) => reply,
    }
}

async fn remove_breakpoint(call: &mut Call<'_>) -> Reply {
    let p = call.request.params.clone();
    if let Some(function) = p.function {
        let before = call.state.breakpoints.functions.len();
        call.state.breakpoints.functions.retain(|f| f.name != function);
        if before == call.state.breakpoints.functions.len() {
            return Reply::error(format!("No breakpoint in {function}."));
        }
        let args = json!({"breakpoints": call.state.breakpoints.functions});
        if let Err(reply) = send_to_tree(call, "setFunctionBreakpoints", args).await {
            return reply;
        }
        return remaining(call);
    }
    let file = start::absolute(
        p.file.as_deref().unwrap_or(""),
        &base(call),
        call.inner.deps.lookup.get("HOME"),
    );
    if !call.state.breakpoints.remove_line(&file, p.line) {
        let shown = relative(&file.display().to_string(), &shown_cwd(call));
        let at = p.line.map(|l| format!("{shown}:{l}")).unwrap_or(shown);
        return Reply::error(format!("No breakpoint at {at}."));
    }
    if let Err(reply) = sync_file(call, &file).await {
        return reply;
    }
    if call.state.breakpoints.files.get(&file).is_some_and(Vec::is_empty) {
        call.state.breakpoints.files.remove(&file);
    }
    remaining(call)
}

fn remaining(call: &Call<'_>) -> Reply {
    let list = breakpoint_list(call);
    let mut lines: Vec<String> =
        list.iter().map(|bp| format!("Breakpoint {}", bp["text"].as_str().unwrap_or(""))).collect();
    if lines.is_empty() {
        lines.push("No breakpoints remain.".to_string());
    }
    Reply { lines, ..Reply::default() }.field("breakpoints", list)
}

async fn exception_breakpoints(call: &mut Call<'_>) -> Reply {
    let filters = call.request.params.filters.clone().unwrap_or_default();
    if let Some(session) = call.state.session.as_ref().filter(|s| s.status().is_live()) {
        let valid: Vec<String> = session
            .capabilities
            .exception_breakpoint_filters
            .iter()
            .flatten()
            .map(|f| f.filter.clone())
            .collect();
        if valid.is_empty() {
            return inspect::gate(session, "exceptionBreakpointFilters", "exception breakpoints")
                .unwrap_or_default();
        }
        if let Some(bad) = filters.iter().find(|f| !valid.contains(f)) {
            return Reply::error(format!(
                "Unknown exception filter '{bad}'. Valid filters: {}.",
                valid.join(", ")
            ));
        }
        let args = json!({"filters": filters});
        if let Err(reply) = send_to_tree(call, "setExceptionBreakpoints", args).await {
            return reply;
        }
    }
    call.state.breakpoints.exception_filters = Some(filters.clone());
    let text = if filters.is_empty() {
        "No exception filters active.".to_string()
    } else {
        format!("Exception filters: {}.", filters.join(", "))
    };
    Reply::text(text).field("filters", filters)
}

fn output(call: &mut Call<'_>) -> Reply {
    let category = call.request.params.category.clone();
    let ring = call.state.ring.lock().unwrap_or_else(|e| e.into_inner());
    let chunks = ring.since(0, category.as_deref());
    let text = call.redactor.text(&ring::render(&chunks));
    let mut lines = Vec::new();
    if ring.bytes_dropped > 0 {
        lines.push(format!(
            "[… {} earlier bytes were dropped from the 128 KiB ring]",
            ring.bytes_dropped
        ));
    }
    lines.push(if text.is_empty() {
        "(no output)".to_string()
    } else {
        text.trim_end_matches('\n').to_string()
    });
    let reply = Reply { lines, ..Reply::default() }
        .field("bytes_total", ring.bytes_total)
        .field("bytes_dropped", ring.bytes_dropped)
        .field("by_category", json!(ring.by_category));
    let total = ring.bytes_total;
    drop(ring);
    call.state.shown = total;
    reply
}
