//! Integration tests: background jobs, adopted processes and the job tool.

use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::json;

use crate::support::{Kit, alive, gone_within, pids_with};

#[tokio::test]
async fn async_job_runs_and_is_polled_to_completion() {
    let kit = Kit::new();
    let started = Instant::now();
    let out = kit.bash(json!({"command": "echo start; sleep 1; echo done", "async": true})).await;
    assert!(started.elapsed() < Duration::from_secs(1), "start took {:?}", started.elapsed());
    let text = out.text();
    assert!(!out.is_error());
    assert!(
        text.starts_with("Started background job bg_1 (deadline 3600 s): echo start; sleep 1; echo done\nOutput so far: artifact://"),
        "{text}"
    );
    assert!(text.ends_with("(grows live). Wait for it with job {\"poll\": [\"bg_1\"]}."), "{text}");
    assert_eq!(out.field("job_id"), json!("bg_1"));
    assert_eq!(out.field("state"), json!("running"));
    assert_eq!(out.field("timeout_s"), json!(3600));
    let uri = out.field("artifact").as_str().unwrap().to_string();

    let poll = kit.call("job", json!({"poll": ["bg_1"]})).await;
    let text = poll.text();
    assert!(!poll.is_error, "{text}");
    assert!(text.starts_with("## Finished (1)\n### bg_1 · completed · exit 0 · "), "{text}");
    assert!(text.ends_with(" s · echo start; sleep 1; echo done\nstart\ndone"), "{text}");
    assert_eq!(kit.artifact_bytes(&uri), b"start\ndone\n");
    let jobs = poll.structured_content.unwrap()["jobs"].clone();
    assert_eq!(jobs[0]["state"], json!("completed"));
    assert_eq!(jobs[0]["exit_code"], json!(0));

    let again = kit.call("job", json!({"poll": ["bg_1"]})).await;
    assert!(again.text().contains("bg_1: completed, exit 0 after "), "{}", again.text());
    assert!(again.text().contains("(reported before)"));

    let second = kit.bash(json!({"command": "exit 4", "async": true})).await;
    assert_eq!(second.field("job_id"), json!("bg_2"));
    let poll = kit.call("job", json!({"poll": ["bg_2"]})).await;
    assert!(poll.is_error, "a failed job makes the poll an error");
    assert!(poll.text().contains("### bg_2 · failed · exit 4 · "), "{}", poll.text());
    assert!(poll.text().ends_with("(no output)\nCommand exited with code 4"), "{}", poll.text());
}

#[tokio::test]
async fn poll_window_list_and_cancel() {
    let kit = Kit::with_vars(&[("EXECKIT_JOB_WAIT", "1")]);
    let marker = "sleep 1000.9191";
    let out = kit.bash(json!({"command": format!("echo begun; {marker}"), "async": true})).await;
    let id = out.field("job_id").as_str().unwrap().to_string();
    let started = Instant::now();
    let poll = kit.call("job", json!({"poll": [id.clone()]})).await;
    assert!(started.elapsed() >= Duration::from_millis(900));
    let text = poll.text();
    assert!(
        text.starts_with(
            "No watched job finished within 1 s.\n## Still running (1)\n### bg_1 · running · "
        ),
        "{text}"
    );
    assert!(text.contains("\nbegun\n[output so far: artifact://"), "{text}");
    assert!(!poll.is_error);

    let list = kit.call("job", json!({"list": true})).await;
    let text = list.text();
    assert!(text.starts_with("## Jobs (1)\nbg_1  running  "), "{text}");

    let pids = pids_with(marker);
    assert!(!pids.is_empty());
    let cancel = kit.call("job", json!({"cancel": [id.clone()]})).await;
    let text = cancel.text();
    assert!(text.starts_with("## Cancelled (1)\nbg_1: cancelled after "), "{text}");
    assert_eq!(
        cancel.structured_content.as_ref().unwrap()["cancelled"],
        json!([{"id": "bg_1", "outcome": "cancelled"}])
    );
    for pid in pids {
        assert!(gone_within(pid, 5).await, "pid {pid} survived the cancel");
    }
    let again = kit.call("job", json!({"cancel": [id.clone()]})).await;
    assert_eq!(again.text(), "## Cancelled (1)\nbg_1: already finished (cancelled)");

    let none = kit.call("job", json!({})).await;
    assert_eq!(none.text(), "No background jobs are running.");
    assert!(!none.is_error);
}

