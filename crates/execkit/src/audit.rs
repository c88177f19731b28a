//! The audit log: every tool call as one JSON line, for the person watching the agent.
//!
//! Lines go to `~/.execkit/log/<YYYY-MM-DD>.jsonl` (UTC date; files 0600, the directory 0700);
//! files older than 30 days are removed when a Toolkit starts (once its kernels are up);
//! `EXECKIT_AUDIT=0` turns it off.
//! A line holds the time, the tool, a summary of the arguments (the command, or the cell's
//! first line, at most 300 characters, with credential-looking values masked), the cwd, the
//! sandbox policy, the approval asked and its answer, the outcome, the exit code, the duration
//! and the artifacts named. `execkit log` reads them back ([`read_since`]). Writing is best
//! effort: a log that cannot be written never fails a call.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use execkit_protocol::ToolResult;
use execkit_tool::Lookup;
use serde_json::{Value, json};

/// How long log files are kept.
const KEEP: Duration = Duration::from_secs(30 * 24 * 3600);
/// The summary of the arguments is cut here, like the command shown in an approval request.
const MAX_SUMMARY: usize = 300;

/// Where the log lives, or nothing when it is off.
#[derive(Debug, Clone)]
pub(crate) struct AuditLog {
    dir: Option<PathBuf>,
    /// Today's file, opened at the first call of the day and kept: a call then costs one
    /// `write`, instead of a `mkdir`, an `open`, the writes and a `close`.
    today: Arc<Mutex<Option<OpenDay>>>,
}

#[derive(Debug)]
struct OpenDay {
    date: String,
    file: std::fs::File,
}

/// One call, as the Toolkit saw it.
pub(crate) struct CallRecord<'a> {
    pub tool: &'a str,
    /// From [`AuditLog::summary`], taken before the arguments were consumed.
    pub summary: String,
    pub cwd: &'a Path,
    pub policy: Value,
    pub approval: Option<&'static str>,
    pub started: SystemTime,
    pub result: &'a ToolResult,
}

impl AuditLog {
    pub(crate) fn from_lookup(lookup: &Lookup) -> AuditLog {
        let dir = (lookup.get("EXECKIT_AUDIT") != Some("0")).then(|| log_dir(lookup)).flatten();
        AuditLog { dir, today: Arc::default() }
    }

    /// Removes the files older than the retention (the Toolkit runs it after start-up).
    pub(crate) fn prune(&self) {
        if let Some(dir) = &self.dir {
            prune(dir);
        }
    }

    /// The summary of a call's arguments, or `None` when the log is off (nothing to record).
    pub(crate) fn summary(&self, args: &Value) -> Option<String> {
        self.dir.as_ref().map(|_| summary(args))
    }

    /// Appends `record` as one line; errors are ignored.
    pub(crate) fn record(&self, record: &CallRecord<'_>) {
        let Some(dir) = &self.dir else { return };
        // One write of the whole line: other execkit processes append to the same file.
        let line = format!("{}\n", entry(record));
        let day = date(unix_ms(SystemTime::now()));
        let mut today = self.today.lock().unwrap_or_else(PoisonError::into_inner);
        if today.as_ref().is_none_or(|open| open.date != day) {
            *today = open_day(dir, day);
        }
        if let Some(open) = today.as_mut() {
            let _ = open.file.write_all(line.as_bytes());
        }
    }
}

/// `<dir>/<date>.jsonl` opened for appending, the directory made when missing.
fn open_day(dir: &Path, date: String) -> Option<OpenDay> {
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).ok()?;
    let file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .open(dir.join(format!("{date}.jsonl")))
        .ok()?;
    Some(OpenDay { date, file })
}

/// `~/.execkit/log`, from `HOME`.
pub fn log_dir(lookup: &Lookup) -> Option<PathBuf> {
    lookup.non_empty("HOME").map(|home| PathBuf::from(home).join(".execkit").join("log"))
}

/// The default log directory, read from this process's environment.
pub fn default_log_dir() -> Option<PathBuf> {
    log_dir(&crate::settings::toolkit_lookup([]))
}

