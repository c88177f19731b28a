//! The closed set of tools and their published schemas.

use execkit_protocol::bash::BashParams;
use execkit_protocol::eval::EvalParams;
use execkit_protocol::job::JobParams;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

/// Every tool execkit serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    Bash,
    Eval,
    Job,
}

impl Tool {
    pub const ALL: [Tool; 3] = [Tool::Bash, Tool::Eval, Tool::Job];

    pub fn name(self) -> &'static str {
        match self {
            Tool::Bash => "bash",
            Tool::Eval => "eval",
            Tool::Job => "job",
        }
    }

    pub fn from_name(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|t| t.name() == name)
    }

    fn description(self) -> &'static str {
        match self {
            Tool::Bash => BASH_DESCRIPTION,
            Tool::Eval => EVAL_DESCRIPTION,
            Tool::Job => JOB_DESCRIPTION,
        }
    }

    fn schema(self) -> Value {
        match self {
            Tool::Bash => schema_of::<BashParams>(),
            Tool::Eval => schema_of::<EvalParams>(),
            Tool::Job => schema_of::<JobParams>(),
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

const EVAL_DESCRIPTION: &str = "Run cells of Python in a persistent kernel: variables, imports \
and functions survive between calls of the same `session`. Cells run in order and the first \
failing cell stops the rest. The last expression of a cell is shown; `display()` shows rich \
values and matplotlib figures come back as images. Top-level `await`, `%magics` and `!shell` \
work. Each cell has its own timeout (default 30 s); on a timeout the kernel is interrupted and \
keeps its state when it can, and any loss of state is always announced. `input()` fails at once: \
pass data in the code.";

const JOB_DESCRIPTION: &str = "Watch background jobs started with bash `async: true` (or \
processes a command left running). `poll` waits until one of the given jobs (or any running \
job) finishes, up to 30 s, and shows finished results and the tail of running ones; `cancel` \
stops jobs and their whole process tree; `list` shows every job at once.";

fn schema_of<T: JsonSchema>() -> Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null);
    if let Some(object) = schema.as_object_mut() {
        object.remove("$schema");
        object.remove("title");
    }
    schema
}

/// A tool as listed to clients: name, description, JSON schema of its arguments.
#[derive(Debug, Clone, Serialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    #[serde(rename = "inputSchema")]
    pub input_schema: Value,
}
