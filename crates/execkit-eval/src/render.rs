//! Host-side MIME choice (E16–E19): exactly one representation of each bundle reaches the
//! text, and images become image blocks (their dimensions come from `execkit_output::image`).

use base64::Engine;
use serde_json::{Map, Value};

/// Decoded image data above this is dropped as invalid (E31).
pub const MAX_IMAGE_DECODED: usize = 32 * 1024 * 1024;
/// A JSON display is capped at this many bytes in the text (E18).
pub const JSON_TEXT_CAP: usize = 8 * 1024;

const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// What one display or result bundle becomes.
#[derive(Debug, Clone, PartialEq)]
pub enum Rendered {
    Image {
        mime: String,
        bytes: Vec<u8>,
    },
    Text {
        mime: String,
        text: String,
        json: Option<Value>,
    },
    /// Stored as an artifact and noted in the text.
    Other {
        mime: String,
        bytes: Vec<u8>,
    },
    /// `[display dropped: invalid image data]` and friends.
    Dropped(String),
    Empty,
}

fn valid_mime(key: &str) -> bool {
    key.len() <= 100
        && key.split_once('/').is_some_and(|(a, b)| {
            !a.is_empty()
                && !b.is_empty()
                && key.bytes().all(|c| c.is_ascii_alphanumeric() || b"/+.-_".contains(&c))
        })
}

fn as_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(items) if items.iter().all(Value::is_string) => {
            items.iter().filter_map(Value::as_str).collect()
        }
        other => other.to_string(),
    }
}

/// Chooses the one representation of a bundle that is shown (spec E17): an image first, then
/// markdown, JSON, HTML as text, and plain text last.
pub fn choose(data: &Map<String, Value>) -> Rendered {
    let data: Map<String, Value> =
        data.iter().filter(|(k, _)| valid_mime(k)).map(|(k, v)| (k.clone(), v.clone())).collect();
    for mime in IMAGE_TYPES {
        if let Some(value) = data.get(mime) {
            let Some(b64) = value.as_str() else {
                return Rendered::Dropped("[display dropped: invalid image data]".into());
            };
            let cleaned: String = b64.chars().filter(|c| !c.is_ascii_whitespace()).collect();
            if cleaned.len() / 4 * 3 > MAX_IMAGE_DECODED + 3 {
                return Rendered::Dropped("[display dropped: invalid image data]".into());
            }
            return match base64::engine::general_purpose::STANDARD.decode(cleaned) {
                Ok(bytes) if bytes.len() <= MAX_IMAGE_DECODED => {
                    Rendered::Image { mime: mime.to_string(), bytes }
                }
                _ => Rendered::Dropped("[display dropped: invalid image data]".into()),
            };
        }
    }
    if let Some(v) = data.get("text/markdown") {
        return Rendered::Text { mime: "text/markdown".into(), text: as_text(v), json: None };
    }
    if let Some((mime, v)) =
        data.iter().find(|(k, _)| *k == "application/json" || k.ends_with("+json"))
    {
        let pretty = serde_json::to_string_pretty(v).unwrap_or_default();
        return Rendered::Text {
            mime: mime.clone(),
            text: cap_middle(&pretty),
            json: Some(v.clone()),
        };
    }
    if let Some(v) = data.get("text/plain") {
        return Rendered::Text { mime: "text/plain".into(), text: as_text(v), json: None };
    }
    if let Some(v) = data.get("text/html") {
        return Rendered::Text {
            mime: "text/html".into(),
            text: strip_html(&as_text(v)),
            json: None,
        };
    }
    if let Some(v) = data.get("text/latex") {
        return Rendered::Text { mime: "text/latex".into(), text: as_text(v), json: None };
    }
    match data.iter().next() {
        Some((mime, v)) => Rendered::Other { mime: mime.clone(), bytes: as_text(v).into_bytes() },
        None => Rendered::Empty,
    }
}

