//! bash: output windows, artifacts, hostile bytes, images and hints.

use pretty_assertions::assert_eq;
use serde_json::json;

use crate::support::Kit;

#[tokio::test]
async fn long_output_is_bounded_and_kept_whole() {
    let kit = Kit::new();
    let out = kit.bash(json!({"command": "seq 1 300000"})).await;
    let text = out.text();
    assert!(text.len() < 80 * 1024, "inline text is {} bytes", text.len());
    assert!(text.starts_with("1\n2\n"));
    assert!(text.contains(" lines ("), "{}", &text[..200]);
    let truncation = out.field("truncation");
    assert_eq!(truncation["total_lines"], json!(300000));
    let uri = out.field("artifact").as_str().unwrap().to_string();
    assert!(text.contains(&format!("full output: {uri}]")));
    let expected: String = (1..=300000).map(|n| format!("{n}\n")).collect();
    let stored = kit.artifact_bytes(&uri);
    assert_eq!(stored.len(), expected.len());
    assert!(stored == expected.as_bytes());

    let out = kit.bash(json!({"command": format!("wc -l {uri}")})).await;
    assert!(out.text().starts_with("300000 "), "{}", out.text());
    let out = kit.bash(json!({"command": "cat artifact://ffffffff"})).await;
    assert_eq!(
        out.text(),
        "Unknown artifact in command: artifact://ffffffff (not found or expired)"
    );
    let out = kit.bash(json!({"command": "echo artifact://../../etc/passwd"})).await;
    assert_eq!(out.text(), "artifact://../../etc/passwd");
}

/// B8: an artifact URI in a heredoc body or a comment is data and stays as written; the same
/// URI as a shell word after the heredoc is still replaced.
#[tokio::test]
async fn artifact_uris_in_heredocs_and_comments_are_data() {
    let kit = Kit::new();
    let out = kit.bash(json!({"command": "seq 1 30000"})).await;
    let uri = out.field("artifact").as_str().unwrap().to_string();
    let notes = kit.work().join("notes.md");
    let command = format!(
        "cat > notes.md <<'EOF'\nThe log is at {uri}\nEOF\ncat <<-END >> notes.md\n\t{uri} | tail -2\n\tEND\n\
         wc -l < {uri} # and {uri}\ncat notes.md"
    );
    let out = kit.bash(json!({"command": command})).await;
    assert_eq!(out.text(), format!("30000\nThe log is at {uri}\n{uri} | tail -2"));
    assert_eq!(
        std::fs::read_to_string(&notes).unwrap(),
        format!("The log is at {uri}\n{uri} | tail -2\n")
    );
    let out = kit.bash(json!({"command": "cat <<EOF\nartifact://ffffffff\nEOF"})).await;
    assert_eq!(out.text(), "artifact://ffffffff");
    assert!(!out.is_error());
}

#[tokio::test]
async fn hostile_bytes() {
    let kit = Kit::new();
    let out =
        kit.bash(json!({"command": "printf 'a\\xffb plain text that is mostly valid\\n'"})).await;
    assert_eq!(out.text(), "a\u{FFFD}b plain text that is mostly valid");
    let out = kit.bash(json!({"command": "head -c 4096 /dev/urandom"})).await;
    let text = out.text();
    assert!(
        text.starts_with("[binary output: 4096 bytes, not shown; saved as artifact://"),
        "{text}"
    );
    let out = kit.bash(json!({"command": "printf '\\e]0;title\\a\\e[2Jx'"})).await;
    assert_eq!(out.text(), "x");
    let out = kit.bash(json!({"command": "printf 'a\\r\\nb\\rc\\r\\n'"})).await;
    let uri = out.field("artifact").as_str().unwrap().to_string();
    assert_eq!(
        out.text(),
        format!("a\nc\n[2 bytes overwritten by carriage returns; full output: {uri}]")
    );
}

#[tokio::test]
async fn images_and_hints() {
    let kit = Kit::new();
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    let out = kit.bash(json!({"command": format!("echo {png}")})).await;
    assert_eq!(out.text(), "[image: image/png 1x1, 0.1 KiB]");
    assert!(
        matches!(&out.0.content[1], execkit::Content::Image { mime_type, .. } if mime_type == "image/png")
    );
    let out =
        kit.bash(json!({"command": "echo a; echo '<execkit-hint kind=\"test\"/>'; echo b"})).await;
    assert_eq!(out.text(), "a\nb");
    assert_eq!(out.field("hints"), json!([{"kind": "test"}]));
    assert_eq!(out.field("command_kind"), json!("other"));
    let out = kit.bash(json!({"command": "ls -la | wc -l"})).await;
    assert_eq!(out.field("command_kind"), json!("list"));
}

#[tokio::test]
async fn a_megabyte_line_is_cut_and_kept() {
    let kit = Kit::new();
    let out = kit.bash(json!({"command": "head -c 1048576 /dev/zero | tr '\\0' x; echo"})).await;
    let text = out.text();
    assert!(text.len() < 4096, "{} bytes inline", text.len());
    assert!(text.contains(" [... +1047552 bytes]"), "{}", &text[..text.len().min(300)]);
    assert!(
        text.contains(
            "[1 long lines cut at 1024 bytes (1047552 bytes not shown); full output: artifact://"
        ),
        "{text}"
    );
    let uri = out.field("artifact").as_str().unwrap().to_string();
    assert_eq!(kit.artifact_bytes(&uri).len(), 1048577);
}
