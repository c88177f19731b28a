//! Output conventions beyond plain text: images (B38) and hint lines (B39).

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use indexmap::IndexMap;

/// Decoded images above this size stay text (B38).
pub(crate) const MAX_IMAGE_BYTES: usize = 5 << 20;

/// An image found in the output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FoundImage {
    pub mime: &'static str,
    pub bytes: Vec<u8>,
    pub size: Option<(u32, u32)>,
}

/// The whole output (trimmed) as one base64 blob or `data:image/…;base64,` URI of a PNG,
/// JPEG, GIF or WebP image.
pub(crate) fn find_image(output: &str) -> Option<FoundImage> {
    let text = output.trim();
    let payload = match text.strip_prefix("data:image/") {
        Some(rest) => {
            let (kind, data) = rest.split_once(";base64,")?;
            if !matches!(kind, "png" | "jpeg" | "gif" | "webp") {
                return None;
            }
            data
        }
        None => text,
    };
    if payload.len() < 16 || payload.len() > MAX_IMAGE_BYTES / 3 * 4 + 8 {
        return None;
    }
    let compact: String = payload.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    if !compact.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=')) {
        return None;
    }
    let bytes = STANDARD.decode(compact.as_bytes()).ok()?;
    if bytes.len() > MAX_IMAGE_BYTES {
        return None;
    }
    let mime = sniff(&bytes)?;
    let size = dimensions(mime, &bytes);
    Some(FoundImage { mime, bytes, size })
}

fn sniff(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn le16(b: &[u8], at: usize) -> Option<u32> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?) as u32)
}

fn dimensions(mime: &str, b: &[u8]) -> Option<(u32, u32)> {
    match mime {
        "image/png" => Some((be32(b, 16)?, be32(b, 20)?)),
        "image/gif" => Some((le16(b, 6)?, le16(b, 8)?)),
        "image/jpeg" => jpeg_dimensions(b),
        "image/webp" => match b.get(12..16)? {
            b"VP8X" => {
                let w = u32::from_le_bytes([*b.get(24)?, *b.get(25)?, *b.get(26)?, 0]) + 1;
                let h = u32::from_le_bytes([*b.get(27)?, *b.get(28)?, *b.get(29)?, 0]) + 1;
                Some((w, h))
            }
            b"VP8 " => Some((le16(b, 26)? & 0x3FFF, le16(b, 28)? & 0x3FFF)),
            b"VP8L" => {
                let bits = u32::from_le_bytes(b.get(21..25)?.try_into().ok()?);
                Some(((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1))
            }
            _ => None,
        },
        _ => None,
    }
}

fn jpeg_dimensions(b: &[u8]) -> Option<(u32, u32)> {
    let mut i = 2;
    while i + 9 < b.len() {
        if b[i] != 0xFF {
            return None;
        }
        let marker = b[i + 1];
        let len = u16::from_be_bytes([b[i + 2], b[i + 3]]) as usize;
        if (0xC0..=0xCF).contains(&marker) && !matches!(marker, 0xC4 | 0xC8 | 0xCC) {
            let h = u16::from_be_bytes([b[i + 5], b[i + 6]]) as u32;
            let w = u16::from_be_bytes([b[i + 7], b[i + 8]]) as u32;
            return Some((w, h));
        }
        i += 2 + len;
    }
    None
}

/// `[image: image/png 640x480, 23.4 KiB]`.
pub(crate) fn image_notice(image: &FoundImage) -> String {
    let kib = image.bytes.len() as f64 / 1024.0;
    match image.size {
        Some((w, h)) => format!("[image: {} {w}x{h}, {kib:.1} KiB]", image.mime),
        None => format!("[image: {}, {kib:.1} KiB]", image.mime),
    }
}

/// Removes lines that are exactly `<execkit-hint …/>` and returns their attributes (B39).
pub(crate) fn take_hints(text: &str) -> (String, Vec<IndexMap<String, String>>) {
    if !text.contains("<execkit-hint") {
        return (text.to_string(), Vec::new());
    }
    let mut kept = String::with_capacity(text.len());
    let mut hints = Vec::new();
    for line in text.split_inclusive('\n') {
        match parse_hint(line.trim_end_matches('\n')) {
            Some(attrs) => hints.push(attrs),
            None => kept.push_str(line),
        }
    }
    (kept, hints)
}

fn parse_hint(line: &str) -> Option<IndexMap<String, String>> {
    let inner = line.strip_prefix("<execkit-hint")?.strip_suffix("/>")?;
    if !inner.is_empty() && !inner.starts_with(char::is_whitespace) {
        return None;
    }
    let mut attrs = IndexMap::new();
    let mut rest = inner.trim();
    while !rest.is_empty() {
        let (name, after) = rest.split_once('=')?;
        let name = name.trim();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || "_-:".contains(c))
        {
            return None;
        }
        let after = after.trim_start();
        let quote = after.chars().next().filter(|c| *c == '"' || *c == '\'')?;
        let body = &after[1..];
        let end = body.find(quote)?;
        attrs.insert(name.to_string(), body[..end].to_string());
        rest = body[end + 1..].trim_start();
    }
    Some(attrs)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG_1X1: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

    #[test]
    fn images() {
        let img = find_image(&format!("{PNG_1X1}\n")).unwrap();
        assert_eq!(img.mime, "image/png");
        assert_eq!(img.size, Some((1, 1)));
        assert!(find_image(&format!("data:image/png;base64,{PNG_1X1}")).is_some());
        assert!(find_image("aGVsbG8gd29ybGQgaGVsbG8gd29ybGQ=").is_none());
        assert!(find_image("hello world").is_none());
        assert_eq!(image_notice(&img), "[image: image/png 1x1, 0.1 KiB]");
    }

    #[test]
    fn hints() {
        let (text, hints) =
            take_hints("a\n<execkit-hint kind=\"test\" n='3'/>\nb\n<execkit-hint x/>\n");
        assert_eq!(text, "a\nb\n<execkit-hint x/>\n");
        assert_eq!(hints.len(), 1);
        assert_eq!(hints[0]["kind"], "test");
        assert_eq!(hints[0]["n"], "3");
    }
}
