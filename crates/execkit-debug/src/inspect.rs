//! Looking at a stopped program: frames, threads, scopes, variables, expressions, modules,
//! sources, memory and disassembly, and raw requests. Each is one DAP request, gated on the
//! capability it needs before anything is sent.

use base64::Engine;
use execkit_dap::wire::{
    EvaluateResponse, ScopesResponse, StackTraceResponse, ThreadsResponse, VariablesResponse,
};
use execkit_protocol::debug::{DebugAction, EvaluateContext};
use serde_json::{Value, json};

use crate::control;
use crate::render::{Reply, cut_value, relative};
use crate::runner::Call;
use crate::session::{Session, Status};

/// The hint added when the adapter rejects an id given by the caller.
const STALE_HINT: &str = "ids are valid only until the program resumes; run stack_trace again";

/// `Adapter <name> does not support <feature> (capability <Cap> is not set).`, or nothing.
pub(crate) fn gate(session: &Session, capability: &str, feature: &str) -> Option<Reply> {
    (!session.capabilities.flag(capability)).then(|| {
        Reply::error(format!(
            "Adapter {} does not support {feature} (capability {capability} is not set).",
            session.def.name
        ))
    })
}

/// The frame to use: the given one, else the current (top of the last stop or stack_trace).
fn frame_for(session: &Session, given: Option<i64>) -> Result<i64, Reply> {
    if let Some(id) = given {
        return Ok(id);
    }
    let current = session.with(|s| s.stop.as_ref().and_then(|st| st.frame_id));
    current.ok_or_else(|| {
        Reply::error(
            "No current frame: the program is not stopped. Use \"pause\" or pass \"frame_id\".",
        )
    })
}

fn failed(err: impl ToString, caller_id: bool) -> Reply {
    let text = err.to_string();
    if caller_id { Reply::error(format!("{text} ({STALE_HINT})")) } else { Reply::error(text) }
}

pub(crate) async fn stack_trace(call: &mut Call<'_>) -> Reply {
    let Some(target) = call.state.target() else { return Reply::default() };
    let session = &*target;
    let p = &call.request.params;
    let thread = match control::thread_for(session, p.thread_id, call.deadline).await {
        Ok(thread) => thread,
        Err(text) => return Reply::error(text),
    };
    let args = json!({"threadId": thread, "startFrame": p.start_frame.unwrap_or(0), "levels": p.levels.unwrap_or(20)});
    let trace: StackTraceResponse =
        match session.client.call("stackTrace", Some(args), call.deadline).await {
            Ok(trace) => trace,
            Err(err) => return failed(err, p.thread_id.is_some()),
        };
    let mut lines = Vec::new();
    let mut frames = Vec::new();
    for (index, frame) in trace.stack_frames.iter().enumerate() {
        let path = frame.source.as_ref().and_then(|s| s.path.clone().or(s.name.clone()));
        let place = match &path {
            Some(path) => format!(" at {}:{}", relative(path, &session.cwd), frame.line),
            None => frame
                .instruction_pointer_reference
                .as_ref()
                .map(|ip| format!(" at {ip}"))
                .unwrap_or_default(),
        };
        let level = index as i64 + p.start_frame.unwrap_or(0);
        lines.push(format!("#{level} {}{place} [frame {}]", frame.name, frame.id));
        frames.push(json!({"id": frame.id, "name": frame.name, "path": path, "line": frame.line, "column": frame.column}));
    }
    if let Some(top) = trace.stack_frames.first().filter(|_| p.start_frame.unwrap_or(0) == 0) {
        session.with(|s| {
            if let Some(stop) = s.stop.as_mut() {
                stop.frame_id = Some(top.id);
            }
        });
    }
    if lines.is_empty() {
        lines.push("No frames.".to_string());
    }
    let total = trace.total_frames.unwrap_or(frames.len() as i64);
    Reply { lines, ..Reply::default() }.field("frames", frames).field("total_frames", total)
}

pub(crate) async fn threads(call: &mut Call<'_>) -> Reply {
    let Some(target) = call.state.target() else { return Reply::default() };
    let session = &*target;
    let list: ThreadsResponse = match session.client.call("threads", None, call.deadline).await {
        Ok(list) => list,
        Err(err) => return failed(err, false),
    };
    session.with(|s| s.threads = list.threads.clone());
    let (stopped_thread, status) =
        session.with(|s| (s.stop.as_ref().and_then(|st| st.thread_id), s.status));
    let mut lines = Vec::new();
    for thread in &list.threads {
        let current = stopped_thread == Some(thread.id);
        let state = if status == Status::Stopped { "stopped" } else { status.as_str() };
        lines.push(format!(
            "{} {} {} ({state})",
            if current { "*" } else { " " },
            thread.id,
            thread.name
        ));
    }
    if lines.is_empty() {
        lines.push("The adapter reported no threads.".to_string());
    }
    let threads: Vec<Value> =
        list.threads.iter().map(|t| json!({"id": t.id, "name": t.name})).collect();
    Reply { lines, ..Reply::default() }.field("threads", threads)
}

