use std::path::PathBuf;

use pretty_assertions::assert_eq;

use super::*;

fn write(dir: &std::path::Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

fn env() -> Environment {
    Environment::from_vars([("HOME", "/home/u"), ("EK_PORT", "2222")])
}

#[test]
fn first_file_wins_and_fields_are_typed() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(
        dir.path(),
        "a.json",
        r#"{"hosts": {"web": {"host": "10.0.0.1", "port": "${EK_PORT}", "username": "deploy", "key": "~/.ssh/id", "max_sessions": 2}}}"#,
    );
    let b = write(
        dir.path(),
        "b.json",
        r#"{"hosts": {"web": {"host": "10.0.0.2"}, "db": {"host": "[::1]", "keyPath": "keys/db", "ssh_config": "none", "compat": "yes"}}}"#,
    );
    let config = HostConfig::load(&[a.clone(), b.clone()], &env());
    assert_eq!(config.names(), vec!["web", "db"]);
    let web = &config.hosts["web"];
    assert_eq!((web.host.as_str(), web.port, web.max_sessions), ("10.0.0.1", 2222, 2));
    assert_eq!(web.key.as_deref(), Some(std::path::Path::new("/home/u/.ssh/id")));
    let db = &config.hosts["db"];
    assert_eq!(db.host, "::1");
    assert_eq!(db.key, Some(dir.path().join("keys/db")));
    assert_eq!(db.ssh_config, Some(SshConfigFile::None));
    assert_eq!(db.compat, Compat::On);
    assert_eq!(
        config.warnings,
        vec![format!(
            "{}: host \"web\" is already defined in {}; this definition is ignored",
            b.display(),
            a.display()
        )]
    );
}

#[test]
fn bad_entries_are_warnings_and_others_load() {
    let dir = tempfile::tempdir().unwrap();
    let text = r#"{"hosts": {
        "inject": {"host": "-oProxyCommand=touch /tmp/x"},
        "user": {"host": "h", "username": "-F/tmp/c"},
        "at": {"host": "root@10.0.0.1"},
        "unset": {"host": "${UNSET_EK_HOST}"},
        "port1": {"host": "h", "port": "22abc"},
        "port2": {"host": "h", "port": 0},
        "port3": {"host": "h", "port": 70000},
        "compat": {"host": "h", "compat": "maybe"},
        "nl": {"host": "h", "username": "a\nb"},
        "-bad": {"host": "h"},
        "ok": {"host": "ok.example", "colour": "blue"}
    }}"#;
    let file = write(dir.path(), "ssh.json", text);
    let config = HostConfig::load(std::slice::from_ref(&file), &env());
    assert_eq!(config.names(), vec!["ok"]);
    let f = file.display();
    let expected: Vec<String> = [
        r#"host "inject": "host" must not start with "-"; entry ignored"#,
        r#"host "user": "username" must not start with "-"; entry ignored"#,
        r#"host "at": "host" must not contain "@" (put the user in "username"); entry ignored"#,
        r#"host "unset": environment variable UNSET_EK_HOST is not set; entry ignored"#,
        r#"host "port1": "port" must be an integer 1..65535 (got "22abc"); entry ignored"#,
        r#"host "port2": "port" must be an integer 1..65535 (got 0); entry ignored"#,
        r#"host "port3": "port" must be an integer 1..65535 (got 70000); entry ignored"#,
        r#"host "compat": "compat" must be true, false or "auto" (got "maybe"); entry ignored"#,
        r#"host "nl": "username" must not contain NUL, CR or LF; entry ignored"#,
        r#"invalid host name "-bad"; entry ignored"#,
        r#"host "ok": unknown field "colour""#,
    ]
    .iter()
    .map(|w| format!("{f}: {w}"))
    .collect();
    assert_eq!(config.warnings, expected);
}

#[test]
fn broken_files_are_ignored_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write(dir.path(), "bad.json", "{\"hosts\": {,}}");
    let array = write(dir.path(), "array.json", r#"{"hosts": []}"#);
    let big = write(dir.path(), "big.json", &" ".repeat(5 * 1024 * 1024));
    let good = write(dir.path(), "good.json", r#"{"hosts": {"a": {"host": "a"}}}"#);
    let config = HostConfig::load(&[bad.clone(), array.clone(), big.clone(), good], &env());
    assert_eq!(config.names(), vec!["a"]);
    assert_eq!(
        config.warnings,
        vec![
            format!("{}: not valid JSON (1:12: key must be a string); file ignored", bad.display()),
            format!("{}: \"hosts\" must be an object; file ignored", array.display()),
            format!("{}: larger than 1 MiB; file ignored", big.display()),
        ]
    );
}

#[test]
fn groups_resolve_nested_and_reject_cycles_and_unknowns() {
    let dir = tempfile::tempdir().unwrap();
    let text = r#"{"hosts": {"web1": {"host": "a"}, "web2": {"host": "b"}, "db1": {"host": "c"}},
      "groups": {"web": ["web1", "web2"], "all": ["web", "db1", "web1"], "loop1": ["loop2"],
                 "loop2": ["loop1"], "typo": ["web3"]}}"#;
    let file = write(dir.path(), "ssh.json", text);
    let config = HostConfig::load(std::slice::from_ref(&file), &env());
    assert_eq!(config.groups["web"], vec!["web1", "web2"]);
    assert_eq!(config.groups["all"], vec!["web1", "web2", "db1"]);
    assert!(!config.groups.contains_key("loop1") && !config.groups.contains_key("typo"));
    let f = file.display();
    assert_eq!(
        config.warnings,
        vec![
            format!("{f}: group \"loop1\": cycle loop1 -> loop2 -> loop1; group ignored"),
            format!("{f}: group \"loop2\": cycle loop2 -> loop1 -> loop2; group ignored"),
            format!("{f}: group \"typo\": unknown member \"web3\"; group ignored"),
        ]
    );
}

#[test]
fn proxy_jump_must_be_one_configured_hop() {
    let dir = tempfile::tempdir().unwrap();
    let text = r#"{"hosts": {"bastion": {"host": "b"}, "inner": {"host": "i", "proxy_jump": "bastion"},
      "deeper": {"host": "d", "proxy_jump": "inner"}, "lost": {"host": "l", "proxy_jump": "nowhere"}}}"#;
    let file = write(dir.path(), "ssh.json", text);
    let config = HostConfig::load(&[file], &env());
    assert_eq!(config.names(), vec!["bastion", "inner"]);
    assert_eq!(config.warnings.len(), 2);
}

#[test]
fn discovery_order_and_project_root() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("proj");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(root.join("sub/deep")).unwrap();
    write(&root, ".execkit/ssh.json", r#"{"hosts": {"a": {"host": "from-execkit"}}}"#);
    write(&root, "ssh.json", r#"{"hosts": {"a": {"host": "from-root"}, "b": {"host": "b"}}}"#);
    write(&root, ".ssh.json", "not json");
    let home = dir.path().join("home");
    write(&home, ".execkit/ssh.json", r#"{"hosts": {"b": {"host": "from-home"}}}"#);
    let env = Environment::from_vars([("HOME", home.to_str().unwrap())]);
    let config = HostConfig::discover(&root.join("sub/deep"), &env);
    assert_eq!(config.hosts["a"].host, "from-execkit");
    assert_eq!(config.hosts["b"].host, "from-home");
    assert_eq!(config.warnings.len(), 3, "{:?}", config.warnings);
    assert!(!config.changed());
    write(&root, "ssh.json", r#"{"hosts": {}}"#);
    assert!(config.changed());
}
