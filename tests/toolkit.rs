//! Integration tests: the dispatcher across tools (tool list, eval through the Toolkit, the
//! prelude's `tool.<name>()` callback, announcements in other tools' results).

use pretty_assertions::assert_eq;
use serde_json::json;

use crate::support::Kit;

#[tokio::test]
async fn tool_list_has_every_tool_with_a_schema() {
    let kit = Kit::new();
    let tools = kit.toolkit.tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["bash", "eval", "job", "debug"]);
    for tool in &tools {
        assert_eq!(tool.input_schema["type"], json!("object"), "{}", tool.name);
        assert!(tool.description.len() > 80, "{} needs a real description", tool.name);
    }
    let bash = &tools[0].input_schema["properties"];
    assert!(bash["command"].is_object() && bash["async"].is_object());
    assert!(tools[1].input_schema["properties"]["cells"].is_object());
}

#[tokio::test]
async fn eval_runs_through_the_toolkit_and_calls_back_into_bash() {
    let kit = Kit::new();
    let out = kit
        .call(
            "eval",
            json!({"cells": [
                {"language": "py", "code": "r = tool.bash({'command': 'echo from-bash; pwd'})"},
                {"language": "py", "code": "print(r.text)"}
            ]}),
        )
        .await;
    assert!(!out.is_error, "{}", out.text());
    let text = out.text();
    assert!(text.contains(&format!("from-bash\n{}", kit.work().display())), "{text}");

    let out = kit
        .call("eval", json!({"cells": [{"language": "py", "code": "tool.eval({'cells': []})"}]}))
        .await;
    assert!(out.is_error, "eval may not call itself: {}", out.text());

    let out = kit.call("eval", json!({"cells": [{"language": "py", "code": "1/0"}]})).await;
    assert!(out.is_error);
    assert!(out.text().contains("ZeroDivisionError"), "{}", out.text());
}

#[tokio::test]
async fn finished_jobs_are_announced_in_eval_results() {
    let kit = Kit::new();
    kit.bash(json!({"command": "true", "async": true})).await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let out = kit.call("eval", json!({"cells": [{"language": "py", "code": "2 + 2"}]})).await;
    let text = out.text();
    assert!(text.contains("4"), "{text}");
    assert!(text.contains("\n[Background job bg_1 finished: completed, exit 0, after "), "{text}");
}

#[tokio::test]
async fn doctor_reports_every_part() {
    let kit = Kit::new();
    let doctor = kit.toolkit.doctor();
    let titles: Vec<&str> = doctor.sections.iter().map(|s| s.title.as_str()).collect();
    for expected in ["execkit", "processes", "artifacts", "bash", "eval"] {
        assert!(titles.contains(&expected), "{titles:?}");
    }
    let bash = doctor.sections.iter().find(|s| s.title == "bash").unwrap();
    assert!(bash.lines.iter().any(|l| l.starts_with("pty: ")), "{:?}", bash.lines);
}

#[tokio::test]
async fn a_knob_that_is_not_a_number_stops_the_toolkit() {
    let dir = tempfile::tempdir().unwrap();
    let built = execkit::Toolkit::builder()
        .cwd(dir.path())
        .var("EXECKIT_ARTIFACT_DIR", dir.path().join("a").to_string_lossy())
        .var("EXECKIT_BASH_INPUT_WAIT_MS", "soon")
        .build();
    let err = built.err().expect("a bad knob fails construction");
    assert!(err.contains("EXECKIT_BASH_INPUT_WAIT_MS"), "{err}");
}

#[tokio::test]
async fn an_out_of_range_knob_is_clamped_and_said_in_doctor_and_once_in_the_first_result() {
    let kit = Kit::with_vars(&[("EXECKIT_JOB_MAX_RUNNING", "500"), ("EXECKIT_PIDS_MAX", "3")]);
    let notes = [
        "EXECKIT_JOB_MAX_RUNNING=500 is outside 1..64; using 64",
        "EXECKIT_PIDS_MAX=3 is outside 16..4194304; using 16",
    ];
    let doctor = kit.toolkit.doctor();
    let settings = doctor.sections.iter().find(|s| s.title == "settings").expect("settings");
    assert_eq!(settings.lines, notes);

    let first = kit.call("job", json!({"list": true})).await.text();
    let expected: Vec<String> = notes.iter().map(|n| format!("[Setting adjusted: {n}]")).collect();
    assert_eq!(first, format!("No background jobs.\n{}", expected.join("\n")));
    let second = kit.call("job", json!({"list": true})).await.text();
    assert_eq!(second, "No background jobs.");
}

#[tokio::test]
async fn builder_vars_reach_every_knob_the_toolkit_reads() {
    let dir = tempfile::tempdir().unwrap();
    let artifacts = dir.path().join("chosen-artifacts");
    let built = execkit::Toolkit::builder()
        .cwd(dir.path())
        .var("EXECKIT_ARTIFACT_DIR", artifacts.to_string_lossy())
        .var("EXECKIT_NO_CGROUP", "1")
        .build()
        .expect("toolkit");
    assert_eq!(built.artifacts().expect("store").dir(), artifacts.as_path());
    let doctor = built.doctor();
    let processes = doctor.sections.iter().find(|s| s.title == "processes").unwrap();
    assert!(processes.lines[0].starts_with("containment: process group"), "{:?}", processes.lines);

    let err = execkit::Toolkit::builder()
        .cwd(dir.path())
        .var("EXECKIT_ARTIFACT_DIR", artifacts.to_string_lossy())
        .var("EXECKIT_MEMORY_MAX", "lots")
        .build()
        .err()
        .expect("a bad size fails the start");
    assert_eq!(err, r#"EXECKIT_MEMORY_MAX="lots" is not a size (e.g. 2G, 512M)"#);
}
