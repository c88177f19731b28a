//! OBM4: a supervised spawn (setsid, PDEATHSIG, fd hygiene, signal reset, cgroup leaf) and run
//! of `true`, against `std::process::Command::new("true").status()`; and how a child enters its
//! cgroup leaf when spawns come as far apart as an agent's calls.

use std::process::Command;
use std::time::{Duration, Instant};

use execkit_process::run::{RunLimits, RunObserver, run};
use execkit_process::{CancellationToken, SpawnSpec, Supervisor, SupervisorConfig};

use crate::stats::{ms, summarize};

const RUNS: usize = 500;

/// Spawns per way in `cgroup_join`, and the pause before each.
const SPACED_RUNS: usize = 40;
const SPACING: Duration = Duration::from_millis(50);

struct Discard;

impl RunObserver for Discard {
    fn output(&mut self, _chunk: &[u8]) {}
}

pub async fn supervised() {
    for use_cgroup in [true, false] {
        let supervisor =
            match Supervisor::start(SupervisorConfig { use_cgroup, ..SupervisorConfig::default() })
            {
                Ok(s) => s,
                Err(err) => return println!("spawn: {err}"),
            };
        let mode = supervisor.containment().as_str();
        let mut raw = Vec::new();
        let mut ours = Vec::new();
        for i in 0..RUNS + 20 {
            let started = Instant::now();
            let _ = Command::new("true").status();
            let r = started.elapsed();
            let started = Instant::now();
            if !spawn_true(&supervisor).await {
                return println!("spawn failed");
            }
            let t = started.elapsed();
            if i >= 20 {
                raw.push(r);
                ours.push(t);
            }
        }
        let raw = summarize(raw);
        let ours = summarize(ours);
        println!(
            "spawn ({mode}, `true`, {RUNS} runs): raw median {:.2} ms p99 {:.2} ms; supervised \
             median {:.2} ms p99 {:.2} ms; added median {:.2} ms (target <= 1 ms), p99 {:.2} ms \
             (target <= 5 ms)",
            ms(raw.median),
            ms(raw.p99),
            ms(ours.median),
            ms(ours.p99),
            ms(ours.median) - ms(raw.median),
            ms(ours.p99) - ms(raw.p99),
        );
        supervisor.close().await;
    }
}

/// Spawns and runs `/bin/true` under `supervisor`; false when the spawn failed.
async fn spawn_true(supervisor: &Supervisor) -> bool {
    let spec = SpawnSpec {
        program: "/bin/true".into(),
        cwd: "/".into(),
        env: vec![("PATH".into(), "/usr/bin:/bin".into())],
        ..SpawnSpec::default()
    };
    let Ok(child) = supervisor.spawn(spec).await else { return false };
    let limits = RunLimits {
        deadline: None,
        cancel: CancellationToken::new(),
        kill_grace: Duration::from_secs(2),
        drain_idle: Duration::from_millis(250),
        drain_max: Duration::from_secs(2),
    };
    run(child, &mut Discard, limits).await;
    true
}

/// A supervised `true` with 50 ms between spawns, the child created inside its cgroup v2 leaf
/// against the child joining it by writing `cgroup.procs`, alternating.
pub async fn cgroup_join() {
    let start = |spawn_into_leaf| {
        Supervisor::start(SupervisorConfig { spawn_into_leaf, ..SupervisorConfig::default() })
    };
    let (into, join) = match (start(true), start(false)) {
        (Ok(into), Ok(join)) => (into, join),
        (Err(err), _) | (_, Err(err)) => return println!("cgroup-join: {err}"),
    };
    if into.containment().as_str() != "cgroup" {
        return println!("cgroup-join: no cgroup v2 containment here");
    }
    let mut times = [Vec::new(), Vec::new()];
    for _ in 0..SPACED_RUNS {
        for (supervisor, times) in [&into, &join].into_iter().zip(times.iter_mut()) {
            tokio::time::sleep(SPACING).await;
            let started = Instant::now();
            if !spawn_true(supervisor).await {
                return println!("cgroup-join: spawn failed");
            }
            times.push(started.elapsed());
        }
    }
    let [into_times, join_times] = times.map(summarize);
    println!(
        "cgroup-join (`true`, {SPACED_RUNS} spawns each, {} ms apart): created in the leaf \
         median {:.2} ms p90 {:.2} ms; joining by a write median {:.2} ms p90 {:.2} ms; \
         {:.2}x",
        SPACING.as_millis(),
        ms(into_times.median),
        ms(into_times.p90),
        ms(join_times.median),
        ms(join_times.p90),
        ms(into_times.median) / ms(join_times.median),
    );
    into.close().await;
    join.close().await;
}
