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
