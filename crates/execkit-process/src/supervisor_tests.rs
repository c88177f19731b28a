//! Child setup against a deliberately messy host: a leaked non-CLOEXEC fd (OX19) and a
//! blocked signal mask inherited by the spawner thread (O34).

use super::*;
use crate::run::{self, RunLimits, RunObserver};
use tokio_util::sync::CancellationToken;

struct Collect(Vec<u8>);

impl RunObserver for Collect {
    fn output(&mut self, chunk: &[u8]) {
        self.0.extend_from_slice(chunk);
    }
}

fn limits() -> RunLimits {
    RunLimits {
        deadline: None,
        cancel: CancellationToken::new(),
        kill_grace: Duration::from_millis(500),
        drain_idle: Duration::from_millis(250),
        drain_max: Duration::from_millis(2000),
    }
}

fn spec(script: &str) -> SpawnSpec {
    SpawnSpec {
        program: "/bin/bash".into(),
        args: vec!["-c".into(), script.into()],
        env: vec![("PATH".into(), "/usr/bin:/bin".into())],
        ..SpawnSpec::default()
    }
}

async fn output_of(sup: &Supervisor, script: &str) -> String {
    let child = sup.spawn(spec(script)).await.unwrap();
    let mut out = Collect(Vec::new());
    run::run(child, &mut out, limits()).await;
    String::from_utf8_lossy(&out.0).into_owned()
}

/// The fds of a plain child of the shell (a pipeline or glob would add the shell's own).
const FD_LIST: &str = "sleep 5 & sleep 0.1; ls /proc/$!/fd | tr '\\n' ' '; kill $!";

fn fallback() -> Supervisor {
    Supervisor::start(SupervisorConfig { use_cgroup: false, ..SupervisorConfig::default() })
        .unwrap()
}

#[tokio::test]
async fn leaked_host_fd_is_not_inherited() {
    // SAFETY: plain fd syscalls on fds this test owns.
    let leaked = unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY);
        let high = libc::fcntl(null, libc::F_DUPFD, 107);
        libc::close(null);
        high
    };
    assert!(leaked >= 107);
    let sup = fallback();
    assert_eq!(output_of(&sup, FD_LIST).await, "0 1 2 ");
    // SAFETY: closing the fd opened above.
    unsafe { libc::close(leaked) };
    sup.close().await;
}

#[tokio::test]
async fn blocked_and_ignored_signals_are_reset() {
    // SAFETY: signal-mask and disposition changes for this test thread and process; the
    // spawner thread started below inherits the mask.
    let sup = unsafe {
        libc::signal(libc::SIGUSR2, libc::SIG_IGN);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGUSR1);
        libc::sigaddset(&mut set, libc::SIGHUP);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        let sup = fallback();
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        sup
    };
    let text = output_of(&sup, "exec cat /proc/self/status").await;
    for field in ["SigBlk", "SigIgn"] {
        let line = text.lines().find(|l| l.starts_with(field)).unwrap();
        assert!(line.ends_with("0000000000000000"), "{line}");
    }
    sup.close().await;
}

/// The exec follows `execvp`: a bare name is looked up in the child's own PATH, and an
/// executable without a `#!` line runs under `/bin/sh`.
#[tokio::test]
async fn exec_searches_child_path_and_runs_plain_scripts() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("plain-script");
    std::fs::write(&script, "echo \"script $1\"\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let sup = fallback();
    let path = format!("/nonexistent:{}:/usr/bin:/bin", dir.path().display());
    let spec = SpawnSpec {
        program: "plain-script".into(),
        args: vec!["arg".into()],
        env: vec![("PATH".into(), path.into())],
        ..SpawnSpec::default()
    };
    let child = sup.spawn(spec).await.unwrap();
    let mut out = Collect(Vec::new());
    run::run(child, &mut out, limits()).await;
    assert_eq!(String::from_utf8_lossy(&out.0), "script arg\n");

    let spec = SpawnSpec { program: "plain-script".into(), ..SpawnSpec::default() };
    let err = sup.spawn(spec).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "Failed to start plain-script: No such file or directory (os error 2)"
    );
    sup.close().await;
}

#[tokio::test]
async fn spawn_after_close_fails() {
    for sup in [fallback(), Supervisor::start(SupervisorConfig::default()).unwrap()] {
        sup.close().await;
        let err = sup.spawn(spec("true")).await.unwrap_err();
        assert_eq!(err.to_string(), "Failed to start /bin/bash: the supervisor is closed");
        assert!(sup.spare_leaves().is_empty(), "{:?}", sup.spare_leaves());
    }
}