#[tokio::test]
async fn bad_job_calls() {
    let kit = Kit::new();
    let out = kit.call("job", json!({"poll": ["bg_999"]})).await;
    assert!(out.is_error);
    assert_eq!(out.text(), "bg_999: not found (finished jobs are kept 300 s)");
    let out = kit.call("job", json!({"poll": ["x"]})).await;
    assert_eq!(out.text(), "Invalid argument \"poll[0]\": \"x\" is not a job id (expected bg_<n>)");
    let out = kit.call("job", json!({"list": true, "cancel": ["bg_1"]})).await;
    assert_eq!(
        out.text(),
        "Invalid argument \"list\": cannot be combined with \"poll\" or \"cancel\""
    );
    let out = kit.call("job", json!({"wait": 3})).await;
    assert_eq!(
        out.text(),
        "Invalid argument \"wait\": unknown field; expected one of poll, cancel, list"
    );
    let out = kit.call("job", json!({"list": true})).await;
    assert_eq!(out.text(), "No background jobs.");
}

#[tokio::test]
async fn running_jobs_are_capped() {
    let kit = Kit::with_vars(&[("EXECKIT_JOB_MAX_RUNNING", "2")]);
    for _ in 0..2 {
        let out = kit.bash(json!({"command": "sleep 1000.2727", "async": true})).await;
        assert!(!out.is_error(), "{}", out.text());
    }
    let out = kit.bash(json!({"command": "sleep 1000.2727", "async": true})).await;
    assert!(out.is_error());
    assert_eq!(
        out.text(),
        "Background job limit reached (2 running). Wait with job {\"poll\": []} or stop one with job {\"cancel\": [\"bg_N\"]}."
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while pids_with("sleep 1000.2727").len() < 2 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(pids_with("sleep 1000.2727").len(), 2, "nothing starts over the cap");
    kit.toolkit.close().await;
    assert!(pids_with("sleep 1000.2727").is_empty());
}

#[tokio::test]
async fn finished_jobs_are_announced_once_and_forgotten_after_retention() {
    let kit = Kit::with_vars(&[("EXECKIT_JOB_RETENTION", "2")]);
    kit.bash(json!({"command": "true", "async": true})).await;
    tokio::time::sleep(Duration::from_millis(700)).await;
    let out = kit.bash(json!({"command": "echo next"})).await;
    let text = out.text();
    assert!(
        text.starts_with("next\n[Background job bg_1 finished: completed, exit 0, after "),
        "{text}"
    );
    assert!(text.ends_with(" s. Read it with job {\"poll\": [\"bg_1\"]}]"), "{text}");
    let out = kit.bash(json!({"command": "echo again"})).await;
    assert_eq!(out.text(), "again");
    tokio::time::sleep(Duration::from_millis(2600)).await;
    let out = kit.call("job", json!({"poll": ["bg_1"]})).await;
    assert_eq!(out.text(), "bg_1: not found (finished jobs are kept 2 s)");
}

#[tokio::test]
async fn async_zero_timeout_means_no_deadline() {
    let kit = Kit::new();
    let out = kit.bash(json!({"command": "sleep 0.2", "async": true, "timeout": 0})).await;
    assert_eq!(out.field("timeout_s"), json!(null));
    let text = out.text();
    assert!(text.starts_with("Started background job bg_1 (no deadline): sleep 0.2\n"), "{text}");
    assert!(
        text.ends_with("\n[timeout 0: no deadline; the job runs until it exits or is cancelled]"),
        "{text}"
    );
    let out = kit.bash(json!({"command": "sleep 5", "async": true, "timeout": 1})).await;
    let id = out.field("job_id").as_str().unwrap().to_string();
    let poll = kit.call("job", json!({"poll": [id]})).await;
    assert!(poll.is_error);
    assert!(poll.text().contains("### bg_2 · timed_out · "), "{}", poll.text());
    assert!(poll.text().ends_with("[Command timed out after 1 second]"), "{}", poll.text());
}

#[tokio::test]
async fn lingering_processes_are_adopted_as_jobs() {
    let kit = Kit::new();
    let started = Instant::now();
    let out =
        kit.bash(json!({"command": "(sleep 0.5; echo late) & sleep 1000.6161 & echo hi"})).await;
    assert!(started.elapsed() < Duration::from_secs(3), "took {:?}", started.elapsed());
    let text = out.text();
    assert!(!out.is_error(), "{text}");
    assert!(text.starts_with("hi\n["), "{text}");
    assert!(text.contains(" processes are still running after the command exited: pid "), "{text}");
    assert!(
        text.ends_with(
            ". Adopted as background job bg_1; stop them with job {\"cancel\": [\"bg_1\"]}]"
        ),
        "{text}"
    );
    let lingering = out.field("lingering");
    assert_eq!(lingering["action"], json!("adopted"));
    assert_eq!(lingering["job_id"], json!("bg_1"));
    let list = kit.call("job", json!({"list": true})).await;
    assert!(list.text().starts_with("## Jobs (1)\nbg_1  running  "), "{}", list.text());
    let jobs = &list.structured_content.as_ref().unwrap()["jobs"];
    assert_eq!(jobs[0]["adopted"], json!(true));
    tokio::time::sleep(Duration::from_millis(900)).await;
    let pids = pids_with("sleep 1000.6161");
    assert_eq!(pids.len(), 1);
    let cancel = kit.call("job", json!({"cancel": ["bg_1"], "poll": ["bg_1"]})).await;
    let text = cancel.text();
    assert!(text.starts_with("## Cancelled (1)\nbg_1: cancelled after "), "{text}");
    assert!(text.contains("late"), "the adopted output kept flowing: {text}");
    assert!(gone_within(pids[0], 5).await);
}

#[tokio::test]
async fn close_ends_jobs_and_foreground_calls() {
    let kit = Kit::new();
    kit.bash(json!({"command": "sleep 1000.8181", "async": true})).await;
    let toolkit = kit.toolkit.clone();
    let foreground = tokio::spawn(async move {
        toolkit
            .call("bash", json!({"command": "sleep 1000.8282"}), execkit::CallContext::default())
            .await
    });
    let deadline = Instant::now() + Duration::from_secs(5);
    while pids_with("sleep 1000.8282").is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let started = Instant::now();
    kit.toolkit.close().await;
    assert!(started.elapsed() < Duration::from_secs(4), "close took {:?}", started.elapsed());
    let result = foreground.await.unwrap();
    assert!(result.text().ends_with("[Command cancelled]"), "{}", result.text());
    for marker in ["sleep 1000.8181", "sleep 1000.8282"] {
        for pid in pids_with(marker) {
            assert!(!alive(pid) || gone_within(pid, 2).await, "{marker} survived close");
        }
    }
}

#[tokio::test]
async fn slow_foreground_call_moves_to_the_background() {
    let kit = Kit::with_vars(&[("EXECKIT_BASH_AUTO_BACKGROUND", "1")]);
    let started = Instant::now();
    let out = kit.bash(json!({"command": "echo early; sleep 2.5; echo late", "timeout": 20})).await;
    assert!(started.elapsed() < Duration::from_secs(2), "took {:?}", started.elapsed());
    assert!(!out.is_error());
    let text = out.text();
    assert!(text.starts_with("early\n[output so far: artifact://"), "{text}");
    assert!(
        text.ends_with(
            "]\n[Still running after 1 s; continuing as background job bg_1 (deadline in 19 s). \
             Wait for it with job {\"poll\": [\"bg_1\"]}]"
        ),
        "{text}"
    );
    let poll = kit.call("job", json!({"poll": ["bg_1"]})).await;
    let text = poll.text();
    assert!(text.starts_with("## Finished (1)\n### bg_1 · completed · exit 0 · "), "{text}");
    assert!(text.ends_with("\nearly\nlate"), "{text}");
    let jobs = &poll.structured_content.as_ref().unwrap()["jobs"];
    assert_eq!(jobs[0]["timeout_s"], json!(20), "the job keeps the original deadline");
    let uri = jobs[0]["artifact"].as_str().unwrap();
    assert_eq!(kit.artifact_bytes(uri), b"early\nlate\n");

    let quick = kit.bash(json!({"command": "echo fast"})).await;
    assert_eq!(quick.text(), "fast", "quick calls stay in the foreground");
}

#[tokio::test]
async fn adopted_processes_keep_the_calls_deadline() {
    let kit = Kit::new();
    let out =
        kit.bash(json!({"command": "(setsid sleep 1000.7373 &); echo hi", "timeout": 2})).await;
    // The subshell that forked the sleep may still be on its way out: 1 or 2 processes.
    assert!(out.text().starts_with("hi\n["), "{}", out.text());
    assert!(out.text().contains("still running after the command exited"), "{}", out.text());
    assert_eq!(out.field("lingering")["job_id"], json!("bg_1"));
    let poll = kit.call("job", json!({"poll": ["bg_1"]})).await;
    let text = poll.text();
    assert!(text.contains("### bg_1 · timed_out · "), "{text}");
    assert!(
        text.ends_with("[The adopted processes were stopped at the call's deadline]"),
        "{text}"
    );
    assert!(pids_with("sleep 1000.7373").is_empty());
}

#[tokio::test]
async fn a_cancelled_wait_says_so() {
    let kit = Kit::new();
    kit.bash(json!({"command": "sleep 1000.4545", "async": true})).await;
    let cancel = execkit_process::CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        trigger.cancel();
    });
    let ctx = execkit::CallContext { progress: None, cancel };
    let started = Instant::now();
    let out = kit.toolkit.call("job", json!({"poll": ["bg_1"]}), ctx).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(out.text().starts_with("The wait was cancelled after "), "{}", out.text());
    kit.toolkit.close().await;
    assert!(pids_with("sleep 1000.4545").is_empty());
}

