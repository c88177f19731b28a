use serde_json::json;

use super::*;
use crate::adapters::builtin;

fn def(name: &str) -> AdapterDef {
    builtin().0.into_iter().find(|d| d.name == name).unwrap()
}

fn input(program: &str, stop: bool) -> LaunchInput {
    LaunchInput {
        program: program.into(),
        args: vec!["--n".into(), "3".into()],
        cwd: "/work".into(),
        env: vec![("A".into(), "1".into())],
        stop_on_entry: stop,
    }
}

#[test]
fn placeholders_fill_and_args_expand() {
    let p = Placeholders {
        program: Some("/w/app.rb".into()),
        args: vec!["a b".into(), "c".into()],
        socket: Some("/run/x.sock".into()),
        env: vec![("HOME".into(), "/root".into())],
        ..Default::default()
    };
    let rdbg = def("rdbg");
    let argv = p.fill_argv(&rdbg.command[0]).unwrap();
    assert_eq!(argv, ["rdbg", "--open", "--sock-path=/run/x.sock", "--", "/w/app.rb", "a b", "c"]);
    assert_eq!(p.fill("${env:HOME}/x").unwrap(), "/root/x");
    assert_eq!(p.fill("${env:NOPE}").unwrap_err(), "${env:NOPE} has no value");
    assert_eq!(p.fill("${port}").unwrap_err(), "${port} has no value");
}

#[test]
fn debugpy_arguments_take_defaults_then_the_call() {
    let p = Placeholders { python: Some("/venv/bin/python".into()), ..Default::default() };
    let args = launch_arguments(&def("debugpy"), &input("/w/calc.py", true), &p).unwrap();
    assert_eq!(args["python"], "/venv/bin/python");
    assert_eq!(args["justMyCode"], false);
    assert_eq!(args["program"], "/w/calc.py");
    assert_eq!(args["args"], json!(["--n", "3"]));
    assert_eq!(args["env"], json!({"A": "1"}));
    assert_eq!(args["stopOnEntry"], true);
}

#[test]
fn lldb_env_is_a_list_and_netcoredbg_uses_its_key() {
    let p = Placeholders::default();
    let args = launch_arguments(&def("lldb-dap"), &input("/w/calc", false), &p).unwrap();
    assert_eq!(args["env"], json!(["A=1"]));
    assert_eq!(args["stopOnEntry"], false);
    let args = launch_arguments(&def("netcoredbg"), &input("/w/app.dll", true), &p).unwrap();
    assert_eq!(args["stopAtEntry"], true);
    assert!(args.get("stopOnEntry").is_none());
}

#[test]
fn gdb_stop_placeholder_becomes_a_boolean() {
    let p = Placeholders { stop_on_entry: true, ..Default::default() };
    let args = launch_arguments(&def("gdb"), &input("/w/calc", true), &p).unwrap();
    assert_eq!(args["stopAtBeginningOfMainSubprogram"], true);
}

#[test]
fn dlv_mode_follows_the_program() {
    let dir = tempfile::tempdir().unwrap();
    let p = Placeholders::default();
    let dlv = def("dlv");
    let mode = |program: &Path| {
        let input = LaunchInput { program: program.to_path_buf(), ..Default::default() };
        launch_arguments(&dlv, &input, &p).unwrap()["mode"].clone()
    };
    assert_eq!(mode(&dir.path().join("main.go")), "debug");
    assert_eq!(mode(dir.path()), "debug");
    assert_eq!(mode(&dir.path().join("server")), "exec");
}
