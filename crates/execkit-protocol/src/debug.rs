//! Params of the `debug` tool (spec-debug.md §1 and §2): one `action` plus the fields that
//! action uses. A field the action does not use is ignored and named in the result; checks of
//! ranges and combinations happen in the tool crate before anything is sent.

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::args::FieldHints;

/// What one `debug` call does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DebugAction {
    Launch,
    Attach,
    Terminate,
    Sessions,
    SetBreakpoint,
    RemoveBreakpoint,
    SetExceptionBreakpoints,
    SetInstructionBreakpoint,
    RemoveInstructionBreakpoint,
    DataBreakpointInfo,
    SetDataBreakpoint,
    RemoveDataBreakpoint,
    Continue,
    StepOver,
    StepIn,
    StepOut,
    Pause,
    StackTrace,
    Threads,
    Scopes,
    Variables,
    Evaluate,
    Modules,
    LoadedSources,
    Disassemble,
    ReadMemory,
    WriteMemory,
    Output,
    CustomRequest,
}

impl DebugAction {
    /// The action as the caller spells it.
    pub fn name(self) -> &'static str {
        match self {
            DebugAction::Launch => "launch",
            DebugAction::Attach => "attach",
            DebugAction::Terminate => "terminate",
            DebugAction::Sessions => "sessions",
            DebugAction::SetBreakpoint => "set_breakpoint",
            DebugAction::RemoveBreakpoint => "remove_breakpoint",
            DebugAction::SetExceptionBreakpoints => "set_exception_breakpoints",
            DebugAction::SetInstructionBreakpoint => "set_instruction_breakpoint",
            DebugAction::RemoveInstructionBreakpoint => "remove_instruction_breakpoint",
            DebugAction::DataBreakpointInfo => "data_breakpoint_info",
            DebugAction::SetDataBreakpoint => "set_data_breakpoint",
            DebugAction::RemoveDataBreakpoint => "remove_data_breakpoint",
            DebugAction::Continue => "continue",
            DebugAction::StepOver => "step_over",
            DebugAction::StepIn => "step_in",
            DebugAction::StepOut => "step_out",
            DebugAction::Pause => "pause",
            DebugAction::StackTrace => "stack_trace",
            DebugAction::Threads => "threads",
            DebugAction::Scopes => "scopes",
            DebugAction::Variables => "variables",
            DebugAction::Evaluate => "evaluate",
            DebugAction::Modules => "modules",
            DebugAction::LoadedSources => "loaded_sources",
            DebugAction::Disassemble => "disassemble",
            DebugAction::ReadMemory => "read_memory",
            DebugAction::WriteMemory => "write_memory",
            DebugAction::Output => "output",
            DebugAction::CustomRequest => "custom_request",
        }
    }
}

/// Where `evaluate` runs the expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EvaluateContext {
    Watch,
    Repl,
    Hover,
    Clipboard,
    Variables,
}

/// How far one step goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SteppingGranularity {
    Statement,
    Line,
    Instruction,
}

/// Which children `variables` lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VariablesFilter {
    Named,
    Indexed,
}

/// What a data breakpoint watches for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum DataAccessType {
    Read,
    Write,
    ReadWrite,
}