/// Keeps the head and tail of an over-long JSON text around the shared marker.
fn cap_middle(text: &str) -> String {
    if text.len() <= JSON_TEXT_CAP {
        return text.to_string();
    }
    let half = JSON_TEXT_CAP / 2;
    let mut head_end = half;
    while !text.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = text.len() - half;
    while !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let omitted = &text[head_end..tail_start];
    format!(
        "{}\n{}\n{}",
        &text[..head_end],
        execkit_output::notice::omitted_marker(
            omitted.lines().count() as u64,
            omitted.len() as u64
        ),
        &text[tail_start..]
    )
}

/// HTML as plain text: tags dropped, entities decoded, table cells joined by ` | `.
pub fn strip_html(html: &str) -> String {
    let mut out = String::new();
    let mut rest = html;
    let mut row: Vec<String> = Vec::new();
    let mut cell = String::new();
    let mut in_cell = false;
    while let Some(lt) = rest.find('<') {
        let text = decode_entities(&rest[..lt]);
        if in_cell {
            cell.push_str(text.trim())
        } else {
            out.push_str(&text)
        }
        let Some(gt) = rest[lt..].find('>') else {
            rest = &rest[lt..];
            break;
        };
        let tag = rest[lt + 1..lt + gt].trim().to_ascii_lowercase();
        rest = &rest[lt + gt + 1..];
        let name = tag
            .trim_start_matches('/')
            .split(|c: char| c.is_whitespace() || c == '/')
            .next()
            .unwrap_or("");
        match (tag.starts_with('/'), name) {
            (false, "td" | "th") => {
                in_cell = true;
                cell.clear();
            }
            (true, "td" | "th") => {
                in_cell = false;
                row.push(std::mem::take(&mut cell));
            }
            (true, "tr") => {
                out.push_str(&row.join(" | "));
                out.push('\n');
                row.clear();
            }
            (_, "br" | "p" | "div" | "li" | "h1" | "h2" | "h3" | "table")
                if !out.ends_with('\n') && !out.is_empty() =>
            {
                out.push('\n');
            }
            _ => {}
        }
    }
    out.push_str(&decode_entities(rest));
    let lines: Vec<&str> =
        out.lines().map(str::trim_end).filter(|l| !l.trim().is_empty()).collect();
    lines.join("\n")
}

fn decode_entities(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&nbsp;", " ")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn priority_order() {
        let png = base64::engine::general_purpose::STANDARD
            .encode(b"\x89\x50\x4e\x47\x0d\x0a\x1a\x0a\x00\x00\x00\x0d\x49\x48\x44\x52\x00\x00\x02\x80\x00\x00\x01\xe0\x08\x06\x00\x00\x00\x35\xd1\xdc\xe4");
        match choose(&map(json!({"text/plain": "x", "image/png": png}))) {
            Rendered::Image { mime, bytes } => {
                assert_eq!(mime, "image/png");
                let info = execkit_output::image::inspect(&bytes).unwrap();
                assert_eq!((info.width, info.height), (640, 480));
            }
            other => panic!("{other:?}"),
        }
        let r = choose(&map(json!({"text/plain": "{'a': 1}", "application/json": {"a": 1}})));
        assert_eq!(
            r,
            Rendered::Text {
                mime: "application/json".into(),
                text: "{\n  \"a\": 1\n}".into(),
                json: Some(json!({"a": 1}))
            }
        );
        let r = choose(&map(
            json!({"text/html": "<table><tr><td>a</td><td>b &amp; c</td></tr></table>"}),
        ));
        assert_eq!(
            r,
            Rendered::Text { mime: "text/html".into(), text: "a | b & c".into(), json: None }
        );
        assert!(matches!(choose(&map(json!({"image/svg+xml": "<svg/>"}))), Rendered::Other { .. }));
        assert!(matches!(choose(&map(json!({"image/png": "!!notbase64"}))), Rendered::Dropped(_)));
        assert_eq!(choose(&map(json!({"bad key": 1}))), Rendered::Empty);
    }

    #[test]
    fn json_is_capped_in_the_middle() {
        let big: Vec<u32> = (0..5000).collect();
        let Rendered::Text { text, .. } = choose(&map(json!({"application/json": big}))) else {
            panic!()
        };
        assert!(text.len() < JSON_TEXT_CAP + 200);
        assert!(text.contains("omitted"));
    }
}
