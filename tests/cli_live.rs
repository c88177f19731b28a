//! Integration tests: what `execkit bash` and `execkit call` write while a call runs (output as
//! it arrives; no status line when stderr is not a terminal), and `execkit completions`.
#![allow(clippy::disallowed_methods)] // these tests start the binary with std::process::Command
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::io::{BufRead as _, BufReader, Read as _};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use crate::cli::{Sandbox, execkit_bin};

/// Generous: the machine running the tests may be loaded.
const LINE_WITHIN: Duration = Duration::from_secs(30);

#[test]
fn bash_prints_output_as_it_arrives_then_the_footer() {
    let sandbox = Sandbox::new();
    let script = "echo first; while [ ! -e go ]; do sleep 0.05; done; echo second; exit 3";
    let mut child = sandbox
        .command(execkit_bin())
        .args(["bash", "--", script])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("execkit starts");
    let stdout = child.stdout.take().unwrap();
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                return;
            }
        }
    });
    // The first line is on stdout while the command still waits for `go`.
    assert_eq!(lines.recv_timeout(LINE_WITHIN).expect("the first line streams"), "first");
    std::fs::write(sandbox.home.path().join("go"), "").unwrap();
    let rest: Vec<String> = lines.iter().collect();
    assert_eq!(rest, ["second", "Command exited with code 3"]);
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(3));
    assert_eq!(stderr, "", "no status line when stderr is not a terminal");
}

#[test]
fn bash_on_pipes_prints_the_result_text_and_nothing_on_stderr() {
    let sandbox = Sandbox::new();
    let output = sandbox.execkit(&["bash", "--", "printf 'a\\nb\\n'; sleep 0.3; echo c"]);
    assert_eq!(String::from_utf8_lossy(&output.stdout), "a\nb\nc\n");
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
    assert_eq!(output.status.code(), Some(0));
}

#[test]
fn call_writes_only_the_json_result_when_not_on_a_terminal() {
    let sandbox = Sandbox::new();
    let args = r#"{"command": "echo hi; sleep 0.3; echo there"}"#;
    let output = sandbox.execkit(&["call", "bash", args]);
    let result: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON only");
    assert_eq!(result["content"][0]["text"], "hi\nthere");
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
}

#[test]
fn completions_for_bash_zsh_and_fish() {
    let sandbox = Sandbox::new();
    for shell in ["bash", "zsh", "fish"] {
        let output = sandbox.execkit(&["completions", shell]);
        assert_eq!(output.status.code(), Some(0), "{shell}");
        let script = String::from_utf8_lossy(&output.stdout);
        for word in ["execkit", "artifact", "doctor", "completions"] {
            assert!(script.contains(word), "{shell} completions lack {word}");
        }
    }
    let output = sandbox.execkit(&["completions", "tcsh"]);
    assert_eq!(output.status.code(), Some(2));
}
