use super::*;

fn resolve(options: SandboxOptions, cwd: &Path, vars: &[(&str, &str)]) -> Result<Policy, String> {
    Policy::resolve(&options, cwd, &Lookup::from_vars(vars.iter().copied()))
        .map_err(|e| e.to_string())
}

fn mode(mode: &str) -> SandboxOptions {
    SandboxOptions { mode: Some(mode.into()), ..SandboxOptions::default() }
}

#[test]
fn a_bad_mode_or_network_names_what_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let err = resolve(mode("sometimes"), dir.path(), &[]).unwrap_err();
    assert_eq!(err, "--sandbox: expected off, read-only or workspace-write, not \"sometimes\"");
    let options = SandboxOptions { network: Some("maybe".into()), ..mode("read-only") };
    assert_eq!(
        resolve(options, dir.path(), &[]).unwrap_err(),
        "--network: expected on or off, not \"maybe\""
    );
}

#[test]
fn a_missing_writable_root_fails_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let options =
        SandboxOptions { writable: vec!["/does/not/exist".into()], ..mode("workspace-write") };
    let err = resolve(options, dir.path(), &[]).unwrap_err();
    assert!(err.starts_with("--writable /does/not/exist: No such file"), "{err}");
}

#[test]
fn workspace_write_roots_are_canonical_and_git_is_protected() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    std::fs::create_dir_all(dir.path().join("extra")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("extra"), dir.path().join("link")).unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    let options = SandboxOptions { writable: vec!["../link".into()], ..mode("workspace-write") };
    let home_var = home.to_str().unwrap();
    let policy = resolve(options, &ws, &[("HOME", home_var)]).unwrap();
    let real = |p: &Path| std::fs::canonicalize(p).unwrap();
    assert_eq!(
        policy.writable_roots,
        [real(&ws), real(Path::new("/tmp")), real(&dir.path().join("extra"))]
    );
    assert_eq!(policy.protected, [real(&ws.join(".git"))]);
    assert!(policy.denied.contains(&real(&home.join(".ssh"))));
    assert!(policy.allows_write(&ws.join("new/file")));
    assert!(!policy.allows_write(&ws.join(".git/config")));
    assert!(!policy.allows_write(Path::new("/etc/f")));
    let text = policy.description().unwrap();
    assert!(text.starts_with("Commands run in a sandbox: they may write only inside "), "{text}");
    assert!(
        text.ends_with(", and have no network (127.0.0.1 is private to this session)."),
        "{text}"
    );
}

#[test]
fn a_git_pointer_file_protects_its_target_too() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("wt");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(dir.path().join("main/.git/worktrees/wt")).unwrap();
    std::fs::write(ws.join(".git"), "gitdir: ../main/.git/worktrees/wt\n").unwrap();
    let policy = resolve(mode("workspace-write"), &ws, &[]).unwrap();
    let target = std::fs::canonicalize(dir.path().join("main/.git/worktrees/wt")).unwrap();
    assert!(policy.protected.contains(&target));
    assert!(policy.protected.contains(&std::fs::canonicalize(ws.join(".git")).unwrap()));
}

#[test]
fn off_is_the_default_and_confines_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let policy = resolve(SandboxOptions::default(), dir.path(), &[]).unwrap();
    assert!(!policy.is_confined());
    assert_eq!(policy.description(), None);
    let read_only = resolve(mode("read-only"), dir.path(), &[]).unwrap();
    assert!(read_only.writable_roots.is_empty() && !read_only.allows_write(dir.path()));
}
