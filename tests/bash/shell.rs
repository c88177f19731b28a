//! bash: environment hardening, the credential scrub, the login-shell snapshot, library extras.

use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::json;

use crate::support::Kit;

#[tokio::test]
async fn environment_is_hardened_and_scrubbed() {
    let kit = Kit::with_vars(&[
        ("OPENAI_API_KEY", "sk-test"),
        ("EXECKIT_TEST_NEUTRAL", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
        ("EXECKIT_TEST_PLAIN", "plain"),
    ]);
    let out = kit
        .bash(json!({"command": "echo $PAGER $GIT_TERMINAL_PROMPT $TERM $CI $EXECKIT_TEST_PLAIN"}))
        .await;
    let text = out.text();
    assert!(
        text.starts_with("cat 0 dumb 1 plain\n[Removed 2 credential-like environment variables: "),
        "{text}"
    );
    assert!(text.contains("EXECKIT_TEST_NEUTRAL") && text.contains("OPENAI_API_KEY"), "{text}");
    assert!(!text.contains("ghp_abc"), "values must never be shown");
    let scrubbed = out.field("scrubbed_env");
    assert_eq!(scrubbed, json!(["EXECKIT_TEST_NEUTRAL", "OPENAI_API_KEY"]));
    let out = kit.bash(json!({"command": "echo \"[$OPENAI_API_KEY]\""})).await;
    assert_eq!(out.text(), "[]", "the notice comes once; the variable stays removed");
    let out =
        kit.bash(json!({"command": "echo $PAGER $CI", "env": {"PAGER": "less", "CI": "0"}})).await;
    assert_eq!(out.text(), "less 0");
    let out = kit.bash(json!({"command": "printf '%s' \"$V\"", "env": {"V": "a b\n$c'd"}})).await;
    assert_eq!(out.text(), "a b\n$c'd");
}

#[tokio::test]
async fn shell_snapshot_applies_login_environment() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join(".bash_profile"),
        "export SNAPTEST_FOO=1\nalias ll='ls -l'\nset -o noclobber\n",
    )
    .unwrap();
    let home_str = home.path().to_string_lossy().to_string();
    let kit = Kit::with_vars(&[
        ("HOME", home_str.as_str()),
        ("SHELL", "/bin/bash"),
        ("EXECKIT_BASH_SNAPSHOT", "env"),
    ]);
    let out = kit
        .bash(json!({"command": "echo \"[$SNAPTEST_FOO]\"; echo x > f; echo y > f; cat f"}))
        .await;
    assert_eq!(out.text(), "[1]\ny");
    assert_eq!(out.field("snapshot"), json!("env"));
    let out = kit.bash(json!({"command": "type -t ll || echo none"})).await;
    assert_eq!(out.text(), "none", "env mode replays no aliases");

    let full = Kit::with_vars(&[
        ("HOME", home_str.as_str()),
        ("SHELL", "/bin/bash"),
        ("EXECKIT_BASH_SNAPSHOT", "full"),
    ]);
    let out = full.bash(json!({"command": "type -t ll; echo \"[$SNAPTEST_FOO]\"; echo x > g; echo y > g; cat g"})).await;
    assert_eq!(out.text(), "alias\n[1]\ny", "full mode replays aliases, never noclobber");
    assert_eq!(out.field("snapshot"), json!("full"));

    std::fs::write(home.path().join(".bash_profile"), "sleep 10\n").unwrap();
    let kit = Kit::with_vars(&[
        ("HOME", home_str.as_str()),
        ("SHELL", "/bin/bash"),
        ("EXECKIT_BASH_SNAPSHOT", "env"),
    ]);
    let started = Instant::now();
    let out = kit.bash(json!({"command": "echo ok"})).await;
    assert!(started.elapsed() < Duration::from_millis(4500), "{:?}", started.elapsed());
    assert_eq!(
        out.text(),
        "ok\n[Shell startup files not applied (timed out after 3 s); running with the inherited environment]"
    );
    assert_eq!(out.field("snapshot"), json!("fallback"));
    let out = kit.bash(json!({"command": "echo ok"})).await;
    assert_eq!(out.text(), "ok", "the fallback notice comes once");
}

#[tokio::test]
async fn prefix_and_library_stdin() {
    let kit = Kit::with_vars(&[("EXECKIT_BASH_PREFIX", "nice -n 5")]);
    let out = kit.bash(json!({"command": "nice"})).await;
    assert_eq!(out.text(), "5");
    assert_eq!(out.field("prefix"), json!("nice -n 5"));

    let kit = Kit::new();
    let params: execkit_protocol::bash::BashParams =
        serde_json::from_value(json!({"command": "tr a-z A-Z; echo \"[$SECRET_TOKEN]\""})).unwrap();
    let extras = execkit::BashExtras {
        stdin: Some(b"hello\n".to_vec()),
        env: [("SECRET_TOKEN".to_string(), "kept".to_string())].into_iter().collect(),
    };
    let out = kit.toolkit.bash_with(params, extras, execkit::CallContext::default()).await;
    assert_eq!(out.text(), "HELLO\n[kept]");
}

