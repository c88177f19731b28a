//! The debug tool against a minimal raw DAP driver on the same adapter, in the same run:
//! launch to the first stop (a breakpoint, including its top frame) and the step round trip
//! (`step_over` as the tool does it: `next` → `stopped` → `stackTrace {levels:1}`), for
//! debugpy, lldb-dap 19 and dlv. Contenders take turns (interleaved), medians and ratios to
//! the raw driver are printed. debugpy also runs stock (no TCP_NODELAY fix) on both sides,
//! the baseline of the "15× faster than stock debugpy" claim.
//!
//! `EXECKIT_BENCH_DEBUG_ADAPTERS=debugpy,dlv` picks adapters; `EXECKIT_BENCH_DEBUG_LAUNCHES`
//! `EXECKIT_BENCH_DEBUG_STEPS` and `EXECKIT_BENCH_DEBUG_SESSIONS` change the counts (20 launches,
//! 200 steps spread over 4 sessions per contender).

mod programs;
mod raw;
mod tool;

use std::path::Path;
use std::time::{Duration, Instant};

use programs::Case;
use raw::{Raw, RawAdapter};
use tool::Tool;

use crate::stats::{ms, summarize};

const WARMUP_LAUNCHES: usize = 2;
const WARMUP_STEPS: usize = 10;

/// One side of a comparison.
enum Contender {
    Raw(RawAdapter),
    Tool(Tool),
}

/// A session stopped in the case's loop.
enum Stopped<'a> {
    Raw(Raw, i64),
    Tool(&'a Tool),
}

impl Contender {
    async fn open(&self, case: &Case) -> Result<Stopped<'_>, String> {
        match self {
            Contender::Raw(adapter) => tokio::task::block_in_place(|| {
                let mut raw = Raw::start(adapter)?;
                let source = case.source.display().to_string();
                match raw.launch_to_stop(adapter, &source, case.line) {
                    Ok(thread) => Ok(Stopped::Raw(raw, thread)),
                    Err(err) => {
                        raw.finish();
                        Err(err)
                    }
                }
            }),
            Contender::Tool(tool) => tool.launch_to_stop(case).await.map(|()| Stopped::Tool(tool)),
        }
    }
}

impl Stopped<'_> {
    async fn clear_breakpoints(&mut self, case: &Case) -> Result<(), String> {
        match self {
            Stopped::Raw(raw, _) => raw.clear_breakpoints(&case.source.display().to_string()),
            Stopped::Tool(tool) => tool.clear_breakpoints(case).await,
        }
    }

    async fn step(&mut self) -> Result<(), String> {
        match self {
            Stopped::Raw(raw, thread) => tokio::task::block_in_place(|| raw.step(*thread)),
            Stopped::Tool(tool) => tool.step().await,
        }
    }

    async fn close(self, case: &Case) {
        match self {
            Stopped::Raw(raw, _) => tokio::task::block_in_place(|| raw.finish()),
            Stopped::Tool(tool) => {
                tool.terminate().await;
                let _ = tool.restore_breakpoint(case).await;
            }
        }
    }
}

fn count(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).filter(|&n| n > 0).unwrap_or(default)
}

pub async fn run() {
    let Ok(dir) = tempfile::tempdir() else { return println!("debug: no temp dir") };
    let picked = std::env::var("EXECKIT_BENCH_DEBUG_ADAPTERS").unwrap_or_default();
    let wanted = |name: &str| picked.is_empty() || picked.split(',').any(|p| name.starts_with(p));
    if wanted("debugpy") {
        report("debugpy", debugpy(dir.path()).await);
    }
    if wanted("lldb-dap") {
        report("lldb-dap-19", plain(dir.path(), programs::lldb(dir.path())).await);
    }
    if wanted("dlv") {
        report("dlv", plain(dir.path(), programs::dlv(dir.path())).await);
    }
}

fn report(name: &str, outcome: Result<(), String>) {
    if let Err(err) = outcome {
        println!("debug, {name}: not measured: {err}");
    }
}

/// lldb-dap and dlv: the raw driver against the tool, launches and steps.
async fn plain(dir: &Path, case: Result<Case, String>) -> Result<(), String> {
    let case = case?;
    let contenders =
        [Contender::Raw(case.raw.clone()), Contender::Tool(Tool::new(dir, &case, &[]).await?)];
    let labels = ["raw DAP driver", "execkit debug tool"];
    compare(&case, &contenders, &labels).await?;
    close(contenders).await;
    Ok(())
}

/// debugpy with the tool's `sitecustomize` on both sides, then stock on both sides.
async fn debugpy(dir: &Path) -> Result<(), String> {
    let fix = dir.join("nodelay");
    std::fs::create_dir_all(&fix).map_err(|e| e.to_string())?;
    std::fs::write(
        fix.join("sitecustomize.py"),
        include_str!("../../../python/debug/sitecustomize.py"),
    )
    .map_err(|e| e.to_string())?;
    let case = programs::debugpy(dir, Some(&fix))?;
    let stock = programs::debugpy(dir, None)?.raw;
    let contenders = [
        Contender::Raw(case.raw.clone()),
        Contender::Tool(Tool::new(dir, &case, &[]).await?),
        Contender::Raw(stock),
        Contender::Tool(Tool::new(dir, &case, &[("EXECKIT_DEBUGPY_NODELAY", "0")]).await?),
    ];
    let labels = [
        "raw DAP driver, with the tool's sitecustomize",
        "execkit debug tool (TCP_NODELAY fix on)",
        "raw DAP driver, stock debugpy",
        "execkit debug tool, EXECKIT_DEBUGPY_NODELAY=0",
    ];
    let steps = compare(&case, &contenders, &labels).await?;
    println!(
        "  execkit (fix on) vs stock debugpy driven directly: {:.1}x faster per step",
        steps[2] / steps[1]
    );
    close(contenders).await;
    Ok(())
}

