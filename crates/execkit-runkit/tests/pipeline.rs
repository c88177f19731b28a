//! The run pipeline against real processes: a verdict and a job end from one run, lingering
//! processes adopted as a job that ends when they do.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use execkit_jobs::{JobConfig, JobState, JobTable};
use execkit_output::clamp::Limits;
use execkit_output::sink::{OutputSink, SinkConfig};
use execkit_process::{CancellationToken, SpawnSpec, Supervisor, SupervisorConfig};
use execkit_runkit::{
    Adoption, BackgroundRun, Ending, LingeringAction, Observer, Verdict, Waited, adopt_lingering,
    run_limits, run_to_end,
};

fn spec(script: &str) -> SpawnSpec {
    SpawnSpec {
        program: "/bin/sh".into(),
        args: vec!["-c".into(), script.into()],
        env: vec![("PATH".into(), "/usr/bin:/bin".into())],
        cwd: "/".into(),
        ..SpawnSpec::default()
    }
}

fn sink() -> OutputSink {
    OutputSink::new(SinkConfig::from_limits(&Limits::default()), None, Some("off".into()))
}

fn supervisor() -> Supervisor {
    Supervisor::start(SupervisorConfig::default()).unwrap()
}

#[tokio::test]
async fn a_nonzero_exit_is_a_failed_verdict_and_a_failed_job_end() {
    let sup = supervisor();
    let child = sup.spawn(spec("echo hello; exit 3")).await.unwrap();
    let mut observer: Observer<()> = Observer::new(sink(), None, None);
    let limits = run_limits(&Limits::default(), Instant::now(), Some(60), CancellationToken::new());
    let outcome = run_to_end(child, &mut observer, limits).await;
    let verdict = Verdict::of(&outcome);
    assert_eq!(verdict.ending, Ending::Exited);
    assert_eq!(verdict.exit_code, Some(3));
    assert!(verdict.failed);
    let end = verdict.job_end("text".into());
    assert_eq!((end.state, end.exit_code), (JobState::Failed, Some(3)));
    assert_eq!(observer.sink.finish().body, "hello\n");
    sup.close().await;
}

#[tokio::test]
async fn a_deadline_is_a_timed_out_verdict() {
    let sup = supervisor();
    let child = sup.spawn(spec("sleep 30")).await.unwrap();
    let observer: Observer<()> = Observer::new(sink(), None, Some(1));
    let started = Instant::now();
    let limits = run_limits(&Limits::default(), started, Some(1), CancellationToken::new());
    let mut run = BackgroundRun::spawn(child, observer, limits);
    let Waited::Ended(Some(outcome)) = run.wait(None, &CancellationToken::new()).await else {
        panic!("the run did not end");
    };
    assert!(started.elapsed() < Duration::from_secs(20));
    let verdict = Verdict::of(&outcome);
    assert_eq!((verdict.ending, verdict.exit_code), (Ending::TimedOut, None));
    assert_eq!(verdict.job_end(String::new()).state, JobState::TimedOut);
    sup.close().await;
}

#[tokio::test]
async fn lingering_processes_are_adopted_and_the_job_ends_when_they_exit() {
    let sup = supervisor();
    let child = sup.spawn(spec("sleep 1 & echo started")).await.unwrap();
    let mut observer: Observer<()> = Observer::new(sink(), None, None);
    let limits = run_limits(&Limits::default(), Instant::now(), None, CancellationToken::new());
    let mut outcome = run_to_end(child, &mut observer, limits).await;
    assert_eq!(outcome.lingering.len(), 1, "{:?}", outcome.lingering);
    let jobs = JobTable::new(JobConfig::default());
    let adoption = Adoption {
        jobs: &jobs,
        label: "sleep 1".into(),
        grace: Duration::from_millis(200),
        deadline: None,
    };
    let action = adopt_lingering(&mut outcome, adoption, sink).unwrap();
    let LingeringAction::Adopted { id, total: 1 } = action else { panic!("{action:?}") };
    let until = Instant::now() + Duration::from_secs(30);
    while jobs.running() > 0 {
        assert!(Instant::now() < until, "job {id} still running");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    sup.close().await;
}
