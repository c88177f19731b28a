//! The audit log through the binary: each call one JSON line under `~/.execkit/log/`, read
//! back with `execkit log`, refusals of escalations included, credentials masked.

use std::os::unix::fs::PermissionsExt;

use serde_json::Value;

use crate::cli::Sandbox;

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn every_call_is_logged_and_execkit_log_reads_it_back() {
    let cli = Sandbox::new();
    let token = format!("ghp_{}", "a".repeat(36));
    let ok = cli.execkit(&["bash", "--", &format!("echo {token} >/dev/null; echo hi")]);
    assert!(ok.status.success(), "{}", stdout(&ok));
    let refused = cli.execkit(&[
        "--sandbox",
        "workspace-write",
        "bash",
        "--escalate",
        "needs the network",
        "--",
        "curl example.com",
    ]);
    assert_eq!(refused.status.code(), Some(1));
    let eval = cli.execkit(&["eval", "--py", "print(1)\nprint(2)"]);
    let dir = cli.home.path().join(".execkit/log");
    assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
    let file = std::fs::read_dir(&dir).unwrap().next().unwrap().unwrap().path();
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
    let json = cli.execkit(&["log", "--json", "--tool", "bash"]);
    let lines: Vec<Value> =
        stdout(&json).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2, "{}", stdout(&json));
    assert_eq!(lines[0]["summary"], "echo [redacted:github-token] >/dev/null; echo hi");
    assert_eq!(lines[0]["outcome"], "ok");
    assert_eq!(lines[0]["exit_code"], 0);
    assert_eq!(lines[0]["policy"]["mode"], "off");
    assert!(lines[0]["duration_ms"].is_u64() && lines[0]["time"].as_str().unwrap().ends_with('Z'));
    assert_eq!(lines[1]["outcome"], "error");
    assert_eq!(lines[1]["policy"]["mode"], "workspace-write");
    assert_eq!(lines[1]["approval"], "refused: no way to ask a person");
    assert!(!stdout(&json).contains(&token));
    let text = stdout(&cli.execkit(&["log", "--since", "1h"]));
    assert!(text.contains(" bash ok exit 0 "), "{text}");
    assert!(
        text.contains(
            "[workspace-write] curl example.com (escalation: refused: no way to ask a person)"
        ),
        "{text}"
    );
    if eval.status.success() {
        assert!(text.contains(" eval ok ") && text.contains("print(1)"), "{text}");
    }
    let bad = cli.execkit(&["log", "--since", "soon"]);
    assert_eq!(bad.status.code(), Some(2), "{}", String::from_utf8_lossy(&bad.stderr));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--since: expected"));
}

#[test]
fn execkit_audit_0_turns_it_off() {
    let cli = Sandbox::new();
    let out = cli
        .command(crate::cli::execkit_bin())
        .env("EXECKIT_AUDIT", "0")
        .args(["bash", "true"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!cli.home.path().join(".execkit/log").exists());
    assert_eq!(stdout(&cli.execkit(&["log"])), "");
}
