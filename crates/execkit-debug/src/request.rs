//! From the caller's params to a checked request: the timeout resolved, every field checked
//! and clamped, and the fields the action ignores named. Nothing is spawned or sent before
//! this has passed.

use base64::Engine;
use execkit_output::clamp::{TimeoutPolicy, resolve_timeout};
use execkit_protocol::ArgError;
use execkit_protocol::debug::{DebugAction, DebugParams};

/// The longest expression `evaluate` sends.
pub const MAX_EXPRESSION_BYTES: usize = 65_536;

/// DAP requests the session itself manages, with the action that does it.
const MANAGED: &[(&str, &str)] = &[
    ("initialize", "launch"),
    ("launch", "launch"),
    ("attach", "attach"),
    ("configurationDone", "launch"),
    ("disconnect", "terminate"),
    ("terminate", "terminate"),
    ("restart", "terminate"),
];

/// A checked call.
#[derive(Debug, Clone)]
pub struct DebugRequest {
    pub action: DebugAction,
    pub params: DebugParams,
    pub timeout_s: u64,
    /// Notices to show: a clamped timeout or count.
    pub notices: Vec<String>,
    /// Fields given that this action does not use.
    pub ignored: Vec<String>,
}

/// The fields each action reads (besides `action` and `timeout`).
fn used_fields(action: DebugAction) -> &'static [&'static str] {
    use DebugAction as A;
    match action {
        A::Launch => {
            &["program", "args", "cwd", "env", "adapter", "stop_on_entry", "launch_config"]
        }
        A::Attach => &["pid", "port", "host", "adapter", "cwd", "launch_config"],
        A::Terminate => &["terminate_debuggee"],
        A::Sessions | A::Threads | A::LoadedSources => &[],
        A::SetBreakpoint => {
            &["file", "line", "function", "condition", "hit_condition", "log_message", "cwd"]
        }
        A::RemoveBreakpoint => &["file", "line", "function", "cwd"],
        A::SetExceptionBreakpoints => &["filters"],
        A::SetInstructionBreakpoint | A::RemoveInstructionBreakpoint => {
            &["instruction_reference", "offset", "condition", "hit_condition"]
        }
        A::DataBreakpointInfo => &["name", "variable_ref", "frame_id"],
        A::SetDataBreakpoint | A::RemoveDataBreakpoint => {
            &["data_id", "access_type", "condition", "hit_condition"]
        }
        A::Continue | A::Pause => &["thread_id"],
        A::StepOver | A::StepIn | A::StepOut => &["thread_id", "granularity"],
        A::StackTrace => &["thread_id", "levels", "start_frame"],
        A::Scopes => &["frame_id"],
        A::Variables => &["variable_ref", "scope_id", "filter", "start", "count"],
        A::Evaluate => &["expression", "context", "frame_id"],
        A::Modules => &["start_module", "module_count"],
        A::Disassemble => &[
            "memory_reference",
            "instruction_count",
            "offset",
            "instruction_offset",
            "resolve_symbols",
        ],
        A::ReadMemory => &["memory_reference", "count", "offset"],
        A::WriteMemory => &["memory_reference", "data", "offset", "allow_partial"],
        A::Output => &["category"],
        A::CustomRequest => &["command", "arguments"],
    }
}

fn requires(action: DebugAction, field: &str) -> ArgError {
    ArgError::new(field, format!("action \"{}\" requires \"{field}\".", action.name()))
}

/// Checks `params`; an error names the field.
pub fn resolve(params: DebugParams, max_timeout: Option<u64>) -> Result<DebugRequest, ArgError> {
    let timeout = resolve_timeout(params.timeout.as_ref(), TimeoutPolicy::DEBUG, max_timeout)?;
    let action = params.action;
    let used = used_fields(action);
    let ignored = params
        .given_fields()
        .into_iter()
        .filter(|f| f != "timeout" && !used.contains(&f.as_str()))
        .collect();
    let mut request = DebugRequest {
        action,
        params,
        timeout_s: timeout.secs.unwrap_or(TimeoutPolicy::DEBUG.max_s),
        notices: timeout.notice.into_iter().collect(),
        ignored,
    };
    check_common(&request.params)?;
    check_action(&mut request)?;
    Ok(request)
}

