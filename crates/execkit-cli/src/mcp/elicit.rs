//! Asking the person, through MCP elicitation, whether a command may run outside the sandbox.
//!
//! Only when the client declared the `elicitation` capability: the server sends
//! `elicitation/create` with the Toolkit's question and a form of one boolean `approve` and a
//! `scope`. An `accept` with `approve: true` runs the command; anything else (decline, cancel,
//! `approve: false`, a failed request) declines it. Every answer is logged to stderr in one
//! line for the person watching.

use std::sync::Arc;

use execkit::{Approval, ApprovalRequest, Approver};
use rmcp::service::{ElicitationError, ElicitationMode};
use rmcp::{Peer, RoleServer};
use schemars::JsonSchema;
use serde::Deserialize;

/// The form the person fills in.
#[derive(Debug, Deserialize, JsonSchema)]
struct EscalationAnswer {
    /// Run the command outside the sandbox.
    approve: bool,
    /// For this call only, or for this exact command until the server stops.
    #[serde(default)]
    #[schemars(schema_with = "scope_schema")]
    scope: Option<Scope>,
}

/// The scope as the inline string enum elicitation forms take (no `$ref`, no `null`).
fn scope_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "title": "Scope",
        "description": "For this call only, or for this exact command until the server stops.",
        "enum": ["once", "this command for this session"]
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
enum Scope {
    #[serde(rename = "once")]
    Once,
    #[serde(rename = "this command for this session")]
    Session,
}

rmcp::elicit_safe!(EscalationAnswer);

/// An approver that asks through `peer`, or `None` when the client cannot be asked.
pub fn approver(peer: &Peer<RoleServer>) -> Option<Approver> {
    if !peer.supported_elicitation_modes().contains(&ElicitationMode::Form) {
        return None;
    }
    let peer = peer.clone();
    Some(Arc::new(move |request: ApprovalRequest| {
        let peer = peer.clone();
        Box::pin(async move {
            let answer = peer.elicit::<EscalationAnswer>(request.message.clone()).await;
            let approval = match answer {
                Ok(Some(EscalationAnswer { approve: true, scope: Some(Scope::Session) })) => {
                    Approval::Session
                }
                Ok(Some(EscalationAnswer { approve: true, .. })) => Approval::Once,
                Ok(_)
                | Err(ElicitationError::UserDeclined)
                | Err(ElicitationError::UserCancelled) => Approval::Declined,
                Err(err) => {
                    log_failure(&err, &request.command);
                    Approval::Declined
                }
            };
            log(approval, &request.command);
            approval
        })
    }))
}

#[allow(clippy::print_stderr)] // the person watching the server reads its stderr
fn log(approval: Approval, command: &str) {
    let what = match approval {
        Approval::Once => "approved once",
        Approval::Session => "approved for this session",
        Approval::Declined => "declined",
    };
    eprintln!("execkit: sandbox: {what}: {command}");
}

#[allow(clippy::print_stderr)] // the person watching the server reads its stderr
fn log_failure(err: &ElicitationError, command: &str) {
    eprintln!("execkit: sandbox: the approval request failed ({err}): {command}");
}
