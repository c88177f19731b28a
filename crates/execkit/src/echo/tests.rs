//! The example tool end to end through a real Toolkit: listed with its schema, dispatched,
//! its knob read through the Toolkit's lookup under the one policy, shown in doctor.

use serde_json::json;

use crate::{CallContext, Toolkit};

fn toolkit(vars: &[(&str, &str)]) -> (Result<Toolkit, String>, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut builder = Toolkit::builder()
        .cwd(dir.path())
        .var("EXECKIT_ARTIFACT_DIR", dir.path().join("artifacts").to_string_lossy())
        .var("EXECKIT_BASH_SNAPSHOT", "off")
        .var("EXECKIT_EVAL_PREWARM", "0");
    for (name, value) in vars {
        builder = builder.var(*name, *value);
    }
    (builder.build(), dir)
}

#[tokio::test]
async fn an_added_tool_is_listed_dispatched_and_shown_in_doctor() {
    let (kit, _dir) = toolkit(&[]);
    let kit = kit.expect("toolkit");
    let echo = kit.tools().into_iter().find(|t| t.name == "echo").expect("listed");
    assert_eq!(echo.input_schema["required"], json!(["text"]));

    let result = kit.call("echo", json!({"text": "hi", "repeat": 2}), CallContext::default()).await;
    assert_eq!((result.text().as_str(), result.is_error), ("hi\nhi", false));

    let bad = kit.call("echo", json!({"text": "hi", "repeat": 9}), CallContext::default()).await;
    assert!(bad.is_error);
    assert_eq!(bad.text(), "Invalid argument \"repeat\": must be from 1 to 3 (got 9)");
    let missing = kit.call("echo", json!({}), CallContext::default()).await;
    assert!(missing.is_error && missing.text().contains("\"text\""), "{}", missing.text());

    let doctor = kit.doctor();
    let section = doctor.sections.iter().find(|s| s.title == "echo").expect("doctor section");
    assert_eq!(section.lines[..2], ["max repeat: 3".to_string(), "calls: 1".to_string()]);
    kit.close().await;
}

#[tokio::test]
async fn an_added_tools_knob_follows_the_one_policy() {
    let (kit, _dir) = toolkit(&[("EXECKIT_ECHO_MAX_REPEAT", "50")]);
    let kit = kit.expect("an out-of-range knob is clamped");
    let result = kit.call("echo", json!({"text": "x"}), CallContext::default()).await;
    assert_eq!(
        result.text(),
        "x\n[Setting adjusted: EXECKIT_ECHO_MAX_REPEAT=50 is outside 1..10; using 10]"
    );
    kit.close().await;

    let (kit, _dir) = toolkit(&[("EXECKIT_ECHO_MAX_REPEAT", "many")]);
    assert_eq!(
        kit.err(),
        Some(r#"EXECKIT_ECHO_MAX_REPEAT="many" is not a whole number from 1 to 10"#.to_string())
    );
}