#[test]
fn signal_names() {
    assert_eq!(crate::signal_name(9), "SIGKILL");
    assert_eq!(crate::signal_name(15), "SIGTERM");
    assert_eq!(crate::signal_name(40), "SIG40");
}

/// A detached spawn's daemon (here a `sleep` its leader leaves behind) is no member of the
/// tree: the run ends with nothing lingering and close leaves the daemon running, with
/// containment as the machine allows (a cgroup leaf would keep it a member). The same
/// script spawned normally leaves it lingering.
#[tokio::test]
async fn a_detached_spawn_leaves_its_daemon_running() {
    let sup = Supervisor::start(SupervisorConfig::default()).unwrap();
    let script = "sleep 31341 >/dev/null 2>&1 & echo $!";
    let normal = sup.spawn(spec(script)).await.unwrap();
    let mut out = Collect(Vec::new());
    let outcome = run::run(normal, &mut out, limits()).await;
    let stray: u32 = String::from_utf8_lossy(&out.0).trim().parse().unwrap();
    // SAFETY: kill on a pid this test started.
    unsafe { libc::kill(stray as i32, libc::SIGKILL) };
    assert_eq!(outcome.lingering.iter().map(|l| l.pid).collect::<Vec<_>>(), [stray]);

    let child = sup.spawn(SpawnSpec { detached: true, ..spec(script) }).await.unwrap();
    let mut out = Collect(Vec::new());
    let outcome = run::run(child, &mut out, limits()).await;
    let daemon: u32 = String::from_utf8_lossy(&out.0).trim().parse().unwrap();
    sup.disown(daemon);
    assert!(outcome.lingering.is_empty(), "{:?}", outcome.lingering);
    sup.close().await;
    let alive = crate::procfs::stat(daemon).is_some_and(|s| crate::procfs::is_live(&s));
    // SAFETY: kill on a pid this test started.
    unsafe { libc::kill(daemon as i32, libc::SIGKILL) };
    assert!(alive, "close left the daemon running");
}

/// A child with a cgroup v2 leaf starts in it both ways: created inside it by `clone3`, and
/// joining it by a write to `cgroup.procs` (kernels without `clone3`).
#[tokio::test]
async fn a_child_starts_in_its_cgroup_leaf_either_way() {
    for spawn_into_leaf in [true, false] {
        let sup =
            Supervisor::start(SupervisorConfig { spawn_into_leaf, ..Default::default() }).unwrap();
        if let Containment::ProcessGroup { reason } = sup.containment() {
            println!("SKIPPED a_child_starts_in_its_cgroup_leaf_either_way: {reason}");
            return;
        }
        assert_starts_in_its_leaf(&sup).await;
        if spawn_into_leaf && clone3_expected() {
            assert!(crate::clone3::usable(), "clone3 fell back on a kernel that has it");
        }
        sup.close().await;
    }
}

/// Spawns a child that prints its own cgroup v2 path and checks it is the tree's leaf.
async fn assert_starts_in_its_leaf(sup: &Supervisor) {
    let child = sup.spawn(spec("grep '^0::' /proc/self/cgroup")).await.unwrap();
    let leaf = child.tree().cgroup().expect("a leaf").to_path_buf();
    let mut out = Collect(Vec::new());
    run::run(child, &mut out, limits()).await;
    let line = String::from_utf8_lossy(&out.0).into_owned();
    let name = format!("/{}\n", leaf.file_name().unwrap().display());
    assert!(line.ends_with(&name), "{line:?} is not in {leaf:?}");
}

/// x86_64, Linux 5.7 or later (`CLONE_INTO_CGROUP`), and no seccomp filter on this process
/// that could refuse `clone3`.
fn clone3_expected() -> bool {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mut numbers = release.split(['.', '-']).map(|n| n.parse::<u32>().unwrap_or(0));
    let version = (numbers.next().unwrap_or(0), numbers.next().unwrap_or(0));
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let unfiltered = status.lines().any(|l| l.split_whitespace().eq(["Seccomp:", "0"]));
    cfg!(target_arch = "x86_64") && version >= (5, 7) && unfiltered
}

/// Set in the copy of this test binary that runs under a filter refusing `clone3`.
const NO_CLONE3: &str = "EXECKIT_TEST_NO_CLONE3";

