//! Every text the model reads about clamping, truncation and artifacts. Pinned by snapshots.

use crate::format::{kib, size};

/// The O4 echo of a requested number: plain below 10^9 (≤ 3 decimals, zeros trimmed), `{:e}`
/// from 10^9 up.
pub fn echo_number(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    if x.abs() >= 1e9 {
        return format!("{x:e}");
    }
    let text = format!("{x:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" { "0".to_string() } else { text.to_string() }
}

/// O2: the timeout is not a JSON number; `got` is e.g. `string "30"`.
pub fn timeout_not_number(got: &str) -> String {
    format!("expected a number of seconds (got {got})")
}

/// A timeout that is negative, NaN or infinite (O2).
pub fn timeout_negative(x: f64) -> String {
    format!(
        "must be 0 or more seconds (got {}); 0 means the longest this tool allows",
        echo_number(x)
    )
}

/// A timeout clamped into the tool's range (O4).
pub fn timeout_clamped(requested: f64, used: u64, min: u64, max: u64) -> String {
    format!("[timeout {} s clamped to {used} s (allowed {min}-{max} s)]", echo_number(requested))
}

/// O4: `timeout: 0` on a tool where 0 means the maximum.
pub fn timeout_zero(max: u64) -> String {
    format!("[timeout 0 clamped to {max} s (0 means the longest allowed)]")
}

/// O4: `timeout: 0` on an async job.
pub fn timeout_async_zero() -> String {
    "[timeout 0: no deadline; the job runs until it exits or is cancelled]".to_string()
}

/// A `head`/`tail` line count above the limit, clamped (O6).
pub fn lines_clamped(field: &str, requested: u64, max: u64) -> String {
    format!("[{field} {requested} clamped to {max} (allowed 0-{max})]")
}

/// The suffix of a line cut to the line cap: how many bytes it lost (O9).
pub fn cut_suffix(dropped: u64) -> String {
    format!(" [... +{dropped} bytes]")
}

/// `[... <L> lines (<B> bytes) omitted ...]` (O20).
pub fn omitted_marker(lines: u64, bytes: u64) -> String {
    format!("[... {lines} lines ({bytes} bytes) omitted ...]")
}

/// Footer part naming the one range of lines shown (O21).
pub fn showing_range(first: u64, last: u64, total: u64) -> String {
    format!("Showing lines {first}-{last} of {total}")
}

/// Footer part naming the head and tail ranges shown (O21).
pub fn showing_head_tail(head_last: u64, tail_first: u64, tail_last: u64, total: u64) -> String {
    format!("Showing lines 1-{head_last} and {tail_first}-{tail_last} of {total}")
}

/// Footer part for a window that shows nothing (bash `head: 0, tail: 0`, O21).
pub fn showing_none(total: u64) -> String {
    format!("Showing no lines of {total}")
}

/// Appended to the footer's window part when the byte budget ended a window (O21).
pub fn byte_limit(budget: u64) -> String {
    format!(" (byte limit {})", size(budget))
}

/// Footer part saying how many lines were cut to the line cap, and how much they lost (O21).
pub fn cut_part(lines: u64, max: u64, bytes: u64) -> String {
    // The spec's exact form, also for one line, so agents can match it literally.
    format!("{lines} long lines cut at {max} bytes ({bytes} bytes not shown)")
}

/// Footer part: text a carriage return overwrote is only in the artifact (O13).
pub fn overwritten_part(bytes: u64) -> String {
    format!("{bytes} bytes overwritten by carriage returns")
}

/// An image returned as an image block, `[image: image/png 640x480, 23.4 KiB]` (B38).
pub fn image_shown(mime: &str, width: u32, height: u32, bytes: usize) -> String {
    format!("[image: {mime} {width}x{height}, {}]", kib(bytes as u64))
}

/// An image over 8000 px per side, which providers reject, stays in its artifact (B38).
pub fn image_too_large(width: u32, height: u32, saved: Result<&str, &str>) -> String {
    match saved {
        Ok(uri) => format!("[image too large to show inline: {width}x{height}; saved as {uri}]"),
        Err(reason) => {
            format!("[image too large to show inline: {width}x{height}; not saved ({reason})]")
        }
    }
}

/// Footer part naming the artifact that holds the full output (O21).
pub fn full_output(uri: &str) -> String {
    format!("full output: {uri}")
}

/// Footer part naming an artifact whose middle was dropped at its size cap (O27).
pub fn full_output_capped(uri: &str, cap: u64, first: u64, last: u64) -> String {
    format!("full output: {uri} (capped at {}: lines {first}-{last} not kept)", size(cap))
}

/// The artifact write failed part way: what was kept, and why (O19).
pub fn full_output_incomplete(error: &str, written: u64, uri: &str) -> String {
    format!("full output incomplete ({error} after {written} bytes): {uri}")
}

/// No artifact could be created for a stream, and why (O19).
pub fn full_output_not_saved(reason: &str) -> String {
    format!("full output not saved ({reason})")
}

/// The footer line: its parts joined, in brackets (O21).
pub fn footer(parts: &[String]) -> String {
    format!("[{}]", parts.join("; "))
}

/// What is shown instead of a binary stream: its size and where it is kept (O14).
pub fn binary_output(bytes: u64, uri: Option<&str>, reason: Option<&str>) -> String {
    match (uri, reason) {
        (Some(uri), _) => format!("[binary output: {bytes} bytes, not shown; saved as {uri}]"),
        (None, Some(reason)) => {
            format!("[binary output: {bytes} bytes, not shown; not saved ({reason})]")
        }
        (None, None) => format!("[binary output: {bytes} bytes, not shown]"),
    }
}

/// The body of a result with no output at all (O23, B32).
pub fn no_output() -> String {
    "(no output)".to_string()
}

/// The line written into a capped artifact where the middle was dropped (O27).
pub fn gap_line(first: u64, last: u64, bytes: u64, cap: u64) -> String {
    format!("[... lines {first}-{last} ({bytes} bytes) not kept: artifact cap {} ...]", size(cap))
}

/// O27: a read that falls inside the gap.
pub fn gap_read(first: u64, last: u64, cap: u64) -> String {
    format!("lines {first}-{last} were not kept (artifact cap {})", size(cap))
}

/// A read of an id the store does not hold: unknown, or removed by retention (O29).
pub fn artifact_not_found(id: &str, max_age_s: u64, store_bytes: u64) -> String {
    format!(
        "artifact {id} not found (expired or deleted; artifacts are kept {}, {} in total)",
        age(max_age_s),
        size(store_bytes)
    )
}

fn age(secs: u64) -> String {
    const DAY: u64 = 86_400;
    const HOUR: u64 = 3_600;
    let plural = |n: u64, unit: &str| {
        if n == 1 { format!("1 {unit}") } else { format!("{n} {unit}s") }
    };
    if secs.is_multiple_of(DAY) {
        plural(secs / DAY, "day")
    } else if secs.is_multiple_of(HOUR) {
        plural(secs / HOUR, "hour")
    } else {
        plural(secs, "second")
    }
}

/// A read of lines past the artifact's end (O29).
pub fn artifact_line_count(uri: &str, lines: u64) -> String {
    format!("{uri} has {lines} lines")
}

/// O29: appended to a read of an artifact whose writer is still running.
pub fn still_being_written() -> String {
    "(still being written)".to_string()
}

/// The read footer part naming the next page to read (O29).
pub fn next_read(uri: &str, first: u64, last: u64) -> String {
    format!("next: {uri}?lines={first}-{last}")
}

/// The footer of a grep read: matches shown of how many (O29).
pub fn grep_summary(matches: u64, total_lines: u64, stopped_at_max: bool) -> String {
    grep_count(matches, &format!("{total_lines} lines"), stopped_at_max)
}

/// O27/O29: the footer of a grep over a capped artifact, which searched the kept lines only;
/// the gap part (`lines <x>-<y> were not kept …`) follows it.
pub fn grep_summary_kept(matches: u64, kept: u64, total: u64, stopped_at_max: bool) -> String {
    grep_count(matches, &format!("the {kept} kept lines of {total}"), stopped_at_max)
}

fn grep_count(matches: u64, searched: &str, stopped_at_max: bool) -> String {
    let noun = if matches == 1 { "match" } else { "matches" };
    if stopped_at_max {
        format!("{matches} {noun} in {searched}; stopped at max={matches}, raise max for more")
    } else {
        format!("{matches} {noun} in {searched}")
    }
}

/// A grep read whose matches fill more than one page (O29).
pub fn grep_more(lines: u64) -> String {
    format!("{lines} more result lines not shown")
}

/// Why artifacts are off: the store directory is not private to this user (O24).
pub fn dir_not_private(path: &str, why: &str) -> String {
    format!("artifact directory {path} is not private ({why})")
}

/// Why artifacts are off: the store directory could not be created or inspected (O24).
pub fn dir_unusable(path: &str, error: &str) -> String {
    format!("artifact directory {path} cannot be used ({error})")
}

/// Errors in a read selection (`lines=`, `head=`, `tail=`, `grep=`; OX13).
pub fn sel_start_after_end(from: u64, to: u64) -> String {
    format!("lines={from}-{to}: start after end")
}

pub fn sel_lines_start_at_one() -> String {
    "lines start at 1".to_string()
}

pub fn sel_not_negative(key: &str, value: &str) -> String {
    format!("{key} must be ≥ 0 (got {value})")
}

pub fn sel_bad_number(key: &str, value: &str) -> String {
    format!("{key} must be a whole number (got {value:?})")
}

pub fn sel_max_range(value: &str) -> String {
    format!("max must be 1..10000 (got {value})")
}

pub fn sel_context_range(value: &str) -> String {
    format!("context must be 0..20 (got {value})")
}

pub fn sel_bad_lines(value: &str) -> String {
    format!("lines must be <first>-<last> (got {value:?})")
}

pub fn sel_unknown_key(key: &str) -> String {
    format!("unknown query key {key:?} (use lines, head, tail, grep, context, max)")
}

pub fn sel_conflict() -> String {
    "use one of lines, head, tail, grep".to_string()
}

pub fn sel_context_without_grep() -> String {
    "context and max apply to grep only".to_string()
}

pub fn grep_invalid(message: &str) -> String {
    format!("Invalid grep pattern: {message}")
}

#[cfg(test)]
#[path = "notice_tests.rs"]
mod tests;
