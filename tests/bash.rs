//! Integration tests: the bash tool, through the dispatcher, with real bash and coreutils.

use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::json;

use crate::support::{Kit, gone_within, pids_with};

#[tokio::test]
async fn echo_and_exit_codes() {
    let kit = Kit::new();
    let out = kit.bash(json!({"command": "echo hello"})).await;
    assert_eq!(out.text(), "hello");
    assert!(!out.is_error());
    assert_eq!(out.field("exit_code"), json!(0));
    assert_eq!(out.field("state"), json!("exited"));
    assert_eq!(out.field("timeout_s"), json!(300));
    assert_eq!(out.field("truncation"), json!(null));

    let out = kit.bash(json!({"command": "echo out; echo err >&2; exit 3"})).await;
    assert_eq!(out.text(), "out\nerr\nCommand exited with code 3");
    assert!(out.is_error());
    assert_eq!(out.field("exit_code"), json!(3));

    let out = kit.bash(json!({"command": "true"})).await;
    assert_eq!(out.text(), "(no output)");
    let out = kit.bash(json!({"command": "exit 300"})).await;
    assert_eq!(out.field("exit_code"), json!(44));

    let out = kit.bash(json!({"command": "grep zzz /etc/hostname"})).await;
    assert_eq!(out.text(), "(no output)\nCommand exited with code 1 (no lines matched)");
    assert_eq!(out.field("exit_meaning"), json!("no_match"));
    let out = kit.bash(json!({"command": "nosuchcmd_execkit"})).await;
    assert!(
        out.text().ends_with("Command exited with code 127 (command not found)"),
        "{}",
        out.text()
    );

    let out = kit.bash(json!({"command": "kill -9 $$"})).await;
    assert!(out.text().ends_with("Command was killed by signal 9 (SIGKILL)"), "{}", out.text());
    assert_eq!(out.field("exit_code"), json!(137));
    assert_eq!(out.field("signal"), json!("SIGKILL"));
    assert_eq!(out.field("state"), json!("killed"));
}

#[tokio::test]
async fn invalid_arguments_run_nothing() {
    let kit = Kit::new();
    let cases = [
        (json!({}), "Invalid argument \"command\": missing (the shell command to run)"),
        (json!({"command": 42}), "Invalid argument \"command\": expected a string (got number 42)"),
        (json!({"command": "   "}), "Invalid argument \"command\": empty"),
        (
            json!({"command": "ls", "timout": 5}),
            "Invalid argument \"timout\": unknown field; expected one of command, cwd, env, \
             timeout, head, tail, pty, async",
        ),
        (
            json!({"command": "echo a\u{0}b"}),
            "Invalid argument \"command\": contains a NUL byte at offset 6",
        ),
        (
            json!({"command": "ls", "pty": "yes"}),
            "Invalid argument \"pty\": expected a boolean (got string \"yes\")",
        ),
        (
            json!({"command": "ls", "head": -3}),
            "Invalid argument \"head\": expected a whole number of lines, 0 or more (got -3)",
        ),
        (
            json!({"command": "ls", "head": 2.5}),
            "Invalid argument \"head\": expected a whole number of lines, 0 or more (got 2.5)",
        ),
        (
            json!({"command": "ls", "timeout": "30"}),
            "Invalid argument \"timeout\": expected a number of seconds (got string \"30\")",
        ),
        (
            json!({"command": "ls", "env": {"A=B": "x"}}),
            "Invalid argument \"env\": \"A=B\" is not a valid variable name (letters, digits, _; \
             not starting with a digit)",
        ),
        (
            json!({"command": "ls", "env": {"PATH": null}}),
            "Invalid argument \"env.PATH\": expected a string (got null)",
        ),
        (
            json!({"command": "ls", "env": []}),
            "Invalid argument \"env\": expected an object (got array)",
        ),
    ];
    for (args, expected) in cases {
        let out = kit.bash(args.clone()).await;
        assert!(out.is_error(), "{args}");
        assert_eq!(out.text(), expected, "{args}");
    }
    let out = kit.bash(json!({"command": "ls", "timeout": -1})).await;
    assert!(
        out.text().starts_with("Invalid argument \"timeout\": must be 0 or more seconds"),
        "{}",
        out.text()
    );
    let big = format!("echo {}", "x".repeat(2 << 20));
    let out = kit.bash(json!({"command": big})).await;
    assert!(out.text().contains("exceeds the 1048576-byte limit"), "{}", out.text());
    let out = kit.call("nope", json!({})).await;
    assert!(out.is_error);
    assert_eq!(out.text(), "Unknown tool \"nope\"; available tools: bash, eval, job");
}

