//! Tool definitions for OpenAI function calling.
//!
//! A tool is marked `strict: true` only when its schema can meet strict mode's rules: every
//! object lists all its properties in `required` (optional ones become nullable) and sets
//! `additionalProperties: false`. A free-form map (bash `env`) cannot, so such a tool is sent
//! with `strict: false` and its schema as published. Keywords strict mode does not accept
//! (string lengths) are left out of a strict schema; the server still enforces them.

use serde_json::{Map, Value, json};

/// The `{type: "function", function: {…}}` definition of one tool.
pub(super) fn definition(name: &str, description: &str, schema: &Value) -> Value {
    let strict = strict_capable(schema);
    let mut parameters = schema.clone();
    if strict {
        make_strict(&mut parameters);
    }
    json!({
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": parameters,
            "strict": strict,
        },
    })
}

/// Whether every object in `schema` has fixed properties (no schema-valued
/// `additionalProperties`, no property-less object) and there is no `$ref`.
fn strict_capable(schema: &Value) -> bool {
    let Some(object) = schema.as_object() else { return true };
    if object.contains_key("$ref") || object.contains_key("$defs") {
        return false;
    }
    if is_object_type(object) {
        let closed = object.get("additionalProperties") == Some(&Value::Bool(false));
        if !closed || !object.contains_key("properties") {
            return false;
        }
    }
    children(object).all(strict_capable)
}

/// Keywords of the published schemas that OpenAI's strict mode does not accept.
const STRICT_UNSUPPORTED: &[&str] = &["minLength", "maxLength"];

fn make_strict(schema: &mut Value) {
    let Some(object) = schema.as_object_mut() else { return };
    if is_object_type(object) && object.get("properties").is_some_and(Value::is_object) {
        let required: Vec<String> = match object.get("required") {
            Some(Value::Array(names)) => {
                names.iter().filter_map(Value::as_str).map(String::from).collect()
            }
            _ => Vec::new(),
        };
        let Some(Value::Object(properties)) = object.get_mut("properties") else { return };
        for (name, property) in properties.iter_mut() {
            if !required.contains(name) {
                make_nullable(property);
            }
        }
        let all: Vec<Value> = properties.keys().cloned().map(Value::from).collect();
        object.insert("required".into(), Value::Array(all));
    }
    object.remove("default");
    // Strict mode rejects string length keywords; the server checks lengths anyway.
    for keyword in STRICT_UNSUPPORTED {
        object.remove(*keyword);
    }
    for key in ["items", "anyOf"] {
        if let Some(sub) = object.get_mut(key) {
            match sub {
                Value::Array(items) => items.iter_mut().for_each(make_strict),
                sub => make_strict(sub),
            }
        }
    }
    if let Some(Value::Object(properties)) = object.get_mut("properties") {
        properties.values_mut().for_each(make_strict);
    }
}

/// Lets `schema` also accept `null`: an optional field in strict mode.
fn make_nullable(schema: &mut Value) {
    let Some(object) = schema.as_object_mut() else { return };
    match object.get_mut("type") {
        Some(Value::Array(types)) => {
            if !types.contains(&Value::from("null")) {
                types.push(Value::from("null"));
            }
        }
        Some(Value::String(single)) => {
            let single = std::mem::take(single);
            object.insert("type".into(), json!([single, "null"]));
        }
        _ => {
            let inner = Value::Object(std::mem::take(object));
            object.insert("anyOf".into(), json!([inner, {"type": "null"}]));
            return;
        }
    }
    if let Some(Value::Array(values)) = object.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
}

pub(super) fn is_object_type(object: &Map<String, Value>) -> bool {
    match object.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
        _ => false,
    }
}

/// The subschemas of a schema node: property schemas, items, anyOf branches and a
/// schema-valued additionalProperties.
pub(super) fn children(object: &Map<String, Value>) -> impl Iterator<Item = &Value> {
    let properties = object.get("properties").and_then(Value::as_object).into_iter();
    let any_of = object.get("anyOf").and_then(Value::as_array).into_iter();
    properties
        .flat_map(|p| p.values())
        .chain(any_of.flatten())
        .chain(object.get("items"))
        .chain(object.get("additionalProperties").filter(|a| a.is_object()))
}
