//! `read(id, selection)` (O29): one implementation for the library, MCP and the CLI.

use std::fs;
use std::os::unix::fs::FileExt;

use regex::Regex;

use super::id::regex_message;
use super::{
    ArtifactError, ArtifactId, ArtifactMeta, ArtifactStore, ReadOutput, Selection, fsutil,
};
use crate::clamp::{HEAD_BYTES, HEAD_LINES, LINE_BYTES, TAIL_BYTES, TAIL_LINES};
use crate::notice;
use crate::truncate::{Truncation, truncate_head, truncate_middle, truncate_tail};

/// Lines per page of a paged read: the default tail window, so one page fits one result.
const PAGE_LINES: u64 = TAIL_LINES.default;
const PAGE_BYTES: u64 = HEAD_BYTES.default + TAIL_BYTES.default;
/// Block size of the backwards scan of `Tail(n)`.
const TAIL_BLOCK: u64 = 64 * 1024;

/// One line as a reader shows it: its stream line number (`None` for the gap line), rendered
/// and cut.
struct Shown {
    number: Option<u64>,
    text: String,
    cut: u64,
}

pub(super) struct Doc {
    lines: Vec<Shown>,
    total: u64,
}

pub(super) fn read(
    store: &ArtifactStore,
    id: &ArtifactId,
    sel: &Selection,
) -> Result<ReadOutput, ArtifactError> {
    let meta = store.meta(id)?;
    let path = store.out_file(id);
    if meta.binary {
        let bytes = fs::read(&path).map_err(|_| store.not_found(id))?;
        return Ok(ReadOutput::Binary { mime: meta.mime, bytes });
    }
    let file = fsutil::open_read(&path).map_err(|_| store.not_found(id))?;
    let writing =
        meta.finished.is_none() && !fsutil::try_lock(&file, fsutil::Lock::Shared).unwrap_or(true);
    let uri = id.uri();
    let tail_fast = match (sel, &meta.gap) {
        (Selection::Tail(n), Some(gap)) => meta.total_lines.saturating_sub(gap.last_line) >= *n,
        (Selection::Tail(_), None) => true,
        _ => false,
    };
    let (body, mut parts) = if let (Selection::Tail(n), false, true) = (sel, writing, tail_fast) {
        let doc = tail_doc(&file, &meta, *n)?;
        tail(&doc, *n, &uri, meta.gap.as_ref())
    } else {
        let mapped = fsutil::Mapped::new(&file).map_err(|_| store.not_found(id))?;
        let bytes = mapped.bytes();
        // `from_utf8` validates much faster than the lossy scan; stored text is almost
        // always valid.
        let text = match std::str::from_utf8(bytes) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(bytes),
        };
        match sel {
            Selection::Grep { pattern, context, max }
                if meta.gap.is_none() && memchr::memchr2(b'\r', 0x08, bytes).is_none() =>
            {
                let total = match meta.finished {
                    Some(_) => meta.total_lines,
                    None => text.split_inclusive('\n').count() as u64,
                };
                fast_grep(&text, pattern, *context, *max, total)?
            }
            Selection::Grep { pattern, context, max } => {
                lazy_grep(&text, &meta, writing, (pattern, *context, *max))?
            }
            _ => {
                let doc = whole_doc(&text, &meta, writing);
                select(&doc, sel, &uri, meta.cap_bytes, meta.gap.as_ref())?
            }
        }
    };
    let mut text = body;
    if !parts.is_empty() {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&notice::footer(&std::mem::take(&mut parts)));
    }
    if writing {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&notice::still_being_written());
    }
    Ok(ReadOutput::Text(text.strip_suffix('\n').map(str::to_string).unwrap_or(text)))
}

pub(super) fn fast_grep(
    text: &str,
    pattern: &str,
    context: u64,
    max: u64,
    total: u64,
) -> Result<Page, ArtifactError> {
    let bad =
        |e: regex::Error| ArtifactError::BadSelection(notice::grep_invalid(&regex_message(&e)));
    let re = Regex::new(pattern).map_err(bad)?;
    let multi = Regex::new(&format!("(?m:{pattern})")).map_err(bad)?;
    let found = super::grep::grep_text(text, &re, &multi, context, max);
    Ok(grep_page(&found, total, None))
}