#[tokio::test]
async fn scrub_can_be_turned_off() {
    let kit = Kit::with_vars(&[("EXECKIT_BASH_ENV_SCRUB", "0"), ("EXECKIT_TEST_TOKEN", "t0k")]);
    let out = kit.bash(json!({"command": "echo \"[$EXECKIT_TEST_TOKEN]\""})).await;
    assert_eq!(out.text(), "[t0k]");
    assert_eq!(out.field("scrubbed_env"), json!([]));
}

#[tokio::test]
async fn git_never_waits_in_a_pager() {
    let kit = Kit::new();
    let script = "git init -q repo && cd repo && git config user.email t@e && git config user.name t \
                  && for i in $(seq 1 60); do git commit -q --allow-empty -m \"c$i\"; done";
    let out = kit.bash(json!({"command": script, "timeout": 120})).await;
    assert!(!out.is_error(), "{}", out.text());
    let started = std::time::Instant::now();
    let out = kit
        .bash(json!({"command": "git log --oneline | wc -l; git log --oneline", "cwd": "repo", "pty": true, "timeout": 30}))
        .await;
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert!(!out.is_error(), "{}", out.text());
    assert!(out.text().starts_with("60\n"), "{}", out.text());
    assert!(out.text().contains(" c1"), "the whole log came through without a pager");
}

/// The snapshot's disk cache (B17): a second Toolkit reads it instead of running the login
/// shell; a changed startup file or an expired entry makes it run again, and what a stale
/// entry says is never used.
#[tokio::test]
async fn shell_snapshot_cache_refreshes_on_a_changed_bashrc_and_never_uses_a_stale_entry() {
    let home = tempfile::tempdir().unwrap();
    let runs = home.path().join("login-runs");
    std::fs::write(
        home.path().join(".bash_profile"),
        format!("echo run >> '{}'\n. ~/.bashrc\n", runs.display()),
    )
    .unwrap();
    std::fs::write(home.path().join(".bashrc"), "export SNAP_V=one\n").unwrap();
    let home_str = home.path().to_string_lossy().to_string();
    let vars =
        [("HOME", home_str.as_str()), ("SHELL", "/bin/bash"), ("EXECKIT_BASH_SNAPSHOT", "env")];
    let login_runs = || std::fs::read_to_string(&runs).unwrap_or_default().lines().count();
    let value =
        async || Kit::with_vars(&vars).bash(json!({"command": "echo \"$SNAP_V\""})).await.text();

    assert_eq!(value().await, "one");
    assert_eq!(login_runs(), 1);
    let cache_dir = home.path().join(".execkit/cache");
    let entries: Vec<_> = std::fs::read_dir(&cache_dir).unwrap().flatten().collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    let entry = entries[0].path();
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&entry).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(value().await, "one");
    assert_eq!(login_runs(), 1, "the second Toolkit reads the cache");

    std::fs::write(home.path().join(".bashrc"), "export SNAP_V=two2\n").unwrap();
    assert_eq!(value().await, "two2", "a changed ~/.bashrc refreshes the snapshot");
    assert_eq!(login_runs(), 2);
    assert_eq!(value().await, "two2");
    assert_eq!(login_runs(), 2);

    // An entry past its age, saying something else: never used, replaced by a fresh run.
    let entries: Vec<_> =
        std::fs::read_dir(&cache_dir).unwrap().flatten().map(|e| e.path()).collect();
    assert_eq!(entries.len(), 2, "one entry per key: {entries:?}");
    let read = |path: &std::path::Path| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    };
    let says_two = |e: &&std::path::PathBuf| {
        read(e)["vars"].as_array().unwrap().contains(&json!(["SNAP_V", "two2"]))
    };
    let entry = entries.iter().find(says_two).unwrap();
    let mut stored = read(entry);
    stored["captured_at_unix_s"] = json!(stored["captured_at_unix_s"].as_u64().unwrap() - 7200);
    for var in stored["vars"].as_array_mut().unwrap() {
        if var[0] == "SNAP_V" {
            var[1] = json!("stale");
        }
    }
    std::fs::write(entry, serde_json::to_vec(&stored).unwrap()).unwrap();
    assert_eq!(value().await, "two2", "an expired entry is never used");
    assert_eq!(login_runs(), 3);
    assert_eq!(value().await, "two2");
    assert_eq!(login_runs(), 3, "the refreshed entry is used again");
}
