//! OBM4: a supervised spawn (setsid, PDEATHSIG, fd hygiene, signal reset, cgroup leaf) and run
//! of `true`, against `std::process::Command::new("true").status()`.

use std::process::Command;
use std::time::{Duration, Instant};

use execkit_process::run::{RunLimits, RunObserver, run};
use execkit_process::{CancellationToken, SpawnSpec, Supervisor, SupervisorConfig};

use crate::stats::{ms, summarize};

const RUNS: usize = 500;

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
            let spec = SpawnSpec {
                program: "/bin/true".into(),
                cwd: "/".into(),
                env: vec![("PATH".into(), "/usr/bin:/bin".into())],
                ..SpawnSpec::default()
            };
            let started = Instant::now();
            let Ok(child) = supervisor.spawn(spec).await else { return println!("spawn failed") };
            let limits = RunLimits {
                deadline: None,
                cancel: CancellationToken::new(),
                kill_grace: Duration::from_secs(2),
                drain_idle: Duration::from_millis(250),
                drain_max: Duration::from_secs(2),
            };
            run(child, &mut Discard, limits).await;
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