/// J11/J12: an unknown id both cancelled and polled in one call is reported once.
#[tokio::test]
async fn unknown_id_in_poll_and_cancel_is_reported_once() {
    let kit = Kit::new();
    let out = kit.call("job", json!({"poll": ["bg_9"], "cancel": ["bg_9"]})).await;
    assert!(out.is_error);
    let text = out.text();
    assert_eq!(text.matches("bg_9: not found").count(), 1, "{text}");
    assert_eq!(text, "## Cancelled (1)\nbg_9: not found (finished jobs are kept 300 s)");
}

/// J7/J9: retention never forgets a finished job before it was reported or announced; the
/// announcement then keeps it readable for another retention period.
#[tokio::test]
async fn an_unreported_job_outlives_retention_until_announced() {
    let kit = Kit::with_vars(&[("EXECKIT_JOB_RETENTION", "1")]);
    kit.bash(json!({"command": "true", "async": true})).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let list = kit.call("job", json!({"list": true})).await;
        let state = list.structured_content.as_ref().map(|s| s["jobs"][0]["state"].clone());
        if state != Some(json!("running")) || Instant::now() > deadline {
            assert_eq!(state, Some(json!("completed")), "{}", list.text());
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Past the 1 s retention, and still never reported.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let out = kit.bash(json!({"command": "echo next"})).await;
    let text = out.text();
    assert!(
        text.starts_with("next\n[Background job bg_1 finished: completed, exit 0, after "),
        "{text}"
    );
    let out = kit.call("job", json!({"poll": ["bg_1"]})).await;
    assert!(out.text().starts_with("## Finished (1)\n### bg_1 · completed"), "{}", out.text());
}