/// Where the kernel refuses `clone3` (here a seccomp filter answering ENOSYS, as container
/// runtimes do), spawns fall back to the write into `cgroup.procs` and the child still starts
/// in its leaf. The filter stays on the thread that installs it, so the test runs in a copy of
/// this binary.
#[test]
#[allow(clippy::disallowed_methods)] // re-runs this test binary with the switch set
fn without_clone3_a_child_joins_its_cgroup_leaf_by_a_write() {
    let name = "supervisor::tests::without_clone3_a_child_joins_its_cgroup_leaf_by_a_write";
    if std::env::var_os(NO_CLONE3).is_none() {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", name, "--nocapture", "--test-threads=1"])
            .env(NO_CLONE3, "1")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
        assert!(stdout.contains("joined by a write") || stdout.contains("SKIPPED"), "{stdout}");
        return;
    }
    refuse_clone3();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let sup = Supervisor::start(SupervisorConfig::default()).unwrap();
        if let Containment::ProcessGroup { reason } = sup.containment() {
            return println!("SKIPPED {name}: {reason}");
        }
        assert_starts_in_its_leaf(&sup).await;
        assert!(!crate::clone3::usable(), "the refusal was not noticed");
        sup.close().await;
        println!("joined by a write");
    });
}

/// A seccomp filter on this thread (and the threads it starts) that fails `clone3` with ENOSYS.
fn refuse_clone3() {
    use seccompiler::{BpfProgram, SeccompAction, SeccompFilter, TargetArch};
    let rules = [(libc::SYS_clone3, Vec::new())].into_iter().collect();
    let arch = TargetArch::try_from(std::env::consts::ARCH).unwrap();
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )
    .unwrap();
    let program: BpfProgram = filter.try_into().unwrap();
    seccompiler::apply_filter(&program).unwrap();
}

/// After a run, the Supervisor keeps one pair of leaves made ahead for the next spawn and no
/// other; close removes them.
#[tokio::test]
async fn spare_leaves_are_all_that_is_left_between_runs_and_close_removes_them() {
    let sup = Supervisor::start(SupervisorConfig::default()).unwrap();
    if let Containment::ProcessGroup { reason } = sup.containment() {
        return println!("SKIPPED spare_leaves_are_all_that_is_left: {reason}");
    }
    let mut used = Vec::new();
    for _ in 0..3 {
        let child = sup.spawn(spec("echo ran")).await.unwrap();
        used.push(child.tree().cgroup().expect("a leaf").to_path_buf());
        let mut out = Collect(Vec::new());
        run::run(child, &mut out, limits()).await;
        assert_eq!(out.0, b"ran\n");
    }
    assert!(used.iter().all(|leaf| !leaf.exists()), "{used:?}");
    // The spare is made on a blocking thread after each spawn; give it a moment.
    let until = std::time::Instant::now() + Duration::from_secs(5);
    while sup.spare_leaves().is_empty() && std::time::Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let spare = sup.spare_leaves();
    assert!(!spare.is_empty() && spare.iter().all(|leaf| leaf.is_dir()), "{spare:?}");
    sup.close().await;
    assert!(spare.iter().all(|leaf| !leaf.exists()), "{spare:?} kept");
}

/// Spawns racing for the spare leaves each get a leaf of their own, and nothing is left after
/// close.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_spawns_each_get_their_own_leaf() {
    let sup = Supervisor::start(SupervisorConfig::default()).unwrap();
    if let Containment::ProcessGroup { reason } = sup.containment() {
        return println!("SKIPPED concurrent_spawns_each_get_their_own_leaf: {reason}");
    }
    let mut runs = tokio::task::JoinSet::new();
    for i in 0..24 {
        let sup = sup.clone();
        runs.spawn(async move {
            let child = sup.spawn(spec(&format!("echo {i}"))).await.unwrap();
            let leaf = child.tree().cgroup().expect("a leaf").to_path_buf();
            let mut out = Collect(Vec::new());
            run::run(child, &mut out, limits()).await;
            assert_eq!(String::from_utf8_lossy(&out.0), format!("{i}\n"));
            leaf
        });
    }
    let mut leaves = Vec::new();
    while let Some(leaf) = runs.join_next().await {
        leaves.push(leaf.unwrap());
    }
    let mut unique = leaves.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), leaves.len(), "{leaves:?}");
    assert!(leaves.iter().all(|leaf| !leaf.exists()), "{leaves:?}");
    let spare = sup.spare_leaves();
    sup.close().await;
    assert!(spare.iter().all(|leaf| !leaf.exists()), "{spare:?} kept");
}
