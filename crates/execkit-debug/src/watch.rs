//! Instruction and data breakpoints: each kind is one list in the tool's breakpoint set, sent
//! whole (`setInstructionBreakpoints`, `setDataBreakpoints`) to a live session whose adapter
//! advertises the capability, and during configuration to the next one.

use execkit_protocol::debug::DebugAction;
use serde_json::{Value, json};

use crate::inspect;
use crate::render::Reply;
use crate::runner::Call;

/// `dataBreakpointInfo`: what `name` (in `variable_ref`, or in a frame) can be watched as.
pub(crate) async fn data_info(call: &mut Call<'_>) -> Reply {
    let Some(target) = call.state.target() else { return Reply::default() };
    let session = &*target;
    if let Some(refused) = inspect::gate(session, "supportsDataBreakpoints", "data breakpoints") {
        return refused;
    }
    let p = &call.request.params;
    let name = p.name.clone().unwrap_or_default();
    let mut args = json!({"name": name});
    if let Some(reference) = p.variable_ref {
        args["variablesReference"] = json!(reference);
    } else if let Some(frame) = p.frame_id.or(session.with(|s| s.stop.as_ref()?.frame_id)) {
        args["frameId"] = json!(frame);
    }
    let body = match session.client.request("dataBreakpointInfo", Some(args), call.deadline).await {
        Ok(response) => response.body.unwrap_or(Value::Null),
        Err(err) => return Reply::error(err.to_string()),
    };
    let description = body["description"].as_str().unwrap_or("").to_string();
    let Some(data_id) = body["dataId"].as_str().map(str::to_string) else {
        return Reply::error(format!("{name} cannot be watched: {description}"));
    };
    let access = body["accessTypes"].clone();
    Reply::text(format!("{name}: data_id {data_id} ({description})"))
        .field("data_id", data_id)
        .field("access_types", access)
        .field("description", description)
}

/// `set_`/`remove_instruction_breakpoint` and `set_`/`remove_data_breakpoint`.
pub(crate) async fn set_or_remove(call: &mut Call<'_>) -> Reply {
    use DebugAction as A;
    let action = call.request.action;
    let data = matches!(action, A::SetDataBreakpoint | A::RemoveDataBreakpoint);
    let (capability, feature, command, key) = if data {
        ("supportsDataBreakpoints", "data breakpoints", "setDataBreakpoints", "dataId")
    } else {
        (
            "supportsInstructionBreakpoints",
            "instruction breakpoints",
            "setInstructionBreakpoints",
            "instructionReference",
        )
    };
    if let Some(session) = call.state.target().filter(|s| s.status().is_live())
        && let Some(refused) = inspect::gate(&session, capability, feature)
    {
        return refused;
    }
    let entry = wire_entry(call, data);
    let id = entry[key].clone();
    let same = |bp: &Value| bp[key] == id && bp.get("offset") == entry.get("offset");
    let list = if data {
        &mut call.state.breakpoints.data
    } else {
        &mut call.state.breakpoints.instructions
    };
    let set = matches!(action, A::SetDataBreakpoint | A::SetInstructionBreakpoint);
    let before = list.len();
    list.retain(|bp| !same(bp));
    if set {
        list.push(entry);
    } else if list.len() == before {
        return Reply::error(format!("No {} at {}.", feature.trim_end_matches('s'), display(&id)));
    }
    let list = list.clone();
    let field = if data { "data_breakpoints" } else { "instruction_breakpoints" };
    let Some(session) = call.state.target().filter(|s| s.status().is_live()) else {
        return listing(&list, key, feature, Vec::new()).field(field, list);
    };
    let args = json!({"breakpoints": list});
    let body = match session.client.request(command, Some(args), call.deadline).await {
        Ok(response) => response.body.unwrap_or(Value::Null),
        Err(err) => return Reply::error(err.to_string()),
    };
    let answers = body["breakpoints"].as_array().cloned().unwrap_or_default();
    listing(&list, key, feature, answers).field(field, list)
}

fn wire_entry(call: &Call<'_>, data: bool) -> Value {
    let p = &call.request.params;
    let mut entry = if data {
        let access = p.access_type.map_or(json!("write"), |a| json!(a));
        json!({"dataId": p.data_id, "accessType": access})
    } else {
        let mut e = json!({"instructionReference": p.instruction_reference});
        if let Some(offset) = p.offset {
            e["offset"] = json!(offset);
        }
        e
    };
    if let Some(condition) = &p.condition {
        entry["condition"] = json!(condition);
    }
    if let Some(hit) = &p.hit_condition {
        entry["hitCondition"] = json!(hit);
    }
    entry
}

fn display(id: &Value) -> String {
    id.as_str().map_or_else(|| id.to_string(), str::to_string)
}

/// One line per entry, with the adapter's verdict when it gave one.
fn listing(list: &[Value], key: &str, feature: &str, answers: Vec<Value>) -> Reply {
    let mut lines: Vec<String> = list
        .iter()
        .enumerate()
        .map(|(i, bp)| {
            let state = match answers.get(i) {
                Some(a) if a["verified"] == true => " (verified)".to_string(),
                Some(a) => {
                    format!(" (pending: {})", a["message"].as_str().unwrap_or("not verified"))
                }
                None => String::new(),
            };
            format!("Watch {}{state}", display(&bp[key]))
        })
        .collect();
    if lines.is_empty() {
        lines.push(format!("No {feature} remain."));
    }
    Reply { lines, ..Reply::default() }
}