#[tokio::test]
async fn timeouts_are_clamped_with_notices() {
    let kit = Kit::new();
    let out = kit.bash(json!({"command": "true", "timeout": 1e308})).await;
    assert_eq!(out.text(), "(no output)\n[timeout 1e308 s clamped to 3600 s (allowed 1-3600 s)]");
    assert_eq!(out.field("timeout_s"), json!(3600));
    let out = kit.bash(json!({"command": "true", "timeout": 0})).await;
    assert_eq!(
        out.text(),
        "(no output)\n[timeout 0 clamped to 3600 s (0 means the longest allowed)]"
    );
    let out = kit.bash(json!({"command": "true", "timeout": 0.2})).await;
    assert_eq!(out.text(), "(no output)");
    assert_eq!(out.field("timeout_s"), json!(1));
    let out = kit.bash(json!({"command": "seq 3", "tail": 500000})).await;
    assert_eq!(out.text(), "1\n2\n3\n[tail 500000 clamped to 100000 (allowed 0-100000)]");
}

#[tokio::test]
async fn timeout_kills_the_whole_tree() {
    let kit = Kit::new();
    let marker = "sleep 1000.3133";
    let started = Instant::now();
    let out = kit
        .bash(json!({
            "command": format!("setsid {marker}1 & {marker}2 & sleep 3"),
            "timeout": 1
        }))
        .await;
    let wall = started.elapsed();
    assert!(out.is_error());
    let text = out.text();
    assert!(text.ends_with("[Command timed out after 1 seconds]"), "{text}");
    assert_eq!(text.matches("timed out").count(), 1);
    assert_eq!(out.field("timed_out"), json!(true));
    assert_eq!(out.field("exit_code"), json!(null));
    assert!(wall < Duration::from_secs(5), "took {wall:?}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let left: Vec<u32> = pids_with(marker);
    if out.field("containment") == json!("cgroup") {
        assert!(left.is_empty(), "survivors: {left:?}");
    } else {
        for pid in left {
            assert!(gone_within(pid, 5).await, "pid {pid} survived");
        }
    }
}

#[tokio::test]
async fn term_ignoring_command_is_killed_after_the_grace() {
    let kit = Kit::new();
    let started = Instant::now();
    let out = kit.bash(json!({"command": "trap '' TERM INT; sleep 1000", "timeout": 1})).await;
    assert!(out.text().ends_with("[Command timed out after 1 seconds]"), "{}", out.text());
    assert!(started.elapsed() < Duration::from_secs(6), "took {:?}", started.elapsed());
}

#[tokio::test]
async fn lingering_processes_are_killed_when_asked() {
    let kit = Kit::with_vars(&[("EXECKIT_BASH_LINGERING", "kill")]);
    let started = Instant::now();
    let out = kit.bash(json!({"command": "sleep 1000.4242 & echo hi"})).await;
    assert!(started.elapsed() < Duration::from_secs(3), "took {:?}", started.elapsed());
    let text = out.text();
    assert!(
        text.starts_with("hi\n[1 process is still running after the command exited: pid "),
        "{text}"
    );
    assert!(
        text.ends_with("(holds the output pipe). Stopped it (TERM, then KILL after 2 s).]"),
        "{text}"
    );
    let lingering = out.field("lingering");
    assert_eq!(lingering["action"], json!("killed"));
    assert_eq!(lingering["processes"][0]["holds_output"], json!(true));
    let pid = lingering["processes"][0]["pid"].as_u64().unwrap() as u32;
    assert!(gone_within(pid, 5).await, "lingering pid {pid} was not stopped");
}

#[tokio::test]
async fn closed_output_then_sleep_waits_for_the_leader() {
    let kit = Kit::new();
    let started = Instant::now();
    let out = kit.bash(json!({"command": "exec >&- 2>&-; sleep 1.5"})).await;
    assert!(started.elapsed() >= Duration::from_millis(1400));
    assert_eq!(out.text(), "(no output)");
    assert_eq!(out.field("exit_code"), json!(0));
}

#[tokio::test]
async fn stdin_is_at_eof() {
    let kit = Kit::new();
    let out = kit.bash(json!({"command": "cat; read x; echo \"[$x]\"", "timeout": 10})).await;
    assert_eq!(out.text(), "[]");
    let out = kit.bash(json!({"command": "tty"})).await;
    assert!(out.text().contains("[The command wanted an interactive terminal;"), "{}", out.text());
}

#[tokio::test]
async fn trailing_tail_becomes_the_window() {
    let kit = Kit::new();
    let out = kit.bash(json!({"command": "seq 1 100 | tail -n 3"})).await;
    let text = out.text();
    assert!(
        text.starts_with(
            "[... 97 lines (282 bytes) omitted ...]\n98\n99\n100\n[Showing lines 98-100 of 100; \
             full output: artifact://"
        ),
        "{text}"
    );
    assert_eq!(out.field("normalized"), json!({"removed": "| tail -n 3", "tail": 3}));
    let uri = out.field("artifact").as_str().unwrap().to_string();
    let expected: String = (1..=100).map(|n| format!("{n}\n")).collect();
    assert_eq!(kit.artifact_bytes(&uri), expected.as_bytes());

    let out = kit.bash(json!({"command": "false | tail -n1"})).await;
    assert_eq!(
        out.text(),
        "(no output)\n[\"| tail -n1\" was applied by execkit, so the exit code is that of the \
         command before it]\nCommand exited with code 1"
    );
    let out = kit.bash(json!({"command": "seq 1 5 | tail -n 2", "tail": 4})).await;
    assert_eq!(out.text(), "4\n5");
    assert_eq!(out.field("normalized"), json!(null));
    let out = kit.bash(json!({"command": "seq 1 5 | head -n2"})).await;
    assert_eq!(out.text(), "1\n2");
    let started = Instant::now();
    let out = kit.bash(json!({"command": "yes | head -n 3"})).await;
    assert_eq!(out.text(), "y\ny\ny");
    assert!(started.elapsed() < Duration::from_secs(2));
    let out = kit.bash(json!({"command": "echo \"a | tail -5\""})).await;
    assert_eq!(out.text(), "a | tail -5");
}

#[tokio::test]
async fn working_directory_rules() {
    let kit = Kit::new();
    let work = kit.work();
    std::fs::create_dir_all(work.join("sub/deeper")).unwrap();
    std::fs::write(work.join("file"), "x").unwrap();
    let out = kit.bash(json!({"command": "cd sub && pwd"})).await;
    assert_eq!(out.text(), format!("{}/sub", work.display()));
    let out = kit.bash(json!({"command": "cd sub && cd deeper && pwd"})).await;
    assert_eq!(out.text(), format!("{}/sub/deeper", work.display()));
    let out = kit.bash(json!({"command": "cd missing && touch should_not_exist"})).await;
    assert_eq!(
        out.text(),
        format!(
            "Working directory does not exist: {0}/missing (resolved against {0}) (from \"cd missing &&\")",
            work.display()
        )
    );
    assert!(!work.join("should_not_exist").exists());
    let out = kit.bash(json!({"command": "cd /tmp"})).await;
    assert_eq!(
        out.text(),
        format!(
            "(no output)\n[Working directory changed to /tmp; it is not kept: the next call \
             starts in {} unless you pass \"cwd\"]",
            work.display()
        )
    );
    assert_eq!(out.field("final_cwd"), json!("/tmp"));
    let out = kit.bash(json!({"command": "pwd"})).await;
    assert_eq!(out.text(), work.display().to_string());
    let out = kit.bash(json!({"command": "pwd", "cwd": "sub/../sub/deeper"})).await;
    assert_eq!(out.text(), format!("{}/sub/deeper", work.display()));
    let out = kit.bash(json!({"command": "pwd", "cwd": ""})).await;
    assert_eq!(out.text(), work.display().to_string());
    let out = kit.bash(json!({"command": "pwd", "cwd": "file"})).await;
    assert_eq!(
        out.text(),
        format!("Working directory is not a directory: {}/file", work.display())
    );
    std::os::unix::fs::symlink(work.join("sub"), work.join("link")).unwrap();
    let out = kit.bash(json!({"command": "pwd", "cwd": "link"})).await;
    assert_eq!(out.text(), format!("{}/link", work.display()));
}

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
    assert_eq!(out.text(), "a\nc");
}