/// Run a program under a debugger (Debug Adapter Protocol) and inspect it.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DebugParams {
    /// What to do: launch, attach, set_breakpoint, continue, step_over, stack_trace,
    /// variables, evaluate, pause, terminate, and the others listed in the enum.
    pub action: DebugAction,
    /// launch: the program or source file to debug (a path; put arguments in `args`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    /// launch: the program's command-line arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
    /// launch/attach: working directory of the program; relative paths resolve against it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// launch: extra environment variables for the program.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<IndexMap<String, String>>,
    /// launch/attach: the debug adapter to use (debugpy, lldb-dap, gdb, dlv, …); detected from
    /// the program when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter: Option<String>,
    /// launch: stop at the program's entry (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_on_entry: Option<bool>,
    /// launch/attach: the name of a configuration in the project's .vscode/launch.json.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_config: Option<String>,
    /// attach: the process id to attach to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<i64>,
    /// attach: a port where a debug adapter listens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<i64>,
    /// attach: the host of `port` (default 127.0.0.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// terminate: also end the debuggee (default true when launched, false when attached).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminate_debuggee: Option<bool>,
    /// set_breakpoint/remove_breakpoint: the source file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// set_breakpoint/remove_breakpoint: the line in `file` (from 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<i64>,
    /// set_breakpoint/remove_breakpoint: a function name instead of file and line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    /// Breakpoints: stop only when this expression is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    /// Breakpoints: stop only when the hit count satisfies this (for example ">= 3").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hit_condition: Option<String>,
    /// set_breakpoint: log this message instead of stopping ({expr} is interpolated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_message: Option<String>,
    /// set_exception_breakpoints: the exception filter ids to enable; [] clears them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filters: Option<Vec<String>>,
    /// Instruction breakpoints: the instruction's memory reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instruction_reference: Option<String>,
    /// Instruction breakpoints, read_memory, write_memory, disassemble: a byte offset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<i64>,
    /// data_breakpoint_info: the variable name to watch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// variables: the reference of the scope or variable to expand ([ref N] in texts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variable_ref: Option<i64>,
    /// scopes, evaluate, data_breakpoint_info: the stack frame (default: the current frame).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_id: Option<i64>,
    /// set_data_breakpoint/remove_data_breakpoint: the id from data_breakpoint_info.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_id: Option<String>,
    /// set_data_breakpoint: read, write or readWrite (default write).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_type: Option<DataAccessType>,
    /// Thread-level actions: the thread (default: the thread of the last stop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<i64>,
    /// Steps: statement, line or instruction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub granularity: Option<SteppingGranularity>,
    /// stack_trace: how many frames (default 20, 1-200).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub levels: Option<i64>,
    /// stack_trace: the first frame to return (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_frame: Option<i64>,
    /// variables: same as `variable_ref` (a scope's reference).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope_id: Option<i64>,
    /// variables: only named or only indexed children.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<VariablesFilter>,
    /// variables: the first child to return (needs variable paging).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<i64>,
    /// variables: how many children (default 100, 1-1000); read_memory: how many bytes
    /// (1-65536).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<i64>,
    /// evaluate: the expression, in the debuggee's language.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expression: Option<String>,
    /// evaluate: watch, repl, hover, clipboard or variables (default repl).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<EvaluateContext>,
    /// modules: the first module to return.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_module: Option<i64>,
    /// modules: how many modules to return.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module_count: Option<i64>,
    /// disassemble, read_memory, write_memory: the memory reference (an address).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_reference: Option<String>,
    /// disassemble: how many instructions (default 32, 1-1024).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instruction_count: Option<i64>,
    /// disassemble: an offset in instructions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instruction_offset: Option<i64>,
    /// disassemble: show symbol names (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolve_symbols: Option<bool>,
    /// write_memory: the bytes to write, base64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    /// write_memory: accept a partial write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_partial: Option<bool>,
    /// output: only this category (stdout, stderr, console, important, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// custom_request: the DAP command to send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// custom_request: the command's arguments, an object (its values may be any JSON; the
    /// published schema says strings because some providers reject untyped values).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<IndexMap<String, String>>")]
    pub arguments: Option<Value>,
    /// Seconds the whole action may take. Default 30, allowed 5-300; 0 means the longest
    /// allowed. A `continue` or step that is still running then is reported as running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<f64>")]
    pub timeout: Option<Value>,
}

impl DebugParams {
    /// The names of the fields the caller set, besides `action`, in declaration order.
    pub fn given_fields(&self) -> Vec<String> {
        match serde_json::to_value(self) {
            Ok(Value::Object(map)) => map.keys().filter(|k| *k != "action").cloned().collect(),
            _ => Vec::new(),
        }
    }
}

impl FieldHints for DebugParams {
    fn hint(field: &str) -> Option<&'static str> {
        (field == "action").then_some("what to do, for example \"launch\" or \"continue\"")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_params;
    use serde_json::json;

    fn err(v: Value) -> String {
        parse_params::<DebugParams>(v).unwrap_err().to_string()
    }

    #[test]
    fn bad_calls_name_the_field() {
        assert!(err(json!({})).starts_with("Invalid argument \"action\": missing"));
        assert!(err(json!({"action": "explode"})).starts_with("Invalid argument \"action\""));
        assert_eq!(
            err(json!({"action": "set_breakpoint", "line": "ten"})),
            "Invalid argument \"line\": expected a whole number (got string \"ten\")"
        );
    }

    #[test]
    fn given_fields_keep_declaration_order() {
        let p: DebugParams =
            parse_params(json!({"action": "continue", "levels": 3, "line": 2})).unwrap();
        assert_eq!(p.given_fields(), ["line", "levels"]);
    }
}
