use execkit_dap::handshake::{self, HandshakeRequest, StartConfig};
use execkit_dap::wire::{KnownReverseRequest, ModulesResponse, ReverseRequest, SourceBreakpoint};
use execkit_dap::{Client, ClientOptions, transport};
use std::time::Duration;

use serde_json::json;

use crate::common::*;

const CALC: &str = "\
def add(a, b):
    c = a + b
    return c


def main():
    total = add(1, 2)
    print(\"total\", total)


main()
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debugpy_full_session() {
    let Some(python) = find_program(&["python3"]) else { return };
    let sup = supervisor();
    let dir = tempfile::tempdir().unwrap();
    let program = write(dir.path(), "calc.py", CALC);
    let (status, out) =
        run_tool(&sup, &python, &["-c", "import debugpy; print(debugpy.__version__)"], dir.path())
            .await;
    if !status.success() {
        eprintln!("SKIP: debugpy is not importable: {out}");
        assert!(std::env::var_os("EXECKIT_DAP_REQUIRE_ADAPTERS").is_none(), "{out}");
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

const PARENT: &str = "\
import subprocess
import sys

subprocess.run([sys.executable, \"child.py\"], check=True)
print(\"parent done\")
";

const CHILD: &str = "\
def work(n):
    doubled = n * 2
    return doubled


print(\"child\", work(21))
";

/// A subprocess of the debuggee arrives as a `startDebugging` reverse request whose
/// configuration says where to connect; the child session is opened there and stops at its
/// own breakpoint.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debugpy_subprocess_arrives_as_start_debugging() {
    let Some(python) = find_program(&["python3"]) else { return };
    let sup = supervisor();
    let dir = tempfile::tempdir().unwrap();
    let (status, _) = run_tool(&sup, &python, &["-c", "import debugpy"], dir.path()).await;
    if !status.success() {
        eprintln!("SKIP: debugpy is not importable");
        return;
    }
    let parent = write(dir.path(), "parent.py", PARENT);
    let child_py = write(dir.path(), "child.py", CHILD);
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
    let ReverseRequest::Known(KnownReverseRequest::StartDebugging(start)) = incoming.request else {
        panic!("expected startDebugging, got {:?}", incoming.request);
    };
    incoming.responder.succeed(None);
    assert_eq!(start.request, "attach");
    let connect = &start.configuration["connect"];
    let addr = format!("{}:{}", connect["host"].as_str().unwrap(), connect["port"]);
    let conn = transport::connect_tcp("debugpy", addr.parse().unwrap(), deadline(20))
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
