//! From raw params to a checked request (B1–B12): everything before the spawn.

use std::path::{Path, PathBuf};

use execkit_output::artifact::{ArtifactId, ArtifactStore};
use execkit_output::clamp::{ResolvedTimeout, TimeoutPolicy, clamp_lines, resolve_timeout};
use execkit_process::env::validate_caller_env;
use execkit_protocol::ArgError;
use execkit_protocol::bash::BashParams;
use indexmap::IndexMap;

use crate::config::BashConfig;
use crate::cwd;
use crate::lexer;
use crate::meaning::{self, CommandKind};
use crate::normalize::{self, Allowed, Plan, TailRewrite};

/// The largest command accepted (B1).
const MAX_COMMAND_BYTES: usize = 1 << 20;

/// `async` in a one-shot front end, whose process (and every job in it) ends with the call.
const ONE_SHOT_ASYNC: &str = "Invalid argument \"async\": this one-shot call ends when it returns, \
     and a background job would be killed with it; run the command in the foreground, or start \
     it through the MCP server (execkit mcp) and watch it with the job tool";

/// A call that passed every check and is ready to spawn.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    /// The command as the caller sent it.
    pub original: String,
    /// The command that runs (normalised, artifact paths substituted, prefix applied).
    pub command: String,
    /// The normalised command without the prefix: what rules are checked against.
    pub normalized_command: String,
    /// The normalised command's stages when it is one pipeline: what exit meanings read (B34).
    pub stages: Option<Vec<Vec<String>>>,
    /// The original command's kind (B40).
    pub kind: CommandKind,
    pub cwd: PathBuf,
    pub env: IndexMap<String, String>,
    pub timeout: ResolvedTimeout,
    pub head: Option<u64>,
    pub tail: Option<u64>,
    /// Clamp notices, in the order they are made: timeout, then head, then tail (O23).
    pub notices: Vec<String>,
    pub normalized: Option<TailRewrite>,
    pub pty: bool,
    pub run_async: bool,
    /// The Supervisor's sandbox, or outside it for a call a person approved.
    pub confinement: execkit_process::Confinement,
}

/// Why a call stops before it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Rejection {
    /// An `Invalid argument …` line.
    Invalid(String),
    /// A cwd or artifact problem: one line, `isError`.
    Failed(String),
}

impl From<ArgError> for Rejection {
    fn from(err: ArgError) -> Self {
        Rejection::Invalid(err.to_string())
    }
}

/// What checking a call needs besides its params.
pub(crate) struct Prepare<'a> {
    pub config: &'a BashConfig,
    /// The Toolkit's working directory: the base every call resolves against.
    pub base_cwd: &'a Path,
    pub store: Option<&'a ArtifactStore>,
    pub max_timeout: Option<u64>,
    pub home: Option<&'a Path>,
}

impl Prepare<'_> {
    pub fn run(&self, params: BashParams) -> Result<Request, Rejection> {
        prepare(params, self)
    }
}

