//! How one cell ended, in words: the typed end of a cell (and what the pool learned from it)
//! becomes its status, the summary's reason and the note under its text. Nothing here reads
//! back or patches text produced elsewhere.

use execkit_process::ExitStatus;

use crate::backend::Interruption;
use crate::cell::{CellEnd, Stop};
use crate::collect::CellError;
use crate::error::StartError;
use crate::kernel::describe_exit;
use crate::pool::LossReason;
use crate::report::{CellReport, Status};
use crate::result::short_evalue;

/// What a crash left behind, gathered by the runner after the pool recorded it.
#[derive(Debug, Clone)]
pub struct Crash {
    /// The key had not died before: the next cell restarts it automatically.
    pub first_death: bool,
    /// The dead kernel's diagnostic tail.
    pub diag: String,
    /// The backend's reading of the death (`ran out of memory (limit 2048 MiB)`).
    pub cause: Option<String>,
}

/// Everything the words of a cell's end depend on.
pub struct EndFacts<'a> {
    /// `Python`, `JavaScript`.
    pub lang: &'static str,
    pub timeout_s: u64,
    pub cpu_ms: Option<u64>,
    pub grace_s: u64,
    /// What the kernel raises on SIGINT (`KeyboardInterrupt`).
    pub interrupt_name: &'static str,
    pub error: Option<&'a CellError>,
    pub crash: Option<Crash>,
    /// How the cell was stopped (a signal, or an `interrupt` frame with a kill after it).
    pub interruption: Interruption,
    /// For a kernel killed while busy and replaced at once: what its replacement restored.
    pub restart: Option<String>,
}

/// A cell's end in words, plus what it means for the kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct Ending {
    pub status: Status,
    pub summary: Option<String>,
    pub note: Option<String>,
    pub state_lost: Option<LossReason>,
    pub killed: bool,
}

impl Ending {
    fn new(status: Status, summary: Option<String>, note: Option<String>) -> Ending {
        Ending { status, summary, note, state_lost: None, killed: false }
    }

    fn lost(mut self, reason: LossReason) -> Ending {
        self.state_lost = Some(reason);
        self
    }
}

/// The words for `end`.
pub fn describe(end: &CellEnd, facts: &EndFacts<'_>) -> Ending {
    let lang = facts.lang;
    match end {
        CellEnd::Ok => Ending::new(Status::Ok, None, None),
        CellEnd::Error => {
            let what =
                facts.error.map_or("error".to_string(), |e| error_summary(&e.ename, &e.evalue));
            Ending::new(Status::Error, Some(format!("failed: {what}.")), None)
        }
        CellEnd::Interrupted(Stop::Timeout) => interrupted_on_timeout(facts),
        CellEnd::Interrupted(Stop::Cancel) => {
            Ending::new(Status::Cancelled, Some("was cancelled.".into()), None)
        }
        CellEnd::Killed(stop) => {
            Ending { killed: true, ..killed(*stop, facts) }.lost(LossReason::TimeoutKill)
        }
        CellEnd::Crashed(exit) => crashed(*exit, facts),
        CellEnd::ProtocolError(why) => broke_protocol(lang, why),
    }
}

fn cpu_clause(cpu_ms: Option<u64>) -> String {
    cpu_ms.map_or(String::new(), |ms| format!(" (CPU {:.1} s)", ms as f64 / 1000.0))
}

fn interrupted_on_timeout(facts: &EndFacts<'_>) -> Ending {
    let (t, cpu) = (facts.timeout_s, cpu_clause(facts.cpu_ms));
    let note = match facts.interruption {
        Interruption::Signal => format!(
            "[cell timed out after {t} s{cpu}; interrupted with {}; variables are kept]",
            facts.interrupt_name
        ),
        // Only a cell that was waiting can answer the interrupt frame.
        Interruption::Frame { .. } => {
            format!("[cell timed out after {t} s while waiting; interrupted; variables are kept]")
        }
    };
    Ending::new(
        Status::Timeout,
        Some(format!("timed out after {t} s and was interrupted; variables are kept.")),
        Some(note),
    )
}

fn killed(stop: Stop, facts: &EndFacts<'_>) -> Ending {
    let (lang, t, grace) = (facts.lang, facts.timeout_s, facts.grace_s);
    let cpu = cpu_clause(facts.cpu_ms);
    if let Some(clause) = &facts.restart {
        return killed_while_busy(stop, facts, clause);
    }
    match stop {
        Stop::Timeout => Ending::new(
            Status::Timeout,
            Some(format!("timed out after {t} s; the {lang} kernel was restarted.")),
            Some(format!(
                "[cell timed out after {t} s{cpu} and ignored the interrupt for {grace} s; \
                 the {lang} kernel was killed and its variables are lost]"
            )),
        ),
        Stop::Cancel => Ending::new(
            Status::Cancelled,
            Some("was cancelled.".into()),
            Some(format!(
                "[the cell ignored the interrupt for {grace} s; the {lang} kernel was \
                 killed and its variables are lost]"
            )),
        ),
    }
}

