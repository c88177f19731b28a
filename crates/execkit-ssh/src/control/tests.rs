use std::os::unix::fs::PermissionsExt;

use super::*;
use crate::config::{Compat, HostEntry};

pub(crate) fn entry(name: &str) -> HostEntry {
    HostEntry {
        name: name.into(),
        host: "127.0.0.1".into(),
        username: Some("u".into()),
        port: 22,
        key: None,
        description: None,
        compat: Compat::Auto,
        connect_timeout: std::time::Duration::from_secs(10),
        max_sessions: 8,
        shell: None,
        proxy_jump: None,
        known_hosts: None,
        ssh_config: None,
        source: "/x/ssh.json".into(),
    }
}

#[test]
fn socket_names_are_short_stable_hashes() {
    let a = socket_path(Path::new("/run/x"), &entry("web"));
    assert_eq!(a, socket_path(Path::new("/run/x"), &entry("web")));
    assert_ne!(a, socket_path(Path::new("/run/x"), &entry("db")));
    let name = a.file_name().unwrap().to_str().unwrap();
    assert_eq!(name.len(), 16);
    assert!(name.bytes().all(|b| b.is_ascii_hexdigit()));
    let mut moved = entry("web");
    moved.port = 2222;
    assert_ne!(a, socket_path(Path::new("/run/x"), &moved));
}

#[test]
fn loose_or_long_directories_are_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    let loose = tmp.path().join("loose");
    std::fs::create_dir(&loose).unwrap();
    std::fs::set_permissions(&loose, std::fs::Permissions::from_mode(0o755)).unwrap();
    let good = tmp.path().join("good");
    let env = Environment::from_vars([
        ("EXECKIT_SSH_CONTROL_DIR", loose.to_str().unwrap()),
        ("XDG_RUNTIME_DIR", tmp.path().to_str().unwrap()),
    ]);
    let chosen = choose_control_dir(&env);
    assert_eq!(chosen.dir, Some(tmp.path().join("execkit-ssh")));
    let uid = unsafe { libc::geteuid() };
    let expected = format!(
        "control directory {} is not private (owner {uid}, mode 0755); skipped",
        loose.display()
    );
    assert_eq!(chosen.warnings, vec![expected]);
    let long = format!("{}/{}", tmp.path().display(), "d".repeat(90));
    let env = Environment::from_vars([
        ("EXECKIT_SSH_CONTROL_DIR", long.as_str()),
        ("XDG_RUNTIME_DIR", good.to_str().unwrap()),
    ]);
    std::fs::create_dir(&good).unwrap();
    let chosen = choose_control_dir(&env);
    assert_eq!(chosen.dir, Some(good.join("execkit-ssh")));
    assert!(chosen.warnings.is_empty());
    let meta = std::fs::metadata(good.join("execkit-ssh")).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o700);
}

#[test]
fn dead_sockets_are_told_apart_from_missing_and_live_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("s");
    assert_eq!(socket_state(&path), SocketState::Missing);
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    assert_eq!(socket_state(&path), SocketState::Accepting);
    drop(listener);
    assert_eq!(socket_state(&path), SocketState::Dead);
    assert!(remove_dead_socket(&path));
    assert_eq!(socket_state(&path), SocketState::Missing);
    std::fs::write(&path, "not a socket").unwrap();
    assert!(!remove_dead_socket(&path));
}
