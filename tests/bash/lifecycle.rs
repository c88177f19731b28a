//! bash: how runs end: timeouts, kills, lingering processes, cancellation, concurrency, progress.

use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::json;

use crate::support::{Kit, gone_within, pids_with};

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
    assert!(text.ends_with("[Command timed out after 1 second]"), "{text}");
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
    assert!(out.text().ends_with("[Command timed out after 1 second]"), "{}", out.text());
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
            assert!(out.text().ends_with("[Command timed out after 1 second]"));
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
async fn stopped_shell_is_continued_and_killed_at_the_timeout() {
    let kit = Kit::new();
    let started = Instant::now();
    let out = kit.bash(json!({"command": "kill -STOP $$", "timeout": 1})).await;
    assert!(out.text().ends_with("[Command timed out after 1 second]"), "{}", out.text());
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
async fn silent_commands_get_a_heartbeat() {
    let kit = Kit::new();
    let (out, events) = kit.bash_with_progress(json!({"command": "echo begin; sleep 6"})).await;
    assert_eq!(out.text(), "begin");
    let late = events.iter().filter(|e| e.elapsed_ms >= 5000).count();
    assert!(
        late >= 1,
        "no heartbeat after 5 s of silence: {:?}",
        events.iter().map(|e| e.elapsed_ms).collect::<Vec<_>>()
    );
}

async fn all_gone(marker: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !pids_with(marker).is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    pids_with(marker).is_empty()
}

/// B31: 100 lingering processes are counted as 100, though the outcome lists at most 64.
#[tokio::test]
async fn a_hundred_lingering_processes_are_counted_right() {
    let kit = Kit::with_vars(&[("EXECKIT_BASH_LINGERING", "kill")]);
    let out = kit
        .bash(json!({"command": "for i in $(seq 100); do sleep 1000.6161 & done; echo spawned"}))
        .await;
    let text = out.text();
    assert!(
        text.starts_with(
            "spawned\n[100 processes are still running after the command exited: pid "
        ),
        "{text}"
    );
    assert!(text.contains(" and 97 more. Stopped them (TERM, then KILL after 2 s).]"), "{text}");
    assert!(all_gone("sleep 1000.6161").await, "survivors after the kill");
}

/// B31/J3: at the job cap a foreground command's leftovers are stopped, and the result says why.
#[tokio::test]
async fn at_the_job_cap_leftovers_are_stopped_with_the_reason() {
    let kit = Kit::with_vars(&[("EXECKIT_JOB_MAX_RUNNING", "1")]);
    let job = kit.bash(json!({"command": "sleep 1000.7171", "async": true})).await;
    assert!(!job.is_error(), "{}", job.text());
    let out = kit.bash(json!({"command": "sleep 1000.7272 & echo hi"})).await;
    let text = out.text();
    assert!(
        text.ends_with(
            "(holds the output pipe). Stopped it (TERM, then KILL after 2 s), because the \
             background job limit is reached (1 running).]"
        ),
        "{text}"
    );
    assert_eq!(out.field("lingering")["action"], json!("killed"));
    assert!(all_gone("sleep 1000.7272").await, "the leftover survived");
    kit.toolkit.close().await;
    assert!(all_gone("sleep 1000.7171").await, "the job survived close");
}

fn one_shot_kit(dir: &tempfile::TempDir) -> execkit::Toolkit {
    execkit::Toolkit::builder()
        .cwd(dir.path())
        .var("EXECKIT_ARTIFACT_DIR", dir.path().join("artifacts").to_string_lossy())
        .var("EXECKIT_BASH_SNAPSHOT", "off")
        .var("EXECKIT_BASH_AUTO_BACKGROUND", "1")
        .one_shot(true)
        .build()
        .expect("toolkit")
}

/// A one-shot Toolkit (`execkit call`, `execkit bash`) promises no job that would die with the
/// process: `async` is refused, leftovers are stopped with the reason, nothing moves to the
/// background.
#[tokio::test]
async fn one_shot_calls_promise_no_background_job() {
    let dir = tempfile::tempdir().unwrap();
    let toolkit = one_shot_kit(&dir);
    let call = |args| toolkit.call("bash", args, execkit::CallContext::default());
    let out = call(json!({"command": "echo hi", "async": true})).await;
    assert!(out.is_error);
    assert!(
        out.text().starts_with(
            "Invalid argument \"async\": this one-shot call ends when it returns, and a \
             background job would be killed with it;"
        ),
        "{}",
        out.text()
    );
    let out = call(json!({"command": "sleep 1000.8181 & echo started"})).await;
    let text = out.text();
    assert!(text.starts_with("started\n[1 process is still running"), "{text}");
    assert!(
        text.ends_with(
            "Stopped it (TERM, then KILL after 2 s), because this one-shot call ends with the \
             command (keep processes running through the MCP server, execkit mcp, and the job \
             tool).]"
        ),
        "{text}"
    );
    assert!(!text.contains("bg_"), "{text}");
    assert!(all_gone("sleep 1000.8181").await, "the leftover survived");
    // Auto-background (1 s here) does not apply: the call stays in the foreground.
    let out = call(json!({"command": "sleep 1.5; echo done"})).await;
    assert_eq!(out.text(), "done");
    toolkit.close().await;
}