/// A busy kernel killed and replaced at once (spec JS16): the note says what came back.
fn killed_while_busy(stop: Stop, facts: &EndFacts<'_>, clause: &str) -> Ending {
    let (lang, t) = (facts.lang, facts.timeout_s);
    match stop {
        Stop::Timeout => Ending::new(
            Status::Timeout,
            Some(format!("timed out after {t} s; the {lang} kernel was restarted.")),
            Some(format!(
                "[cell timed out after {t} s{}; the {lang} kernel was busy and was restarted; \
                 {clause}]",
                cpu_clause(facts.cpu_ms)
            )),
        ),
        Stop::Cancel => Ending::new(
            Status::Cancelled,
            Some("was cancelled.".into()),
            Some(format!(
                "[the cell was cancelled while busy; the {lang} kernel was restarted; {clause}]"
            )),
        ),
    }
}

fn crashed(exit: Option<ExitStatus>, facts: &EndFacts<'_>) -> Ending {
    let lang = facts.lang;
    let (first_death, diag, cause) = match &facts.crash {
        Some(c) => (c.first_death, c.diag.as_str(), c.cause.clone()),
        None => (true, "", None),
    };
    let next = if first_death {
        "The next cell starts a fresh kernel (automatic restart 1 of 1)."
    } else {
        "It will not be restarted automatically; run a cell with \"reset\": true."
    };
    let (ended, when) = match cause {
        Some(cause) => (cause, ""),
        None => (exit.map_or("ended unexpectedly".to_string(), exit_phrase), " during this cell"),
    };
    let mut note = format!("[the {lang} kernel {ended}{when}; its variables are lost. {next}]");
    if !diag.trim().is_empty() {
        note.push('\n');
        note.push_str(diag);
    }
    Ending::new(Status::Crashed, Some(format!("crashed: the {lang} kernel {ended}.")), Some(note))
        .lost(LossReason::Crashed)
}

/// A frame the kernel should not have sent (or a flood of bad lines): it was killed.
fn broke_protocol(lang: &str, why: &str) -> Ending {
    Ending::new(
        Status::Crashed,
        Some(format!("crashed: the {lang} kernel broke the protocol ({why}).")),
        Some(format!(
            "[the {lang} kernel broke the protocol ({why}) and was killed; its variables are lost]"
        )),
    )
    .lost(LossReason::ProtocolError)
}

/// What the pool records as a crashed kernel's death: `exited with code 3`.
pub fn death_description(exit: Option<ExitStatus>) -> String {
    exit.map_or("ended unexpectedly".to_string(), describe_exit)
}

/// The verb phrase after "the kernel": `exited with code 3`, `was killed by SIGKILL`.
fn exit_phrase(status: ExitStatus) -> String {
    match (status.code, status.signal) {
        (_, Some(_)) => format!("was {}", describe_exit(status)),
        (Some(_), None) => describe_exit(status),
        (None, None) => "ended unexpectedly".to_string(),
    }
}

/// `KeyError: 'name'`, or the bare name when the exception carries no message.
fn error_summary(ename: &str, evalue: &str) -> String {
    let short = short_evalue(evalue);
    let short = short.trim_end_matches('.');
    if short.trim().is_empty() { ename.to_string() } else { format!("{ename}: {short}") }
}

/// Why a cell got no kernel.
#[derive(Debug)]
pub enum NoKernel {
    /// No backend, no executable, a dead key, every kernel busy: `KernelUnavailable`.
    Unavailable(String),
    /// The kernel did not come up: `KernelStartError`, with its diagnostic tail.
    StartFailed(StartError),
    /// The kernel sent a frame before `ready` and was killed: the cell crashed.
    BrokeBeforeReady(String),
}

/// The report of a cell that got no kernel.
pub fn no_kernel(mut report: CellReport, why: NoKernel, lang: &str) -> CellReport {
    match why {
        NoKernel::Unavailable(msg) => fail(report, "KernelUnavailable", &msg),
        NoKernel::StartFailed(e) => {
            let mut r = fail(report, "KernelStartError", &e.to_string());
            if let Some(diag) = e.diag() {
                r.body.push_str(&format!("\n{diag}"));
            }
            r
        }
        NoKernel::BrokeBeforeReady(reason) => {
            let ending = broke_protocol(lang, &reason);
            report.status = ending.status;
            report.kernel.state_lost = ending.state_lost.map(LossReason::as_str);
            report.summary = ending.summary;
            report.notes.extend(ending.note);
            report
        }
    }
}

/// A cell that failed before running, reported as the exception `ename: msg`.
fn fail(mut report: CellReport, ename: &str, msg: &str) -> CellReport {
    report.status = Status::Error;
    report.summary = Some(format!("failed: {}.", error_summary(ename, msg)));
    report.body = format!("{ename}: {msg}");
    report.error = Some(CellError {
        ename: ename.to_string(),
        evalue: msg.to_string(),
        traceback: Vec::new(),
    });
    report.duration_ms = 0;
    report
}
