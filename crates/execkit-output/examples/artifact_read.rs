//! Times `Grep` and `Tail(100)` reads of stdin stored as one artifact (OBM6):
//! `cargo run --release --example artifact_read -- PATTERN < file`.
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::io::Read;
use std::time::Instant;

use execkit_output::artifact::{ArtifactStore, ReadOutput, Selection, StoreLimits};

fn main() {
    let pattern = std::env::args().nth(1).unwrap_or_else(|| "error".to_string());
    let dir = std::env::temp_dir().join(format!("execkit-read-bench-{}", std::process::id()));
    let limits = StoreLimits { max_bytes: 1 << 30, ..StoreLimits::default() };
    let store = ArtifactStore::open(&dir, limits).unwrap();
    let mut input = Vec::new();
    std::io::stdin().read_to_end(&mut input).unwrap();
    let id = store.put("bench", &input, "text/plain", "stdin").unwrap();
    for sel in [Selection::Grep { pattern, context: 0, max: 200 }, Selection::Tail(100)] {
        let start = Instant::now();
        let ReadOutput::Text(text) = store.read(&id, &sel).unwrap() else { return };
        let ms = start.elapsed().as_secs_f64() * 1000.0;
        println!(
            "{sel:?}: {ms:.1} ms, {} lines; {}",
            text.lines().count(),
            text.lines().last().unwrap_or("")
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