fn prepare(params: BashParams, ctx: &Prepare<'_>) -> Result<Request, Rejection> {
    let Prepare { config, base_cwd, store, max_timeout, home } = *ctx;
    check_command(&params.command)?;
    let run_async = params.run_async.unwrap_or(false);
    if run_async && config.one_shot {
        return Err(Rejection::Invalid(ONE_SHOT_ASYNC.to_string()));
    }
    let policy = if run_async { TimeoutPolicy::BASH_ASYNC } else { TimeoutPolicy::BASH };
    let timeout = resolve_timeout(params.timeout.as_ref(), policy, max_timeout)?;
    let mut notices: Vec<String> = timeout.notice.iter().cloned().collect();
    let mut head = None;
    let mut tail = None;
    if let Some(lines) = params.head {
        let (lines, notice) = clamp_lines("head", lines);
        head = Some(lines);
        notices.extend(notice);
    }
    if let Some(lines) = params.tail {
        let (lines, notice) = clamp_lines("tail", lines);
        tail = Some(lines);
        notices.extend(notice);
    }
    let env = params.env.unwrap_or_default();
    validate_caller_env(&env)?;

    let pty = params.pty.unwrap_or(false);
    let requested_cwd = params.cwd.filter(|c| !c.is_empty());
    // The command is lexed once; every rewrite and every later reading uses these tokens.
    let lexed = lexer::lex(&params.command);
    let allowed =
        Allowed { cd: requested_cwd.is_none(), tail: head.is_none() && tail.is_none() && !pty };
    let plan = normalize::plan(&params.command, &lexed, allowed);
    if let Some(rewrite) = &plan.tail {
        tail = Some(rewrite.tail);
    }
    let base = base_cwd;
    let mut dir = match &requested_cwd {
        Some(requested) => cwd::resolve(base, requested, home),
        None => base.to_path_buf(),
    };
    cwd::check(&dir, base).map_err(Rejection::Failed)?;
    for step in &plan.cd_steps {
        let next = cwd::resolve(&dir, &step.dir, home);
        cwd::check(&next, &dir)
            .map_err(|e| Rejection::Failed(format!("{e} (from \"{}\")", step.source)))?;
        dir = next;
    }
    let mut command = substitute_artifacts(&params.command, &plan, store)?;
    let normalized_command = command.clone();
    if let Some(prefix) = &config.prefix {
        command = format!("{prefix} {command}");
    }
    Ok(Request {
        original: params.command,
        command,
        normalized_command,
        cwd: dir,
        env,
        timeout,
        head,
        tail,
        notices,
        normalized: plan.tail,
        stages: plan.stages,
        kind: meaning::command_kind(&lexed),
        pty,
        run_async,
        confinement: execkit_process::Confinement::Policy,
    })
}

fn check_command(command: &str) -> Result<(), Rejection> {
    let invalid = |m: String| Rejection::Invalid(ArgError::new("command", m).to_string());
    if command.trim().is_empty() {
        return Err(invalid("empty".to_string()));
    }
    if let Some(at) = command.find('\0') {
        return Err(invalid(format!("contains a NUL byte at offset {at}")));
    }
    if command.len() > MAX_COMMAND_BYTES {
        return Err(invalid(format!(
            "{} bytes exceeds the {MAX_COMMAND_BYTES}-byte limit; write the script to a file and \
             run the file",
            command.len()
        )));
    }
    Ok(())
}

/// The kept part of the command, with B8's artifact words replaced by the artifacts' quoted
/// paths.
fn substitute_artifacts(
    command: &str,
    plan: &Plan,
    store: Option<&ArtifactStore>,
) -> Result<String, Rejection> {
    let mut out = String::with_capacity(plan.kept.len());
    let mut at = plan.kept.start;
    for word in &plan.artifacts {
        let unknown = || {
            Rejection::Failed(format!(
                "Unknown artifact in command: artifact://{} (not found or expired)",
                word.id
            ))
        };
        let (id, _) = ArtifactId::parse(&word.id).map_err(|_| unknown())?;
        let path = store.ok_or_else(unknown)?.out_path(&id).map_err(|_| unknown())?;
        out.push_str(&command[at..word.start]);
        out.push_str(&normalize::shell_quote(&path.to_string_lossy()));
        at = word.end;
    }
    out.push_str(&command[at..plan.kept.end]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_checks() {
        let text = |c: &str| match check_command(c) {
            Err(Rejection::Invalid(t)) => t,
            other => panic!("{other:?}"),
        };
        assert_eq!(text("   "), "Invalid argument \"command\": empty");
        assert_eq!(text("ab\0c"), "Invalid argument \"command\": contains a NUL byte at offset 2");
        assert_eq!(
            text(&"x".repeat(2 << 20)),
            "Invalid argument \"command\": 2097152 bytes exceeds the 1048576-byte limit; write \
             the script to a file and run the file"
        );
    }
}
