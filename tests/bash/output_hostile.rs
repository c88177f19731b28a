//! bash: output that must not vanish — stray NULs and Latin-1 stay text, unterminated escapes
//! end at a LF, carriage returns overwrite in place and keep the raw stream (issue 7).

use pretty_assertions::assert_eq;
use serde_json::json;

use crate::support::Kit;

#[tokio::test]
async fn a_stray_nul_or_latin1_is_shown_as_text() {
    let kit = Kit::new();
    let out = kit.bash(json!({"command": "echo result: 42; printf '\\0\\n'; echo done"})).await;
    assert_eq!(out.text(), "result: 42\n\u{2400}\ndone");
    let out = kit.bash(json!({"command": "seq 1 50; printf 'x\\0y\\n'; seq 51 100"})).await;
    let text = out.text();
    assert!(text.contains("\nx\u{2400}y\n51\n") && text.ends_with("\n100"), "{text}");
    let out = kit.bash(json!({"command": "printf 'Gr\\xfc\\xdfe aus M\\xfcnchen\\n'"})).await;
    assert_eq!(out.text(), "Gr\u{FFFD}\u{FFFD}e aus M\u{FFFD}nchen");
    let out = kit.bash(json!({"command": "printf 'a\\xff\\xfeb ok\\n'"})).await;
    assert_eq!(out.text(), "a\u{FFFD}\u{FFFD}b ok");
}

#[tokio::test]
async fn an_unterminated_escape_never_swallows_lines() {
    let kit = Kit::new();
    let cmd = "printf 'START\\e]0;'; seq 1 100; printf '\\a'; echo END";
    let out = kit.bash(json!({"command": cmd})).await;
    let numbers: Vec<String> = (1..=100).map(|i| i.to_string()).collect();
    assert_eq!(out.text(), format!("START]0;{}END", numbers.join("\n") + "\n"));
    let out = kit.bash(json!({"command": "printf 'a\\e[?'; seq 1 3"})).await;
    assert_eq!(out.text(), "a[?1\n2\n3");
    let out = kit.bash(json!({"command": "printf 'x\\xc2\\x9d52;c;ZXZpbA==\\xc2\\x9cy\\n'"})).await;
    assert_eq!(out.text(), "xy");
}

#[tokio::test]
async fn a_carriage_return_overwrites_like_a_terminal_and_keeps_the_stream() {
    let kit = Kit::new();
    let out = kit.bash(json!({"command": "printf 'keep me\\rERASED\\n'"})).await;
    let uri = out.field("artifact").as_str().expect("artifact kept").to_string();
    assert_eq!(
        out.text(),
        format!("ERASEDe\n[7 bytes overwritten by carriage returns; full output: {uri}]")
    );
    assert_eq!(kit.artifact_bytes(&uri), b"keep me\rERASED\n");
}

/// CRC-32 as PNG uses it, so the test builds headers independently of the code under test.
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

/// A PNG with a valid IHDR for `width`×`height` (8-bit RGBA) and an IEND chunk.
fn png(width: u32, height: u32) -> Vec<u8> {
    let chunk = |kind: &[u8], data: &[u8]| {
        let mut body = kind.to_vec();
        body.extend(data);
        let mut out = (data.len() as u32).to_be_bytes().to_vec();
        out.extend(&body);
        out.extend(crc32(&body).to_be_bytes());
        out
    };
    let mut ihdr = width.to_be_bytes().to_vec();
    ihdr.extend(height.to_be_bytes());
    ihdr.extend([8, 6, 0, 0, 0]);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend(chunk(b"IHDR", &ihdr));
    png.extend(chunk(b"IEND", &[]));
    png
}

#[tokio::test]
async fn only_valid_images_of_a_size_providers_accept_are_returned_inline() {
    let kit = Kit::new();
    let cmd = "(printf '\\x89PNG\\r\\n\\x1a\\n'; head -c 100 /dev/urandom) | base64 -w0";
    let out = kit.bash(json!({"command": cmd})).await;
    assert_eq!(out.0.content.len(), 1, "a signature with garbage is not an image");
    assert!(out.text().starts_with("iVBORw0KG"), "{}", out.text());

    std::fs::write(kit.work().join("small.png"), png(640, 480)).unwrap();
    let out = kit.bash(json!({"command": "base64 -w0 small.png"})).await;
    assert_eq!(out.text(), "[image: image/png 640x480, 0.0 KiB]");
    assert_eq!(out.0.content.len(), 2);

    let big = png(10_000, 10_000);
    std::fs::write(kit.work().join("big.png"), &big).unwrap();
    let out = kit.bash(json!({"command": "base64 -w0 big.png"})).await;
    assert_eq!(out.0.content.len(), 1, "no image block over 8000 px");
    let text = out.text();
    let uri = text
        .strip_prefix("[image too large to show inline: 10000x10000; saved as ")
        .and_then(|rest| rest.strip_suffix(']'))
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(kit.artifact_bytes(uri), big);
}
