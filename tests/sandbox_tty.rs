//! `execkit bash --escalate`: a person at a terminal approves a one-off run outside the
//! sandbox; without a terminal on stdin the call is refused and nothing runs. The terminal is a
//! real pseudo-terminal made by Python's `pty` module, which answers the question.

use std::path::PathBuf;

use crate::cli::{Sandbox, execkit_bin};

/// Runs argv[1:] on a new pty; answers `ANSWER` to the first `[y/N]`, prints all it read.
const PTY_DRIVER: &str = r#"
import os, pty, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
seen, sent, deadline = b"", False, time.time() + 120
while time.time() < deadline:
    ready, _, _ = select.select([fd], [], [], 1)
    if not ready:
        continue
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    seen += chunk
    if not sent and b"[y/N]" in seen:
        os.write(fd, os.environ["ANSWER"].encode() + b"\n")
        sent = True
_, status = os.waitpid(pid, 0)
sys.stdout.write(seen.decode(errors="replace"))
sys.exit(os.waitstatus_to_exitcode(status))
"#;

/// A file outside `/tmp` and the test's HOME, so outside every writable root.
fn outside(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sandbox");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::canonicalize(dir).unwrap().join(format!("{name}-{}", std::process::id()))
}

fn escalated_args(target: &std::path::Path) -> Vec<String> {
    let command = format!("echo outside > {0} && cat {0}", target.display());
    ["--sandbox", "workspace-write", "bash", "--escalate", "writes the build output", "--"]
        .iter()
        .map(|s| s.to_string())
        .chain([command])
        .collect()
}

/// The driver's stdout and exit code for `answer`.
fn on_a_terminal(cli: &Sandbox, target: &std::path::Path, answer: &str) -> (String, Option<i32>) {
    let out = cli
        .command("python3")
        .env("ANSWER", answer)
        .arg("-c")
        .arg(PTY_DRIVER)
        .arg(execkit_bin())
        .args(escalated_args(target))
        .output()
        .unwrap();
    (String::from_utf8_lossy(&out.stdout).into_owned(), out.status.code())
}

#[test]
fn without_a_terminal_an_escalation_is_refused_and_nothing_runs() {
    let cli = Sandbox::new();
    let target = outside("no-tty");
    let out = cli.command(execkit_bin()).args(escalated_args(&target)).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains(
            "This command asked to run outside the sandbox, but this client cannot ask a person \
             for approval. Nothing was run."
        ),
        "{text}"
    );
    assert!(!target.exists());
}

#[test]
fn a_person_at_the_terminal_approves_once_or_declines() {
    let cli = Sandbox::new();
    let target = outside("tty");
    let (text, code) = on_a_terminal(&cli, &target, "n");
    assert!(
        text.contains("Allow this command to run outside the sandbox? echo outside > ")
            && text.contains("reason given: writes the build output"),
        "{text}"
    );
    assert!(text.contains("execkit: sandbox: declined: echo outside"), "{text}");
    assert!(
        text.contains("The person declined to run this command outside the sandbox."),
        "{text}"
    );
    assert_eq!(code, Some(1), "{text}");
    assert!(!target.exists());
    let (text, code) = on_a_terminal(&cli, &target, "y");
    assert!(text.contains("execkit: sandbox: approved once: echo outside"), "{text}");
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "outside\n");
    std::fs::remove_file(&target).unwrap();
}
