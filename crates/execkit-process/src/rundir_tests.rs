use std::os::unix::fs::PermissionsExt;

use super::*;

fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().mode() & 0o777
}

/// `base` cannot be used: the run directory is a fresh private one in `parent`, and the note
/// says why.
fn assert_falls_back(base: &Path, parent: &Path, why: &str) {
    let (dir, note) = create(base, parent).unwrap();
    assert_eq!(dir.parent(), Some(parent), "{}", dir.display());
    assert!(dir.is_dir());
    assert_eq!(mode(&dir), 0o700);
    let note = note.unwrap();
    assert!(note.contains(why), "{note}");
    fs::remove_dir(&dir).unwrap();
}

#[test]
fn a_shared_parent_of_this_user_is_used() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("execkit");
    let (dir, note) = create(&base, tmp.path()).unwrap();
    assert_eq!(dir, base.join(std::process::id().to_string()));
    assert_eq!((mode(&base), mode(&dir), note), (0o700, 0o700, None));
}

#[test]
fn a_file_a_symlink_or_an_open_mode_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let parent = tmp.path().join("tmp");
    fs::create_dir(&parent).unwrap();
    let file = tmp.path().join("file");
    fs::write(&file, "x").unwrap();
    assert_falls_back(&file, &parent, "is not a directory");
    let target = tmp.path().join("target");
    fs::create_dir(&target).unwrap();
    fs::set_permissions(&target, fs::Permissions::from_mode(0o700)).unwrap();
    let link = tmp.path().join("link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    assert_falls_back(&link, &parent, "is not a directory");
    let open = tmp.path().join("open");
    fs::create_dir(&open).unwrap();
    fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).unwrap();
    assert_falls_back(&open, &parent, "has mode 777");
}

#[test]
fn a_parent_of_another_user_is_refused() {
    // SAFETY: getuid cannot fail.
    if unsafe { libc::getuid() } == 0 {
        return; // root owns `/` too
    }
    let tmp = tempfile::tempdir().unwrap();
    assert_falls_back(Path::new("/"), tmp.path(), "is owned by uid 0");
}

#[test]
fn fallbacks_of_dead_processes_are_swept() {
    let tmp = tempfile::tempdir().unwrap();
    let dead = tmp.path().join(format!("{}{}-abcdef", fallback_prefix(), 4_194_999));
    let live = tmp.path().join(format!("{}{}-abcdef", fallback_prefix(), std::process::id()));
    let other = tmp.path().join("execkit-other");
    for dir in [&dead, &live, &other] {
        fs::create_dir(dir).unwrap();
    }
    sweep_fallbacks(tmp.path());
    assert!(!dead.exists());
    assert!(live.exists() && other.exists());
}
