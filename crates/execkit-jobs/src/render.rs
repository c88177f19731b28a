//! The texts and JSON the job tool shows: headers, summaries, the list table, the per-job
//! entries (J11–J16).

use serde_json::{Value, json};

use crate::job::{Job, JobState};

/// `completed, exit 0`, `failed, exit 2`, `failed, SIGKILL`, `timed_out`, `cancelled`, `running`.
pub(crate) fn outcome_words(job: &Job) -> String {
    match &job.end {
        None => "running".to_string(),
        Some(end) => match (end.state, end.exit_code, &end.signal) {
            (JobState::Completed | JobState::Failed, _, Some(sig)) => {
                format!("{}, {sig}", end.state.as_str())
            }
            (JobState::Completed | JobState::Failed, Some(code), None) => {
                format!("{}, exit {code}", end.state.as_str())
            }
            (state, _, _) => state.as_str().to_string(),
        },
    }
}

fn exit_part(job: &Job) -> Option<String> {
    let end = job.end.as_ref()?;
    match (&end.signal, end.exit_code) {
        (Some(sig), _) => Some(sig.clone()),
        (None, Some(code)) => Some(format!("exit {code}")),
        (None, None) => None,
    }
}

/// `### bg_2 · completed · exit 0 · 41.2 s · npm test`
pub(crate) fn header(job: &Job) -> String {
    let mut parts = vec![job.id_text(), job.state().as_str().to_string()];
    parts.extend(exit_part(job));
    parts.push(format!("{:.1} s", job.wall().as_secs_f64()));
    parts.push(job.start.label.clone());
    format!("### {}", parts.join(" · "))
}

/// One summary line for jobs already reported: `bg_2: completed, exit 0 after 41.2 s (reported)`.
pub(crate) fn summary(job: &Job) -> String {
    format!(
        "{}: {} after {:.1} s (reported before){}",
        job.id_text(),
        outcome_words(job),
        job.wall().as_secs_f64(),
        job.start.artifact.as_deref().map(|a| format!("; {a}")).unwrap_or_default()
    )
}

/// `bg_2  completed  exit 0  41.2 s  npm test  artifact://0b7e44d1`, aligned across rows.
pub(crate) fn list_lines(jobs: &[&Job]) -> Vec<String> {
    let rows: Vec<[String; 6]> = jobs
        .iter()
        .map(|job| {
            let status = exit_part(job).unwrap_or_default();
            [
                job.id_text(),
                job.state().as_str().to_string(),
                status,
                format!("{:.1} s", job.wall().as_secs_f64()),
                job.start.label.clone(),
                job.start.artifact.clone().unwrap_or_default(),
            ]
        })
        .collect();
    let mut widths = [0usize; 6];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    rows.iter()
        .map(|row| {
            let cells: Vec<String> = row
                .iter()
                .zip(widths)
                .enumerate()
                .filter(|(i, (cell, _))| *i < 5 || !cell.is_empty())
                .map(|(i, (cell, w))| if i == 5 { cell.clone() } else { format!("{cell:<w$}") })
                .collect();
            cells.join("  ").trim_end().to_string()
        })
        .collect()
}

/// The line for an id the table does not hold (never registered, or past retention).
pub(crate) fn not_found(id: u64, retention: std::time::Duration) -> String {
    format!("bg_{id}: not found (finished jobs are kept {} s)", retention.as_secs())
}

/// The last line of output with text, for wait progress (J13).
pub(crate) fn last_line(tail: &str) -> &str {
    tail.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("")
}

/// The last `n` lines of a tail.
pub(crate) fn last_lines(tail: &str, n: usize) -> String {
    let lines: Vec<&str> = tail.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// One job's entry in `structuredContent.jobs` (J16): id, state, exit, label, times, artifact.
pub(crate) fn job_json(job: &Job) -> Value {
    let end = job.end.as_ref();
    json!({
        "id": job.id_text(),
        "state": job.state(),
        "exit_code": end.and_then(|e| e.exit_code),
        "signal": end.and_then(|e| e.signal.clone()),
        "label": job.start.label,
        "started_at": job.started_at_ms(),
        "wall_ms": job.wall().as_millis() as u64,
        "timeout_s": job.start.timeout_s,
        "artifact": job.start.artifact,
        "adopted": job.start.adopted,
        "reported": job.reported,
    })
}
