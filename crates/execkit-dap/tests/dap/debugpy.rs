use execkit_dap::handshake::{self, HandshakeRequest, StartConfig};
use execkit_dap::wire::{KnownReverseRequest, ModulesResponse, SourceBreakpoint};
use execkit_dap::{Client, ClientOptions, transport};
use std::time::Duration;

use serde_json::json;

use crate::common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debugpy_full_session() {
    let Some(python) = find_program(&["python3"]) else { return };
    let sup = supervisor();
    let dir = tempfile::tempdir().unwrap();
    let program = write(dir.path(), "calc.py", CALC_PY);
    let (status, out) =
        run_tool(&sup, &python, &["-c", "import debugpy; print(debugpy.__version__)"], dir.path())
            .await;
    if !status.success() {
        skip(&format!("debugpy is not importable: {out}"));
        return;
    }
    let cmd = command("debugpy", &python, &["-m", "debugpy.adapter"], dir.path());
    let (conn, process) = transport::spawn_stdio(&sup, &cmd).await.expect("start debugpy");
    let (client, reverse) = Client::start(conn, Some(process), ClientOptions::new("debugpy"));
    serve_reverse_requests(reverse);

    let args = json!({"program": program, "cwd": dir.path(), "console": "internalConsole",
        "justMyCode": false, "stopOnEntry": false});
    let mut config = StartConfig::new("debugpy", HandshakeRequest::Launch, args);
    config.breakpoints.files = vec![(
        program.display().to_string(),
        vec![SourceBreakpoint { line: 2, ..Default::default() }],
    )];
    config.stop_wait = Duration::from_secs(30);
    config.deadline = deadline(60);
    let outcome = handshake::start(&client, &config).await.expect("handshake");

    // debugpy's order: `initialized` after the launch request, the launch answer only after
    // configurationDone was sent.
    let order = &outcome.order;
    assert!(order.initialized.unwrap() > order.launch_sent_after, "{order:?}");
    assert!(order.launch_response > order.configuration_done_sent_after.unwrap(), "{order:?}");
    assert!(outcome.breakpoints[0].1[0].verified, "{:?}", outcome.breakpoints);

    let stop = outcome.first_stop.expect("stopped at the breakpoint");
    let (reason, thread) = stopped_thread(&stop);
    assert_eq!(reason, "breakpoint");
    let view = inspect(&client, thread).await;
    assert_eq!((view.function.as_str(), view.line), ("add", 2));
    assert!(has_var(&view, "a", "1") && has_var(&view, "b", "2"), "{:?}", view.variables);
    assert_eq!(evaluate(&client, view.frame_id, "a*10").await, "10");

    // debugpy sends module ids as numbers; they must parse.
    let modules: ModulesResponse =
        client.call("modules", Some(json!({})), deadline(20)).await.expect("modules");
    assert!(!modules.modules.is_empty());

    assert_eq!(step_over(&client, thread).await, 3);
    let (code, output) = continue_to_exit(&client, thread).await;
    assert_eq!(code, Some(0));
    assert!(output.contains("total 3"), "{output}");
    shut_down(&client).await;
    assert_eq!(client.stats().resyncs, 0);
}

/// A subprocess of the debuggee arrives as a `startDebugging` reverse request whose
/// configuration says where to connect; the child session is opened there and stops at its
/// own breakpoint.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debugpy_subprocess_arrives_as_start_debugging() {
    let Some(python) = find_program(&["python3"]) else { return };
    let sup = supervisor();
    let dir = tempfile::tempdir().unwrap();
    if !has_debugpy() {
        return skip("debugpy is not importable");
    }
    let parent = write(dir.path(), "parent.py", PARENT_PY);
    let child_py = write(dir.path(), "child.py", CHILD_PY);
    let cmd = command("debugpy", &python, &["-m", "debugpy.adapter"], dir.path());
    let (conn, process) = transport::spawn_stdio(&sup, &cmd).await.expect("start debugpy");
    let (client, mut reverse) = Client::start(conn, Some(process), ClientOptions::new("debugpy"));

    let args = json!({"program": parent, "cwd": dir.path(), "console": "internalConsole",
        "justMyCode": false, "subProcess": true});
    let mut config = StartConfig::new("debugpy", HandshakeRequest::Launch, args);
    config.stop_wait = Duration::ZERO;
    config.deadline = deadline(60);
    handshake::start(&client, &config).await.expect("root handshake");

    let incoming = tokio::time::timeout(Duration::from_secs(60), reverse.recv())
        .await
        .expect("startDebugging within 60 s")
        .expect("reverse request");
    let KnownReverseRequest::StartDebugging(start) = incoming.request else {
        panic!("expected startDebugging, got {:?}", incoming.request);
    };
    incoming.responder.succeed(None);
    assert_eq!(start.request, "attach");
    let connect = &start.configuration["connect"];
    let addr = format!("{}:{}", connect["host"].as_str().unwrap(), connect["port"]);
    let conn = transport::connect_tcp(
        &sup.sandbox().sockets(),
        "debugpy",
        addr.parse().unwrap(),
        deadline(20),
    )
    .await
    .expect("connect to the child");
    let (child, child_reverse) = Client::start(conn, None, ClientOptions::new("debugpy"));
    serve_reverse_requests(child_reverse);
    let mut child_config = StartConfig::new(
        "debugpy",
        HandshakeRequest::Attach,
        serde_json::Value::Object(start.configuration.clone()),
    );
    child_config.breakpoints.files = vec![(
        child_py.display().to_string(),
        vec![SourceBreakpoint { line: 2, ..Default::default() }],
    )];
    child_config.stop_wait = Duration::from_secs(30);
    child_config.deadline = deadline(60);
    let outcome = handshake::start(&child, &child_config).await.expect("child handshake");
    let stop = outcome.first_stop.expect("the child stopped at its breakpoint");
    let (reason, thread) = stopped_thread(&stop);
    assert_eq!(reason, "breakpoint");
    let view = inspect(&child, thread).await;
    assert_eq!((view.function.as_str(), view.line), ("work", 2));
    assert!(has_var(&view, "n", "21"), "{:?}", view.variables);
    child.request("continue", Some(json!({"threadId": thread})), deadline(20)).await.unwrap();
    let _ = child.wait_event(|r| r.name() == "terminated", deadline(30)).await;
    child.close().await;
    let _ = client.wait_event(|r| r.name() == "terminated", deadline(30)).await;
    assert!(output_text(&client).contains("parent done"));
    shut_down(&client).await;
}