/// Ranges that hold whatever the action.
fn check_common(p: &DebugParams) -> Result<(), ArgError> {
    if p.line.is_some_and(|l| l < 1) {
        return Err(ArgError::new("line", "line must be >= 1"));
    }
    if p.port.is_some_and(|port| !(1..=65_535).contains(&port)) {
        return Err(ArgError::new("port", "port must be 1..65535"));
    }
    if p.pid.is_some_and(|pid| pid < 1) {
        return Err(ArgError::new("pid", "pid must be >= 1"));
    }
    for (field, value) in [("program", &p.program), ("file", &p.file), ("cwd", &p.cwd)] {
        if value.as_deref().is_some_and(|v| v.contains('\0')) {
            return Err(ArgError::new(field, format!("{field} contains a NUL byte")));
        }
    }
    if p.expression.as_ref().is_some_and(|e| e.len() > MAX_EXPRESSION_BYTES) {
        return Err(ArgError::new("expression", "expression is longer than 65536 bytes"));
    }
    if let Some(levels) = p.levels.filter(|l| !(1..=200).contains(l)) {
        return Err(ArgError::new("levels", format!("levels must be 1..200 (got {levels})")));
    }
    Ok(())
}

fn check_action(request: &mut DebugRequest) -> Result<(), ArgError> {
    use DebugAction as A;
    let action = request.action;
    let p = &mut request.params;
    match action {
        A::Launch if p.program.is_none() && p.launch_config.is_none() => {
            return Err(requires(action, "program"));
        }
        A::Attach if p.pid.is_some() && p.port.is_some() => {
            return Err(ArgError::new("pid", "attach takes \"pid\" or \"port\", not both"));
        }
        A::Attach if p.pid.is_none() && p.port.is_none() => {
            return Err(ArgError::new("pid", "action \"attach\" requires \"pid\" or \"port\"."));
        }
        A::SetBreakpoint | A::RemoveBreakpoint => {
            if p.function.is_none() && p.file.is_none() {
                return Err(requires(action, "file"));
            }
            if action == A::SetBreakpoint && p.function.is_none() && p.line.is_none() {
                return Err(requires(action, "line"));
            }
        }
        A::SetExceptionBreakpoints if p.filters.is_none() => {
            return Err(requires(action, "filters"));
        }
        A::SetInstructionBreakpoint | A::RemoveInstructionBreakpoint
            if p.instruction_reference.is_none() =>
        {
            return Err(requires(action, "instruction_reference"));
        }
        A::DataBreakpointInfo if p.name.is_none() => return Err(requires(action, "name")),
        A::SetDataBreakpoint | A::RemoveDataBreakpoint if p.data_id.is_none() => {
            return Err(requires(action, "data_id"));
        }
        A::Variables if p.variable_ref.is_none() && p.scope_id.is_none() => {
            return Err(requires(action, "variable_ref"));
        }
        A::Variables => {
            if let Some(count) = p.count.filter(|c| !(1..=1000).contains(c)) {
                return Err(ArgError::new("count", format!("count must be 1..1000 (got {count})")));
            }
        }
        A::Evaluate if p.expression.is_none() => return Err(requires(action, "expression")),
        A::Disassemble => {
            if let Some(n) = p.instruction_count.filter(|n| !(1..=1024).contains(n)) {
                return Err(ArgError::new(
                    "instruction_count",
                    format!("instruction_count must be 1..1024 (got {n})"),
                ));
            }
        }
        A::ReadMemory => return check_read_memory(request),
        A::WriteMemory => {
            if p.memory_reference.is_none() {
                return Err(requires(action, "memory_reference"));
            }
            let Some(data) = &p.data else { return Err(requires(action, "data")) };
            if base64::engine::general_purpose::STANDARD.decode(data).is_err() {
                return Err(ArgError::new("data", "data is not valid base64"));
            }
        }
        A::CustomRequest => return check_custom(p),
        _ => {}
    }
    Ok(())
}

