//! Recognising image bytes (spec-bash B38): one place that says whether bytes are a PNG, JPEG,
//! GIF or WebP image a model provider will accept, for every tool that returns images.
//!
//! A signature alone is not enough: `\x89PNG` followed by random bytes must not become an
//! image block with made-up dimensions. So the header must parse (PNG: an IHDR chunk with a
//! valid CRC; JPEG: an SOF marker; GIF: the logical screen descriptor; WebP: a VP8, VP8L or
//! VP8X chunk) and give non-zero dimensions. Providers reject images over [`MAX_SIDE`] pixels
//! per side, so those are reported as too large rather than returned inline.

/// Longest side, in pixels, that model providers accept inline.
pub const MAX_SIDE: u32 = 8000;

/// What a valid image header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageInfo {
    pub mime: &'static str,
    pub width: u32,
    pub height: u32,
}

impl ImageInfo {
    /// Both sides within [`MAX_SIDE`]: the image can go to the model inline.
    pub fn fits_inline(&self) -> bool {
        self.width <= MAX_SIDE && self.height <= MAX_SIDE
    }
}

/// The MIME type named by the file signature, before any header is checked.
pub fn sniff(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(PNG_SIGNATURE) {
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

/// The image's type and dimensions when `bytes` start with a valid PNG, JPEG, GIF or WebP
/// header; `None` for anything else, a damaged header, or zero dimensions.
pub fn inspect(bytes: &[u8]) -> Option<ImageInfo> {
    let mime = sniff(bytes)?;
    let (width, height) = match mime {
        "image/png" => png(bytes)?,
        "image/jpeg" => jpeg(bytes)?,
        "image/gif" => (le16(bytes, 6)?, le16(bytes, 8)?),
        _ => webp(bytes)?,
    };
    (width > 0 && height > 0).then_some(ImageInfo { mime, width, height })
}

const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn le16(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?)))
}

fn le24(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at + 3)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], 0]))
}

/// The first chunk must be IHDR, 13 bytes long, with a CRC that matches, and a bit depth
/// the colour type allows.
fn png(b: &[u8]) -> Option<(u32, u32)> {
    let data = b.get(8..8 + 8 + 13 + 4)?;
    if be32(data, 0)? != 13 || &data[4..8] != b"IHDR" || be32(data, 21)? != crc32(&data[4..21]) {
        return None;
    }
    let (depth, colour) = (data[16], data[17]);
    let depth_ok = match colour {
        0 => matches!(depth, 1 | 2 | 4 | 8 | 16),
        3 => matches!(depth, 1 | 2 | 4 | 8),
        2 | 4 | 6 => matches!(depth, 8 | 16),
        _ => false,
    };
    depth_ok.then_some((be32(data, 8)?, be32(data, 12)?))
}

/// Walks the marker segments from SOI to the first start-of-frame.
fn jpeg(b: &[u8]) -> Option<(u32, u32)> {
    let mut i = 2;
    loop {
        if *b.get(i)? != 0xFF {
            return None;
        }
        let marker = *b.get(i + 1)?;
        match marker {
            // Fill byte before a marker.
            0xFF => i += 1,
            // Markers without a length.
            0x01 | 0xD0..=0xD7 => i += 2,
            // End of image or start of scan before any frame header: no dimensions.
            0xD9 | 0xDA => return None,
            _ => {
                let len = usize::from(u16::from_be_bytes([*b.get(i + 2)?, *b.get(i + 3)?]));
                if len < 2 {
                    return None;
                }
                if (0xC0..=0xCF).contains(&marker) && !matches!(marker, 0xC4 | 0xC8 | 0xCC) {
                    let sof = b.get(i + 4..i + 9)?;
                    let height = u32::from(u16::from_be_bytes([sof[1], sof[2]]));
                    let width = u32::from(u16::from_be_bytes([sof[3], sof[4]]));
                    return Some((width, height));
                }
                i += 2 + len;
            }
        }
    }
}

fn webp(b: &[u8]) -> Option<(u32, u32)> {
    match b.get(12..16)? {
        b"VP8X" => Some((le24(b, 24)? + 1, le24(b, 27)? + 1)),
        // A key frame: its start code, then 14-bit dimensions.
        b"VP8 " if b.get(23..26)? == [0x9d, 0x01, 0x2a] => {
            Some((le16(b, 26)? & 0x3FFF, le16(b, 28)? & 0x3FFF))
        }
        b"VP8L" if *b.get(20)? == 0x2f => {
            let bits = u32::from_le_bytes(b.get(21..25)?.try_into().ok()?);
            Some(((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1))
        }
        _ => None,
    }
}

/// CRC-32 as PNG uses it (ISO 3309, reflected polynomial 0xEDB88320).
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PNG header (signature and IHDR with its CRC) for `width`×`height`, 8-bit RGBA.
    fn png_header(width: u32, height: u32) -> Vec<u8> {
        let mut chunk = b"IHDR".to_vec();
        chunk.extend(width.to_be_bytes());
        chunk.extend(height.to_be_bytes());
        chunk.extend([8, 6, 0, 0, 0]);
        let mut png = PNG_SIGNATURE.to_vec();
        png.extend(13u32.to_be_bytes());
        png.extend(&chunk);
        png.extend(crc32(&chunk).to_be_bytes());
        png
    }

    #[test]
    fn a_real_png_header_gives_its_size() {
        let info = inspect(&png_header(640, 480)).unwrap();
        assert_eq!(info, ImageInfo { mime: "image/png", width: 640, height: 480 });
        assert!(info.fits_inline());
        let big = inspect(&png_header(10_000, 10_000)).unwrap();
        assert!(!big.fits_inline());
        assert!(inspect(&png_header(8000, 8000)).unwrap().fits_inline());
    }

    #[test]
    fn a_signature_followed_by_garbage_is_not_an_image() {
        let mut fake = PNG_SIGNATURE.to_vec();
        fake.extend((0u8..100).map(|i| i.wrapping_mul(37).wrapping_add(11)));
        assert_eq!(sniff(&fake), Some("image/png"));
        assert_eq!(inspect(&fake), None);
        let mut bad_crc = png_header(10, 10);
        bad_crc[29] ^= 1;
        assert_eq!(inspect(&bad_crc), None);
        assert_eq!(inspect(&png_header(0, 10)), None);
        assert_eq!(inspect(b"\xFF\xD8\xFF\xE0garbage"), None);
        assert_eq!(inspect(b"GIF89a\x01"), None);
        assert_eq!(inspect(b"RIFF\0\0\0\0WEBPJUNK________________"), None);
    }

    #[test]
    fn jpeg_gif_and_webp_headers() {
        let mut jpeg = vec![0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0x00, 0x00];
        jpeg.extend([0xFF, 0xC0, 0x00, 0x11, 0x08, 0x01, 0xE0, 0x02, 0x80, 0x03]);
        assert_eq!(inspect(&jpeg).map(|i| (i.width, i.height)), Some((640, 480)));
        let gif = b"GIF89a\x40\x01\xf0\x00\x00\x00\x00";
        assert_eq!(inspect(gif).map(|i| (i.width, i.height)), Some((320, 240)));
        let mut vp8x = b"RIFF\0\0\0\0WEBPVP8X\x0a\0\0\0\0\0\0\0".to_vec();
        vp8x.extend([0x3f, 0x1f, 0x00, 0x3f, 0x1f, 0x00]);
        assert_eq!(inspect(&vp8x).map(|i| (i.width, i.height)), Some((8000, 8000)));
    }
}
