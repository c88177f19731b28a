//! Raw eval params to a resolved request, checked whole before anything runs (spec E1–E4):
//! cells, sizes, languages, session, timeouts. Every failure is one line naming the cell and
//! field, with the way out.

use std::time::Duration;

use execkit_output::clamp::{TimeoutPolicy, resolve_timeout};
use execkit_protocol::eval::{CellParams, EvalParams, Language};

use crate::config::Backends;

/// Largest `code` of one cell, and of one call (E1).
pub const MAX_CELL_CODE: usize = 1024 * 1024;
pub const MAX_CALL_CODE: usize = 4 * 1024 * 1024;
pub const MAX_CELLS: usize = 20;

/// One checked cell.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// 1-based.
    pub index: usize,
    pub language: Language,
    pub code: String,
    pub title: Option<String>,
    pub timeout: Duration,
    /// The notice that the cell's timeout was clamped into range (spec O4), added to its text.
    pub notice: Option<String>,
    pub reset: bool,
}

/// A checked call.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub session: String,
    pub cells: Vec<Cell>,
}

fn session_ok(s: &str) -> bool {
    (1..=64).contains(&s.len())
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// What the request is checked against besides its own fields.
#[derive(Debug, Clone, Copy)]
pub struct Allowed<'a> {
    pub backends: &'a Backends,
    /// `EXECKIT_EVAL_BACKENDS` as written, for the message naming it.
    pub backends_value: Option<&'a str>,
    /// The Toolkit's cap on any timeout, in seconds.
    pub max_timeout: Option<u64>,
}

/// Resolves raw params into a [`Call`], or the one-line error naming the field.
pub fn resolve(p: EvalParams, allowed: Allowed<'_>) -> Result<Call, String> {
    let Allowed { backends, backends_value, max_timeout } = allowed;
    let session = p.session.clone().unwrap_or_else(|| "default".to_string());
    if !session_ok(&session) {
        return Err("session: must match ^[A-Za-z0-9._-]{1,64}$".into());
    }
    let shorthand = p.language.is_some() || p.code.is_some();
    let raw: Vec<CellParams> = match (p.cells, shorthand) {
        (Some(_), true) => return Err("use either cells or language+code, not both".into()),
        (Some(cells), false) => cells,
        (None, true) => {
            let Some(language) = p.language else {
                return Err("language: missing (\"py\" or \"js\")".into());
            };
            let Some(code) = p.code else { return Err("code: missing (the source to run)".into()) };
            vec![CellParams { language, code, title: p.title, timeout: p.timeout, reset: p.reset }]
        }
        (None, false) => return Err("cells: missing (an array of {language, code} cells)".into()),
    };
    if raw.is_empty() {
        return Err("cells: must contain at least 1 cell".into());
    }
    if raw.len() > MAX_CELLS {
        return Err(format!("cells: at most {MAX_CELLS} cells per call (got {})", raw.len()));
    }
    let total: usize = raw.iter().map(|c| c.code.len()).sum();
    if total > MAX_CALL_CODE {
        return Err(format!(
            "cells: {total} bytes of code exceeds the {MAX_CALL_CODE}-byte limit per call"
        ));
    }
    let mut cells = Vec::with_capacity(raw.len());
    for (i, c) in raw.into_iter().enumerate() {
        if c.code.len() > MAX_CELL_CODE {
            return Err(format!(
                "cells[{i}].code: {} bytes exceeds the {MAX_CELL_CODE}-byte limit",
                c.code.len()
            ));
        }
        if !backends.enabled(c.language) {
            let (other, which) = match c.language {
                Language::Py => ("js", "Python"),
                Language::Js => ("py", "JavaScript"),
            };
            let value = backends_value.unwrap_or_default();
            return Err(format!(
                "cells[{i}].language: \"{}\" is disabled (EXECKIT_EVAL_BACKENDS={value}); use \"{other}\" or enable {which}",
                c.language.as_str()
            ));
        }
        let t = resolve_timeout(c.timeout.as_ref(), TimeoutPolicy::EVAL_CELL, max_timeout)
            .map_err(|e| format!("cells[{i}].timeout: {}", e.message))?;
        let secs = t.secs.unwrap_or(TimeoutPolicy::EVAL_CELL.max_s);
        cells.push(Cell {
            index: i + 1,
            language: c.language,
            code: c.code,
            title: c.title,
            timeout: Duration::from_secs(secs),
            notice: t.notice,
            reset: c.reset.unwrap_or(false),
        });
    }
    Ok(Call { session, cells })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(v: serde_json::Value) -> Result<Call, String> {
        let p: EvalParams = execkit_protocol::parse_params(v).map_err(|e| e.to_string())?;
        resolve(p, Allowed { backends: &Backends::Both, backends_value: None, max_timeout: None })
    }

    #[test]
    fn spec_messages() {
        assert_eq!(run(json!({"cells": []})).unwrap_err(), "cells: must contain at least 1 cell");
        let many: Vec<_> = (0..21).map(|_| json!({"language": "py", "code": ""})).collect();
        assert_eq!(
            run(json!({"cells": many})).unwrap_err(),
            "cells: at most 20 cells per call (got 21)"
        );
        assert_eq!(
            run(json!({"cells": [{"language": "py", "code": "x".repeat(2 * 1024 * 1024)}]}))
                .unwrap_err(),
            "cells[0].code: 2097152 bytes exceeds the 1048576-byte limit"
        );
        assert_eq!(
            run(json!({"session": "../x", "cells": [{"language": "py", "code": ""}]})).unwrap_err(),
            "session: must match ^[A-Za-z0-9._-]{1,64}$"
        );
        assert_eq!(
            run(json!({"cells": [{"language": "py", "code": ""}], "language": "py", "code": "1"}))
                .unwrap_err(),
            "use either cells or language+code, not both"
        );
        let p: EvalParams =
            execkit_protocol::parse_params(json!({"cells": [{"language": "py", "code": "1"}]}))
                .unwrap();
        assert!(
            resolve(
                p,
                Allowed { backends: &Backends::JsOnly, backends_value: None, max_timeout: None }
            )
            .unwrap_err()
            .starts_with("cells[0].language: \"py\" is disabled")
        );
    }

    #[test]
    fn shorthand_is_one_cell() {
        let a = run(json!({"language": "py", "code": "1+1", "title": "t"})).unwrap();
        let b = run(json!({"cells": [{"language": "py", "code": "1+1", "title": "t"}]})).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.cells[0].timeout, Duration::from_secs(30));
    }
}
