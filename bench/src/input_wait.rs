//! BBM6: how long a PTY command blocked on a prompt takes to come back, against the timeout a
//! runner without detection would wait.

use std::time::{Duration, Instant};

use execkit::{CallContext, Toolkit};
use serde_json::json;

use crate::stats::{ms, summarize};

const RUNS: usize = 10;
const TIMEOUT_S: u64 = 300;

pub async fn latency() {
    for silence_ms in ["1000", "500"] {
        let Ok(dir) = tempfile::tempdir() else { return println!("input-wait: no temp dir") };
        let toolkit = match Toolkit::builder()
            .cwd(dir.path())
            .var("EXECKIT_ARTIFACT_DIR", dir.path().join("artifacts").to_string_lossy())
            .var("EXECKIT_BASH_INPUT_WAIT_MS", silence_ms)
            .build()
        {
            Ok(tk) => tk,
            Err(err) => return println!("input-wait: {err}"),
        };
        let mut walls = Vec::new();
        let mut after_prompt = Vec::new();
        for _ in 0..RUNS {
            let args = json!({"command": "read -p 'Name: ' n", "pty": true, "timeout": TIMEOUT_S});
            let started = Instant::now();
            let result = toolkit.call("bash", args, CallContext::default()).await;
            walls.push(started.elapsed());
            let state = result.structured_content.as_ref().and_then(|s| s.get("state").cloned());
            if state != Some(json!("waiting_for_input")) {
                return println!("input-wait: not detected: {}", result.text());
            }
            // "... after 1.3 s without output ..." is the time from the prompt to the stop.
            let text = result.text();
            let silent = text
                .split("after ")
                .nth(1)
                .and_then(|rest| rest.split(" s without").next())
                .and_then(|n| n.parse::<f64>().ok());
            after_prompt.extend(silent.map(Duration::from_secs_f64));
        }
        let wall = summarize(walls);
        let detect = summarize(after_prompt);
        println!(
            "input-wait (read -p on a PTY, EXECKIT_BASH_INPUT_WAIT_MS={silence_ms}, {RUNS} runs): \
             prompt to stop median {:.0} ms (max {:.0} ms), whole call median {:.0} ms; a runner \
             without detection waits the {TIMEOUT_S} s timeout ({:.0}x longer)",
            ms(detect.median),
            ms(detect.p99),
            ms(wall.median),
            TIMEOUT_S as f64 / wall.median.as_secs_f64(),
        );
        toolkit.close().await;
    }
}
