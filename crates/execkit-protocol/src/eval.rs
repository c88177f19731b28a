//! Params of the `eval` tool (spec-eval.md E1–E3).
//!
//! These types keep what the caller sent. Sizes, cell counts, the session pattern, the enabled
//! backends and timeouts are checked by the eval crate's resolve step, which names the cell and
//! field at fault (`cells[1].code: …`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::args::FieldHints;

/// A cell's language. `python` and `javascript` are accepted aliases, not advertised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
pub enum Language {
    #[serde(rename = "py", alias = "python")]
    Py,
    #[serde(rename = "js", alias = "javascript")]
    Js,
}

/// The languages the published schema offers (the aliases are accepted, never offered).
pub const PUBLISHED_LANGUAGES: &[Language] = &[Language::Py, Language::Js];

impl Language {
    /// `py` / `js`.
    pub fn as_str(self) -> &'static str {
        match self {
            Language::Py => "py",
            Language::Js => "js",
        }
    }

    /// `Python` / `JavaScript`, for messages.
    pub fn display_name(self) -> &'static str {
        match self {
            Language::Py => "Python",
            Language::Js => "JavaScript",
        }
    }
}

/// One cell: verbatim source in one language.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CellParams {
    /// The cell's language. Each language has its own persistent kernel per session.
    #[schemars(schema_with = "published_languages")]
    pub language: Language,
    /// Verbatim source (≤ 1 MiB). The last expression's value is shown. Both languages
    /// support top-level `await`, `display()` and `tool.<name>()`; Python also `%magics` and
    /// `!shell`. JavaScript has no Node.js APIs and no npm.
    pub code: String,
    /// Label for headers and progress.
    #[serde(default)]
    pub title: Option<String>,
    /// Seconds for this cell. Default 30, allowed 1-600; 0 means the longest allowed.
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub timeout: Option<Value>,
    /// Restart this session's kernel for the cell's language before the cell runs.
    #[serde(default)]
    pub reset: Option<bool>,
}

/// Arguments of one `eval` call, as sent. The single-cell shorthand (`language` + `code` at the
/// top level) is accepted but not published in the schema (E3), which is why `cells` is
/// optional here and required in the schema.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = cells_required)]
pub struct EvalParams {
    /// Cells to run in order (1-20). The first failing cell stops the rest.
    #[serde(default)]
    pub cells: Option<Vec<CellParams>>,
    /// Named session (default "default"): its kernels keep variables across calls.
    #[serde(default)]
    #[schemars(length(min = 1, max = 64))]
    pub session: Option<String>,
    #[serde(default)]
    #[schemars(skip)]
    pub language: Option<Language>,
    #[serde(default)]
    #[schemars(skip)]
    pub code: Option<String>,
    #[serde(default)]
    #[schemars(skip)]
    pub title: Option<String>,
    #[serde(default)]
    #[schemars(skip)]
    pub timeout: Option<Value>,
    #[serde(default)]
    #[schemars(skip)]
    pub reset: Option<bool>,
}

fn published_languages(_generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let names: Vec<&str> = PUBLISHED_LANGUAGES.iter().map(|l| l.as_str()).collect();
    schemars::json_schema!({"type": "string", "enum": names})
}

/// Publishes `cells` as a required array (the wire type is an `Option` for the shorthand).
fn cells_required(schema: &mut schemars::Schema) {
    let object = schema.ensure_object();
    if let Some(cells) = object.get_mut("properties").and_then(|p| p.get_mut("cells")) {
        cells["type"] = Value::from("array");
    }
    match object.get_mut("required").and_then(Value::as_array_mut) {
        Some(required) => required.insert(0, Value::from("cells")),
        None => {
            object.insert("required".into(), Value::from(vec!["cells"]));
        }
    }
}

impl FieldHints for EvalParams {
    fn hint(field: &str) -> Option<&'static str> {
        match field {
            "cells" => Some("an array of {language, code} cells"),
            "language" => Some("the cell's language, such as \"py\""),
            "code" => Some("the source to run"),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_params;
    use serde_json::json;

    fn err(v: Value) -> String {
        parse_params::<EvalParams>(v).unwrap_err().to_string()
    }

    #[test]
    fn parses_cells_and_aliases() {
        let p = parse_params::<EvalParams>(json!({"cells": [
            {"language": "python", "code": "1"}, {"language": "js", "code": "2", "timeout": 5}
        ]}))
        .unwrap();
        let cells = p.cells.unwrap();
        assert_eq!(cells[0].language, Language::Py);
        assert_eq!(cells[1].timeout, Some(json!(5)));
    }

    #[test]
    fn messages_name_the_cell() {
        assert!(
            err(
                json!({"cells": [{"language": "py", "code": "1"}, {"language": "rb", "code": ""}]})
            )
            .starts_with("Invalid argument \"cells[1].language\": unknown variant `rb`")
        );
        assert_eq!(
            err(json!({"cells": [{"language": "py", "code": "1", "timeout_ms": 3}]})),
            "Invalid argument \"cells[0].timeout_ms\": unknown field; expected one of \
             language, code, title, timeout, reset"
        );
    }

    #[test]
    fn schema_lists_only_cells_and_session() {
        let schema = serde_json::to_value(schemars::schema_for!(EvalParams)).unwrap();
        let props = schema["properties"].as_object().unwrap();
        let mut keys: Vec<_> = props.keys().cloned().collect();
        keys.sort();
        assert_eq!(keys, vec!["cells".to_string(), "session".to_string()]);
        assert_eq!(schema["required"], json!(["cells"]));
        assert_eq!(props["cells"]["type"], "array");
    }

    #[test]
    fn schema_offers_only_the_published_languages() {
        let schema = serde_json::to_value(schemars::schema_for!(CellParams)).unwrap();
        let names: Vec<&str> = PUBLISHED_LANGUAGES.iter().map(|l| l.as_str()).collect();
        assert_eq!(schema["properties"]["language"]["enum"], json!(names));
        assert_eq!(names, ["py", "js"]);
        assert!(!schema.to_string().contains("javascript"), "{schema}");
    }
}