fn check_read_memory(request: &mut DebugRequest) -> Result<(), ArgError> {
    let p = &mut request.params;
    if p.memory_reference.is_none() {
        return Err(requires(request.action, "memory_reference"));
    }
    let Some(count) = p.count else { return Err(requires(request.action, "count")) };
    if count < 1 {
        return Err(ArgError::new("count", "count must be >= 1"));
    }
    if count > 65_536 {
        request.notices.push(format!("[count {count} clamped to 65536 (allowed 1-65536)]"));
        p.count = Some(65_536);
    }
    Ok(())
}

fn check_custom(p: &DebugParams) -> Result<(), ArgError> {
    let Some(command) = &p.command else {
        return Err(requires(DebugAction::CustomRequest, "command"));
    };
    if let Some((_, instead)) = MANAGED.iter().find(|(c, _)| c == command) {
        return Err(ArgError::new(
            "command",
            format!(
                "custom_request cannot send \"{command}\"; the session manages it (use action \"{instead}\")."
            ),
        ));
    }
    if p.arguments.as_ref().is_some_and(|a| !a.is_object()) {
        return Err(ArgError::new("arguments", "arguments must be an object"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use execkit_protocol::parse_params;
    use serde_json::json;

    fn check(args: serde_json::Value) -> Result<DebugRequest, String> {
        let params: DebugParams = parse_params(args).map_err(|e| e.to_string())?;
        resolve(params, None).map_err(|e| e.message)
    }

    #[test]
    fn bad_input_rows_of_the_spec() {
        assert_eq!(
            check(json!({"action": "launch"})).unwrap_err(),
            "action \"launch\" requires \"program\"."
        );
        assert_eq!(
            check(json!({"action": "attach"})).unwrap_err(),
            "action \"attach\" requires \"pid\" or \"port\"."
        );
        assert_eq!(
            check(json!({"action": "attach", "pid": 3, "port": 4})).unwrap_err(),
            "attach takes \"pid\" or \"port\", not both"
        );
        assert_eq!(
            check(json!({"action": "set_breakpoint", "file": "a.py", "line": 0})).unwrap_err(),
            "line must be >= 1"
        );
        assert_eq!(
            check(json!({"action": "attach", "port": 70000})).unwrap_err(),
            "port must be 1..65535"
        );
        assert_eq!(check(json!({"action": "attach", "pid": 0})).unwrap_err(), "pid must be >= 1");
        assert_eq!(
            check(json!({"action": "launch", "program": "a\u{0}b"})).unwrap_err(),
            "program contains a NUL byte"
        );
        let long = "x".repeat(MAX_EXPRESSION_BYTES + 1);
        assert_eq!(
            check(json!({"action": "evaluate", "expression": long})).unwrap_err(),
            "expression is longer than 65536 bytes"
        );
        assert_eq!(
            check(json!({"action": "write_memory", "memory_reference": "0x1", "data": "@@@"}))
                .unwrap_err(),
            "data is not valid base64"
        );
        assert_eq!(
            check(json!({"action": "custom_request", "command": "disconnect"})).unwrap_err(),
            "custom_request cannot send \"disconnect\"; the session manages it (use action \"terminate\")."
        );
        assert_eq!(
            check(json!({"action": "custom_request", "command": "x", "arguments": [1]}))
                .unwrap_err(),
            "arguments must be an object"
        );
    }

    #[test]
    fn clamps_and_ignored_fields_are_said() {
        let r =
            check(json!({"action": "read_memory", "memory_reference": "0x1", "count": 10_000_000}))
                .unwrap();
        assert_eq!(r.params.count, Some(65_536));
        assert_eq!(r.notices, ["[count 10000000 clamped to 65536 (allowed 1-65536)]"]);
        let r = check(json!({"action": "continue", "line": 3, "levels": 2, "timeout": 0})).unwrap();
        assert_eq!(r.ignored, ["line", "levels"]);
        assert_eq!(r.timeout_s, 300);
        assert!(check(json!({"action": "continue", "timeout": -1})).is_err());
    }
}
