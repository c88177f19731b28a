//! Adapters as data, end to end: the program alone picks the definition, the definition says
//! how to start the adapter and what to launch; no adapter-specific code in between.

use std::path::{Path, PathBuf};
use std::time::Duration;

use execkit_dap::adapters::{AdapterDef, builtin};
use execkit_dap::handshake::{self, HandshakeOutcome, HandshakeRequest, StartConfig};
use execkit_dap::launch::{self, AdapterSpawn, LaunchInput, Placeholders};
use execkit_dap::wire::SourceBreakpoint;
use execkit_dap::{Client, ClientOptions, detect, resolve};
use execkit_process::Supervisor;

use crate::common::*;

/// The first candidate whose command resolves, with its argv (program resolved).
fn choose(program: &Path, root: &Path, python: Option<&Path>) -> Option<(AdapterDef, Vec<String>)> {
    let (defs, _) = builtin();
    let path: Vec<PathBuf> = std::env::split_paths(&std::env::var_os("PATH")?).collect();
    for candidate in detect::candidates(&defs, program, root).ok()? {
        let def = candidate.def;
        let resolved = match (def.command[0][0].as_str(), python) {
            ("${python}", Some(python)) => Some((0, python.to_path_buf())),
            _ => resolve::resolve_command(def, &path),
        };
        if let Some((index, exe)) = resolved {
            let mut argv = def.command[index].clone();
            argv[0] = exe.display().to_string();
            argv.extend(def.args.iter().cloned());
            return Some((def.clone(), argv));
        }
    }
    None
}

/// Detect, start, launch with one breakpoint; the outcome of the handshake.
async fn launch_detected(
    sup: &Supervisor,
    program: &Path,
    python: Option<&Path>,
    breakpoint: (&Path, i64),
) -> Option<(AdapterDef, Client, HandshakeOutcome)> {
    let dir = program.parent().unwrap();
    let Some((def, argv)) = choose(program, dir, python) else {
        skip(&format!("no adapter for {} resolves", program.display()));
        return None;
    };
    let placeholders = Placeholders {
        python: python.map(|p| p.display().to_string()),
        program: Some(program.display().to_string()),
        cwd: dir.display().to_string(),
        env: std::env::vars().collect(),
        ..Default::default()
    };
    let spawn = AdapterSpawn {
        argv,
        cwd: dir.to_path_buf(),
        env: env(),
        placeholders: placeholders.clone(),
        deadline: deadline(30),
        session: "debug-1".into(),
    };
    let started = launch::spawn_adapter(sup, &def, &spawn).await.expect("start the adapter");
    let options = ClientOptions::new(&def.name);
    let (client, reverse) = Client::start(started.connection, Some(started.process), options);
    serve_reverse_requests(reverse);
    let input = LaunchInput { program: program.into(), cwd: dir.into(), ..Default::default() };
    let arguments = launch::launch_arguments(&def, &input, &placeholders).unwrap();
    let request = if def.launch_request == "attach" {
        HandshakeRequest::Attach
    } else {
        HandshakeRequest::Launch
    };
    let mut config = StartConfig::new(&def.name, request, arguments.into());
    config.advertise_run_in_terminal = def.quirks.advertise_run_in_terminal;
    let line = SourceBreakpoint { line: breakpoint.1, ..Default::default() };
    config.breakpoints.files = vec![(breakpoint.0.display().to_string(), vec![line])];
    config.stop_wait = Duration::from_secs(60);
    config.deadline = deadline(120);
    let outcome = handshake::start(&client, &config).await.expect("handshake");
    Some((def, client, outcome))
}

async fn assert_breakpoint_then_end(client: &Client, outcome: HandshakeOutcome, line: i64) {
    let (reason, thread) = stopped_thread(&outcome.first_stop.expect("a stop"));
    assert_eq!(reason, "breakpoint");
    let view = inspect(client, thread).await;
    assert_eq!(view.line, line);
    assert!(has_var(&view, "a", "1") && has_var(&view, "b", "2"), "{:?}", view.variables);
    shut_down(client).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_script_is_debugged_with_debugpy() {
    let Some(python) = find_program(&["python3"]) else { return };
    let sup = supervisor();
    let dir = tempfile::tempdir().unwrap();
    if !has_debugpy() {
        return skip("debugpy is not importable");
    }
    let program = write(dir.path(), "calc.py", CALC_PY);
    let launched = launch_detected(&sup, &program, Some(&python), (&program, 2)).await;
    let Some((def, client, outcome)) = launched else { return };
    assert_eq!(def.name, "debugpy");
    assert_breakpoint_then_end(&client, outcome, 2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c_binary_is_debugged_with_lldb_dap() {
    let sup = supervisor();
    let dir = tempfile::tempdir().unwrap();
    let Some(program) = c_program(dir.path()) else { return };
    let source = dir.path().join("calc.c");
    let Some((def, client, outcome)) = launch_detected(&sup, &program, None, (&source, 4)).await
    else {
        return;
    };
    assert_eq!(def.name, "lldb-dap");
    assert_breakpoint_then_end(&client, outcome, 4).await;
}

/// A `.go` source file: dlv over tcp-dial, `mode:"debug"` (delve builds it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn go_source_is_debugged_with_dlv_in_debug_mode() {
    if find_program(&["go"]).is_none() {
        return;
    }
    let sup = supervisor();
    let dir = tempfile::tempdir().unwrap();
    let source = write(dir.path(), "calc.go", CALC_GO);
    let Some((def, client, outcome)) = launch_detected(&sup, &source, None, (&source, 6)).await
    else {
        return;
    };
    assert_eq!(def.name, "dlv");
    assert_breakpoint_then_end(&client, outcome, 6).await;
}
