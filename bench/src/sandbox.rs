//! XBM1: `bash {"command":"true"}` under workspace-write with network off against mode off,
//! two Toolkits with the same settings, calls interleaved.

use std::time::{Duration, Instant};

use execkit::{CallContext, SandboxOptions, Toolkit};
use serde_json::json;

use crate::stats::{ms, summarize};

const WARMUP: usize = 30;
const RUNS: usize = 500;

fn toolkit(dir: &std::path::Path, mode: &str) -> Result<Toolkit, String> {
    Toolkit::builder()
        .cwd(dir)
        .var("EXECKIT_ARTIFACT_DIR", dir.join("artifacts").to_string_lossy())
        .sandbox(SandboxOptions {
            mode: Some(mode.into()),
            network: Some("off".into()),
            ..SandboxOptions::default()
        })
        .build()
}

async fn timed(toolkit: &Toolkit) -> Result<Duration, String> {
    let started = Instant::now();
    let result = toolkit.call("bash", json!({"command": "true"}), CallContext::default()).await;
    let elapsed = started.elapsed();
    if result.is_error { Err(result.text()) } else { Ok(elapsed) }
}

pub async fn overhead() {
    let dir = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(err) => return println!("sandbox: no temp dir: {err}"),
    };
    let (off, confined) = match (toolkit(dir.path(), "off"), toolkit(dir.path(), "workspace-write"))
    {
        (Ok(off), Ok(confined)) => (off, confined),
        (Err(err), _) | (_, Err(err)) => return println!("sandbox: {err}"),
    };
    let mut off_samples = Vec::with_capacity(RUNS);
    let mut confined_samples = Vec::with_capacity(RUNS);
    for i in 0..WARMUP + RUNS {
        let pair = (timed(&off).await, timed(&confined).await);
        let (a, b) = match pair {
            (Ok(a), Ok(b)) => (a, b),
            (Err(err), _) | (_, Err(err)) => return println!("sandbox: call failed: {err}"),
        };
        if i >= WARMUP {
            off_samples.push(a);
            confined_samples.push(b);
        }
    }
    let off_stats = summarize(off_samples);
    let confined_stats = summarize(confined_samples);
    println!(
        "sandbox ({RUNS} runs): off median {:.2} ms p99 {:.2} ms; workspace-write + network off \
         median {:.2} ms p99 {:.2} ms; added median {:.2} ms (target <= +0.5 ms)",
        ms(off_stats.median),
        ms(off_stats.p99),
        ms(confined_stats.median),
        ms(confined_stats.p99),
        ms(confined_stats.median) - ms(off_stats.median),
    );
    off.close().await;
    confined.close().await;
}
