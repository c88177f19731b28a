//! process: kill tree, lingering report, deadlines, close and drop (O37–O41).

use super::*;

/// OX16: a TERM-ignoring child, a stopped one, and a `setsid` double fork, all killed.
async fn kill_tree_case(sup: &Supervisor, tag: u32) -> u32 {
    let script = format!(
        "bash -c 'trap \"\" TERM; while :; do sleep 0.05; done' &
         sleep {a} & sleep 0.1; kill -STOP $!
         setsid bash -c 'sleep {b} & true' &
         sleep 0.3; echo ready; wait",
        a = tag + 1,
        b = tag + 2
    );
    let mut child = sup.spawn(bash(&script)).await.expect("spawn");
    let seen = read_until(&mut child, "ready").await;
    assert!(seen.contains("ready"), "{seen}");
    let tree = child.tree();
    let members = tree.members();
    let cmds: Vec<String> = members.iter().map(|p| cmdline(*p)).collect();
    let escaped = members.iter().copied().find(|p| cmdline(*p) == format!("sleep {}", tag + 2));
    let escaped = escaped.unwrap_or_else(|| panic!("setsid escape missing: {cmds:?}"));
    let stopped = members.iter().find(|p| cmdline(**p) == format!("sleep {}", tag + 1));
    assert_eq!(stopped.and_then(|p| state(*p)), Some('T'));
    let started = Instant::now();
    // Two concurrent callers share one run.
    let (report, other) =
        tokio::join!(tree.kill(Duration::from_millis(500)), tree.kill(Duration::from_secs(30)));
    assert_eq!(report, other);
    assert!(report.unkillable.is_empty(), "{report:?}");
    assert!(report.killed_after_grace >= 1, "the TERM-ignoring child needed SIGKILL: {report:?}");
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    let again = tree.kill(Duration::from_millis(500)).await;
    assert_eq!(again, report, "a second kill is the same run");
    let status = child.wait().await.expect("leader reaped");
    assert!(status.code.is_none() || status.code == Some(143), "{status:?}");
    let alive = wait_gone(&members, Duration::from_secs(3));
    assert!(alive.is_empty(), "still alive: {alive:?}");
    assert!(tree.members().is_empty());
    escaped
}

#[tokio::test]
async fn kill_tree_fallback_with_subreaper() {
    let sup = fallback(true);
    assert_eq!(sup.containment().as_str(), "process_group");
    let escaped = kill_tree_case(&sup, 31000).await;
    // O40: the adopted orphan is reaped by pid within the reaper's 1 s period, not left a zombie.
    let until = Instant::now() + Duration::from_secs(4);
    while Path::new(&format!("/proc/{escaped}")).exists() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!Path::new(&format!("/proc/{escaped}")).exists(), "orphan {escaped} not reaped");
    sup.close().await;
}

#[tokio::test]
async fn kill_tree_cgroup() {
    let Some(sup) = cgroup_supervisor("kill_tree_cgroup") else { return };
    assert_eq!(sup.containment().as_str(), "cgroup");
    kill_tree_case(&sup, 32000).await;
    sup.close().await;
}

// OT11: a setsid escape stays in the leaf; the leaf goes when the run is over.
#[tokio::test]
async fn cgroup_keeps_setsid_escapes_and_removes_leaf() {
    let Some(sup) = cgroup_supervisor("cgroup_keeps_setsid_escapes_and_removes_leaf") else {
        return;
    };
    let mut child =
        sup.spawn(bash("setsid sleep 33001 & sleep 0.2; echo ready; wait")).await.expect("spawn");
    read_until(&mut child, "ready").await;
    let tree = child.tree();
    let leaf = tree.cgroup().expect("leaf").to_path_buf();
    assert!(leaf.is_dir());
    let escaped =
        tree.members().into_iter().find(|p| cmdline(*p) == "sleep 33001").expect("in leaf");
    let cgroup = std::fs::read_to_string(format!("/proc/{escaped}/cgroup")).expect("cgroup");
    assert!(cgroup.contains(&format!("/execkit-{}/", std::process::id())), "{cgroup}");
    tree.kill(Duration::from_millis(500)).await;
    child.wait().await.expect("reaped");
    assert!(!leaf.exists(), "leaf kept after kill");

    let (outcome, text) = run_script(&sup, "echo hi").await;
    assert_eq!(text, "hi\n");
    assert!(!outcome.tree.cgroup().expect("leaf").exists(), "empty leaf kept after run");
    sup.close().await;
}

