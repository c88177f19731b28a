//! OBM1: OutputSink throughput on a real pipe against a plain pipe-to-file copy.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use execkit_output::artifact::{ArtifactStore, StoreLimits};
use execkit_output::clamp::Limits;
use execkit_output::sink::{OutputSink, SinkConfig, Spill};

const BYTES: &str = "1G";
const RUNS: usize = 3;

/// (name, producer pipeline, target ratio)
const CASES: &[(&str, &str, f64)] = &[
    ("plain yes", "yes | head -c 1G", 0.5),
    ("ansi-heavy", "yes $'\\e[31mred\\e[0m' | head -c 1G", 0.3),
    ("cr frames", "yes $'frame 42%\\r' | head -c 1G", 0.3),
    ("1 KiB lines", "yes \"$(head -c 1023 /dev/zero | tr '\\0' x)\" | head -c 1G", 0.3),
];

fn producer(pipeline: &str) -> Option<std::process::Child> {
    Command::new("bash").args(["-c", pipeline]).stdout(Stdio::piped()).spawn().ok()
}

fn baseline(pipeline: &str, dir: &std::path::Path) -> Option<Duration> {
    let mut child = producer(pipeline)?;
    let mut out = child.stdout.take()?;
    let mut file = std::fs::File::create(dir.join("baseline.out")).ok()?;
    let mut buf = vec![0u8; 64 << 10];
    let started = Instant::now();
    loop {
        match out.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => file.write_all(&buf[..n]).ok()?,
        }
    }
    let elapsed = started.elapsed();
    let _ = child.wait();
    Some(elapsed)
}

fn through_sink(pipeline: &str, store: &ArtifactStore) -> Option<(Duration, u64)> {
    let mut child = producer(pipeline)?;
    let mut out = child.stdout.take()?;
    let config = SinkConfig::from_limits(&Limits::default());
    let spill =
        Spill { store: store.clone(), tool: "bench".to_string(), label: pipeline.to_string() };
    let mut sink = OutputSink::new(config, Some(spill), None);
    let mut buf = vec![0u8; 64 << 10];
    let started = Instant::now();
    loop {
        match out.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => sink.push(&buf[..n]),
        }
    }
    let summary = sink.finish();
    let elapsed = started.elapsed();
    let _ = child.wait();
    Some((elapsed, summary.totals.raw_bytes))
}

pub fn throughput() {
    let Ok(dir) = tempfile::tempdir() else { return println!("sink: no temp dir") };
    let limits = Limits::default();
    let store_limits = StoreLimits {
        max_bytes: limits.artifact_max_bytes,
        store_bytes: limits.artifact_store_bytes,
        max_age_s: limits.artifact_max_age_s,
    };
    let store = match ArtifactStore::open(&dir.path().join("artifacts"), store_limits) {
        Ok(store) => store,
        Err(err) => return println!("sink: {err}"),
    };
    for (name, pipeline, target) in CASES {
        let mut base = Vec::new();
        let mut ours = Vec::new();
        let mut raw_bytes = 0;
        for _ in 0..RUNS {
            base.extend(baseline(pipeline, dir.path()));
            if let Some((t, bytes)) = through_sink(pipeline, &store) {
                ours.push(t);
                raw_bytes = bytes;
            }
            let _ = store.gc();
        }
        base.sort();
        ours.sort();
        let (Some(b), Some(o)) = (base.get(base.len() / 2), ours.get(ours.len() / 2)) else {
            println!("sink {name}: a run failed");
            continue;
        };
        let mib = raw_bytes as f64 / (1 << 20) as f64;
        println!(
            "sink {name} ({BYTES} through a pipe, median of {RUNS}): baseline {:.0} MiB/s, sink \
             {:.0} MiB/s; ratio {:.2}x (target >= {target}x)",
            mib / b.as_secs_f64(),
            mib / o.as_secs_f64(),
            b.as_secs_f64() / o.as_secs_f64(),
        );
    }
}
