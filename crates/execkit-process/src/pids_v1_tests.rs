//! The v1 `pids` leaf: parsing, the limit against a bounded burst of forks, removal, sweep.
//!
//! Every spawning test here is bounded by construction (a fixed loop count) and runs under a
//! small `pids.max`: a real fork bomb once took a machine without a v2 `pids` controller down.

use std::time::{Duration, Instant};

use super::*;
use crate::run::{self, RunEnd, RunLimits, RunObserver};
use crate::{SpawnSpec, Supervisor, SupervisorConfig};
use tokio_util::sync::CancellationToken;

/// The test's limit: low enough that 60 forks must fail, well above a shell's needs.
const TEST_PIDS_MAX: u64 = 20;

struct Collect(Vec<u8>);

impl RunObserver for Collect {
    fn output(&mut self, chunk: &[u8]) {
        self.0.extend_from_slice(chunk);
    }
}

fn limits(deadline: Option<Instant>) -> RunLimits {
    RunLimits {
        deadline,
        cancel: CancellationToken::new(),
        kill_grace: Duration::from_millis(500),
        drain_idle: Duration::from_millis(250),
        drain_max: Duration::from_millis(2000),
    }
}

fn bash(script: &str) -> SpawnSpec {
    SpawnSpec {
        program: "/bin/bash".into(),
        args: vec!["-c".into(), script.into()],
        env: vec![("PATH".into(), "/usr/bin:/bin".into()), ("LC_ALL".into(), "C".into())],
        ..SpawnSpec::default()
    }
}

/// A cgroup-mode Supervisor with v1 `pids` leaves, or `None` after printing the skip.
fn supervisor(test: &str, pids_max: u64) -> Option<Supervisor> {
    let config = SupervisorConfig {
        kill_grace: Duration::from_millis(500),
        pids_max,
        ..SupervisorConfig::default()
    };
    let sup = Supervisor::start(config).unwrap();
    if let Err(reason) = &sup.pids_v1() {
        println!("SKIPPED {test}: no v1 pids hierarchy ({reason})");
        return None;
    }
    Some(sup)
}

/// `/execkit-<pid>/c<n>`: how a leaf ends in `/proc/<pid>/cgroup`.
fn leaf_name(leaf: &Path) -> String {
    format!("/execkit-{}/{}", std::process::id(), leaf.file_name().unwrap().display())
}

/// The `pids` line's path in `/proc/<pid>/cgroup`.
fn pids_path_of(pid: u32) -> Option<String> {
    own_pids_path(&fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?)
}

#[test]
fn finds_the_v1_pids_mount_and_path() {
    let hybrid = "38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio\n\
                  39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n\
                  41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
    assert_eq!(pids_mount(hybrid), Some(("/".into(), PathBuf::from("/sys/fs/cgroup/pids"))));
    let joined = "40 31 0:36 /docker/x /sys/fs/cgroup/cpu,pids ro - cgroup cgroup rw,cpu,pids\n";
    let expected = ("/docker/x".into(), PathBuf::from("/sys/fs/cgroup/cpu,pids"));
    assert_eq!(pids_mount(joined), Some(expected));
    let unified = "30 24 0:27 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,pids\n";
    assert_eq!(pids_mount(unified), None);
    let systemd = "40 31 0:37 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,name=systemd\n";
    assert_eq!(pids_mount(systemd), None);

    assert_eq!(own_pids_path("9:name=systemd:/\n8:pids:/a/b\n0::/\n"), Some("/a/b".into()));
    assert_eq!(own_pids_path("3:cpu,pids:/x:y\n"), Some("/x:y".into()));
    assert_eq!(own_pids_path("9:name=systemd:/\n0::/\n"), None);
}

// A bounded burst: 60 `sleep 30` under pids.max 20. Forks fail (bash retries and says so),
// the tree never has more than 20 members, and the deadline kills it and removes the leaf.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v1_pids_max_stops_a_bounded_burst_of_forks() {
    let test = "v1_pids_max_stops_a_bounded_burst_of_forks";
    let Some(sup) = supervisor(test, TEST_PIDS_MAX) else { return };
    let script = "for ((i = 0; i < 60; i++)); do sleep 30 & done; echo looped; wait";
    let child = sup.spawn(bash(script)).await.unwrap();
    let tree = child.tree();
    let leaf = tree.pids_leaf().expect("a v1 pids leaf").to_path_buf();
    assert_eq!(fs::read_to_string(leaf.join("pids.max")).unwrap().trim(), "20");
    let joined = pids_path_of(child.pid()).unwrap_or_default();
    assert!(joined.ends_with(&leaf_name(&leaf)), "{joined} is not {}", leaf.display());

    let watcher = tree.clone();
    let watch_leaf = leaf.clone();
    let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
    let watch = tokio::spawn(async move {
        let (mut most, mut most_current) = (0, 0);
        while stopped.try_recv().is_err() {
            most = most.max(watcher.members().len());
            let current = fs::read_to_string(watch_leaf.join("pids.current")).unwrap_or_default();
            most_current = most_current.max(current.trim().parse::<u64>().unwrap_or(0));
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        (most, most_current)
    });
    let mut out = Collect(Vec::new());
    let deadline = Instant::now() + Duration::from_secs(3);
    let outcome = run::run(child, &mut out, limits(Some(deadline))).await;
    stop.send(()).unwrap();
    let (most, most_current) = watch.await.unwrap();

    let text = String::from_utf8_lossy(&out.0);
    println!("{test}: at most {most} members, pids.current {most_current}; output: {text:?}");
    assert!(
        text.contains("fork: retry") || text.contains("Resource temporarily unavailable"),
        "no fork failure: {text}"
    );
    assert!(!text.contains("looped"), "all 60 forks succeeded: {text}");
    assert_eq!(outcome.end, RunEnd::TimedOut);
    assert!(outcome.kill.expect("killed").unkillable.is_empty());
    assert!(most <= TEST_PIDS_MAX as usize, "{most} members under pids.max 20");
    assert!(most >= 10, "the loop never got going: at most {most} members");
    assert!(most_current <= TEST_PIDS_MAX, "pids.current reached {most_current}");
    assert!(outcome.tree.members().is_empty(), "{:?}", outcome.tree.members());
    assert!(!leaf.exists(), "{} kept", leaf.display());
    let (_, text) = output_of(&sup, "echo still-serving").await;
    assert_eq!(text, "still-serving\n");
    let root = sup.pids_v1().unwrap().dir.clone();
    let spare = sup.spare_leaves();
    sup.close().await;
    assert!(spare.iter().all(|leaf| !leaf.exists()), "{spare:?} kept");
    // Other tests' Supervisors share this process's root while they live.
    let others = std::fs::read_dir(&root)
        .map_or(0, |dir| dir.filter_map(Result::ok).filter(|e| e.path().is_dir()).count());
    assert!(!root.exists() || others > 0, "{} kept empty", root.display());
}