#[tokio::test]
async fn large_command_runs_from_a_script_file() {
    let kit = Kit::new();
    let filler = format!("# {}\n", "x".repeat(200 * 1024));
    let out = kit.bash(json!({"command": format!("{filler}echo ran")})).await;
    assert_eq!(out.text(), "ran");
}

#[tokio::test]
async fn concurrent_calls_do_not_interfere() {
    let kit = Kit::new();
    let work = kit.work();
    for i in 0..20 {
        std::fs::create_dir_all(work.join(format!("d{i}"))).unwrap();
    }
    let mut set = tokio::task::JoinSet::new();
    for i in 0..20 {
        let args = if i == 7 {
            json!({"command": "sleep 30", "timeout": 1})
        } else {
            json!({"command": "sleep 0.3; echo $N $(basename $PWD)", "cwd": format!("d{i}"), "env": {"N": i.to_string()}})
        };
        let toolkit = kit.toolkit.clone();
        set.spawn(
            async move { (i, toolkit.call("bash", args, execkit::CallContext::default()).await) },
        );
    }
    let results = set.join_all().await;
    assert_eq!(results.len(), 20);
    for (i, out) in results {
        if i == 7 {
            assert!(out.text().ends_with("[Command timed out after 1 seconds]"));
        } else {
            assert_eq!(out.text(), format!("{i} d{i}"));
        }
    }
}

