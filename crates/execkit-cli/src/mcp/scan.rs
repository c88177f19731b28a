//! Reading the top-level `"id"` of a JSON-RPC request from the start of a line too long to
//! parse, so the error for an oversized request can still name it.

use rmcp::model::RequestId;

/// The request id when the prefix of a JSON object holds a complete top-level `"id"` whose
/// value is a number or string; `None` otherwise (no id yet, truncated, not an object).
pub fn top_level_id(prefix: &[u8]) -> Option<RequestId> {
    let mut at = skip_space(prefix, 0);
    if prefix.get(at) != Some(&b'{') {
        return None;
    }
    at += 1;
    loop {
        at = skip_space(prefix, at);
        let key_end = skip_string(prefix, at)?;
        let key: String = serde_json::from_slice(&prefix[at..key_end]).ok()?;
        at = skip_space(prefix, key_end);
        if prefix.get(at) != Some(&b':') {
            return None;
        }
        at = skip_space(prefix, at + 1);
        let value_end = skip_value(prefix, at)?;
        if key == "id" {
            return serde_json::from_slice(&prefix[at..value_end]).ok();
        }
        at = skip_space(prefix, value_end);
        match prefix.get(at) {
            Some(b',') => at += 1,
            _ => return None,
        }
    }
}

fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at
}

/// The index just past the string starting at `at`, or `None` when it is cut off.
fn skip_string(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let mut i = at + 1;
    loop {
        match *bytes.get(i)? {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
}

/// The index just past the JSON value starting at `at`, or `None` when it is cut off.
fn skip_value(bytes: &[u8], at: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = at;
    loop {
        let byte = *bytes.get(i)?;
        match byte {
            b'"' => {
                i = skip_string(bytes, i)?;
                if depth == 0 {
                    return Some(i);
                }
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' if depth == 0 => return Some(i),
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            b',' if depth == 0 => return Some(i),
            _ if depth == 0 && byte.is_ascii_whitespace() => return Some(i),
            _ => {}
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::NumberOrString;

    fn id(text: &str) -> Option<RequestId> {
        top_level_id(text.as_bytes())
    }

    #[test]
    fn reads_ids_that_come_before_the_cut() {
        assert_eq!(
            id(r#"{"jsonrpc":"2.0","id":7,"method":"x","params":{"a":"#),
            Some(NumberOrString::Number(7))
        );
        assert_eq!(
            id(r#" { "id" : "a\"b", "params": "#),
            Some(NumberOrString::String("a\"b".into()))
        );
        assert_eq!(
            id(r#"{"params":{"id":1,"x":[1,{"y":"}"}]},"jsonrpc":"2.0","id":42}"#),
            Some(NumberOrString::Number(42))
        );
    }

    #[test]
    fn no_id_when_it_is_missing_cut_or_not_an_id() {
        assert_eq!(id(r#"{"jsonrpc":"2.0","method":"x","params":{"id":3,"#), None);
        assert_eq!(id(r#"{"id":12"#), None);
        assert_eq!(id(r#"{"id":null,"method":"#), None);
        assert_eq!(id(r#"{"id":{"a":1},"#), None);
        assert_eq!(id(r#"[{"id":1}]"#), None);
        assert_eq!(id("not json"), None);
    }
}
