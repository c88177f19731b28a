//! Feeds stdin through an `OutputSink` spilling to an artifact in a temporary store, and
//! reports the throughput: `yes | head -c 1G | cargo run --release --example sink_throughput`.
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::io::Read;
use std::time::Instant;

use execkit_output::artifact::{ArtifactStore, StoreLimits};
use execkit_output::clamp::Limits;
use execkit_output::sink::{OutputSink, SinkConfig, Spill};

fn main() {
    let dir = std::env::temp_dir().join(format!("execkit-sink-bench-{}", std::process::id()));
    let store = ArtifactStore::open(&dir, StoreLimits::default()).unwrap();
    let spill = Spill { store, tool: "bench".into(), label: "stdin".into() };
    let mut sink = OutputSink::new(SinkConfig::from_limits(&Limits::default()), Some(spill), None);
    let mut stdin = std::io::stdin().lock();
    let mut buf = vec![0u8; 64 * 1024];
    let start = Instant::now();
    loop {
        let n = stdin.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        sink.push(&buf[..n]);
    }
    let summary = sink.finish();
    let secs = start.elapsed().as_secs_f64();
    let mib = summary.totals.raw_bytes as f64 / (1024.0 * 1024.0);
    println!("{mib:.0} MiB in {secs:.2} s = {:.0} MiB/s", mib / secs);
    println!("{}", summary.footer.unwrap_or_default());
    let _ = std::fs::remove_dir_all(&dir);
}