/// OT12 / OX17: the run ends at the leader's exit plus the idle drain; members holding the
/// pipe are reported with `holds_output: true`, those that redirected with `false`.
async fn lingering_case(sup: &Supervisor, tag: u32) {
    let started = Instant::now();
    let (outcome, text) = run_script(sup, &format!("sleep {tag} & echo hi")).await;
    let wall = started.elapsed();
    println!("lingering run returned in {wall:?} (target 400 ms)");
    assert_eq!(text, "hi\n");
    assert_eq!(outcome.end, RunEnd::Exited);
    assert!(wall < Duration::from_millis(1500), "took {wall:?}");
    assert_eq!(outcome.lingering.len(), 1, "{:?}", outcome.lingering);
    assert_eq!(outcome.lingering[0].cmd, format!("sleep {tag}"));
    assert!(outcome.lingering[0].holds_output);
    assert!(outcome.output.is_some());
    let report = outcome.tree.kill(Duration::from_millis(500)).await;
    assert!(report.unkillable.is_empty());
    assert!(wait_gone(&[outcome.lingering[0].pid], Duration::from_secs(2)).is_empty());

    let (outcome, text) =
        run_script(sup, &format!("sleep {} >/dev/null 2>&1 & echo hi", tag + 1)).await;
    assert_eq!(text, "hi\n");
    assert_eq!(outcome.lingering.len(), 1, "{:?}", outcome.lingering);
    assert!(!outcome.lingering[0].holds_output);
    assert!(outcome.output.is_none());
    let report = outcome.tree.kill(Duration::from_millis(500)).await;
    assert!(report.unkillable.is_empty());
}

#[tokio::test]
async fn lingering_fallback() {
    let sup = fallback(false);
    lingering_case(&sup, 34000).await;
    sup.close().await;
}

#[tokio::test]
async fn lingering_cgroup() {
    let Some(sup) = cgroup_supervisor("lingering_cgroup") else { return };
    lingering_case(&sup, 35000).await;
    sup.close().await;
}

#[tokio::test]
async fn deadline_and_cancel_kill_the_tree() {
    let sup = fallback(false);
    let child = sup
        .spawn(bash("echo start; trap '' TERM; sleep 36001 & sleep 36002"))
        .await
        .expect("spawn");
    let tree = child.tree();
    let mut out = Collect(Vec::new());
    let mut lim = limits();
    lim.deadline = Some(Instant::now() + Duration::from_millis(400));
    let started = Instant::now();
    let outcome = run::run(child, &mut out, lim).await;
    assert_eq!(outcome.end, RunEnd::TimedOut);
    assert_eq!(out.text(), "start\n");
    assert!(started.elapsed() < Duration::from_secs(4), "{:?}", started.elapsed());
    let kill = outcome.kill.expect("kill report");
    assert!(kill.unkillable.is_empty());
    assert!(outcome.lingering.is_empty());
    assert!(outcome.status.is_some());
    assert!(tree.members().is_empty());

    let child = sup.spawn(bash("sleep 36003")).await.expect("spawn");
    let mut lim = limits();
    let cancel = lim.cancel.clone();
    lim.deadline = None;
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        cancel.cancel();
    });
    let mut out = Collect(Vec::new());
    let outcome = run::run(child, &mut out, lim).await;
    assert_eq!(outcome.end, RunEnd::Cancelled);
    // Cancelling does not wait for the kill (B30): it finishes in the background.
    let tree = outcome.tree.clone();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !tree.members().is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(tree.members().is_empty(), "the cancelled tree was killed");
    sup.close().await;
}

/// OT13: close() with 20 live trees returns within grace + 1 s and leaves no pid.
async fn close_case(sup: Supervisor, tag: u32) {
    let mut pids = Vec::new();
    let mut children = Vec::new();
    for i in 0..20 {
        let script = format!("trap '' TERM; sleep {} & echo ready; wait", tag + i);
        let mut child = sup.spawn(bash(&script)).await.expect("spawn");
        read_until(&mut child, "ready").await;
        pids.extend(child.tree().members());
        children.push(child);
    }
    assert!(pids.len() >= 40, "{pids:?}");
    let grace = sup.config().kill_grace;
    let started = Instant::now();
    sup.close().await;
    let took = started.elapsed();
    assert!(took < grace + Duration::from_secs(1), "close took {took:?}");
    for child in &mut children {
        let _ = tokio::time::timeout(Duration::from_secs(1), child.wait()).await;
    }
    let alive = wait_gone(&pids, Duration::from_secs(2));
    assert!(alive.is_empty(), "alive after close: {alive:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_kills_every_tree_fallback() {
    close_case(fallback(false), 37000).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_kills_every_tree_cgroup() {
    let Some(sup) = cgroup_supervisor("close_kills_every_tree_cgroup") else { return };
    close_case(sup, 38000).await;
}

// O41: dropping the last Supervisor handle kills what is still running, best effort.
#[tokio::test]
async fn drop_kills_live_trees() {
    let sup = fallback(false);
    let mut child =
        sup.spawn(bash("trap '' TERM; sleep 42001 & echo ready; wait")).await.expect("spawn");
    read_until(&mut child, "ready").await;
    let members = child.tree().members();
    assert!(members.len() >= 2, "{members:?}");
    drop(child);
    drop(sup);
    let alive = wait_gone(&members, Duration::from_secs(2));
    assert!(alive.is_empty(), "alive after drop: {alive:?}");
}
