use super::*;

#[test]
fn every_builtin_parses() {
    let (defs, errors) = builtin();
    assert_eq!(errors, vec![]);
    let names: Vec<_> = defs.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(
        names,
        ["debugpy", "lldb-dap", "gdb", "codelldb", "dlv", "js-debug", "netcoredbg", "rdbg"]
    );
    for (file, _) in BUILTIN {
        assert!(defs.iter().any(|d| d.name == *file), "{file}.json names itself {file}");
    }
}

#[test]
fn builtins_carry_the_spec_fields() {
    let (defs, _) = builtin();
    let get = |name: &str| defs.iter().find(|d| d.name == name).unwrap().clone();
    let dlv = get("dlv");
    assert_eq!(dlv.transport, TransportKind::TcpDial);
    assert!(dlv.directory_program);
    let lldb = get("lldb-dap");
    assert_eq!(lldb.env_format, EnvFormat::List);
    assert!(lldb.quirks.entry_stop_as_exception && lldb.quirks.abort_on_disconnect_ok);
    assert_eq!(
        lldb.quirks.capability_aliases["supportTerminateDebuggee"],
        "supportsTerminateDebuggee"
    );
    assert!(!get("codelldb").quirks.advertise_run_in_terminal);
    assert!(get("debugpy").quirks.advertise_run_in_terminal);
    assert_eq!(
        get("netcoredbg").stop_on_entry,
        Some(StopOnEntry::Key { key: "stopAtEntry".into() })
    );
    let rdbg = get("rdbg");
    assert_eq!(rdbg.launch_request, "attach");
    assert_eq!(rdbg.transport, TransportKind::Unix);
    assert_eq!(
        rdbg.stop_on_entry,
        Some(StopOnEntry::ArgWhenFalse { arg_when_false: "--nonstop".into() })
    );
    assert_eq!(get("gdb").available.min_version.as_deref(), Some("14"));
    assert_eq!(get("js-debug").command.len(), 2);
}

fn minimal(extra: &str) -> String {
    format!(r#"{{"name": "x", "command": [["x-adapter"]], "install_hint": "get x"{extra}}}"#)
}

#[test]
fn unknown_placeholder_is_rejected() {
    let text = r#"{"name": "x", "command": [["x", "${nope}"]], "install_hint": "h"}"#;
    let err = parse_definition("x", text).unwrap_err();
    assert_eq!(err.to_string(), "adapter \"x\": unknown placeholder ${nope}");
    let text = minimal(r#", "launch_defaults": {"a": ["${input:x}"]}"#);
    assert!(parse_definition("x", &text).is_err());
}

#[test]
fn args_placeholder_must_stand_alone() {
    let text = r#"{"name": "x", "command": [["x", "--args=${args}"]], "install_hint": "h"}"#;
    let err = parse_definition("x", text).unwrap_err();
    assert_eq!(err.problem, "${args} must stand alone as one argument");
    let text =
        r#"{"name": "x", "command": [["x", "${args}", "${env:HOME}"]], "install_hint": "h"}"#;
    assert!(parse_definition("x", text).is_ok());
}

#[test]
fn bad_shapes_are_rejected_with_the_problem() {
    let cases = [
        (r#"{"name": "x", "command": [], "install_hint": "h"}"#, "non-empty argv"),
        (r#"{"name": "x", "install_hint": "h"}"#, "missing field `command`"),
        (minimal(r#", "transport": "pigeon""#).as_str(), "unknown variant `pigeon`"),
        (minimal(r#", "colour": "blue""#).as_str(), "unknown field `colour`"),
        (minimal(r#", "extensions": ["py"]"#).as_str(), "must be lower-case and start with a dot"),
        ("{not json", "key must be a string"),
    ]
    .map(|(t, p)| (t.to_string(), p));
    for (text, problem) in cases {
        let err = parse_definition("x", &text).unwrap_err();
        assert!(err.problem.contains(problem), "{text}: {err}");
    }
}
