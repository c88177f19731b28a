//! Ending a session tree, children newest first, then the root. For each session every step
//! is bounded, errors are collected, none is fatal: `terminate` when the adapter supports it,
//! `disconnect`, close the connection (an stdio adapter's stdin with it: debugpy exits only
//! then, and an open child connection also kept it alive), wait for the adapter, kill its
//! process group, kill the processes started for `runInTerminal`.

use std::time::Duration;

use execkit_dap::wire::KnownEvent;
use serde_json::json;
use tokio::time::Instant;

use crate::session::{Session, Status};

/// How long each step of the sequence may take.
const STEP: Duration = Duration::from_secs(2);

/// What the sequence saw.
#[derive(Debug, Clone, Default)]
pub struct Ended {
    pub exit_code: Option<i64>,
}

/// Runs the sequence on the whole tree: the children newest first, then the root.
/// `terminate_debuggee` defaults to true when the root was launched, false when it was
/// attached (terminating an attach detaches).
pub async fn sequence(root: &Session, terminate_debuggee: Option<bool>) -> Ended {
    let kill_debuggee = terminate_debuggee.unwrap_or(!root.attached);
    for child in root.tree.close().iter().rev() {
        one(child, kill_debuggee).await;
    }
    one(root, kill_debuggee).await
}

/// Ends one session of the tree.
pub async fn one(session: &Session, kill_debuggee: bool) -> Ended {
    let client = &session.client;
    let live = session.status().is_live() && !client.is_closed();
    if live && kill_debuggee && session.capabilities.flag("supportsTerminateRequest") {
        let until = Instant::now() + STEP;
        if client.request("terminate", None, until).await.is_ok() {
            let ended = |s: &mut crate::session::SessionState| s.status == Status::Terminated;
            while !session.with(ended) && Instant::now() < until {
                let mut halts = session.halts.clone();
                let _ = tokio::time::timeout_at(until, halts.changed()).await;
            }
        }
    }
    if !client.is_closed() {
        let args = json!({"terminateDebuggee": kill_debuggee});
        let _ = client.request("disconnect", Some(args), Instant::now() + STEP).await;
    }
    let _ = tokio::time::timeout(STEP, client.close()).await;
    if let Some(process) = client.process() {
        let exited = process.wait_exit(Instant::now() + STEP).await.is_some();
        if !exited {
            process.kill(STEP).await;
        }
    }
    let terminals =
        std::mem::take(&mut *session.terminals.lock().unwrap_or_else(|e| e.into_inner()));
    for tree in terminals {
        tree.kill(STEP).await;
    }
    // Late events (an exit code after disconnect) are still in the queue.
    for record in client.drain_events() {
        if let Some(KnownEvent::Exited(body)) = record.known() {
            session.with(|s| s.exit_code = Some(body.exit_code));
        }
    }
    session.stop_tasks();
    session.with(|s| {
        if s.status.is_live() {
            s.status = Status::Terminated;
        }
        Ended { exit_code: s.exit_code }
    })
}
