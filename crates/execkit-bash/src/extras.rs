//! Output conventions beyond plain text: images (B38) and hint lines (B39).

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use execkit_output::artifact::ArtifactStore;
use execkit_output::image::{self, ImageInfo};
use execkit_output::notice;
use indexmap::IndexMap;

/// Decoded images above this size stay text (B38).
pub(crate) const MAX_IMAGE_BYTES: usize = 5 << 20;

/// An image found in the output: a valid header (checked by [`execkit_output::image`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FoundImage {
    pub mime: &'static str,
    pub bytes: Vec<u8>,
    pub info: ImageInfo,
}

/// The whole output (trimmed) as one base64 blob or `data:image/…;base64,` URI of a PNG,
/// JPEG, GIF or WebP image whose header parses. Anything else stays text.
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
    let info = image::inspect(&bytes)?;
    Some(FoundImage { mime: info.mime, bytes, info })
}

/// `[image: image/png 640x480, 23.4 KiB]`.
pub(crate) fn image_notice(image: &FoundImage) -> String {
    notice::image_shown(image.mime, image.info.width, image.info.height, image.bytes.len())
}

/// For an image too large for providers: stores it as an artifact and says so instead of
/// returning it inline. `None` when the image fits.
pub(crate) fn oversized_notice(
    image: &FoundImage,
    store: Option<&ArtifactStore>,
) -> Option<String> {
    if image.info.fits_inline() {
        return None;
    }
    let (width, height) = (image.info.width, image.info.height);
    let label = format!("image {} {width}x{height}", image.mime);
    let saved = match store {
        Some(store) => store
            .put("bash", &image.bytes, image.mime, &label)
            .map(|id| id.uri())
            .map_err(|err| err.to_string()),
        None => Err("artifacts are off".to_string()),
    };
    Some(notice::image_too_large(width, height, saved.as_deref().map_err(String::as_str)))
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
        assert_eq!((img.info.width, img.info.height), (1, 1));
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