#[tokio::test]
async fn progress_streams_the_tail() {
    let kit = Kit::new();
    let (out, events) = kit
        .bash_with_progress(json!({"command": "for i in 1 2 3; do echo $i; sleep 0.3; done"}))
        .await;
    assert_eq!(out.text(), "1\n2\n3");
    assert!(events.len() >= 2, "{} events", events.len());
    for pair in events.windows(2) {
        assert!(pair[1].elapsed_ms >= pair[0].elapsed_ms + 90, "events too close");
    }
    let last = events.last().unwrap();
    assert!(last.tail.contains('2'), "{:?}", last.tail);
    assert!(last.message.starts_with("running "), "{}", last.message);
    assert_eq!(last.total, Some(300_000.0));
}

#[tokio::test]
async fn cancellation_kills_and_reports() {
    let kit = Kit::new();
    let marker = "sleep 1000.777";
    let cancel = execkit_process::CancellationToken::new();
    let ctx = execkit::CallContext { progress: None, cancel: cancel.clone() };
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let out = kit.toolkit.call("bash", json!({"command": marker}), ctx).await;
    assert!(started.elapsed() < Duration::from_secs(4));
    assert!(out.text().ends_with("[Command cancelled]"), "{}", out.text());
    assert!(out.is_error);
    tokio::time::sleep(Duration::from_millis(200)).await;
    for pid in pids_with(marker) {
        assert!(gone_within(pid, 5).await, "pid {pid} survived the cancel");
    }
}

#[tokio::test]
async fn dropped_call_kills_its_tree() {
    let kit = Kit::new();
    let marker = "sleep 1000.555";
    let call = kit.bash(json!({"command": marker}));
    let _ = tokio::time::timeout(Duration::from_millis(600), call).await;
    let deadline = Instant::now() + Duration::from_secs(6);
    while !pids_with(marker).is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(pids_with(marker).is_empty(), "dropped call left processes behind");
}