/// The grep result page. With `capped` (the gap and the cap) the count says it covers the
/// kept lines only, and which lines were never searched.
fn grep_page(found: &super::grep::Found, total: u64, capped: Option<(&super::Gap, u64)>) -> Page {
    let (out, t) = truncate_head(&found.out, PAGE_LINES, PAGE_BYTES);
    let (matches, stopped) = (found.matches, found.stopped);
    let mut parts = match capped {
        None => vec![notice::grep_summary(matches, total, stopped)],
        Some((gap, cap)) => {
            let lost = gap.last_line.saturating_sub(gap.first_line) + 1;
            vec![
                notice::grep_summary_kept(matches, total.saturating_sub(lost), total, stopped),
                notice::gap_read(gap.first_line, gap.last_line, cap),
            ]
        }
    };
    if t.omitted_lines > 0 {
        parts.push(notice::grep_more(t.omitted_lines) + &limit(&t, PAGE_BYTES));
    }
    (out, parts)
}

fn shown_line(raw: &str, number: Option<u64>) -> Shown {
    let (text, cut) = super::render::display_line(raw);
    Shown { number, text, cut }
}

pub(super) fn whole_doc(text: &str, meta: &ArtifactMeta, writing: bool) -> Doc {
    let raw: Vec<&str> = text.split_inclusive('\n').collect();
    let total =
        if writing || meta.finished.is_none() { raw.len() as u64 } else { meta.total_lines };
    let gap_at = meta.gap.as_ref().and_then(|gap| {
        let line = notice::gap_line(gap.first_line, gap.last_line, gap.bytes, meta.cap_bytes);
        let from = usize::try_from(gap.first_line.saturating_sub(1)).unwrap_or(usize::MAX);
        raw.iter().skip(from).position(|l| l.trim_end_matches('\n') == line).map(|p| p + from)
    });
    let lines = raw
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let number = match gap_at {
                Some(g) if i == g => None,
                Some(g) if i > g => Some(total.saturating_sub((raw.len() - 1 - i) as u64)),
                _ => Some(i as u64 + 1),
            };
            shown_line(l, number)
        })
        .collect();
    Doc { lines, total }
}

/// The last `n` lines, found by reading backwards from the end (fast on 100 MiB files).
fn tail_doc(file: &fs::File, meta: &ArtifactMeta, n: u64) -> Result<Doc, ArtifactError> {
    let io = |e| ArtifactError::io(format!("read {}", meta.id), e);
    let len = file.metadata().map_err(io)?.len();
    let mut end = len;
    let mut start = 0;
    let mut lfs = 0u64;
    let mut block = vec![0u8; TAIL_BLOCK as usize];
    let mut skip_final_lf = true;
    'scan: while end > 0 && n > 0 {
        let from = end.saturating_sub(TAIL_BLOCK);
        let chunk = &mut block[..(end - from) as usize];
        file.read_exact_at(chunk, from).map_err(io)?;
        for (i, &b) in chunk.iter().enumerate().rev() {
            if b != b'\n' {
                skip_final_lf = false;
                continue;
            }
            if std::mem::take(&mut skip_final_lf) && from + i as u64 == len - 1 {
                continue;
            }
            lfs += 1;
            if lfs == n {
                start = from + i as u64 + 1;
                break 'scan;
            }
        }
        end = from;
    }
    if n == 0 {
        start = len;
    }
    let mut bytes = vec![0u8; (len - start) as usize];
    file.read_exact_at(&mut bytes, start).map_err(io)?;
    let text = String::from_utf8_lossy(&bytes);
    let raw: Vec<&str> = text.split_inclusive('\n').collect();
    let total = meta.total_lines.max(raw.len() as u64);
    let first = total - raw.len() as u64 + 1;
    let lines =
        raw.iter().enumerate().map(|(i, l)| shown_line(l, Some(first + i as u64))).collect();
    Ok(Doc { lines, total })
}

pub(super) type Page = (String, Vec<String>);