fn entry(record: &CallRecord<'_>) -> Value {
    let ms = unix_ms(record.started);
    let duration = SystemTime::now().duration_since(record.started).unwrap_or_default();
    let structured = record.result.structured_content.as_ref();
    let mut line = json!({
        "time": timestamp(ms),
        "unix_ms": ms,
        "tool": record.tool,
        "summary": record.summary,
        "cwd": record.cwd,
        "policy": record.policy,
        "outcome": if record.result.is_error { "error" } else { "ok" },
        "exit_code": structured.and_then(|s| s.get("exit_code")).cloned().unwrap_or(Value::Null),
        "duration_ms": duration.as_millis() as u64,
        "artifacts": artifacts(record.result),
    });
    if let Some(answer) = record.approval {
        line["approval"] = json!(answer);
    }
    line
}

/// The command, or each cell's title or first line, or the action: cut and masked.
fn summary(args: &Value) -> String {
    let first_line = |v: &Value| {
        ["command", "title", "code", "action"]
            .iter()
            .find_map(|k| v.get(*k).and_then(Value::as_str))
            .map(|s| s.lines().next().unwrap_or_default().to_string())
    };
    let cells = args.get("cells").and_then(Value::as_array);
    let first = match cells {
        Some(cells) => cells.iter().filter_map(first_line).collect::<Vec<_>>().join(" | "),
        None => first_line(args).unwrap_or_else(|| args.to_string()),
    };
    let masked = execkit_debug::Redactor::new(true).text(&first);
    match masked.char_indices().nth(MAX_SUMMARY) {
        Some((cut, _)) => format!("{}…", &masked[..cut]),
        None => masked,
    }
}

/// Every `artifact://` id in the result's text and structured content, once each.
fn artifacts(result: &ToolResult) -> Vec<String> {
    let mut text = result.text();
    if let Some(structured) = &result.structured_content {
        text.push_str(&structured.to_string());
    }
    let mut found: Vec<String> = Vec::new();
    for (at, _) in text.match_indices("artifact://") {
        let id: String = text[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || "-_./:".contains(*c))
            .collect();
        let id = id.trim_end_matches(['.', ':']).to_string();
        if !found.contains(&id) {
            found.push(id);
        }
    }
    found
}

/// Removes log files not modified within [`KEEP`].
fn prune(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > KEEP));
        if old && entry.path().extension().is_some_and(|e| e == "jsonl") {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The entries of the log in `dir` at or after `since_ms`, oldest first.
pub fn read_since(dir: &Path, since_ms: u64) -> Vec<Value> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else { continue };
        for line in text.lines() {
            if let Ok(value) = serde_json::from_str::<Value>(line)
                && value.get("unix_ms").and_then(Value::as_u64).is_some_and(|t| t >= since_ms)
            {
                out.push(value);
            }
        }
    }
    out
}

pub fn unix_ms(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).unwrap_or_default().as_millis() as u64
}

/// `YYYY-MM-DD` (UTC) of a Unix time in milliseconds.
fn date(ms: u64) -> String {
    let (y, m, d) = civil_from_days((ms / 86_400_000) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` of a Unix time in milliseconds.
pub fn timestamp(ms: u64) -> String {
    let secs = (ms / 1000) % 86_400;
    format!(
        "{}T{:02}:{:02}:{:02}.{:03}Z",
        date(ms),
        secs / 3600,
        secs / 60 % 60,
        secs % 60,
        ms % 1000
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_times_are_utc() {
        assert_eq!(timestamp(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(timestamp(1_709_251_199_123), "2024-02-29T23:59:59.123Z");
        assert_eq!(date(1_764_547_200_000), "2025-12-01");
    }

    #[test]
    fn summaries_are_first_lines_cut_and_masked() {
        let token = format!("ghp_{}", "a".repeat(36));
        let args = json!({"command": format!("curl -H 'x: {token}' a\nsecond")});
        assert_eq!(summary(&args), "curl -H 'x: [redacted:github-token]' a");
        let long = json!({"code": "x".repeat(400)});
        assert_eq!(summary(&long).chars().count(), MAX_SUMMARY + 1);
    }
}
