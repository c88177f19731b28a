use pretty_assertions::assert_eq;

use super::*;

fn w(wrapper: Wrapper, cwd: Option<&str>) -> Result<String, SshError> {
    wrap(wrapper, "make test", cwd, "web", "tcsh")
}

#[test]
fn posix_wrapper_quotes_the_directory_on_its_own_guard_line() {
    assert_eq!(
        w(Wrapper::Shell(Shell::Sh), Some("/tmp/it's $(reboot)")).unwrap(),
        "echo __EXECKIT_PID__=$$ >&2\ncd -- '/tmp/it'\\''s $(reboot)' || exit 1\nmake test"
    );
    assert_eq!(
        w(Wrapper::Shell(Shell::Bash), None).unwrap(),
        "echo __EXECKIT_PID__=$$ >&2\nmake test"
    );
}

#[test]
fn fish_powershell_and_cmd_wrappers() {
    assert_eq!(
        w(Wrapper::Shell(Shell::Fish), Some(r"/a\b'c")).unwrap(),
        "echo __EXECKIT_PID__=$fish_pid >&2\ncd '/a\\\\b\\'c'; or exit 1\nmake test"
    );
    assert_eq!(
        w(Wrapper::Shell(Shell::PowerShell), Some("C:\\it's")).unwrap(),
        "Set-Location -LiteralPath 'C:\\it''s' -ErrorAction Stop; make test"
    );
    assert_eq!(
        w(Wrapper::Shell(Shell::Cmd), Some("C:\\src")).unwrap(),
        "cd /d \"C:\\src\" && make test"
    );
    assert_eq!(
        w(Wrapper::Shell(Shell::Cmd), Some("C:\\100%")).unwrap_err().to_string(),
        "cwd contains characters cmd.exe cannot quote: C:\\100%"
    );
}

#[test]
fn compat_bash_is_base64_of_the_sh_wrapper() {
    let out = w(Wrapper::CompatBash, Some("/c/src")).unwrap();
    let b64 = base64::engine::general_purpose::STANDARD
        .encode("echo __EXECKIT_PID__=$$ >&2\ncd -- '/c/src' || exit 1\nmake test");
    assert_eq!(out, format!("bash -c \"source <(base64 -d <<<{b64})\""));
    assert!(!out[9..out.len() - 1].contains(['"', '%', '\'', '&', '|']));
}

#[test]
fn compat_bash_with_a_windows_cwd_and_its_kill() {
    let out = w(Wrapper::CompatBash, Some(r"C:\Users\it's")).unwrap();
    let b64 =
        out.strip_prefix("bash -c \"source <(base64 -d <<<").unwrap().strip_suffix(")\"").unwrap();
    let script = base64::engine::general_purpose::STANDARD.decode(b64).unwrap();
    assert_eq!(
        String::from_utf8(script).unwrap(),
        "echo __EXECKIT_PID__=$$ >&2\ncd -- 'C:\\Users\\it'\\''s' || exit 1\nmake test"
    );
    let kill = kill_for(Wrapper::CompatBash, 77);
    let b64 =
        kill.strip_prefix("bash -c \"source <(base64 -d <<<").unwrap().strip_suffix(")\"").unwrap();
    let script = base64::engine::general_purpose::STANDARD.decode(b64).unwrap();
    assert_eq!(String::from_utf8(script).unwrap(), kill_command(77));
    assert_eq!(kill_for(Wrapper::Shell(Shell::Sh), 77), kill_command(77));
}

#[test]
fn unknown_shells_run_unchanged_and_refuse_cwd() {
    assert_eq!(w(Wrapper::Unknown, None).unwrap(), "make test");
    assert_eq!(
        w(Wrapper::Unknown, Some("/x")).unwrap_err().to_string(),
        "cwd is not supported on web: its login shell (tcsh) is not one execkit can wrap"
    );
}

#[test]
fn pid_markers() {
    assert_eq!(parse_pid_marker(b"__EXECKIT_PID__=4242"), Some(4242));
    assert_eq!(parse_pid_marker(b"__EXECKIT_PID__=4242\r"), Some(4242));
    assert_eq!(parse_pid_marker(b"__EXECKIT_PID__=x"), None);
    assert_eq!(parse_pid_marker(b"hello"), None);
}