fn select(
    doc: &Doc,
    sel: &Selection,
    uri: &str,
    cap: u64,
    gap: Option<&super::Gap>,
) -> Result<Page, ArtifactError> {
    let n = doc.total;
    match sel {
        Selection::Whole => Ok(whole(doc, uri)),
        Selection::Head(0) => Ok((String::new(), vec![notice::showing_none(n)])),
        Selection::Head(k) => {
            select(doc, &Selection::Lines { from: 1, to: (*k).min(n.max(1)) }, uri, cap, gap)
        }
        Selection::Tail(k) => Ok(tail(doc, *k, uri, gap)),
        Selection::Lines { from, to } => {
            if *from == 0 {
                return Err(ArtifactError::BadSelection(notice::sel_lines_start_at_one()));
            }
            if from > to {
                return Err(ArtifactError::BadSelection(notice::sel_start_after_end(*from, *to)));
            }
            if *from > n {
                return Err(ArtifactError::BadSelection(notice::artifact_line_count(uri, n)));
            }
            let to = (*to).min(n);
            if let Some(gap) = gap.filter(|g| *from >= g.first_line && to <= g.last_line) {
                let kept =
                    doc.lines.iter().any(|l| l.number.is_some_and(|k| k >= *from && k <= to));
                if !kept {
                    return Ok(inside_gap(gap, cap, n, uri));
                }
            }
            Ok(lines(doc, *from, to, uri, gap))
        }
        Selection::Grep { pattern, context, max } => {
            grep(doc, (pattern, *context, *max), gap.map(|g| (g, cap)))
        }
    }
}

fn join(lines: &[&Shown]) -> String {
    lines.iter().map(|l| l.text.as_str()).collect()
}

/// The stream number of the `k`-th (1-based) line of `lines`, or of its nearest numbered
/// neighbour when `k` is the gap line.
fn number_at(lines: &[&Shown], k: u64, forward: bool) -> u64 {
    let i = usize::try_from(k.max(1) - 1).unwrap_or(usize::MAX).min(lines.len());
    let found = if forward {
        lines[i..].iter().find_map(|l| l.number)
    } else {
        lines[..(i + 1).min(lines.len())].iter().rev().find_map(|l| l.number)
    };
    found.unwrap_or(0)
}

fn cut_part(lines: &[&Shown], parts: &mut Vec<String>) {
    let cut: Vec<u64> = lines.iter().map(|l| l.cut).filter(|&c| c > 0).collect();
    if !cut.is_empty() {
        parts.push(notice::cut_part(cut.len() as u64, LINE_BYTES.default, cut.iter().sum()));
    }
}

fn limit(t: &Truncation, budget: u64) -> String {
    if t.byte_limited { notice::byte_limit(budget) } else { String::new() }
}

fn whole(doc: &Doc, uri: &str) -> Page {
    let all: Vec<&Shown> = doc.lines.iter().collect();
    let text = join(&all);
    let (out, t) = truncate_middle(
        &text,
        HEAD_LINES.default,
        HEAD_BYTES.default,
        TAIL_LINES.default,
        TAIL_BYTES.default,
    );
    let mut parts = Vec::new();
    if t.omitted_lines > 0 {
        let n = doc.total;
        let window = match t.shown_ranges.as_slice() {
            [(_, h), (t1, t2)] => {
                let (h, t1, t2) = (
                    number_at(&all, *h, false),
                    number_at(&all, *t1, true),
                    number_at(&all, *t2, false),
                );
                parts.push(notice::showing_head_tail(h, t1, t2, n) + &limit(&t, PAGE_BYTES));
                Some((h, t1))
            }
            [(a, b)] => {
                let (a, b) = (number_at(&all, *a, true), number_at(&all, *b, false));
                parts.push(notice::showing_range(a, b, n) + &limit(&t, PAGE_BYTES));
                Some((b, n + 1))
            }
            _ => None,
        };
        if let Some((last, next_shown)) = window
            && last + 1 < next_shown
        {
            parts.push(notice::next_read(uri, last + 1, (last + PAGE_LINES).min(next_shown - 1)));
        }
    }
    cut_part(&all, &mut parts);
    (out, parts)
}

/// A read wholly inside the gap of a capped artifact: says so and points past the gap.
fn inside_gap(gap: &super::Gap, cap: u64, total: u64, uri: &str) -> Page {
    let mut parts = Vec::new();
    if gap.last_line < total {
        let first = gap.last_line + 1;
        parts.push(notice::next_read(uri, first, (first + PAGE_LINES - 1).min(total)));
    }
    (notice::gap_read(gap.first_line, gap.last_line, cap), parts)
}

/// The first line a forward read from `line` can return: past the gap when it is inside it.
fn past_gap(line: u64, gap: Option<&super::Gap>) -> u64 {
    match gap {
        Some(g) if line >= g.first_line && line <= g.last_line => g.last_line + 1,
        _ => line,
    }
}

