//! Exceptions a person approves: a bash call with `sandbox_permissions: "require_escalated"`
//! runs outside the sandbox for that call only, after someone says yes.
//!
//! The model can ask but never decide: the answer comes from an [`Approver`] the front end
//! supplies (MCP elicitation in `execkit mcp`, a callback in the library). Without one the call
//! is refused at once; a session-scoped yes is remembered for the exact command string until
//! the Toolkit closes.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use execkit_protocol::ToolResult;
use execkit_protocol::bash::{BashParams, SandboxPermissions};
use execkit_sandbox::Policy;
use execkit_tool::{Knob, KnobError, Lookup, Notes};

/// How long a person has to answer (`EXECKIT_SANDBOX_APPROVAL_TIMEOUT_S`).
const APPROVAL_TIMEOUT: Knob =
    Knob { name: "EXECKIT_SANDBOX_APPROVAL_TIMEOUT_S", default: 300, min: 1, max: 3600 };

/// Longest justification a call may give.
const MAX_JUSTIFICATION: usize = 500;

/// Longest part of the command the person is shown.
const MAX_SHOWN_COMMAND: usize = 300;

/// What the person is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRequest {
    pub command: String,
    pub justification: String,
    /// `Allow this command to run outside the sandbox? <command> — reason given: <why>`.
    pub message: String,
}

/// The person's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approval {
    /// Run this call outside the sandbox.
    Once,
    /// Run this exact command outside the sandbox whenever it is asked, until the Toolkit closes.
    Session,
    Declined,
}

/// Asks a person; the Toolkit bounds the wait.
pub type Approver =
    Arc<dyn Fn(ApprovalRequest) -> Pin<Box<dyn Future<Output = Approval> + Send>> + Send + Sync>;

/// Remembered approvals and the answer timeout of one Toolkit.
#[derive(Debug)]
pub(crate) struct Escalations {
    approved: Mutex<HashSet<String>>,
    timeout: Duration,
}

impl Escalations {
    pub(crate) fn from_lookup(
        lookup: &Lookup,
        notes: &mut Notes,
    ) -> Result<Escalations, KnobError> {
        let timeout = Duration::from_secs(APPROVAL_TIMEOUT.read(lookup, notes)?);
        Ok(Escalations { approved: Mutex::new(HashSet::new()), timeout })
    }

    /// Whether `params` runs outside the sandbox (`Ok(true)`), inside (`Ok(false)`), or not at
    /// all (the result that says why).
    pub(crate) async fn decide(
        &self,
        params: &BashParams,
        policy: &Policy,
        approver: Option<&Approver>,
        answer: &OnceLock<&'static str>,
    ) -> Result<bool, ToolResult> {
        if params.sandbox_permissions != Some(SandboxPermissions::RequireEscalated) {
            return Ok(false);
        }
        let justification = check_justification(params.justification.as_deref())?;
        if !policy.is_confined() {
            return Ok(false);
        }
        let command = params.command.clone();
        if self.remembered(&command) {
            let _ = answer.set("approved earlier for this session");
            return Ok(true);
        }
        let Some(approver) = approver else {
            let _ = answer.set("refused: no way to ask a person");
            return Err(ToolResult::error(
                "This command asked to run outside the sandbox, but this client cannot ask a \
                 person for approval. Nothing was run.",
            ));
        };
        let message = format!(
            "Allow this command to run outside the sandbox? {} — reason given: {justification}",
            shorten(&command, MAX_SHOWN_COMMAND)
        );
        let request = ApprovalRequest { command: command.clone(), justification, message };
        let answered = tokio::time::timeout(self.timeout, approver(request)).await;
        let _ = answer.set(match answered {
            Ok(Approval::Once) => "approved once",
            Ok(Approval::Session) => "approved for this session",
            Ok(Approval::Declined) => "declined",
            Err(_) => "no answer",
        });
        match answered {
            Ok(Approval::Once) => Ok(true),
            Ok(Approval::Session) => {
                if let Ok(mut approved) = self.approved.lock() {
                    approved.insert(command);
                }
                Ok(true)
            }
            Ok(Approval::Declined) => Err(ToolResult::error(
                "The person declined to run this command outside the sandbox.",
            )),
            Err(_) => Err(ToolResult::error(format!(
                "The person did not answer within {}.",
                spoken(self.timeout)
            ))),
        }
    }

    fn remembered(&self, command: &str) -> bool {
        self.approved.lock().is_ok_and(|approved| approved.contains(command))
    }
}

fn check_justification(text: Option<&str>) -> Result<String, ToolResult> {
    let text = text.map(str::trim).unwrap_or_default();
    if text.is_empty() {
        return Err(ToolResult::error(
            "Invalid argument \"justification\": required when sandbox_permissions is \
             \"require_escalated\"",
        ));
    }
    let chars = text.chars().count();
    if chars > MAX_JUSTIFICATION {
        return Err(ToolResult::error(format!(
            "Invalid argument \"justification\": at most {MAX_JUSTIFICATION} characters (got {chars})"
        )));
    }
    Ok(text.to_string())
}

fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// `5 minutes`, `1 minute`, `30 seconds`.
fn spoken(duration: Duration) -> String {
    let secs = duration.as_secs();
    match secs {
        60 => "1 minute".to_string(),
        s if s % 60 == 0 => format!("{} minutes", s / 60),
        1 => "1 second".to_string(),
        s if s < 60 => format!("{s} seconds"),
        s => format!("{} minutes {} seconds", s / 60, s % 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_is_spoken_and_long_commands_are_shortened() {
        assert_eq!(spoken(Duration::from_secs(300)), "5 minutes");
        assert_eq!(spoken(Duration::from_secs(2)), "2 seconds");
        assert_eq!(shorten("abcdef", 3), "abc…");
        assert_eq!(shorten("abc", 3), "abc");
    }
}

/// An optional [`Approver`] that can sit in `Debug` types.
#[derive(Clone, Default)]
pub(crate) struct ApproverSlot(pub Option<Approver>);

impl std::fmt::Debug for ApproverSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "Approver" } else { "NoApprover" })
    }
}
