//! Typed bodies of the events, reverse requests and responses execkit reads.
//!
//! Optional almost everywhere: adapters omit fields the specification calls required, and a
//! missing field must not turn a `stopped` event into an unknown one. Unknown fields are
//! ignored; `Capabilities` keeps them so vendor flags and misspellings stay visible.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// An id that adapters send as a number or a string (debugpy: numeric module ids; the
/// specification: `number | string`). It passes through unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Id {
    Number(i64),
    String(String),
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoppedBody {
    #[serde(default)]
    pub reason: String,
    pub description: Option<String>,
    pub thread_id: Option<i64>,
    pub text: Option<String>,
    pub all_threads_stopped: Option<bool>,
    pub hit_breakpoint_ids: Option<Vec<i64>>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContinuedBody {
    pub thread_id: Option<i64>,
    pub all_threads_continued: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExitedBody {
    pub exit_code: i64,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TerminatedBody {
    pub restart: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OutputBody {
    pub category: Option<String>,
    #[serde(default)]
    pub output: String,
    pub variables_reference: Option<i64>,
    pub source: Option<Source>,
    pub line: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessBody {
    #[serde(default)]
    pub name: String,
    pub system_process_id: Option<i64>,
    pub is_local_process: Option<bool>,
    pub start_method: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadBody {
    #[serde(default)]
    pub reason: String,
    pub thread_id: i64,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunInTerminalArguments {
    pub kind: Option<String>,
    pub title: Option<String>,
    #[serde(default)]
    pub cwd: String,
    #[serde(default)]
    pub args: Vec<String>,
    /// `null` values mean "unset this variable".
    pub env: Option<Map<String, Value>>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StartDebuggingArguments {
    #[serde(default)]
    pub configuration: Map<String, Value>,
    /// `launch` or `attach`.
    #[serde(default)]
    pub request: String,
}

/// The adapter's capabilities: the flags the handshake and the capability gates read, plus
/// everything else it sent.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Capabilities {
    pub supports_configuration_done_request: Option<bool>,
    pub supports_function_breakpoints: Option<bool>,
    pub supports_conditional_breakpoints: Option<bool>,
    pub supports_terminate_request: Option<bool>,
    pub exception_breakpoint_filters: Option<Vec<ExceptionBreakpointsFilter>>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl Capabilities {
    /// Copies misspelled flags to their real names (`capability_aliases` of an adapter's
    /// quirks: lldb-dap 19 sends `supportTerminateDebuggee`). A real name already sent wins.
    pub fn with_aliases(mut self, aliases: &std::collections::BTreeMap<String, String>) -> Self {
        for (alias, real) in aliases {
            if let Some(value) = self.other.get(alias).cloned() {
                self.other.entry(real.clone()).or_insert(value);
            }
        }
        self
    }

    /// Any boolean capability by its wire name; absent means false.
    pub fn flag(&self, name: &str) -> bool {
        let typed = match name {
            "supportsConfigurationDoneRequest" => self.supports_configuration_done_request,
            "supportsFunctionBreakpoints" => self.supports_function_breakpoints,
            "supportsConditionalBreakpoints" => self.supports_conditional_breakpoints,
            "supportsTerminateRequest" => self.supports_terminate_request,
            _ => self.other.get(name).and_then(Value::as_bool),
        };
        typed.unwrap_or(false)
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ExceptionBreakpointsFilter {
    pub filter: String,
    #[serde(default)]
    pub label: String,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Source {
    pub name: Option<String>,
    pub path: Option<String>,
    pub source_reference: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StackFrame {
    pub id: i64,
    #[serde(default)]
    pub name: String,
    pub source: Option<Source>,
    #[serde(default)]
    pub line: i64,
    #[serde(default)]
    pub column: i64,
    pub instruction_pointer_reference: Option<String>,
    pub module_id: Option<Id>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StackTraceResponse {
    #[serde(default)]
    pub stack_frames: Vec<StackFrame>,
    pub total_frames: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Scope {
    #[serde(default)]
    pub name: String,
    pub variables_reference: i64,
    pub expensive: Option<bool>,
    pub presentation_hint: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ScopesResponse {
    #[serde(default)]
    pub scopes: Vec<Scope>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Variable {
    pub name: String,
    #[serde(default)]
    pub value: String,
    #[serde(rename = "type")]
    pub type_name: Option<String>,
    #[serde(default)]
    pub variables_reference: i64,
    pub memory_reference: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct VariablesResponse {
    #[serde(default)]
    pub variables: Vec<Variable>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvaluateResponse {
    pub result: String,
    #[serde(rename = "type")]
    pub type_name: Option<String>,
    #[serde(default)]
    pub variables_reference: i64,
    pub memory_reference: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Thread {
    pub id: i64,
    #[serde(default)]
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ThreadsResponse {
    #[serde(default)]
    pub threads: Vec<Thread>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Breakpoint {
    pub id: Option<i64>,
    #[serde(default)]
    pub verified: bool,
    pub message: Option<String>,
    pub line: Option<i64>,
    pub source: Option<Source>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SetBreakpointsResponse {
    #[serde(default)]
    pub breakpoints: Vec<Breakpoint>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Module {
    pub id: Id,
    #[serde(default)]
    pub name: String,
    pub path: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModulesResponse {
    #[serde(default)]
    pub modules: Vec<Module>,
    pub total_modules: Option<i64>,
}

/// One line breakpoint as `setBreakpoints` sends it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceBreakpoint {
    pub line: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hit_condition: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_message: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FunctionBreakpoint {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hit_condition: Option<String>,
}
