//! bash: arguments, normalisation, working directories, rules and outcomes.

use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::json;

use crate::support::{Kit, Outcome};

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
             timeout, head, tail, pty, async, sandbox_permissions, justification",
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
    assert_eq!(out.text(), "Unknown tool \"nope\"; available tools: bash, eval, job, debug");
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
async fn trailing_tail_becomes_the_window() {
    let kit = Kit::new();
    let out = kit.bash(json!({"command": "seq 1 100 2>&1 | tail -n 3"})).await;
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

    let out = kit.bash(json!({"command": "false |& tail -n1"})).await;
    assert_eq!(
        out.text(),
        "(no output)\n[\"|& tail -n1\" was applied by execkit, so the exit code is that of the \
         command before it]\nCommand exited with code 1"
    );
    let out = kit.bash(json!({"command": "seq 1 5 |& tail -n 2", "tail": 4})).await;
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

/// B5: only one pipeline whose stderr flows into `tail` is rewritten; anything else runs as
/// written, so nothing bash would show is hidden under the window.
#[tokio::test]
async fn tail_of_part_of_the_output_runs_as_written() {
    let kit = Kit::new();
    let out = kit.bash(json!({"command": "echo first; seq 1 10 | tail -n 2"})).await;
    assert_eq!(out.text(), "first\n9\n10");
    assert_eq!(out.field("normalized"), json!(null));
    let out = kit.bash(json!({"command": "echo oops >&2; seq 1 10 | tail -n 2"})).await;
    assert_eq!(out.text(), "oops\n9\n10");
    let command = "(seq 1 5; echo warning >&2; seq 6 9) | tail -n 2";
    let out = kit.bash(json!({"command": command})).await;
    assert_eq!(out.text(), "warning\n8\n9");
    assert_eq!(out.field("normalized"), json!(null));
    let out = kit.bash(json!({"command": "sh -c 'seq 1 5; echo warning >&2' | tail -n 2"})).await;
    assert_eq!(out.text(), "warning\n4\n5");
    // With the merge the window applies, and `cd` is taken off first.
    let out = kit
        .bash(json!({"command": "cd / && sh -c 'echo warning >&2; seq 1 5' 2>&1 | tail -n 2"}))
        .await;
    assert_eq!(out.field("normalized"), json!({"removed": "| tail -n 2", "tail": 2}));
    assert!(out.text().starts_with("[... 4 lines"), "{}", out.text());
    assert!(out.text().contains("\n4\n5\n[Showing lines 5-6 of 6"), "{}", out.text());
    assert_eq!(out.field("cwd"), json!("/"));
    // Never under a PTY, where dropping the stage would make the producer write to a terminal.
    let out = kit.bash(json!({"command": "seq 1 5 2>&1 | tail -n 2", "pty": true})).await;
    assert_eq!(out.field("normalized"), json!(null));
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

/// The final directory is recorded for every way a command can move bash, and only then: a
/// command that cannot move it runs with no prelude, so bash `exec`s its program.
#[tokio::test]
async fn directory_changes_are_noticed_however_they_happen() {
    let kit = Kit::new();
    std::fs::write(kit.work().join("env.sh"), "cd /tmp\n").unwrap();
    std::fs::create_dir_all(kit.work().join("bd")).unwrap();
    for (command, moved_to) in [
        (". ./env.sh", "/tmp"),
        ("source env.sh", "/tmp"),
        ("eval 'cd /tmp'", "/tmp"),
        ("pushd /tmp >/dev/null", "/tmp"),
        ("2>/dev/null . ./env.sh", "/tmp"),
        ("time -p . ./env.sh 2>/dev/null", "/tmp"),
        ("trap '. ./env.sh' ERR; false", "/tmp"),
        ("c\\\nd /tmp", "/tmp"),
        ("{c..b}d", "bd"),
        ("history -s 'xd /tmp'; fc -s x=c xd >/dev/null", "/tmp"),
    ] {
        let out = kit.bash(json!({"command": command})).await;
        let expected = kit.work().join(moved_to).display().to_string();
        assert_eq!(out.field("final_cwd"), json!(expected), "{command}: {}", out.text());
    }
    let out = kit.bash(json!({"command": "readlink /proc/$$/exe"})).await;
    assert!(out.text().ends_with("/readlink"), "bash did not exec its program: {}", out.text());
    for command in [
        "[ -z \"${BASH_ENV+set}\" ] && echo unset",
        "cd /tmp; [ -z \"${BASH_ENV+set}\" ] && echo unset",
    ] {
        let out = kit.bash(json!({"command": command})).await;
        assert!(out.text().starts_with("unset"), "{command}: {}", out.text());
    }
}

// bash in POSIX mode reads no `BASH_ENV`: the prelude turns the mode on itself, so the command
// still runs in it and the directory notice still comes.
#[tokio::test]
async fn posix_mode_keeps_the_directory_notice() {
    let kit = Kit::new();
    for env in [json!({"POSIXLY_CORRECT": "y"}), json!({"SHELLOPTS": "posix:nounset"})] {
        let command = "cd /tmp; shopt -qo posix && echo posix; shopt -qo nounset && echo nounset; \
                       echo \"[${POSIXLY_CORRECT-}]\"";
        let out = kit.bash(json!({"command": command, "env": env})).await;
        assert_eq!(out.field("final_cwd"), json!("/tmp"), "{env}: {}", out.text());
        assert!(out.text().starts_with("posix\n"), "{env}: {}", out.text());
        let expected = if env.get("POSIXLY_CORRECT").is_some() { "[y]" } else { "nounset" };
        assert!(out.text().contains(expected), "{env}: {}", out.text());
    }
    let out = kit
        .bash(json!({"command": "shopt -qo posix && echo posix", "env": {"POSIXLY_CORRECT": "y"}}))
        .await;
    assert_eq!(out.text(), "posix");
    // A child shell inherits the mode through the exported `SHELLOPTS`, as without the prelude.
    let child = "cd .; bash -c 'shopt -qo posix && echo child-on'";
    let out = kit.bash(json!({"command": child, "env": {"SHELLOPTS": "posix"}})).await;
    assert_eq!(out.text(), "child-on");
}

// The prelude leaves no trace the command can see: `$_` is what bash started with, its
// variables are not exported under `allexport`, and the EXIT trap neither fails under `set -u`
// nor goes through a user's aliases.
#[tokio::test]
async fn the_prelude_is_invisible_to_the_command() {
    let kit = Kit::new();
    let plain = kit.bash(json!({"command": "echo \"[$_]\""})).await;
    let with_prelude = kit.bash(json!({"command": "echo \"[$_]\"; cd ."})).await;
    assert_eq!(with_prelude.text(), plain.text());
    let out = kit.bash(json!({"command": "set -u; cd /tmp; unset PWD; echo done"})).await;
    assert_eq!(out.text(), "done");
    // A user's DEBUG trap runs once for the EXIT trap (for the command that removes it).
    let count = |out: &Outcome| out.text().lines().filter(|l| *l == "dbg").count();
    let plain = kit.bash(json!({"command": "trap 'echo dbg' DEBUG; true; true"})).await;
    let with_prelude = kit.bash(json!({"command": "trap 'echo dbg' DEBUG; true; cd ."})).await;
    assert_eq!(count(&with_prelude), count(&plain) + 1, "{}", with_prelude.text());
    let exported = "cd .; env | grep -c '^__execkit'";
    let out = kit.bash(json!({"command": exported, "env": {"SHELLOPTS": "allexport"}})).await;
    assert!(out.text().starts_with('0'), "a prelude variable was exported: {}", out.text());
    let out = kit
        .bash(json!({"command": "cd /tmp; shopt -s expand_aliases; alias builtin=echo; true"}))
        .await;
    assert!(!out.text().contains("set +xv"), "the trap went through the alias: {}", out.text());
    assert_eq!(out.field("final_cwd"), json!("/tmp"));
}

#[tokio::test]
async fn large_command_runs_from_a_script_file() {
    let kit = Kit::new();
    let filler = format!("# {}\n", "x".repeat(200 * 1024));
    let out = kit.bash(json!({"command": format!("{filler}echo ran")})).await;
    assert_eq!(out.text(), "ran");
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

/// B11: a symlink loop or an over-long path is reported for what it is, not as missing.
#[tokio::test]
async fn cwd_errors_name_the_real_cause() {
    let kit = Kit::new();
    let looped = kit.work().join("loop");
    std::os::unix::fs::symlink(&looped, &looped).unwrap();
    let out = kit.bash(json!({"command": "pwd", "cwd": "loop"})).await;
    assert!(out.is_error());
    assert!(out.text().starts_with("Working directory cannot be resolved: "), "{}", out.text());
    let out = kit.bash(json!({"command": "cd loop && pwd"})).await;
    assert!(out.text().contains("too many levels of symbolic links"), "{}", out.text());
    assert!(out.text().ends_with("(from \"cd loop &&\")"), "{}", out.text());
    let out = kit.bash(json!({"command": "pwd", "cwd": "x".repeat(5000)})).await;
    assert!(out.text().starts_with("Working directory path is too long: "), "{}", out.text());
    let file = kit.work().join("file");
    std::fs::write(&file, "x").unwrap();
    let out = kit.bash(json!({"command": "pwd", "cwd": "file/sub"})).await;
    assert!(out.text().ends_with(&format!("({} is not a directory)", file.display())));
}
