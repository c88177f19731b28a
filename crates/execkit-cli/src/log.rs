//! `execkit log`: the audit log for the person watching the agent.
//!
//! Reads the JSON lines every Toolkit appends to `~/.execkit/log/` and prints one readable
//! line per call (or the lines themselves with `--json`), oldest first.

use std::time::{Duration, SystemTime};

use clap::Args;
use serde_json::Value;

use crate::common::{self, EXIT_OK, UsageError};

#[derive(Debug, Args)]
pub struct LogArgs {
    /// Only calls within this long before now: `30s`, `15m`, `1h`, `7d` (default 1d).
    #[arg(long, value_name = "AGE", default_value = "1d")]
    since: String,
    /// Only calls of this tool.
    #[arg(long, value_name = "TOOL")]
    tool: Option<String>,
    /// Print the JSON lines as stored.
    #[arg(long)]
    json: bool,
}

pub fn run(args: LogArgs) -> anyhow::Result<i32> {
    let age = parse_age(&args.since).ok_or_else(|| {
        UsageError(format!(
            "--since: expected a number and s, m, h or d (like 1h), not {:?}",
            args.since
        ))
    })?;
    let Some(dir) = execkit::audit::default_log_dir() else {
        return Err(UsageError("HOME is not set, so there is no ~/.execkit/log".into()).into());
    };
    let since = SystemTime::now().checked_sub(age).unwrap_or(SystemTime::UNIX_EPOCH);
    let entries = execkit::audit::read_since(&dir, execkit::audit::unix_ms(since));
    let mut out = String::new();
    for entry in entries.iter().filter(|e| args.tool.as_deref().is_none_or(|t| e["tool"] == t)) {
        let line = if args.json { entry.to_string() } else { readable(entry) };
        out.push_str(&line);
        out.push('\n');
    }
    if !out.is_empty() {
        common::print_text(&out)?;
    }
    Ok(EXIT_OK)
}

/// `2026-12-01T13:40:02.120Z bash ok exit 0 12 ms [workspace-write] echo hi (approved once)`.
fn readable(entry: &Value) -> String {
    let text = |key: &str| entry.get(key).and_then(Value::as_str).unwrap_or("?").to_string();
    let mut line = format!("{} {} {}", text("time"), text("tool"), text("outcome"));
    if let Some(code) = entry.get("exit_code").and_then(Value::as_i64) {
        line.push_str(&format!(" exit {code}"));
    }
    let ms = entry.get("duration_ms").and_then(Value::as_u64).unwrap_or(0);
    line.push_str(&format!(" {ms} ms"));
    if let Some(mode) = entry.pointer("/policy/mode").and_then(Value::as_str)
        && mode != "off"
    {
        line.push_str(&format!(" [{mode}]"));
    }
    line.push_str(&format!(" {}", text("summary")));
    if let Some(answer) = entry.get("approval").and_then(Value::as_str) {
        line.push_str(&format!(" (escalation: {answer})"));
    }
    line
}

fn parse_age(text: &str) -> Option<Duration> {
    let unit = text.chars().last()?;
    let number: u64 = text[..text.len() - unit.len_utf8()].parse().ok()?;
    let secs = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        'd' => 86_400,
        _ => return None,
    };
    Some(Duration::from_secs(number.checked_mul(secs)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages() {
        assert_eq!(parse_age("90s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_age("1h"), Some(Duration::from_secs(3600)));
        assert_eq!(parse_age("2d"), Some(Duration::from_secs(172_800)));
        assert_eq!(parse_age("h"), None);
        assert_eq!(parse_age("5w"), None);
    }
}
