//! The approval channel of `execkit bash --escalate`: the person at the terminal.
//!
//! A command that asks to run outside the sandbox needs a person's yes. `execkit bash` has one
//! only when its stdin is a terminal: it then writes the request to stderr and reads one line
//! (`y` or `yes` runs the command once; anything else, or end of input, declines). Without a
//! terminal there is no approver, and the Toolkit refuses the call with its reason. The
//! answer is logged to stderr in one line, as `execkit mcp` logs elicitation answers.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;

use execkit::{Approval, ApprovalRequest, Approver};

/// The terminal approver, or `None` when stdin is not a terminal.
pub fn approver() -> Option<Approver> {
    if !std::io::stdin().is_terminal() {
        return None;
    }
    Some(Arc::new(|request: ApprovalRequest| {
        Box::pin(async move {
            let command = request.command.clone();
            let asked = tokio::task::spawn_blocking(move || ask(&request.message));
            let approval = asked.await.unwrap_or(Approval::Declined);
            log(approval, &command);
            approval
        })
    }))
}

/// Writes the question to stderr and reads the answer from stdin.
fn ask(message: &str) -> Approval {
    let mut stderr = std::io::stderr().lock();
    let _ = write!(stderr, "execkit: {message}\nRun it outside the sandbox once? [y/N] ");
    let _ = stderr.flush();
    drop(stderr);
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(n) if n > 0 && is_yes(&line) => Approval::Once,
        _ => Approval::Declined,
    }
}

fn log(approval: Approval, command: &str) {
    let what = if approval == Approval::Declined { "declined" } else { "approved once" };
    eprintln!("execkit: sandbox: {what}: {command}");
}

fn is_yes(line: &str) -> bool {
    matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_y_or_yes_approves() {
        assert!(is_yes("y\n") && is_yes(" YES \r\n"));
        assert!(!is_yes("\n") && !is_yes("n\n") && !is_yes("yep\n"));
    }
}
