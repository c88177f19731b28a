//! Progress while `continue` or a step waits for the program: at most one event every 100 ms
//! when the debuggee produced output, and a heartbeat after 5 s of silence (the shared
//! throttle), each carrying the output that arrived since the wait began.

use std::time::Duration;

use execkit_protocol::{Progress, ProgressFn};
use execkit_tool::ProgressThrottle;
use tokio::time::Instant;

use crate::ring::{self, OutputRing};
use crate::session::Shared;

/// The throttle is looked at this often.
const TICK: Duration = Duration::from_millis(100);
/// The tail an event carries, like every tool's progress tail.
const TAIL_BYTES: usize = 4096;

/// Sends progress for one wait until the future that owns it is dropped.
pub(crate) async fn report(
    progress: ProgressFn,
    output: Shared<OutputRing>,
    deadline: Instant,
) -> ! {
    let started = Instant::now();
    let from = output.lock().unwrap_or_else(|e| e.into_inner()).bytes_total;
    let total_ms = deadline.saturating_duration_since(started).as_millis() as f64;
    let mut throttle = ProgressThrottle::default();
    throttle.sent(0);
    loop {
        tokio::time::sleep(TICK).await;
        let (grown, text) = {
            let ring = output.lock().unwrap_or_else(|e| e.into_inner());
            let text: String = ring.since(from, None).iter().map(|c| c.text.as_str()).collect();
            (ring.bytes_total - from, text)
        };
        if !throttle.due(grown) {
            continue;
        }
        throttle.sent(grown);
        let elapsed = started.elapsed();
        progress(Progress {
            progress: elapsed.as_millis() as f64,
            total: Some(total_ms),
            message: format!("Program running {:.1} s", elapsed.as_secs_f64()),
            elapsed_ms: elapsed.as_millis() as u64,
            total_bytes: grown,
            total_lines: text.matches('\n').count() as u64,
            tail: ring::keep_tail(&text, TAIL_BYTES),
        });
    }
}