#[tokio::test]
async fn rules_are_off_by_default_and_block_when_on() {
    let kit = Kit::with_vars(&[("EXECKIT_BASH_RULES", "long-running")]);
    let out = kit.bash(json!({"command": "npm run dev"})).await;
    assert!(out.is_error());
    assert_eq!(
        out.text(),
        "Blocked by rule \"long-running\": this starts a server or watcher that does not exit; \
         run it with \"async\": true and check it with the job tool.\nCommand: npm run dev"
    );
    assert_eq!(out.field("blocked_by"), json!("long-running"));
    let plain = Kit::new();
    let out = plain.bash(json!({"command": "echo npm run dev"})).await;
    assert_eq!(out.text(), "npm run dev");
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
async fn stopped_shell_is_continued_and_killed_at_the_timeout() {
    let kit = Kit::new();
    let started = Instant::now();
    let out = kit.bash(json!({"command": "kill -STOP $$", "timeout": 1})).await;
    assert!(out.text().ends_with("[Command timed out after 1 seconds]"), "{}", out.text());
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
}

#[tokio::test]
async fn many_detached_processes_are_all_killed() {
    let kit = Kit::new();
    let out = kit
        .bash(json!({
            "command": "for i in $(seq 60); do (setsid sleep 1000.5353 &); sleep 1000.5353 & done; sleep 1000",
            "timeout": 2
        }))
        .await;
    assert!(out.text().ends_with("[Command timed out after 2 seconds]"), "{}", out.text());
    let deadline = Instant::now() + Duration::from_secs(5);
    while !pids_with("sleep 1000.5353").is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(pids_with("sleep 1000.5353"), Vec::<u32>::new(), "survivors after the kill");
}

#[tokio::test]
async fn interpreters_see_eof_on_stdin() {
    let kit = Kit::new();
    let started = Instant::now();
    let out = kit.bash(json!({"command": "python3; echo rc=$?", "timeout": 20})).await;
    assert_eq!(out.text(), "rc=0");
    assert!(started.elapsed() < Duration::from_secs(15));
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
async fn commands_that_look_rewritable_but_are_not() {
    let kit = Kit::new();
    let out = kit.bash(json!({"command": "echo hi || tail -2"})).await;
    assert_eq!(out.text(), "hi");
    assert_eq!(out.field("normalized"), json!(null));
    let out = kit.bash(json!({"command": "cd - >/dev/null && echo moved"})).await;
    assert_eq!(
        out.field("cwd"),
        json!(kit.work().display().to_string()),
        "`cd -` is not extracted: {}",
        out.text()
    );
}

#[tokio::test]
async fn pty_mode_gives_a_terminal() {
    let kit = Kit::new();
    let out = kit.bash(json!({"command": "tty; test -t 1 && echo is-a-tty; stty size; echo $TERM", "pty": true})).await;
    let text = out.text();
    assert!(text.starts_with("/dev/pts/"), "{text}");
    assert!(text.ends_with("\nis-a-tty\n40 120\nxterm-256color"), "{text}");
    assert_eq!(out.field("pty"), json!(true));
    let out =
        kit.bash(json!({"command": "printf '\\e[31mred\\e[0m\\n'; exit 2", "pty": true})).await;
    assert_eq!(out.text(), "red\nCommand exited with code 2");
    let out = kit.bash(json!({"command": "tty"})).await;
    assert!(out.text().starts_with("not a tty"), "{}", out.text());

    let off = Kit::with_vars(&[("EXECKIT_NO_PTY", "1")]);
    let out = off.bash(json!({"command": "tty", "pty": true})).await;
    assert!(
        out.text().contains("\n[pty unavailable (EXECKIT_NO_PTY=1); ran without a terminal]"),
        "{}",
        out.text()
    );
    assert_eq!(out.field("pty"), json!(false));
}

#[tokio::test]
async fn pty_timeout_kills_the_tree() {
    let kit = Kit::new();
    let started = Instant::now();
    let out = kit
        .bash(json!({"command": "sleep 1000.6464 & sleep 1000.6464", "pty": true, "timeout": 1}))
        .await;
    assert!(out.text().ends_with("[Command timed out after 1 seconds]"), "{}", out.text());
    assert!(started.elapsed() < Duration::from_secs(5));
    let deadline = Instant::now() + Duration::from_secs(5);
    while !pids_with("sleep 1000.6464").is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(pids_with("sleep 1000.6464").is_empty());
}

#[tokio::test]
async fn prompts_on_a_pty_return_early() {
    let kit = Kit::new();
    let cases = [
        ("read -p 'Name: ' n; echo got $n", "Name:", false),
        ("read -s -p 'Password: ' p; echo got", "Password:", true),
        ("python3 -c \"input('Continue? ')\"", "Continue?", false),
        ("seq 1 1000 > long.txt; less long.txt", "long.txt", false),
    ];
    for (command, prompt, hidden) in cases {
        let started = Instant::now();
        let out = kit.bash(json!({"command": command, "pty": true, "timeout": 60})).await;
        let took = started.elapsed();
        assert!(took < Duration::from_secs(10), "{command}: took {took:?}");
        assert!(out.is_error());
        assert_eq!(out.field("state"), json!("waiting_for_input"), "{command}: {}", out.text());
        let wait = out.field("input_wait");
        assert_eq!(wait["prompt"], json!(prompt), "{command}");
        assert_eq!(wait["input_hidden"], json!(hidden), "{command}");
        assert_eq!(wait["detected_by"], json!("syscall"));
        let text = out.text();
        let kind = if hidden {
            "waiting for hidden terminal input (likely a password)"
        } else {
            "waiting for terminal input"
        };
        assert!(text.contains("\n[Supply the answer in the command (printf 'y\\n' | cmd), use a non-interactive flag, or ask the user; never guess passwords]\n"), "{text}");
        assert!(text.contains(&format!("[Command stopped: {kind} after ")), "{text}");
        assert!(
            text.ends_with(&format!(" s without output. Last output: \"{prompt}\"]")),
            "{text}"
        );
    }
}

#[tokio::test]
async fn quiet_commands_on_a_pty_are_not_flagged() {
    let kit = Kit::new();
    let out = kit.bash(json!({"command": "sleep 2.5; echo done", "pty": true})).await;
    assert_eq!(out.text(), "done");
    let out = kit
        .bash(json!({"command": "for i in 1 2 3; do echo $i; sleep 1; done", "pty": true}))
        .await;
    assert_eq!(out.text(), "1\n2\n3");
}

#[tokio::test]
async fn full_screen_program_waiting_on_select_is_flagged() {
    let kit = Kit::new();
    let script = "import sys, select, termios, tty\n\
                  tty.setcbreak(sys.stdin.fileno())\n\
                  print('menu> ', end='', flush=True)\n\
                  select.select([sys.stdin], [], [])\n";
    let started = Instant::now();
    let out = kit
        .bash(json!({"command": format!("python3 -c \"{script}\""), "pty": true, "timeout": 60}))
        .await;
    assert!(started.elapsed() < Duration::from_secs(15), "took {:?}", started.elapsed());
    assert_eq!(out.field("state"), json!("waiting_for_input"), "{}", out.text());
    assert_eq!(out.field("input_wait")["detected_by"], json!("poll"));
}

#[tokio::test]
async fn async_jobs_can_use_a_pty() {
    let kit = Kit::new();
    let out = kit
        .bash(json!({"command": "test -t 0 && echo terminal", "pty": true, "async": true}))
        .await;
    let id = out.field("job_id").as_str().unwrap().to_string();
    let poll = kit.call("job", json!({"poll": [id]})).await;
    assert!(poll.text().ends_with("\nterminal"), "{}", poll.text());
}

#[tokio::test]
async fn cancelling_never_waits_for_the_kill() {
    let kit = Kit::new();
    let cancel = execkit_process::CancellationToken::new();
    let ctx = execkit::CallContext { progress: None, cancel: cancel.clone() };
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(400)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let out =
        kit.toolkit.call("bash", json!({"command": "trap '' TERM; sleep 1000.8383"}), ctx).await;
    assert!(started.elapsed() < Duration::from_millis(1500), "took {:?}", started.elapsed());
    assert!(out.text().ends_with("[Command cancelled]"), "{}", out.text());
    let deadline = Instant::now() + Duration::from_secs(6);
    while !pids_with("sleep 1000.8383").is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(pids_with("sleep 1000.8383").is_empty(), "the kill finished in the background");
}

#[tokio::test]
async fn leading_cd_before_a_subshell() {
    let kit = Kit::new();
    std::fs::create_dir_all(kit.work().join("sub")).unwrap();
    let out = kit.bash(json!({"command": "cd sub && (basename $PWD)"})).await;
    assert_eq!(out.text(), "sub");
    let out = kit.bash(json!({"command": "[[ -e /nonexistent ]]"})).await;
    assert_eq!(out.text(), "(no output)\nCommand exited with code 1 (the test is false)");
    let out = kit.bash(json!({"command": "seq 1 10", "head": 0, "tail": 0})).await;
    assert!(
        out.text().starts_with("[Showing no lines of 10; full output: artifact://"),
        "{}",
        out.text()
    );
}