/// With `console:"integratedTerminal"` debugpy asks for `runInTerminal` before it sends
/// `initialized`; serving it from another task while the handshake runs lets the launch
/// complete, and the debuggee's prints come out of the process we started.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debugpy_run_in_terminal_is_served_during_the_handshake() {
    let Some(python) = find_program(&["python3"]) else { return };
    let sup = std::sync::Arc::new(supervisor());
    let dir = tempfile::tempdir().unwrap();
    if !has_debugpy() {
        return skip("debugpy is not importable");
    }
    let program = write(dir.path(), "calc.py", CALC_PY);
    let cmd = command("debugpy", &python, &["-m", "debugpy.adapter"], dir.path());
    let (conn, process) = transport::spawn_stdio(&sup, &cmd).await.expect("start debugpy");
    let (client, mut reverse) = Client::start(conn, Some(process), ClientOptions::new("debugpy"));
    let (output_tx, output_rx) = tokio::sync::oneshot::channel();
    let served = tokio::spawn({
        let sup = std::sync::Arc::clone(&sup);
        async move {
            let incoming = reverse.recv().await.expect("a reverse request");
            let arrival = incoming.arrival;
            let KnownReverseRequest::RunInTerminal(args) = incoming.request else {
                panic!("expected runInTerminal, got {:?}", incoming.request);
            };
            let mut child = spawn_terminal_command(&sup, &args).await;
            incoming.responder.succeed(Some(json!({"processId": child.pid()})));
            let mut pipe = child.take_output().unwrap();
            tokio::spawn(async move {
                let mut text = Vec::new();
                let mut buf = [0u8; 4096];
                while let Ok(n @ 1..) = pipe.read(&mut buf).await {
                    text.extend_from_slice(&buf[..n]);
                }
                let _ = output_tx.send(String::from_utf8_lossy(&text).into_owned());
            });
            arrival
        }
    });
    let args = json!({"program": program, "cwd": dir.path(), "console": "integratedTerminal",
        "justMyCode": false});
    let mut config = StartConfig::new("debugpy", HandshakeRequest::Launch, args);
    config.breakpoints.files = vec![(
        program.display().to_string(),
        vec![SourceBreakpoint { line: 2, ..Default::default() }],
    )];
    config.stop_wait = Duration::from_secs(30);
    config.deadline = deadline(60);
    let outcome = handshake::start(&client, &config).await.expect("handshake");
    let reverse_arrival = served.await.unwrap();
    assert!(reverse_arrival < outcome.order.initialized.unwrap(), "{:?}", outcome.order);
    let (_, thread) = stopped_thread(&outcome.first_stop.expect("breakpoint stop"));
    client.request("continue", Some(json!({"threadId": thread})), deadline(20)).await.unwrap();
    let output = tokio::time::timeout(Duration::from_secs(30), output_rx).await.unwrap().unwrap();
    assert!(output.contains("total 3"), "{output}");
    shut_down(&client).await;
}

async fn spawn_terminal_command(
    sup: &execkit_process::Supervisor,
    args: &execkit_dap::wire::RunInTerminalArguments,
) -> execkit_process::Child {
    let mut env = execkit_process::env::EnvBuilder::inherited();
    env.harden();
    for (name, value) in args.env.iter().flatten() {
        match value.as_str() {
            Some(value) => env.set(name, value),
            None => env.remove(name),
        }
    }
    let spec = execkit_process::SpawnSpec {
        program: args.args[0].clone().into(),
        args: args.args[1..].iter().map(Into::into).collect(),
        cwd: args.cwd.clone().into(),
        env: env.into_vars(),
        ..Default::default()
    };
    sup.spawn(spec).await.expect("start the runInTerminal command")
}
