//! The closed set of tools and their published schemas.

use execkit_protocol::bash::BashParams;
use execkit_protocol::debug::DebugParams;
use execkit_protocol::eval::EvalParams;
use execkit_protocol::job::JobParams;
use execkit_protocol::ssh::SshParams;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

/// Every tool execkit serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    Bash,
    Eval,
    Job,
    Debug,
    Ssh,
    #[cfg(test)]
    Echo,
}

impl Tool {
    #[cfg(not(test))]
    pub const ALL: [Tool; 5] = [Tool::Bash, Tool::Eval, Tool::Job, Tool::Debug, Tool::Ssh];
    #[cfg(test)]
    pub const ALL: [Tool; 6] =
        [Tool::Bash, Tool::Eval, Tool::Job, Tool::Debug, Tool::Ssh, Tool::Echo];

    pub fn name(self) -> &'static str {
        match self {
            Tool::Bash => "bash",
            Tool::Eval => "eval",
            Tool::Job => "job",
            Tool::Debug => "debug",
            Tool::Ssh => "ssh",
            #[cfg(test)]
            Tool::Echo => "echo",
        }
    }

    pub fn from_name(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|t| t.name() == name)
    }

    pub(crate) fn description(self) -> &'static str {
        match self {
            Tool::Bash => BASH_DESCRIPTION,
            Tool::Eval => EVAL_DESCRIPTION,
            Tool::Job => JOB_DESCRIPTION,
            Tool::Debug => DEBUG_DESCRIPTION,
            Tool::Ssh => execkit_ssh::TOOL_TEXT,
            #[cfg(test)]
            Tool::Echo => "Repeat a text: the example tool of crates/README.md, for tests only.",
        }
    }

    fn schema(self) -> Value {
        match self {
            Tool::Bash => schema_of::<BashParams>(),
            Tool::Eval => schema_of::<EvalParams>(),
            Tool::Job => schema_of::<JobParams>(),
            Tool::Debug => schema_of::<DebugParams>(),
            Tool::Ssh => schema_of::<SshParams>(),
            #[cfg(test)]
            Tool::Echo => schema_of::<crate::echo::EchoParams>(),
        }
    }

    pub fn spec(self) -> ToolSpec {
        ToolSpec {
            name: self.name().to_string(),
            description: self.description().to_string(),
            input_schema: self.schema(),
        }
    }
}

const BASH_DESCRIPTION: &str = "Run one shell command with bash and return its merged stdout \
and stderr. Each call is a fresh `bash -c`: variables, functions and the working directory do \
not persist, so pass `cwd` (or start with `cd dir &&`). stdin is /dev/null and there is no \
terminal, so interactive prompts fail at once; use non-interactive flags. The whole process \
tree is killed at the timeout (default 300 s). Long output is cut to its head and tail; the \
full output is kept as artifact://<id>, which later commands can read directly (for example \
`grep -n error artifact://<id>`). A non-zero exit code is an error, with its meaning when known. \
Use `async: true` for servers, watchers and long builds, then the job tool.";

const EVAL_DESCRIPTION: &str = "Run cells of Python (`py`) or JavaScript (`js`) in persistent \
kernels, one per language: variables, imports and functions survive between calls of the same \
`session`. Cells run in order and the first failing cell stops the rest. The last expression of \
a cell is shown; `display()` shows rich values and matplotlib figures come back as images. \
Top-level `await` works in both; Python has `%magics` and `!shell`; JavaScript has no Node.js \
APIs or npm (use `tool.bash()` or Python for the OS). Each cell has its own timeout (default 30 s); on a timeout the kernel is interrupted and \
keeps its state when it can, and any loss of state is always announced. `input()` fails at once: \
pass data in the code.";

const JOB_DESCRIPTION: &str = "Watch background jobs started with bash `async: true` (or \
processes a command left running). `poll` waits until one of the given jobs (or any running \
job) finishes, up to 30 s, and shows finished results and the tail of running ones; `cancel` \
stops jobs and their whole process tree; `list` shows every job at once.";

const DEBUG_DESCRIPTION: &str = "Run a program under a real debugger (Python via debugpy, \
C/C++/Rust via lldb-dap or gdb, Go via dlv; picked from the program) and inspect it, one \
session at a time. `launch` starts it (stopped at entry by default); `set_breakpoint` with \
`file`+`line`; `continue`, `step_over`, `step_in`, `step_out` run to the next stop; \
`stack_trace`, `scopes`, `variables` (`variable_ref` from `[ref N]`) and `evaluate` inspect \
the current frame; `pause` interrupts; `output` shows the program's output; `terminate` ends \
it. Frame and variable ids are valid only until the program resumes. A `continue` that \
outlives its timeout (default 30 s) is reported as still running, not as an error.";

