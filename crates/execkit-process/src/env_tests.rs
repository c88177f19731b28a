use super::*;
use crate::scrub;

fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
    pairs.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))).collect()
}

fn get(env: &EnvBuilder, name: &str) -> Option<String> {
    env.get(name).map(|v| v.to_string_lossy().into_owned())
}

fn rules(keep: &str, extra: &str) -> ScrubRules {
    let lookup = |name: &str| match name {
        "EXECKIT_ENV_KEEP" => Some(keep.to_string()),
        "EXECKIT_ENV_SCRUB_EXTRA" => Some(extra.to_string()),
        _ => None,
    };
    ScrubRules::from_lookup(&lookup)
}

#[test]
fn hardening_sets_every_variable() {
    let mut env = EnvBuilder::from_vars(vars(&[("PAGER", "less"), ("TERM", "xterm")]));
    env.harden();
    for (name, value) in HARDENING {
        assert_eq!(get(&env, name).as_deref(), Some(*value), "{name}");
    }
    let askpass = get(&env, "SSH_ASKPASS").unwrap();
    assert!(askpass == "/usr/bin/false" || askpass == "/bin/false");
    assert!(Path::new(&askpass).exists());
    assert_eq!(get(&env, "AWS_PAGER").as_deref(), Some(""));
}

#[test]
fn caller_overrides_hardening() {
    let mut env = EnvBuilder::from_vars(vars(&[]));
    env.harden();
    env.overlay(vars(&[("PAGER", "less"), ("CI", "0")]));
    assert_eq!(get(&env, "PAGER").as_deref(), Some("less"));
    assert_eq!(get(&env, "CI").as_deref(), Some("0"));
}

#[test]
fn locale_rule() {
    let mut env = EnvBuilder::from_vars(vars(&[]));
    env.harden();
    assert_eq!(get(&env, "LANG").as_deref(), Some("C.UTF-8"));
    for existing in ["LANG", "LC_ALL", "LC_CTYPE"] {
        let mut env = EnvBuilder::from_vars(vars(&[(existing, "de_DE.UTF-8")]));
        env.harden();
        assert_eq!(get(&env, existing).as_deref(), Some("de_DE.UTF-8"));
        if existing != "LANG" {
            assert_eq!(get(&env, "LANG"), None, "LANG invented next to {existing}");
        }
    }
    assert_eq!(get(&env, "GPG_TTY"), None);
}

#[test]
fn shell_state_and_colour_forcers_removed() {
    let names = SHELL_STATE.iter().chain(COLOUR_FORCERS).map(|n| (*n, "x")).collect::<Vec<_>>();
    let mut env = EnvBuilder::from_vars(vars(&names));
    env.set("KEEP_ME", "1");
    env.remove_shell_state();
    for (name, _) in &names {
        assert_eq!(get(&env, name), None, "{name}");
    }
    assert_eq!(get(&env, "KEEP_ME").as_deref(), Some("1"));
}

#[test]
fn scrub_by_name_well_known_and_value() {
    let mut env = EnvBuilder::from_vars(vars(&[
        ("MY_API_KEY", "x"),
        ("db_password", "x"),
        ("SOME_SECRET_THING", "x"),
        ("GITLAB_PAT", "x"),
        ("SENTRY_DSN", "https://abc@sentry.io/1"),
        ("DATABASE_URL", "postgres://localhost/db"),
        ("MIRROR", "https://user:hunter2@example.com/repo"),
        ("PEM", "-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----"),
        ("OPENAI_ALT", "sk-abcdefghijklmnopqrstuvwxyz012345"),
        ("GH_ALT", "ghp_abcdefghijklmnopqrstuvwxyz0123"),
        ("SLACK_ALT", "xoxb-1234567890-abcdefghijklmnop"),
        ("AWS_ALT", "AKIAABCDEFGHIJKLMNOP"),
        ("GOOGLE_ALT", "AIzaSyA-abcdefghijklmnopqrstuvwxyz01234"),
        ("HOME", "/root"),
        ("SHORT", "sk-short"),
        ("URL", "https://example.com/path"),
        ("TOKENIZERS_PARALLELISM", "false"),
        ("SSH_AUTH_SOCK", "/tmp/agent"),
        ("KEYTIMEOUT", "1"),
    ]));
    env.scrub(&ScrubRules::default());
    let scrubbed = env.scrubbed();
    let expected = [
        "AWS_ALT",
        "DATABASE_URL",
        "GH_ALT",
        "GITLAB_PAT",
        "GOOGLE_ALT",
        "MIRROR",
        "MY_API_KEY",
        "OPENAI_ALT",
        "PEM",
        "SENTRY_DSN",
        "SLACK_ALT",
        "SOME_SECRET_THING",
        "db_password",
    ];
    let mut sorted = expected.map(String::from).to_vec();
    sorted.sort();
    assert_eq!(scrubbed, sorted);
    for name in ["HOME", "SHORT", "URL", "TOKENIZERS_PARALLELISM", "SSH_AUTH_SOCK", "KEYTIMEOUT"] {
        assert!(env.get(name).is_some(), "{name} was removed");
    }
    for name in &expected {
        assert!(env.get(name).is_none(), "{name} was kept");
    }
    // Names only, never values.
    assert!(scrubbed.iter().all(|n| !n.contains("hunter2") && !n.contains("sk-")));
}

