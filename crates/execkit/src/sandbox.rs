//! What the model sees of the sandbox: the refusal when it cannot be enforced, the
//! `structuredContent.sandbox` report, the denial line, and the policy in the descriptions.
//!
//! The enforcement itself is the Supervisor's ([`execkit_process::Sandbox`]): every process a
//! tool starts is confined there. This module only reads the policy and the results.

use std::path::{Path, PathBuf};

use execkit_process::Supervisor;
use execkit_protocol::{Content, ToolResult};
use execkit_sandbox::{Enforcement, Mode, SandboxOptions, SandboxReport, find_denial};
use execkit_tool::Lookup;
use serde_json::{Map, Value};

use crate::doctor::DoctorSection;
use crate::tools::Tool;

/// The policy from every source, highest precedence first: the front end's options (flags,
/// library), the environment, the project's `.execkit/sandbox.json`, then the user's.
pub(crate) fn resolve_policy(
    options: SandboxOptions,
    lookup: &Lookup,
    cwd: &Path,
) -> Result<execkit_sandbox::Policy, String> {
    let err = |e: execkit_sandbox::PolicyError| e.to_string();
    let project = SandboxOptions::from_file(&cwd.join(".execkit/sandbox.json")).map_err(err)?;
    let user = match lookup.non_empty("HOME") {
        Some(home) => SandboxOptions::from_file(&Path::new(&home).join(".execkit/sandbox.json"))
            .map_err(err)?,
        None => SandboxOptions::default(),
    };
    let merged =
        SandboxOptions::merged([options, SandboxOptions::from_lookup(lookup), project, user]);
    execkit_sandbox::Policy::resolve(&merged, cwd, lookup).map_err(err)
}

/// Whether a tool starts processes, and so is confined and reports the sandbox.
fn starts_processes(tool: Tool) -> bool {
    matches!(tool, Tool::Bash | Tool::Eval)
}

/// The X10 refusal of a call that would start a process when the mode cannot be enforced.
pub(crate) fn refusal(supervisor: &Supervisor, tool: Tool) -> Option<ToolResult> {
    if !starts_processes(tool) {
        return None;
    }
    let sandbox = supervisor.sandbox();
    let text = sandbox.unavailable()?;
    let mut result = ToolResult::error(text);
    let report = SandboxReport::new(sandbox.policy(), sandbox.enforcement());
    set_report(&mut result, &report);
    Some(result)
}

/// Adds `structuredContent.sandbox`, the line for a cwd outside the roots, and the denial line.
pub(crate) fn annotate(
    supervisor: &Supervisor,
    tool: Tool,
    call_cwd: &Path,
    escalated: bool,
    result: &mut ToolResult,
) {
    let sandbox = supervisor.sandbox();
    let policy = sandbox.policy();
    if !starts_processes(tool) || !policy.is_confined() {
        return;
    }
    let mut report = SandboxReport::new(policy, sandbox.enforcement());
    report.escalated = escalated;
    let mut lines = Vec::new();
    if escalated {
        set_report(result, &report);
        return;
    }
    if policy.mode == Mode::WorkspaceWrite && !policy.allows_write(call_cwd) {
        lines.push(format!(
            "[sandbox: {} is outside the writable roots; writes here will be denied]",
            call_cwd.display()
        ));
    }
    if failed(result) {
        let text = result.text();
        if let Some(denial) = find_denial(&text, policy, call_cwd) {
            report.denied = true;
            lines.push(denial.line(policy, tool == Tool::Bash));
        }
    }
    append_lines(result, &lines);
    set_report(result, &report);
}

/// A call whose output may hold a denial: an error, a non-zero exit, or an eval cell (whose
/// exceptions do not end the kernel).
fn failed(result: &ToolResult) -> bool {
    let exit =
        result.structured_content.as_ref().and_then(|s| s.get("exit_code")).and_then(Value::as_i64);
    result.is_error || exit.is_some_and(|c| c != 0) || exit.is_none()
}

fn set_report(result: &mut ToolResult, report: &SandboxReport) {
    let Ok(value) = serde_json::to_value(report) else { return };
    match &mut result.structured_content {
        Some(Value::Object(map)) => {
            map.insert("sandbox".into(), value);
        }
        other => {
            let mut map = Map::new();
            map.insert("sandbox".into(), value);
            *other = Some(Value::Object(map));
        }
    }
}

fn append_lines(result: &mut ToolResult, lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    let text = lines.join("\n");
    match result.content.iter_mut().rev().find_map(|c| match c {
        Content::Text { text } => Some(text),
        _ => None,
    }) {
        Some(existing) => {
            existing.push('\n');
            existing.push_str(&text);
        }
        None => result.content.push(Content::text(text)),
    }
}

/// The call's working directory: its `cwd` argument against the Toolkit's, else the Toolkit's.
pub(crate) fn call_cwd(args: &Value, base: &Path) -> PathBuf {
    match args.get("cwd").and_then(Value::as_str) {
        Some(cwd) if !cwd.is_empty() => base.join(cwd),
        _ => base.to_path_buf(),
    }
}

/// The policy sentence after a confined tool's description.
pub(crate) fn describe(supervisor: &Supervisor, tool: Tool, description: &mut String) {
    if !starts_processes(tool) {
        return;
    }
    if let Some(sentence) = supervisor.sandbox().policy().description() {
        description.push(' ');
        description.push_str(&sentence);
    }
}

/// `execkit doctor`'s sandbox section.
pub(crate) fn doctor(supervisor: &Supervisor) -> DoctorSection {
    let sandbox = supervisor.sandbox();
    let policy = sandbox.policy();
    if !policy.is_confined() {
        let line =
            "mode: off (nothing is confined; start with --sandbox workspace-write to confine)";
        return DoctorSection::new("sandbox", vec![line.to_string()]);
    }
    let list = |paths: &[PathBuf]| match paths {
        [] => "none".to_string(),
        paths => paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "),
    };
    let mut lines = vec![
        format!("mode: {}", policy.mode.as_str()),
        format!("network: {}", policy.network.as_str()),
        format!("writable roots: {}", list(&policy.writable_roots)),
        format!("protected (read-only): {}", list(&policy.protected)),
        format!("denied for reading: {}", list(&policy.denied)),
    ];
    lines.push(match sandbox.enforcement() {
        Enforcement::Full => "enforcement: full (Landlock, seccomp, namespaces)".to_string(),
        Enforcement::Partial { missing } => {
            format!("enforcement: partial; not enforced: {}", missing.join("; "))
        }
        Enforcement::Unavailable { reason } => format!(
            "enforcement: unavailable ({reason}); every call that would start a process fails"
        ),
    });
    if let Some(reason) = sandbox.namespace_error() {
        lines.push(format!("namespaces: {reason}"));
    }
    DoctorSection::new("sandbox", lines)
}