/// The published schema of `T`: subschemas inlined (no `$defs`/`$ref`, which several providers
/// reject), no root title or description (the tool's description says what the call does), no
/// Rust-specific number formats (`uint64`, `double`) and no `default: null`.
fn schema_of<T: JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|settings| settings.inline_subschemas = true)
        .into_generator();
    let mut schema =
        serde_json::to_value(generator.into_root_schema_for::<T>()).unwrap_or(Value::Null);
    if let Some(object) = schema.as_object_mut() {
        object.remove("$schema");
        object.remove("title");
        object.remove("description");
    }
    portable(&mut schema);
    schema
}

/// JSON Schema's own formats; schemars also writes Rust's number types as formats.
const STANDARD_FORMATS: &[&str] =
    &["date-time", "date", "time", "duration", "email", "hostname", "ipv4", "ipv6", "uri", "uuid"];

fn portable(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            if object
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| !STANDARD_FORMATS.contains(&f))
            {
                object.remove("format");
            }
            if object.get("default").is_some_and(Value::is_null) {
                object.remove("default");
            }
            object.values_mut().for_each(portable);
        }
        Value::Array(items) => items.iter_mut().for_each(portable),
        _ => {}
    }
}

/// A tool as listed to clients: name, description, JSON schema of its arguments.
#[derive(Debug, Clone, Serialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    #[serde(rename = "inputSchema")]
    pub input_schema: Value,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Visits every schema node: the root and each schema under properties, items, anyOf and
    /// additionalProperties (a property map is not itself a schema).
    fn walk(schema: &Value, visit: &mut dyn FnMut(&serde_json::Map<String, Value>)) {
        let Some(object) = schema.as_object() else { return };
        visit(object);
        if let Some(properties) = object.get("properties").and_then(Value::as_object) {
            properties.values().for_each(|p| walk(p, visit));
        }
        for key in ["items", "additionalProperties"] {
            if let Some(sub) = object.get(key) {
                walk(sub, visit);
            }
        }
        if let Some(any_of) = object.get("anyOf").and_then(Value::as_array) {
            any_of.iter().for_each(|s| walk(s, visit));
        }
    }

    #[test]
    fn schemas_are_inline_and_portable() {
        for tool in Tool::ALL {
            let schema = tool.spec().input_schema;
            assert_eq!(schema["type"], "object", "{schema}");
            walk(&schema, &mut |object| {
                for key in ["$ref", "$defs", "$schema", "title"] {
                    assert!(!object.contains_key(key), "{} has {key}: {schema}", tool.name());
                }
                if let Some(format) = object.get("format").and_then(Value::as_str) {
                    assert!(STANDARD_FORMATS.contains(&format), "{}: {format}", tool.name());
                }
                if let Some(description) = object.get("description").and_then(Value::as_str) {
                    let internal = regex_like_spec_id(description);
                    assert!(!internal, "{}: internal note in {description:?}", tool.name());
                }
            });
        }
    }

    /// `(E3)`, `B8`, `O30`: ids of this repository's spec sections.
    fn regex_like_spec_id(text: &str) -> bool {
        text.split(|c: char| !c.is_ascii_alphanumeric()).any(|word| {
            let mut chars = word.chars();
            matches!(chars.next(), Some('B' | 'E' | 'J' | 'O'))
                && word.len() > 1
                && chars.all(|c| c.is_ascii_digit())
        })
    }

    #[test]
    fn eval_requires_cells_and_offers_both_languages() {
        let schema = Tool::Eval.spec().input_schema;
        assert_eq!(schema["required"], serde_json::json!(["cells"]), "{schema}");
        assert_eq!(schema["properties"]["cells"]["type"], "array", "{schema}");
        let language = &schema["properties"]["cells"]["items"]["properties"]["language"];
        assert_eq!(language["enum"], serde_json::json!(["py", "js"]), "{schema}");
        assert!(!schema.to_string().contains("javascript"), "{schema}");
    }

    #[test]
    fn eval_session_publishes_the_length_the_runtime_enforces() {
        let schema = Tool::Eval.spec().input_schema;
        let session = &schema["properties"]["session"];
        assert_eq!(session["minLength"], 1, "{schema}");
        assert_eq!(session["maxLength"], 64, "{schema}");
    }
}
