use execkit_dap::handshake::{self, HandshakeRequest, StartConfig};
use execkit_dap::wire::{ModulesResponse, SourceBreakpoint};
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