#[test]
fn keep_list_and_extra_patterns() {
    let rules = rules("MY_*_TOKEN, SPECIAL_KEY", "INTERNAL,*_DSN_*");
    assert!(!is_credential("MY_BUILD_TOKEN", "x", &rules));
    assert!(!is_credential("SPECIAL_KEY", "x", &rules));
    assert!(is_credential("OTHER_TOKEN", "x", &rules));
    assert!(is_credential("my_internal_url", "x", &rules));
    assert!(is_credential("A_DSN_B", "x", &rules));
    assert!(!is_credential("PLAIN", "x", &rules));
    // The well-known list wins over the keep list.
    let rules = super::ScrubRules { keep: vec!["GITHUB_TOKEN".into()], extra: vec![] };
    assert!(is_credential("GITHUB_TOKEN", "x", &rules));
    for name in scrub::ALWAYS_REMOVED {
        assert!(is_credential(name, "", &ScrubRules::default()), "{name}");
    }
}

#[test]
fn value_patterns_need_enough_characters() {
    let rules = ScrubRules::default();
    assert!(!is_credential("V", "hf_short", &rules));
    assert!(is_credential("V", "hf_abcdefghijklmnopqrstu", &rules));
    assert!(is_credential("V", "github_pat_abcdefghijklmnopqrstu", &rules));
    assert!(is_credential("V", "glpat-abcdefghijklmnopqrstu", &rules));
    assert!(is_credential("V", "sk-ant-api03-abcdefghijklmnop", &rules));
    assert!(!is_credential("V", "prefix sk-abcdefghijklmnopqrstuvwxyz", &rules));
    assert!(!is_credential("V", "AKIA123", &rules));
    assert!(is_credential("V", "id=ASIAABCDEFGHIJKLMNOP;", &rules));
}

fn env_of(pairs: &[(&str, &str)]) -> IndexMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[test]
fn caller_env_validation_texts() {
    let err = validate_caller_env(&env_of(&[("1X", "x")])).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"Invalid argument "env": "1X" is not a valid variable name (letters, digits, _; not starting with a digit)"#
    );
    let err = validate_caller_env(&env_of(&[("A=B", "x")])).unwrap_err();
    assert!(err.to_string().starts_with(r#"Invalid argument "env": "A=B" is not a valid"#));
    let err = validate_caller_env(&env_of(&[("", "x")])).unwrap_err();
    assert!(err.to_string().starts_with(r#"Invalid argument "env": "" is not a valid"#));
    let err = validate_caller_env(&env_of(&[("FOO", "a\0b")])).unwrap_err();
    assert_eq!(err.to_string(), r#"Invalid argument "env.FOO": value contains a NUL byte"#);
    let big = "a".repeat(200 * 1024);
    let err = validate_caller_env(&env_of(&[("BIG", &big)])).unwrap_err();
    assert_eq!(err.field, "env.BIG");
    assert!(err.to_string().contains("131072"));
    let ok = "a".repeat(131072);
    assert!(validate_caller_env(&env_of(&[("OK", &ok)])).is_ok());
    let many: IndexMap<String, String> =
        (0..9).map(|i| (format!("V{i}"), "a".repeat(120_000))).collect();
    let err = validate_caller_env(&many).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"Invalid argument "env": environment would be 1080036 bytes; the limit is 1048576"#
    );
    assert!(validate_caller_env(&env_of(&[("_ok_1", "v"), ("Z", "")])).is_ok());
}

#[test]
fn into_vars_keeps_order() {
    let mut env = EnvBuilder::from_vars(vars(&[("B", "1"), ("A", "2")]));
    env.set("C", "3");
    env.set("B", "4");
    let names: Vec<_> = env.into_vars().into_iter().map(|(k, v)| format!("{k:?}={v:?}")).collect();
    assert_eq!(names, vec![r#""B"="4""#, r#""A"="2""#, r#""C"="3""#]);
}

#[test]
fn exported_bash_functions_removed() {
    let mut env = EnvBuilder::from_vars(vars(&[
        ("BASH_FUNC_ls%%", "() { echo HIJACKED; }"),
        ("BASH_FUNC_cd()", "() { :; }"),
        ("BASH_VERSION_NOTE", "kept"),
    ]));
    env.remove_shell_state();
    assert_eq!(get(&env, "BASH_FUNC_ls%%"), None);
    assert_eq!(get(&env, "BASH_FUNC_cd()"), None);
    assert_eq!(get(&env, "BASH_VERSION_NOTE").as_deref(), Some("kept"));
}

#[test]
fn withheld_values_never_reach_a_child_and_are_listed() {
    let env = EnvBuilder::from_vars(vars(&[("GITHUB_TOKEN", WITHHELD), ("HOME", "/h")]));
    assert_eq!(get(&env, "GITHUB_TOKEN"), None);
    assert_eq!(env.scrubbed(), ["GITHUB_TOKEN"]);
    assert!(is_credential("ANYTHING", WITHHELD, &ScrubRules::default()));
}
