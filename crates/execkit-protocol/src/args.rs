//! Turning raw JSON arguments into typed params, with one-line errors that name the field.
//!
//! serde does the dispatch; this module only rewrites serde's messages into the form the model
//! reads: `Invalid argument "pty": expected a boolean (got string "yes")`.

use std::fmt;

use serde::de::DeserializeOwned;
use serde_json::Value;

/// An invalid call. Displays as `Invalid argument "<field>": <message>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgError {
    pub field: String,
    pub message: String,
}

impl ArgError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        ArgError { field: field.into(), message: message.into() }
    }
}

impl fmt::Display for ArgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Invalid argument \"{}\": {}", self.field, self.message)
    }
}

impl std::error::Error for ArgError {}

/// What a missing required field is for, so `missing` can say it.
pub trait FieldHints {
    /// A short description of `field`, shown after `missing`.
    fn hint(field: &str) -> Option<&'static str>;
}

/// Parses `args` into `T`. A non-object is an error on the field `arguments`.
pub fn parse_params<T: DeserializeOwned + FieldHints>(args: Value) -> Result<T, ArgError> {
    let args = match args {
        Value::Null => Value::Object(Default::default()),
        Value::Object(_) => args,
        other => {
            return Err(ArgError::new(
                "arguments",
                format!("expected an object (got {})", describe_value(&other)),
            ));
        }
    };
    serde_path_to_error::deserialize::<_, T>(args).map_err(|err| {
        let field = err.path().to_string();
        let raw = err.inner().to_string();
        rewrite(&field, &raw, T::hint)
    })
}

fn rewrite(path: &str, raw: &str, hint: fn(&str) -> Option<&'static str>) -> ArgError {
    if let Some(rest) = raw.strip_prefix("missing field `") {
        let name = rest.trim_end_matches('`');
        let field = join_path(path, name);
        let message = match hint(name) {
            Some(h) => format!("missing ({h})"),
            None => "missing".to_string(),
        };
        return ArgError::new(field, message);
    }
    if let Some(rest) = raw.strip_prefix("unknown field `") {
        let (name, expected) = rest.split_once('`').unwrap_or((rest, ""));
        let expected = expected.trim_start_matches(", ").replace('`', "");
        let expected = expected.strip_prefix("expected ").unwrap_or(&expected).to_string();
        let message = if expected.is_empty() {
            "unknown field".to_string()
        } else {
            format!("unknown field; expected {expected}")
        };
        return ArgError::new(join_path(path.rsplit_once('.').map_or("", |p| p.0), name), message);
    }
    for prefix in ["invalid type: ", "invalid value: "] {
        if let Some((got, expected)) =
            raw.strip_prefix(prefix).and_then(|rest| rest.split_once(", expected "))
        {
            return ArgError::new(
                field_or_arguments(path),
                format!("expected {} (got {})", plain_expected(expected), plain_got(got)),
            );
        }
    }
    ArgError::new(field_or_arguments(path), raw.to_string())
}

fn field_or_arguments(path: &str) -> String {
    if path.is_empty() || path == "." { "arguments".to_string() } else { path.to_string() }
}

fn join_path(parent: &str, name: &str) -> String {
    if parent.is_empty() || parent == "." { name.to_string() } else { format!("{parent}.{name}") }
}

fn plain_expected(expected: &str) -> String {
    match expected {
        "a map" => "an object".to_string(),
        "a sequence" => "an array".to_string(),
        "a string" | "a boolean" => expected.to_string(),
        "u64" | "u32" | "usize" | "i64" => "a whole number".to_string(),
        "f64" => "a number".to_string(),
        other => other.to_string(),
    }
}

fn plain_got(got: &str) -> String {
    let got = got.replace('`', "");
    match got.as_str() {
        "map" => "object".to_string(),
        "sequence" => "array".to_string(),
        "unit value" => "null".to_string(),
        _ => got.replace("floating point ", "number ").replace("integer ", "number "),
    }
}

/// How a JSON value is described in errors: `string "30"`, `number -1`, `boolean true`.
pub fn describe_value(value: &Value) -> String {
    match value {
        Value::Null => "null".to_string(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) => format!("string {}", Value::String(s.clone())),
        Value::Array(_) => "array".to_string(),
        Value::Object(_) => "object".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct P {
        command: String,
        pty: Option<bool>,
        env: Option<indexmap::IndexMap<String, String>>,
    }
    impl FieldHints for P {
        fn hint(field: &str) -> Option<&'static str> {
            (field == "command").then_some("the shell command to run")
        }
    }

    fn err(v: Value) -> String {
        parse_params::<P>(v).unwrap_err().to_string()
    }

    #[test]
    fn messages_name_the_field() {
        assert_eq!(
            err(json!({})),
            "Invalid argument \"command\": missing (the shell command to run)"
        );
        assert_eq!(
            err(json!({"command": 42})),
            "Invalid argument \"command\": expected a string (got number 42)"
        );
        assert_eq!(
            err(json!({"command": "x", "pty": "yes"})),
            "Invalid argument \"pty\": expected a boolean (got string \"yes\")"
        );
        assert_eq!(
            err(json!({"command": "x", "timout": 5})),
            "Invalid argument \"timout\": unknown field; expected one of command, pty, env"
        );
        assert_eq!(
            err(json!({"command": "x", "env": {"PATH": null}})),
            "Invalid argument \"env.PATH\": expected a string (got null)"
        );
        assert_eq!(
            err(json!({"command": "x", "env": []})),
            "Invalid argument \"env\": expected an object (got array)"
        );
        assert_eq!(
            err(json!([1])),
            "Invalid argument \"arguments\": expected an object (got array)"
        );
    }
}
