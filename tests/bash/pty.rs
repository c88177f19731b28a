//! bash: PTY mode and waiting-for-input detection.

use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::json;

use crate::support::{Kit, pids_with};

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
    assert!(out.text().ends_with("[Command timed out after 1 second]"), "{}", out.text());
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