async fn output_of(sup: &Supervisor, script: &str) -> (run::RunOutcome, String) {
    let child = sup.spawn(bash(script)).await.unwrap();
    let mut out = Collect(Vec::new());
    let outcome = run::run(child, &mut out, limits(None)).await;
    (outcome, String::from_utf8_lossy(&out.0).into_owned())
}

// The default limit is the spec's (or EXECKIT_PIDS_MAX), a finished run removes the leaf.
#[tokio::test]
async fn default_start_gives_each_spawn_a_v1_leaf() {
    let test = "default_start_gives_each_spawn_a_v1_leaf";
    let sup = Supervisor::start(SupervisorConfig::default()).unwrap();
    if let Err(reason) = &sup.pids_v1() {
        println!("SKIPPED {test}: no v1 pids hierarchy ({reason})");
        return;
    }
    let child = sup.spawn(bash("cat /proc/$$/cgroup")).await.unwrap();
    let leaf = child.tree().pids_leaf().expect("a v1 pids leaf").to_path_buf();
    let max = fs::read_to_string(leaf.join("pids.max")).unwrap();
    assert_eq!(max.trim(), crate::cgroup::PIDS_MAX.to_string());
    let mut out = Collect(Vec::new());
    let outcome = run::run(child, &mut out, limits(None)).await;
    assert!(outcome.status.is_some_and(|s| s.success()), "{outcome:?}");
    let text = String::from_utf8_lossy(&out.0);
    let joined = own_pids_path(&text).unwrap_or_default();
    assert!(joined.ends_with(&leaf_name(&leaf)), "{joined} is not {}", leaf.display());
    assert!(!leaf.exists(), "{} kept", leaf.display());
    sup.close().await;
}

// O41: a dead process's `execkit-<pid>` v1 directory is emptied and removed at start.
#[tokio::test]
async fn start_sweeps_stale_v1_leaves() {
    let test = "start_sweeps_stale_v1_leaves";
    let Some(probe) = supervisor(test, TEST_PIDS_MAX) else { return };
    let own = probe.pids_v1().unwrap().dir.parent().unwrap().to_path_buf();
    // A pid above any pid_max in use, so certainly dead.
    let stale = own.join("execkit-4194001");
    let leaf = stale.join("c1");
    let fallback =
        Supervisor::start(SupervisorConfig { use_cgroup: false, ..SupervisorConfig::default() })
            .unwrap();
    let mut victim = fallback.spawn(bash("exec sleep 39101")).await.unwrap();
    // A Supervisor another test starts meanwhile may sweep the stale leaf before the victim
    // is in it: then make it again.
    let joined = (0..5).any(|_| {
        fs::create_dir_all(&leaf).is_ok()
            && fs::write(leaf.join("cgroup.procs"), victim.pid().to_string()).is_ok()
    });
    assert!(joined, "cannot move the victim into {}", leaf.display());

    let sup = supervisor(test, TEST_PIDS_MAX).unwrap();
    let status = tokio::time::timeout(Duration::from_secs(5), victim.wait()).await;
    assert_eq!(status.unwrap().unwrap().signal, Some(libc::SIGKILL));
    assert!(!stale.exists(), "{} kept", stale.display());
    sup.close().await;
    probe.close().await;
    fallback.close().await;
}

// Supervisors of one process share `execkit-<pid>`, and each one's close removes it when it is
// empty: a start racing a close must still find its v1 root and the v2 controllers.
#[test]
fn starts_racing_closes_keep_their_cgroup_roots() {
    let test = "starts_racing_closes_keep_their_cgroup_roots";
    let Some(first) = supervisor(test, TEST_PIDS_MAX) else { return };
    let v2 = first.v2_controllers();
    drop(first);
    let workers: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(move || {
                for _ in 0..50 {
                    let config =
                        SupervisorConfig { pids_max: TEST_PIDS_MAX, ..SupervisorConfig::default() };
                    let sup = Supervisor::start(config).unwrap();
                    if let Err(reason) = sup.pids_v1() {
                        return Err(format!("v1 root lost: {reason}"));
                    }
                    let found = sup.v2_controllers();
                    if found != v2 {
                        return Err(format!("v2 controllers {found:?}, first saw {v2:?}"));
                    }
                }
                Ok(())
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap().unwrap();
    }
}