pub(crate) async fn scopes(call: &mut Call<'_>) -> Reply {
    let Some(target) = call.state.target() else { return Reply::default() };
    let session = &*target;
    let given = call.request.params.frame_id;
    let frame = match frame_for(session, given) {
        Ok(frame) => frame,
        Err(reply) => return reply,
    };
    let list: ScopesResponse =
        match session.client.call("scopes", Some(json!({"frameId": frame})), call.deadline).await {
            Ok(list) => list,
            Err(err) => return failed(err, given.is_some()),
        };
    let lines =
        list.scopes.iter().map(|s| format!("{} [ref {}]", s.name, s.variables_reference)).collect();
    let scopes: Vec<Value> = list
        .scopes
        .iter()
        .map(|s| json!({"name": s.name, "variable_ref": s.variables_reference, "expensive": s.expensive}))
        .collect();
    Reply { lines, ..Reply::default() }.field("scopes", scopes)
}

pub(crate) async fn variables(call: &mut Call<'_>) -> Reply {
    let Some(target) = call.state.target() else { return Reply::default() };
    let session = &*target;
    let p = &call.request.params;
    let paging = p.start.is_some() || p.count.is_some();
    if let Some(refused) =
        gate(session, "supportsVariablePaging", "variable paging").filter(|_| paging)
    {
        return refused;
    }
    let reference = p.variable_ref.or(p.scope_id).unwrap_or(0);
    let mut args = json!({"variablesReference": reference, "count": p.count.unwrap_or(100)});
    if let Some(start) = p.start {
        args["start"] = json!(start);
    }
    if let Some(filter) = p.filter {
        args["filter"] = serde_json::to_value(filter).unwrap_or(Value::Null);
    }
    let list: VariablesResponse =
        match session.client.call("variables", Some(args), call.deadline).await {
            Ok(list) => list,
            Err(err) => return failed(err, true),
        };
    let mut lines = Vec::new();
    let mut vars = Vec::new();
    for var in &list.variables {
        let value = cut_value(&call.redactor.named(&var.name, &var.value));
        let kind = var
            .type_name
            .as_deref()
            .filter(|t| !t.is_empty())
            .map(|t| format!(" ({t})"))
            .unwrap_or_default();
        let expand = if var.variables_reference > 0 {
            format!(" [ref {}]", var.variables_reference)
        } else {
            String::new()
        };
        lines.push(format!("{} = {value}{kind}{expand}", var.name));
        vars.push(json!({"name": var.name, "value": value, "type": var.type_name, "variable_ref": var.variables_reference}));
    }
    if lines.is_empty() {
        lines.push("No variables.".to_string());
    }
    Reply { lines, ..Reply::default() }.field("variables", vars)
}

pub(crate) async fn evaluate(call: &mut Call<'_>) -> Reply {
    let Some(target) = call.state.target() else { return Reply::default() };
    let session = &*target;
    let p = &call.request.params;
    let context = p.context.unwrap_or(EvaluateContext::Repl);
    let clipboard = context == EvaluateContext::Clipboard;
    if let Some(refused) =
        gate(session, "supportsClipboardContext", "the clipboard context").filter(|_| clipboard)
    {
        return refused;
    }
    let mut args = json!({"expression": p.expression, "context": context});
    let frame = p.frame_id.or_else(|| session.with(|s| s.stop.as_ref().and_then(|st| st.frame_id)));
    if let Some(frame) = frame {
        args["frameId"] = json!(frame);
    }
    let result: EvaluateResponse =
        match session.client.call("evaluate", Some(args), call.deadline).await {
            Ok(result) => result,
            Err(err) => return failed(err, p.frame_id.is_some()),
        };
    let value = cut_value(&call.redactor.text(&result.result));
    let kind = result
        .type_name
        .as_deref()
        .filter(|t| !t.is_empty())
        .map(|t| format!(" ({t})"))
        .unwrap_or_default();
    let expand = if result.variables_reference > 0 {
        format!(" [ref {}]", result.variables_reference)
    } else {
        String::new()
    };
    Reply::text(format!("= {value}{kind}{expand}"))
        .field("result", value)
        .field("type", json!(result.type_name))
        .field("variable_ref", result.variables_reference)
}