/// Launches with the first two contenders, steps with all; returns the step medians in ms.
async fn compare(
    case: &Case,
    contenders: &[Contender],
    labels: &[&str],
) -> Result<Vec<f64>, String> {
    let launches = count("EXECKIT_BENCH_DEBUG_LAUNCHES", 20);
    let launch = launch_samples(case, &contenders[..2], launches).await?;
    println!(
        "debug, {}: launch to the first stop (breakpoint + top frame), {launches} runs:",
        case.name
    );
    print_rows(&labels[..2], launch);
    let steps = count("EXECKIT_BENCH_DEBUG_STEPS", 200);
    let samples = step_samples(case, contenders, steps).await?;
    println!(
        "debug, {}: step round trip (step_over: next, stopped, stackTrace), {steps} steps:",
        case.name
    );
    Ok(print_rows(labels, samples))
}

/// Interleaved: each round every contender launches once, the first in turn.
async fn launch_samples(
    case: &Case,
    contenders: &[Contender],
    runs: usize,
) -> Result<Vec<Vec<Duration>>, String> {
    let mut samples = vec![Vec::with_capacity(runs); contenders.len()];
    for round in 0..WARMUP_LAUNCHES + runs {
        for k in 0..contenders.len() {
            let at = (round + k) % contenders.len();
            let started = Instant::now();
            let stopped = contenders[at].open(case).await?;
            let took = started.elapsed();
            stopped.close(case).await;
            if round >= WARMUP_LAUNCHES {
                samples[at].push(took);
            }
        }
    }
    Ok(samples)
}

/// Steps in several fresh sessions per contender: an adapter's step time can differ by
/// several times from one session to the next (lldb-dap 19 on a loaded machine), so one
/// session per side would compare two draws of that, not the drivers.
async fn step_samples(
    case: &Case,
    contenders: &[Contender],
    steps: usize,
) -> Result<Vec<Vec<Duration>>, String> {
    let sessions = count("EXECKIT_BENCH_DEBUG_SESSIONS", 4).min(steps);
    let mut samples = vec![Vec::with_capacity(steps); contenders.len()];
    let mut medians = vec![Vec::new(); contenders.len()];
    for session in 0..sessions {
        let share = steps / sessions + usize::from(session < steps % sessions);
        let taken = steps_in_one_session(case, contenders, share, session == 0).await?;
        for (at, mut taken) in taken.into_iter().enumerate() {
            medians[at].push(format!("{:.2}", ms(summarize(taken.clone()).median)));
            samples[at].append(&mut taken);
        }
    }
    if sessions > 1 {
        println!(
            "  per-session step medians, ms: {}",
            medians.iter().map(|m| m.join(" ")).collect::<Vec<_>>().join(" | ")
        );
    }
    Ok(samples)
}

/// Every contender stopped at the breakpoint, then one step each per round, the first in turn;
/// `with_floor`: then the tool's per-call floor on its stopped session.
async fn steps_in_one_session(
    case: &Case,
    contenders: &[Contender],
    steps: usize,
    with_floor: bool,
) -> Result<Vec<Vec<Duration>>, String> {
    let mut sessions = Vec::new();
    for contender in contenders {
        let mut stopped = contender.open(case).await?;
        stopped.clear_breakpoints(case).await?;
        sessions.push(stopped);
    }
    let mut samples = vec![Vec::with_capacity(steps); sessions.len()];
    for round in 0..WARMUP_STEPS + steps {
        for k in 0..sessions.len() {
            let at = (round + k) % sessions.len();
            let started = Instant::now();
            sessions[at].step().await?;
            if round >= WARMUP_STEPS {
                samples[at].push(started.elapsed());
            }
        }
    }
    if with_floor {
        floor(&sessions).await?;
    }
    for session in sessions {
        session.close(case).await;
    }
    Ok(samples)
}

/// The tool's fixed cost per call, on its stopped session: what a step adds to the wire time.
async fn floor(sessions: &[Stopped<'_>]) -> Result<(), String> {
    let Some(tool) = sessions.iter().find_map(|s| match s {
        Stopped::Tool(tool) => Some(tool),
        _ => None,
    }) else {
        return Ok(());
    };
    let mut samples = Vec::new();
    for round in 0..WARMUP_STEPS + 100 {
        let started = Instant::now();
        tool.floor_call().await?;
        if round >= WARMUP_STEPS {
            samples.push(started.elapsed());
        }
    }
    let s = summarize(samples);
    println!(
        "  execkit call that sends the adapter nothing (output), 100 calls: median {:.3} ms, p90 {:.3} ms",
        ms(s.median),
        ms(s.p90)
    );
    Ok(())
}

/// One row per contender (median, p90, p99, ratio to the first); returns the medians in ms.
fn print_rows(labels: &[&str], samples: Vec<Vec<Duration>>) -> Vec<f64> {
    let mut medians = Vec::new();
    for (label, samples) in labels.iter().zip(samples) {
        let s = summarize(samples);
        medians.push(ms(s.median));
        let ratio = ms(s.median) / medians[0];
        println!(
            "  {label}: median {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, {ratio:.2}x raw (+{:.2} ms)",
            ms(s.median),
            ms(s.p90),
            ms(s.p99),
            ms(s.median) - medians[0]
        );
    }
    medians
}

async fn close(contenders: impl IntoIterator<Item = Contender>) {
    for contender in contenders {
        if let Contender::Tool(tool) = contender {
            tool.close().await;
        }
    }
}
