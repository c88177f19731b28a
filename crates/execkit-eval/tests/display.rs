//! How values are shown (spec-eval.md P10, E18): built-in values as the Python REPL shows them,
//! their JSON copy in structuredContent, truthful notes when a value is cut, and a display step
//! that is interruptible like the cell itself.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Kit, cell};
use serde_json::json;

#[tokio::test]
async fn builtin_values_show_their_repr_not_json() {
    let kit = Kit::new();
    for (code, shown) in [
        ("a = 1\na != 3", "True"),
        ("(1, 'x')", "(1, 'x')"),
        ("{'k': None}", "{'k': None}"),
        ("2**64+1", "18446744073709551617"),
        ("{1: 'a', '1': 'b'}", "{1: 'a', '1': 'b'}"),
        ("{None: 1, 'null': 2}", "{None: 1, 'null': 2}"),
        ("'it''s'", "'its'"),
        ("float('nan')", "nan"),
    ] {
        let r = kit.py(code).await;
        assert_eq!(r.text(), shown, "{code}");
    }
    let r = kit.py("{'k': None, 'l': (1, 2.5, True)}").await;
    assert_eq!(
        cell(&r, 0)["displays"],
        json!([{"mime": "text/plain", "json": {"k": null, "l": [1, 2.5, true]}}])
    );
    // Not faithful as JSON (integer keys, big integers): no JSON copy at all.
    let r = kit.py("{1: 'a'}").await;
    assert_eq!(cell(&r, 0)["displays"], json!([]));
    let r = kit.py("[2**64 + 1]").await;
    assert_eq!(cell(&r, 0)["displays"], json!([]));
    kit.runner.close().await;
}

#[tokio::test]
async fn long_containers_are_laid_out_by_pprint() {
    let kit = Kit::new();
    let r = kit.py("{f'key{i}': 'v' * 10 for i in range(6)}").await;
    let text = r.text();
    assert!(text.starts_with("{'key0': 'vvvvvvvvvv',\n 'key1': 'vvvvvvvvvv',"), "{text}");
    let r = kit.py("['x' * 100]").await;
    assert_eq!(r.text(), format!("['{}']", "x".repeat(100)), "strings stay one literal");
    kit.runner.close().await;
}

#[tokio::test]
async fn a_repr_that_loops_forever_is_interrupted_and_state_kept() {
    let kit = Kit::new();
    let r = kit
        .py_t("x = 41\nclass Loop:\n    def __repr__(self):\n        while True:\n            pass\nLoop()", 1)
        .await;
    assert_eq!(cell(&r, 0)["status"], "timeout", "{}", r.text());
    assert_eq!(cell(&r, 0)["kernel"]["killed"], false, "{}", r.text());
    assert!(
        r.text().contains("interrupted with KeyboardInterrupt; variables are kept"),
        "{}",
        r.text()
    );
    let r = kit.py("print(x + 1)").await;
    assert_eq!(r.text(), "42");
    kit.runner.close().await;
}

#[tokio::test]
async fn a_value_cut_by_the_kernel_says_so_and_where_the_text_is() {
    let kit = Kit::new();
    let r = kit.py("class R:\n    def __repr__(self):\n        return 'y' * 10_000_000\nR()").await;
    let text = r.text();
    assert!(
        text.contains("[repr cut to its first 65536 of 10000000 characters; the rest was never sent by the kernel and is not kept"),
        "{text}"
    );
    assert!(text.contains("artifact://"), "the artifact link is in the text: {text}");
    assert!(text.contains("the value cut above is cut there too"), "{text}");
    assert!(!r.is_error);
    kit.runner.close().await;
}

#[tokio::test]
async fn a_result_after_a_partial_line_starts_on_its_own_line() {
    let kit = Kit::new();
    let r = kit.py("import sys\nsys.stdout.write('partial')").await;
    assert_eq!(r.text(), "partial\n7");
    kit.runner.close().await;
}