/// `modules`, `loaded_sources`, `disassemble`, `read_memory`, `write_memory`: one gated request
/// each, rendered from its body.
pub(crate) async fn simple(call: &mut Call<'_>) -> Reply {
    let Some(target) = call.state.target() else { return Reply::default() };
    let session = &*target;
    let p = &call.request.params;
    let (command, capability, feature, args) = match call.request.action {
        DebugAction::Modules => (
            "modules",
            "supportsModulesRequest",
            "modules",
            json!({"startModule": p.start_module.unwrap_or(0), "moduleCount": p.module_count.unwrap_or(0)}),
        ),
        DebugAction::LoadedSources => {
            ("loadedSources", "supportsLoadedSourcesRequest", "loaded sources", json!({}))
        }
        DebugAction::Disassemble => {
            let reference = p.memory_reference.clone().or_else(|| {
                session.with(|s| s.stop.as_ref().and_then(|st| st.instruction_pointer.clone()))
            });
            (
                "disassemble",
                "supportsDisassembleRequest",
                "disassembly",
                json!({
                "memoryReference": reference.unwrap_or_default(), "instructionCount": p.instruction_count.unwrap_or(32),
                "offset": p.offset.unwrap_or(0), "instructionOffset": p.instruction_offset.unwrap_or(0),
                "resolveSymbols": p.resolve_symbols.unwrap_or(true)}),
            )
        }
        DebugAction::ReadMemory => (
            "readMemory",
            "supportsReadMemoryRequest",
            "reading memory",
            json!({
            "memoryReference": p.memory_reference, "count": p.count, "offset": p.offset.unwrap_or(0)}),
        ),
        _ => (
            "writeMemory",
            "supportsWriteMemoryRequest",
            "writing memory",
            json!({
            "memoryReference": p.memory_reference, "data": p.data, "offset": p.offset.unwrap_or(0),
            "allowPartial": p.allow_partial.unwrap_or(false)}),
        ),
    };
    if let Some(refused) = gate(session, capability, feature) {
        return refused;
    }
    let response = match session.client.request(command, Some(args), call.deadline).await {
        Ok(response) => response,
        Err(err) => return failed(err, false),
    };
    let body = response.body.unwrap_or(Value::Null);
    render_body(call.request.action, &body, session)
}

fn render_body(action: DebugAction, body: &Value, session: &Session) -> Reply {
    let list = |key: &str| body.get(key).and_then(Value::as_array).cloned().unwrap_or_default();
    let s = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).unwrap_or("").to_string();
    match action {
        DebugAction::Modules => {
            let modules = list("modules");
            let lines = modules
                .iter()
                .map(|m| {
                    format!("{} {} {}", m["id"], s(m, "name"), s(m, "path")).trim_end().to_string()
                })
                .collect();
            Reply { lines, ..Reply::default() }.field("modules", modules)
        }
        DebugAction::LoadedSources => {
            let sources = list("sources");
            let lines = sources.iter().map(|src| relative(&s(src, "path"), &session.cwd)).collect();
            Reply { lines, ..Reply::default() }.field("sources", sources)
        }
        DebugAction::Disassemble => {
            let instructions = list("instructions");
            let lines = instructions
                .iter()
                .map(|i| {
                    format!(
                        "{} {} {}",
                        s(i, "address"),
                        s(i, "instructionBytes"),
                        s(i, "instruction")
                    )
                })
                .collect();
            Reply { lines, ..Reply::default() }.field("instructions", instructions)
        }
        DebugAction::ReadMemory => read_memory_reply(body),
        _ => {
            let written = body.get("bytesWritten").and_then(Value::as_i64);
            Reply::text(format!(
                "Wrote {} bytes.",
                written.map_or("the".to_string(), |n| n.to_string())
            ))
            .field("bytes_written", json!(written))
        }
    }
}

fn read_memory_reply(body: &Value) -> Reply {
    let address = body.get("address").and_then(Value::as_str).unwrap_or("0x0").to_string();
    let data = body.get("data").and_then(Value::as_str).unwrap_or("");
    let bytes = base64::engine::general_purpose::STANDARD.decode(data).unwrap_or_default();
    let start = u64::from_str_radix(address.trim_start_matches("0x"), 16).unwrap_or(0);
    let lines = bytes
        .chunks(16)
        .enumerate()
        .map(|(i, chunk)| {
            let hex: Vec<String> = chunk.iter().map(|b| format!("{b:02x}")).collect();
            format!("0x{:x} {}", start + i as u64 * 16, hex.join(" "))
        })
        .collect();
    Reply { lines, ..Reply::default() }
        .field("address", address)
        .field("data", data)
        .field("unreadable_bytes", body.get("unreadableBytes").cloned().unwrap_or(json!(0)))
}

pub(crate) async fn custom_request(call: &mut Call<'_>) -> Reply {
    let Some(target) = call.state.target() else { return Reply::default() };
    let session = &*target;
    let p = &call.request.params;
    let command = p.command.clone().unwrap_or_default();
    let response = match session.client.request(&command, p.arguments.clone(), call.deadline).await
    {
        Ok(response) => response,
        Err(err) => return failed(err, false),
    };
    let body = response.body.unwrap_or(Value::Null);
    let pretty = serde_json::to_string_pretty(&body).unwrap_or_default();
    Reply::text(format!("{command} response:"))
        .line(call.redactor.text(&pretty))
        .field("body", body)
}
