//! Parsing of artifact ids, URIs and read queries (O25, O29, OX12, OX13). Nothing here touches
//! the filesystem: a path is only ever built from an id that passed [`ArtifactId::parse`].

use super::{ArtifactError, ArtifactId, Selection};
use crate::notice;

const SCHEME: &str = "artifact://";
const ID_LEN: usize = 8;
/// Grep defaults and bounds (O29): enough context to read a match, few enough matches to fit
/// one window.
pub(crate) const GREP_MAX_DEFAULT: u64 = 200;
const GREP_MAX_LIMIT: u64 = 10_000;
const GREP_CONTEXT_LIMIT: u64 = 20;

impl ArtifactId {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// `artifact://<id>`.
    pub fn uri(&self) -> String {
        format!("{SCHEME}{}", self.0)
    }

    /// Parses a bare id (`3f9a0c12`) or a URI (`artifact://3f9a0c12?lines=1-5`), returning the
    /// query when present. Anything else is `Invalid artifact URI: <text>`.
    pub fn parse(text: &str) -> Result<(ArtifactId, Option<String>), ArtifactError> {
        let invalid = || ArtifactError::InvalidUri(text.to_string());
        let (id, query) = match text.strip_prefix(SCHEME) {
            Some(rest) => match rest.split_once('?') {
                Some((id, query)) => (id, Some(query.to_string())),
                None => (rest, None),
            },
            None => (text, None),
        };
        let valid =
            id.len() == ID_LEN && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        if !valid {
            return Err(invalid());
        }
        Ok((ArtifactId(id.to_string()), query))
    }
}

impl Selection {
    /// Parses a URI query: `lines=a-b`, `head=n`, `tail=n`, `grep=<urlencoded>&context=n&max=n`.
    pub fn from_query(query: &str) -> Result<Selection, ArtifactError> {
        Selection::from_pairs(query.split('&').filter(|p| !p.is_empty()).map(|pair| {
            let (key, raw) = pair.split_once('=').unwrap_or((pair, ""));
            (key.to_string(), percent_decode(raw))
        }))
    }

    /// The selector from decoded `key=value` pairs, with every check a URI query gets.
    fn from_pairs(
        pairs: impl Iterator<Item = (String, String)>,
    ) -> Result<Selection, ArtifactError> {
        let bad = ArtifactError::BadSelection;
        let mut chosen: Option<Selection> = None;
        let mut context = None;
        let mut max = None;
        for (key, value) in pairs {
            let key = key.as_str();
            let pick = match key {
                "lines" => Some(parse_lines(&value)?),
                "head" => Some(Selection::Head(count(key, &value)?)),
                "tail" => Some(Selection::Tail(count(key, &value)?)),
                "grep" => {
                    regex::Regex::new(&value)
                        .map_err(|e| bad(notice::grep_invalid(&regex_message(&e))))?;
                    Some(Selection::Grep { pattern: value, context: 0, max: GREP_MAX_DEFAULT })
                }
                "context" => {
                    let n = count(key, &value)?;
                    if n > GREP_CONTEXT_LIMIT {
                        return Err(bad(notice::sel_context_range(&value)));
                    }
                    context = Some(n);
                    None
                }
                "max" => {
                    let n = count(key, &value).map_err(|_| bad(notice::sel_max_range(&value)))?;
                    if !(1..=GREP_MAX_LIMIT).contains(&n) {
                        return Err(bad(notice::sel_max_range(&value)));
                    }
                    max = Some(n);
                    None
                }
                other => return Err(bad(notice::sel_unknown_key(other))),
            };
            if let Some(pick) = pick {
                if chosen.is_some() {
                    return Err(bad(notice::sel_conflict()));
                }
                chosen = Some(pick);
            }
        }
        match chosen {
            Some(Selection::Grep { pattern, .. }) => Ok(Selection::Grep {
                pattern,
                context: context.unwrap_or(0),
                max: max.unwrap_or(GREP_MAX_DEFAULT),
            }),
            _ if context.is_some() || max.is_some() => Err(bad(notice::sel_context_without_grep())),
            Some(other) => Ok(other),
            None => Ok(Selection::Whole),
        }
    }
}

/// A read selector given as separate options (the CLI's flags, the Python module's keyword
/// arguments) instead of a URI query; the same words and the same checks as the query.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SelectionOptions {
    /// `a-b` (or `n`): lines a to b, 1-based and inclusive.
    pub lines: Option<String>,
    pub head: Option<u64>,
    pub tail: Option<u64>,
    pub grep: Option<String>,
    pub context: Option<u64>,
    pub max: Option<u64>,
}

impl SelectionOptions {
    pub fn is_empty(&self) -> bool {
        *self == SelectionOptions::default()
    }

    /// The selector from these options or from a URI's query, never both.
    pub fn resolve(&self, query: Option<&str>) -> Result<Selection, ArtifactError> {
        match query.filter(|q| !q.is_empty()) {
            Some(_) if !self.is_empty() => Err(ArtifactError::BadSelection(
                "give the selector either in the URI query or as an option, not both".into(),
            )),
            Some(query) => Selection::from_query(query),
            None => Selection::from_pairs(self.pairs().into_iter()),
        }
    }

    fn pairs(&self) -> Vec<(String, String)> {
        let numbers = [("head", self.head), ("tail", self.tail)];
        let texts = [("lines", &self.lines), ("grep", &self.grep)];
        let modifiers = [("context", self.context), ("max", self.max)];
        let mut pairs: Vec<(String, String)> = Vec::new();
        for (key, value) in texts {
            pairs.extend(value.clone().map(|v| (key.to_string(), v)));
        }
        for (key, value) in numbers.into_iter().chain(modifiers) {
            pairs.extend(value.map(|v| (key.to_string(), v.to_string())));
        }
        pairs
    }
}

/// The regex crate's message on one line (it spans several, with a caret diagram).
pub(crate) fn regex_message(err: &regex::Error) -> String {
    let text = err.to_string();
    let last = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or(&text);
    last.trim().trim_start_matches("error: ").to_string()
}

fn count(key: &str, value: &str) -> Result<u64, ArtifactError> {
    if value.starts_with('-') && value[1..].parse::<u64>().is_ok() {
        return Err(ArtifactError::BadSelection(notice::sel_not_negative(key, value)));
    }
    value.parse().map_err(|_| ArtifactError::BadSelection(notice::sel_bad_number(key, value)))
}

fn parse_lines(value: &str) -> Result<Selection, ArtifactError> {
    let bad = || ArtifactError::BadSelection(notice::sel_bad_lines(value));
    let (from, to) = match value.split_once('-') {
        Some((a, b)) => {
            (a.parse::<u64>().map_err(|_| bad())?, b.parse::<u64>().map_err(|_| bad())?)
        }
        None => {
            let n = value.parse::<u64>().map_err(|_| bad())?;
            (n, n)
        }
    };
    if from == 0 {
        return Err(ArtifactError::BadSelection(notice::sel_lines_start_at_one()));
    }
    if from > to {
        return Err(ArtifactError::BadSelection(notice::sel_start_after_end(from, to)));
    }
    Ok(Selection::Lines { from, to })
}

/// `%XX` escapes and `+` for space; malformed escapes stay as written.
fn percent_decode(raw: &str) -> String {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len()
                && bytes[i + 1].is_ascii_hexdigit()
                && bytes[i + 2].is_ascii_hexdigit() =>
            {
                let hex = |c: u8| (c as char).to_digit(16).unwrap_or(0) as u8;
                out.push(hex(bytes[i + 1]) * 16 + hex(bytes[i + 2]));
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
