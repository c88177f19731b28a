//! Function declarations for Gemini.
//!
//! Gemini's `parameters` take a subset of the OpenAPI 3.0 schema object: one `type` per schema
//! (no `["string", "null"]` unions), no `$ref`/`$defs`, no `additionalProperties`, and an
//! object must list its properties. So optional fields are simply left out of `required`, and a
//! free-form map (bash `env`) is not offered.

use serde_json::{Map, Value, json};

use super::openai::is_object_type;

/// Keys of the schema subset kept; anything else is dropped.
const KEPT_KEYS: &[&str] =
    &["type", "description", "enum", "properties", "required", "items", "minimum", "maximum"];

/// The `{name, description, parameters}` declaration of one tool.
pub(super) fn declaration(name: &str, description: &str, schema: &Value) -> Value {
    json!({
        "name": name,
        "description": description,
        "parameters": simplify(schema),
    })
}

fn simplify(schema: &Value) -> Value {
    let Some(object) = schema.as_object() else { return schema.clone() };
    let mut out = Map::new();
    for (key, value) in object {
        if !KEPT_KEYS.contains(&key.as_str()) {
            continue;
        }
        let value = match key.as_str() {
            "type" => single_type(value),
            "enum" => Value::Array(
                value.as_array().into_iter().flatten().filter(|v| !v.is_null()).cloned().collect(),
            ),
            "items" => simplify(value),
            "properties" => Value::Object(properties(value)),
            _ => value.clone(),
        };
        out.insert(key.clone(), value);
    }
    if let (Some(Value::Object(properties)), Some(Value::Array(required))) =
        (out.get("properties").cloned(), out.get_mut("required"))
    {
        required.retain(|name| name.as_str().is_some_and(|n| properties.contains_key(n)));
    }
    Value::Object(out)
}

/// The property schemas, without the ones Gemini cannot describe (objects with no fixed
/// properties: free-form maps).
fn properties(value: &Value) -> Map<String, Value> {
    let Some(properties) = value.as_object() else { return Map::new() };
    properties
        .iter()
        .filter(|(_, schema)| {
            schema.as_object().is_none_or(|o| !is_object_type(o) || o.contains_key("properties"))
        })
        .map(|(name, schema)| (name.clone(), simplify(schema)))
        .collect()
}

/// `["string", "null"]` → `"string"`.
fn single_type(value: &Value) -> Value {
    match value {
        Value::Array(types) => {
            types.iter().find(|t| *t != "null").cloned().unwrap_or_else(|| Value::from("string"))
        }
        other => other.clone(),
    }
}