fn lines(doc: &Doc, from: u64, to: u64, uri: &str, gap: Option<&super::Gap>) -> Page {
    let picked: Vec<&Shown> = doc
        .lines
        .iter()
        .skip_while(|l| l.number.is_none_or(|k| k < from))
        .take_while(|l| l.number.is_none_or(|k| k <= to))
        .collect();
    let (out, t) = truncate_head(&join(&picked), PAGE_LINES, PAGE_BYTES);
    let last = number_at(&picked, t.shown_lines, false).max(from);
    let mut parts = Vec::new();
    if (from, last) != (1, doc.total) {
        parts.push(notice::showing_range(from, last, doc.total) + &limit(&t, PAGE_BYTES));
    }
    let next = past_gap(last + 1, gap);
    if next <= doc.total {
        parts.push(notice::next_read(uri, next, (next + PAGE_LINES - 1).min(doc.total)));
    }
    cut_part(&picked[..t.shown_lines as usize], &mut parts);
    (out, parts)
}

fn tail(doc: &Doc, k: u64, uri: &str, gap: Option<&super::Gap>) -> Page {
    let n = doc.total;
    if k == 0 {
        return (String::new(), vec![notice::showing_none(n)]);
    }
    let first_wanted = n.saturating_sub(k) + 1;
    let picked: Vec<&Shown> =
        doc.lines.iter().filter(|l| l.number.is_none_or(|x| x >= first_wanted)).collect();
    let skip = picked.iter().take_while(|l| l.number.is_none()).count();
    let picked = &picked[skip..];
    let (out, t) = truncate_tail(&join(picked), PAGE_LINES, PAGE_BYTES);
    let shown = &picked[picked.len() - t.shown_lines as usize..];
    let first = number_at(shown, 1, true).max(1);
    let mut parts = Vec::new();
    if first > 1 {
        parts.push(notice::showing_range(first, n, n) + &limit(&t, PAGE_BYTES));
    }
    // Lines asked for but not shown (the page is smaller than `k`): the next read goes
    // forward from the first of them, never backwards past what was asked.
    let next = past_gap(first_wanted, gap);
    if next < first {
        parts.push(notice::next_read(uri, next, (next + PAGE_LINES - 1).min(first - 1)));
    }
    cut_part(shown, &mut parts);
    (out, parts)
}

pub(super) fn grep(
    doc: &Doc,
    sel: (&str, u64, u64),
    capped: Option<(&super::Gap, u64)>,
) -> Result<Page, ArtifactError> {
    let (pattern, context, max) = sel;
    let re = grep_regex(pattern)?;
    let lines = doc.lines.iter().map(|l| {
        (l.number, std::borrow::Cow::Borrowed(l.text.strip_suffix('\n').unwrap_or(&l.text)))
    });
    let found = super::grep::grep_lines(lines, &re, context, max);
    Ok(grep_page(&found, doc.total, capped))
}

/// `grep` over the lines of [`whole_doc`], numbered the same way, but each line is rendered
/// only when the search reaches it and none is kept: text with overwrites or a gap.
pub(super) fn lazy_grep(
    text: &str,
    meta: &ArtifactMeta,
    writing: bool,
    sel: (&str, u64, u64),
) -> Result<Page, ArtifactError> {
    let (pattern, context, max) = sel;
    let re = grep_regex(pattern)?;
    let count = memchr::memchr_iter(b'\n', text.as_bytes()).count()
        + usize::from(!text.is_empty() && !text.ends_with('\n'));
    let total = if writing || meta.finished.is_none() { count as u64 } else { meta.total_lines };
    let gap = meta.gap.as_ref().map(|gap| {
        let line = notice::gap_line(gap.first_line, gap.last_line, gap.bytes, meta.cap_bytes);
        (line, usize::try_from(gap.first_line.saturating_sub(1)).unwrap_or(usize::MAX))
    });
    let mut gap_at = None;
    let lines = text.split_inclusive('\n').enumerate().map(|(i, raw)| {
        if gap_at.is_none()
            && let Some((line, from)) = &gap
            && i >= *from
            && raw.trim_end_matches('\n') == line
        {
            gap_at = Some(i);
            return (None, std::borrow::Cow::Borrowed(""));
        }
        let number = match gap_at {
            Some(_) => total.saturating_sub((count - 1 - i) as u64),
            None => i as u64 + 1,
        };
        (Some(number), super::grep::shown_content(raw))
    });
    let found = super::grep::grep_lines(lines, &re, context, max);
    Ok(grep_page(&found, total, meta.gap.as_ref().map(|gap| (gap, meta.cap_bytes))))
}

fn grep_regex(pattern: &str) -> Result<Regex, ArtifactError> {
    Regex::new(pattern)
        .map_err(|e| ArtifactError::BadSelection(notice::grep_invalid(&regex_message(&e))))
}
