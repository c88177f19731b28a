//! End-to-end: the eval runner with the real python3, no mocks.
#![allow(clippy::disallowed_methods)]

mod common;

use common::*;
use pretty_assertions::assert_eq;
use serde_json::json;

#[tokio::test]
async fn state_persists_and_failure_stops_the_rest() {
    let kit = Kit::new();
    let r = kit
        .call(json!({"cells": [
            {"language": "py", "code": "x = 1"},
            {"language": "py", "code": "1/0", "title": "boom"},
            {"language": "py", "code": "print(x)"}
        ]}))
        .await;
    assert!(r.is_error);
    let text = r.text();
    assert!(text.starts_with("Cell 2 (boom) failed: ZeroDivisionError: division by zero. Cell 3 was not run.\n--- Cell 1/3 [py] ok in "), "{text}");
    assert!(text.contains("--- Cell 3/3 [py] not run ---"), "{text}");
    assert!(text.contains("Traceback (most recent call last):"), "{text}");
    assert!(!text.contains("runner.py"), "{text}");
    assert_eq!(cell(&r, 2)["status"], "skipped");
    assert_eq!(r.structured_content.as_ref().unwrap()["failed_cell"], 2);
    let r = kit.py("print(x)").await;
    assert_eq!(r.text(), "1");
    assert!(!r.is_error);
    let r = kit.py("x + 41").await;
    assert_eq!(r.text(), "42");
    let r = kit.py("").await;
    assert_eq!(r.text(), "(no output)");
    kit.runner.close().await;
}

#[tokio::test]
async fn validation_runs_before_anything() {
    let kit = Kit::new();
    for (args, want) in [
        (json!({"cells": []}), "cells: must contain at least 1 cell"),
        (
            json!({"session": "../x", "cells": [{"language": "py", "code": "1"}]}),
            "session: must match ^[A-Za-z0-9._-]{1,64}$",
        ),
        (
            json!({"cells": [{"language": "py", "code": "x".repeat(2 << 20)}]}),
            "cells[0].code: 2097152 bytes exceeds the 1048576-byte limit",
        ),
        (
            json!({"cells": [{"language": "py", "code": "1", "timeout": -5}]}),
            "cells[0].timeout: must be 0 or more seconds (got -5); 0 means the longest this tool allows",
        ),
        (
            json!({"cells": [{"language": "py", "code": "1", "timeout": "30"}]}),
            "cells[0].timeout: expected a number of seconds (got string \"30\")",
        ),
    ] {
        let r = kit.call(args).await;
        assert!(r.is_error);
        assert_eq!(r.text(), want);
    }
    let r = kit
        .call(json!({"cells": [{"language": "py", "code": "1"}, {"language": "rb", "code": "1"}]}))
        .await;
    assert!(r.is_error);
    assert!(r.text().contains("cells[1].language"), "{}", r.text());
    assert!(kit.runner.pool().live(execkit_protocol::eval::Language::Py).await.is_empty());
    let r = kit.call(json!({"cells": [{"language": "py", "code": "1", "timeout": 0}]})).await;
    assert_eq!(r.text(), "1\n[timeout 0 clamped to 600 s (0 means the longest allowed)]");
    assert_eq!(cell(&r, 0)["timeout_s"], 600);
    kit.runner.close().await;
}

#[tokio::test]
async fn closing_fd1_and_raw_writes_keep_the_protocol() {
    let kit = Kit::new();
    let r = kit.py("import os\nos.write(1, b'raw\\n')\nos.close(1); os.close(2); print('x')").await;
    assert!(!r.is_error, "{}", r.text());
    assert_eq!(r.text(), "raw\nx");
    let r = kit.py("print('next')").await;
    assert_eq!(r.text(), "next");
    let r = kit.py("import sys\nsys.stdout.buffer.write(b'\\xff\\xfeok\\n')").await;
    assert!(r.text().starts_with("\u{fffd}\u{fffd}ok"), "{}", r.text());
    let r = kit.py("import subprocess\nsubprocess.run(['echo', 'child'])\nprint('after')").await;
    assert!(r.text().starts_with("child\nafter"), "{}", r.text());
    kit.runner.close().await;
}

#[tokio::test]
async fn os_exit_crashes_then_fresh_kernel_is_announced() {
    let kit = Kit::new();
    let r = kit.py("x = 5\nimport os\nos._exit(3)").await;
    assert!(r.is_error);
    assert_eq!(cell(&r, 0)["status"], "crashed");
    assert!(
        r.text().starts_with("Cell 1 crashed: the Python kernel exited with code 3."),
        "{}",
        r.text()
    );
    assert!(r.text().contains("automatic restart 1 of 1"), "{}", r.text());
    let r = kit.py("print('alive')").await;
    assert!(!r.is_error, "{}", r.text());
    assert_eq!(
        r.text(),
        "[Python kernel restarted: the previous kernel crashed (exited with code 3); variables from earlier cells are lost]\nalive"
    );
    assert_eq!(cell(&r, 0)["kernel"]["state_lost"]["reason"], "crashed");
    // A second crash stops the key; reset recovers.
    let r = kit.py("import ctypes\nctypes.string_at(0)").await;
    assert_eq!(cell(&r, 0)["status"], "crashed");
    assert!(r.text().contains("killed by SIGSEGV"), "{}", r.text());
    assert!(r.text().contains("Fatal Python error"), "faulthandler lines: {}", r.text());
    let r = kit.py("1").await;
    assert!(r.is_error);
    assert_eq!(cell(&r, 0)["error"]["ename"], "KernelUnavailable");
    assert!(r.text().contains("died twice (last: killed by SIGSEGV)"), "{}", r.text());
    assert!(r.text().contains("\"reset\": true"), "{}", r.text());
    let r = kit.call(json!({"cells": [{"language": "py", "code": "2", "reset": true}]})).await;
    assert!(!r.is_error, "{}", r.text());
    assert_eq!(r.text(), "2");
    assert_eq!(cell(&r, 0)["execution_count"], 1);
    kit.runner.close().await;
}

#[tokio::test]
async fn sleep_is_interrupted_and_state_kept() {
    let kit = Kit::new();
    kit.py("keep = 7").await;
    let t = std::time::Instant::now();
    let r = kit.py_t("import time\ntime.sleep(100)", 1).await;
    assert!(t.elapsed() < std::time::Duration::from_millis(2500), "{:?}", t.elapsed());
    assert!(r.is_error);
    assert_eq!(cell(&r, 0)["status"], "timeout");
    assert!(
        r.text().starts_with("Cell 1 timed out after 1 s and was interrupted; variables are kept."),
        "{}",
        r.text()
    );
    assert!(r.text().contains("KeyboardInterrupt"), "{}", r.text());
    let r = kit.py("keep").await;
    assert_eq!(r.text(), "7");
    kit.runner.close().await;
}

#[tokio::test]
async fn ignored_sigint_is_killed_after_the_grace() {
    let kit = Kit::new();
    kit.py("keep = 7").await;
    let t = std::time::Instant::now();
    let r = kit
        .py_t(
            "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(100)",
            2,
        )
        .await;
    let took = t.elapsed();
    assert!(took < std::time::Duration::from_millis(8500), "{took:?}");
    assert!(took >= std::time::Duration::from_secs(6), "{took:?}");
    assert_eq!(cell(&r, 0)["status"], "timeout");
    assert_eq!(cell(&r, 0)["kernel"]["killed"], true);
    assert!(
        r.text().contains("ignored the interrupt for 5 s; the Python kernel was killed"),
        "{}",
        r.text()
    );
    let r = kit.py("print('fresh')").await;
    assert!(!r.is_error, "{}", r.text());
    assert_eq!(
        r.text(),
        "[Python kernel restarted: the previous kernel was killed after a timeout; variables from earlier cells are lost]\nfresh"
    );
    // A timeout kill does not count towards the restart policy.
    let r = kit.py("import os; os._exit(1)").await;
    assert!(r.text().contains("automatic restart 1 of 1"), "{}", r.text());
    kit.runner.close().await;
}

#[tokio::test]
async fn input_fails_fast_and_magics_are_syntax_aware() {
    let kit = Kit::new();
    let t = std::time::Instant::now();
    let r = kit.py("input('name? ')").await;
    assert!(t.elapsed() < std::time::Duration::from_secs(2));
    assert_eq!(cell(&r, 0)["error"]["ename"], "StdinNotAvailable");
    let r = kit.py("a, b = 10, 3\nx = \"\"\"\n%d items\n!not a shell\n\"\"\" % 3\ny = (a\n    % b)\nprint(repr(x), y)").await;
    assert_eq!(r.text(), "'\\n3 items\\n!not a shell\\n' 1");
    let r = kit.py("%cd /tmp\n%pwd").await;
    assert_eq!(r.text(), "/tmp\n'/tmp'");
    let r = kit.py("lines = !printf 'a\\nb'\nlines.n").await;
    assert_eq!(r.text(), "'a\\nb'");
    let r = kit.py("%nope").await;
    assert!(r.text().contains("UsageError: unknown magic %nope; available: %cd"), "{}", r.text());
    let r = kit.py("print(1)\n%%bash\necho x").await;
    assert!(
        r.text().contains("UsageError: %%bash must be the first line of the cell"),
        "{}",
        r.text()
    );
    let r = kit.py("%%bash\necho from-bash").await;
    assert_eq!(r.text(), "from-bash");
    let r = kit.py("x = 1\0").await;
    assert!(r.is_error);
    assert!(r.text().contains("null"), "{}", r.text());
    kit.runner.close().await;
}

#[tokio::test]
async fn top_level_await_displays_and_exit() {
    let kit = Kit::new();
    let r = kit.py("import asyncio\nawait asyncio.sleep(0.01)\n{'a': [1, 2]}").await;
    assert_eq!(r.text(), "{'a': [1, 2]}");
    assert_eq!(cell(&r, 0)["displays"][0], json!({"mime": "text/plain", "json": {"a": [1, 2]}}));
    let r = kit.py("1;").await;
    assert_eq!(r.text(), "(no output)");
    let r = kit.py("_").await;
    assert_eq!(r.text(), "{'a': [1, 2]}");
    let r = kit.py("import asyncio\nasync def f(): return 3\nasyncio.run(f())").await;
    assert_eq!(r.text(), "3");
    let r = kit.py("import sys; sys.exit(0)").await;
    assert_eq!(r.text(), "[sys.exit(0) ended the cell; the kernel keeps running]");
    let r = kit.py("import sys; sys.exit(3)").await;
    assert!(r.is_error);
    assert!(r.text().starts_with("Cell 1 failed: SystemExit: 3."), "{}", r.text());
    let r = kit.py("class M:\n    def _repr_markdown_(self): return '**hi**'\ndisplay(M())\nprint('after')").await;
    assert_eq!(r.text(), "**hi**\nafter");
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
    let r = kit.py(&format!("display({{'image/png': '{png}'}}, raw=True)")).await;
    assert_eq!(r.content.len(), 2);
    assert!(r.text().starts_with("[image 1: image/png 1x1, 70 B]"), "{}", r.text());
    let r = kit.py("display({'image/svg+xml': '<svg/>'}, raw=True)").await;
    assert!(
        r.text().starts_with("[display: image/svg+xml, 6 B saved as artifact://"),
        "{}",
        r.text()
    );
    kit.runner.close().await;
}

#[tokio::test]
async fn hundred_megabytes_are_windowed_and_saved() {
    let kit = Kit::new();
    let t = std::time::Instant::now();
    let r = kit.py("print('x' * 100_000_000)").await;
    let took = t.elapsed();
    assert!(!r.is_error, "{}", &r.text()[..200]);
    assert!(took < std::time::Duration::from_secs(15), "{took:?}");
    let text = r.text();
    assert!(text.len() <= 52 * 1024 + 512, "{}", text.len());
    assert!(text.contains("full output: artifact://"), "{}", &text[text.len() - 300..]);
    let trunc = &cell(&r, 0)["truncation"];
    assert_eq!(trunc["total_bytes"], 100_000_001);
    let uri = trunc["artifact"].as_str().unwrap().to_string();
    assert!(text.contains(&format!("full output: {uri}")), "{}", &text[text.len() - 300..]);
    // One artifact for the call (spec E23), the cell under its header (line 1), then all its bytes.
    let (id, query) = execkit_output::artifact::ArtifactId::parse(&uri).unwrap();
    assert_eq!(query.as_deref(), Some("lines=2-2"));
    let meta = kit.store.meta(&id).unwrap();
    let header = "--- Cell 1/1 [py] ok in ";
    assert!(meta.total_bytes > 100_000_001 + header.len() as u64, "{}", meta.total_bytes);
    assert_eq!(meta.total_lines, 2);
    assert_eq!(kit.store.list(100).len(), 1, "{:?}", kit.store.list(100));
    eprintln!("100 MB cell took {took:?}");
    kit.runner.close().await;
}

#[tokio::test]
async fn children_cannot_write_frames_and_die_with_the_kernel() {
    let kit = Kit::new();
    let r = kit
        .py("import os, subprocess, time\np = subprocess.Popen(['sleep', '1000'])\npid = os.fork()\nif pid == 0:\n    time.sleep(1000)\n    os._exit(0)\n(p.pid, pid)")
        .await;
    assert!(!r.is_error, "{}", r.text());
    let pids: Vec<u32> =
        serde_json::from_value(cell(&r, 0)["displays"][0]["json"].clone()).unwrap();
    let kernel_pid = cell(&r, 0)["kernel"]["pid"].as_u64().unwrap() as u32;
    assert!(pids.iter().all(|p| alive(*p)));
    let r = kit.py("print('still fine')").await;
    assert_eq!(r.text(), "still fine");
    kit.runner.close().await;
    for pid in pids.iter().copied().chain([kernel_pid]) {
        assert!(gone_within(pid, std::time::Duration::from_secs(3)).await, "pid {pid} survived");
    }
}

#[tokio::test]
async fn junk_and_oversized_lines_on_the_event_fd() {
    let kit = Kit::new();
    // The event pipe: write-only, held by two descriptors (the channel and its backup), and
    // not the capture pipe behind fds 1 and 2.
    let find = "import os, collections\nlinks = collections.defaultdict(list)\nfor f in os.listdir('/proc/self/fd'):\n    try:\n        links[os.readlink('/proc/self/fd/' + f)].append(int(f))\n    except OSError:\n        pass\nmine = {os.readlink('/proc/self/fd/1'), os.readlink('/proc/self/fd/2')}\nwronly = lambda fd: int(open('/proc/self/fdinfo/%d' % fd).read().split('flags:')[1].split()[0], 8) & 3 == 1\nevt = [fds[0] for link, fds in links.items() if link.startswith('pipe:') and link not in mine and len(fds) == 2 and wronly(fds[0])][0]\n";
    let r = kit.py(&format!("{find}os.write(evt, b'junk line\\n')\nos.write(evt, b'{{\"type\":\"mystery\"}}\\n')\nprint('ok')")).await;
    assert!(!r.is_error, "{}", r.text());
    assert_eq!(cell(&r, 0)["kernel"]["bad_frames"], 2);
    let r = kit.py(&format!("{find}import threading\nblob = b'x' * (20 * 1024 * 1024)\nthreading.Thread(target=os.write, args=(evt, blob)).start()\nimport time; time.sleep(5)")).await;
    assert_eq!(cell(&r, 0)["status"], "crashed", "{}", r.text());
    assert_eq!(cell(&r, 0)["kernel"]["state_lost"]["reason"], "protocol_error");
    let r = kit.py("print('back')").await;
    assert!(r.text().ends_with("back"), "{}", r.text());
    assert!(r.text().contains("broke the protocol"), "{}", r.text());
    kit.runner.close().await;
}

#[tokio::test]
async fn five_sessions_never_more_than_four_kernels() {
    let kit = Kit::new();
    let mut first_pid = 0;
    for i in 0..5 {
        let r = kit.call(json!({"session": format!("s{i}"), "cells": [{"language": "py", "code": format!("v = {i}")}]})).await;
        assert!(!r.is_error, "{}", r.text());
        if i == 0 {
            first_pid = cell(&r, 0)["kernel"]["pid"].as_u64().unwrap() as u32;
        }
        assert!(kit.runner.pool().live(execkit_protocol::eval::Language::Py).await.len() <= 4);
    }
    assert!(gone_within(first_pid, std::time::Duration::from_secs(3)).await);
    let r = kit
        .call(json!({"session": "s0", "cells": [{"language": "py", "code": "print('again')"}]}))
        .await;
    assert_eq!(
        r.text(),
        "[Python kernel restarted: it was stopped to make room (at most 4 live Python kernels); restored 1 name (v)]\nagain"
    );
    assert_eq!(cell(&r, 0)["kernel"]["state_lost"]["reason"], "evicted");
    let r = kit.call(json!({"session": "s4", "cells": [{"language": "py", "code": "v"}]})).await;
    assert_eq!(r.text(), "4");
    kit.runner.close().await;
}

#[tokio::test]
async fn idle_kernels_expire_and_say_so() {
    let kit = Kit::with(|c| c.idle_timeout = Some(std::time::Duration::from_secs(1)));
    let r = kit.py("1").await;
    assert_eq!(cell(&r, 0)["kernel"]["state_lost"], serde_json::Value::Null);
    let r = kit.py("v = 1").await;
    let pid = cell(&r, 0)["kernel"]["pid"].as_u64().unwrap() as u32;
    assert!(gone_within(pid, std::time::Duration::from_secs(5)).await);
    let r = kit.py("print('woke')").await;
    assert_eq!(cell(&r, 0)["kernel"]["state_lost"]["reason"], "idle_timeout");
    assert_eq!(
        r.text(),
        "[Python kernel restarted: it had been idle for 1 s; restored 1 name (v)]\nwoke"
    );
    kit.runner.close().await;
}

#[tokio::test]
async fn tool_calls_reach_the_dispatcher() {
    let kit = Kit::with_callback(|_| {}, Some(echo_callback()));
    let r =
        kit.py("r = tool.bash({'command': 'ls'})\nprint(r.text, r.is_error, r.structured)").await;
    assert!(!r.is_error, "{}", r.text());
    assert_eq!(r.text(), "bash says {\"command\":\"ls\"} False {'ok': True}");
    assert_eq!(cell(&r, 0)["tool_calls"][0]["name"], "bash");
    let r = kit.py("try:\n    tool.eval({})\nexcept ToolError as e:\n    print(e)").await;
    assert_eq!(r.text(), "tool.eval cannot be called from an eval cell");
    let r = kit.py("try:\n    tool.nope()\nexcept ToolError as e:\n    print(e)").await;
    assert_eq!(r.text(), "unknown tool \"nope\"; callable: bash, debug, job, ssh");
    let r = kit
        .py("try:\n    tool.bash(fail=1)\nexcept ToolError as e:\n    print(e, e.result.is_error)")
        .await;
    assert_eq!(r.text(), "tool.bash failed: bash failed on purpose True");
    let r = kit.py("sorted(dir(tool))").await;
    assert!(r.text().contains("'bash'"), "{}", r.text());
    // A cell timeout cancels an in-flight call and the cell keeps its state.
    let t = std::time::Instant::now();
    let r = kit.py_t("tool.bash(sleep_ms=60000)", 1).await;
    assert!(t.elapsed() < std::time::Duration::from_secs(3));
    assert_eq!(cell(&r, 0)["status"], "timeout", "{}", r.text());
    kit.runner.close().await;
}

#[tokio::test]
async fn cancellation_interrupts_the_cell() {
    let kit = Kit::new();
    let cancel = execkit_process::CancellationToken::new();
    let c2 = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        c2.cancel();
    });
    let r = kit
        .call_cancel(json!({"cells": [{"language": "py", "code": "import time\ntime.sleep(60)"}, {"language": "py", "code": "1"}]}), cancel)
        .await;
    assert!(r.is_error);
    assert_eq!(cell(&r, 0)["status"], "cancelled");
    assert_eq!(cell(&r, 1)["status"], "skipped");
    assert!(r.text().starts_with("Cell 1 was cancelled. Cell 2 was not run."), "{}", r.text());
    kit.runner.close().await;
}

#[tokio::test]
async fn many_globals_stay_fast() {
    let kit = Kit::new();
    let r = kit.py("for i in range(10**6): globals()[f'v{i}'] = i").await;
    assert!(!r.is_error);
    let t = std::time::Instant::now();
    let r = kit.py("1").await;
    assert_eq!(r.text(), "1");
    assert!(t.elapsed() < std::time::Duration::from_millis(200), "{:?}", t.elapsed());
    let r = kit.py("%who").await;
    assert!(r.text().len() < 60 * 1024);
    kit.runner.close().await;
}

#[tokio::test]
async fn interpreter_is_real_and_env_is_filtered() {
    let kit = Kit::new();
    let r = kit.py("import os, sys\nprint(sys.executable)\nprint(os.environ.get('MPLBACKEND'), os.environ.get('EXECKIT_SESSION'), 'CARGO_HOME' in os.environ)").await;
    let text = r.text();
    let exe = text.lines().next().unwrap();
    assert!(!exe.contains("/shims/"), "{exe}");
    assert_eq!(text.lines().nth(1).unwrap(), "Agg default False");
    let doctor = kit.runner.doctor().join("\n");
    assert!(doctor.contains("python: "), "{doctor}");
    kit.runner.close().await;
}

#[tokio::test]
async fn parked_kernels_restore_their_state() {
    let kit = Kit::with(|c| c.idle_timeout = Some(std::time::Duration::from_secs(1)));
    let r = kit
        .py("import json as j\nclass P:\n    def __init__(self, v): self.v = v\ndef twice(x): return 2 * x\ndata = {'a': 1}\ninst = P(3)\ngen = (i for i in range(3))")
        .await;
    let pid = cell(&r, 0)["kernel"]["pid"].as_u64().unwrap() as u32;
    assert!(gone_within(pid, std::time::Duration::from_secs(5)).await);
    let r = kit.py("print(j.dumps(data), inst.v, twice(4))").await;
    assert!(!r.is_error, "{}", r.text());
    assert_eq!(
        r.text(),
        "[Python kernel restarted: it had been idle for 1 s; restored 5 names (j, P, twice, data, inst); not restored: gen (cannot be pickled)]\n{\"a\": 1} 3 8"
    );
    let restored = &cell(&r, 0)["kernel"]["restored"];
    assert_eq!(restored["not_restored"][0]["name"], "gen");
    kit.runner.close().await;
}

#[tokio::test]
async fn without_snapshots_the_loss_is_announced() {
    let kit = Kit::with(|c| {
        c.idle_timeout = Some(std::time::Duration::from_secs(1));
        c.snapshot = false;
    });
    let r = kit.py("v = 1").await;
    let pid = cell(&r, 0)["kernel"]["pid"].as_u64().unwrap() as u32;
    assert!(gone_within(pid, std::time::Duration::from_secs(5)).await);
    let r = kit.py("print('woke')").await;
    assert_eq!(
        r.text(),
        "[Python kernel restarted: it had been idle for 1 s; variables from earlier cells are lost]\nwoke"
    );
    kit.runner.close().await;
}

#[tokio::test]
async fn cpu_time_tells_busy_from_sleeping() {
    let kit = Kit::new();
    let r = kit.py("import time\nt = time.time()\nwhile time.time() - t < 0.4: pass").await;
    let busy = cell(&r, 0)["cpu_ms"].as_u64().unwrap();
    let r = kit.py("import time\ntime.sleep(0.4)").await;
    let idle = cell(&r, 0)["cpu_ms"].as_u64().unwrap();
    assert!(busy >= 200, "{busy}");
    assert!(idle < 100, "{idle}");
    let r = kit.py_t("import time\ntime.sleep(5)", 1).await;
    assert!(r.text().contains("[cell timed out after 1 s (CPU 0.0 s); interrupted with KeyboardInterrupt; variables are kept]"), "{}", r.text());
    assert!(!r.text().contains("runner.py"), "{}", r.text());
    kit.runner.close().await;
}

#[tokio::test]
async fn ansi_and_carriage_returns_are_cleaned() {
    let kit = Kit::new();
    let r = kit.py("print('\\x1b[31mred\\x1b[0m')\nprint('10%\\r50%\\r100%')").await;
    let text = r.text();
    // A progress bar collapses to its last frame; the overwritten frames stay in an artifact.
    assert!(
        text.starts_with(
            "red\n100%\n[8 bytes overwritten by carriage returns; full output: artifact://"
        ),
        "{text}"
    );
    kit.runner.close().await;
}

#[tokio::test]
async fn all_busy_kernels_refuse_a_new_session() {
    let kit = std::sync::Arc::new(Kit::with(|c| c.max_kernels = 1));
    let k2 = kit.clone();
    let slow = tokio::spawn(async move {
        k2.call(json!({"session": "a", "cells": [{"language": "py", "code": "import time\ntime.sleep(1.5)"}]})).await
    });
    tokio::time::sleep(std::time::Duration::from_millis(700)).await;
    let r = kit.call(json!({"session": "b", "cells": [{"language": "py", "code": "1"}]})).await;
    assert!(r.is_error);
    assert!(
        r.text().contains("all 1 Python kernels are busy; retry when a cell finishes or raise EXECKIT_EVAL_MAX_KERNELS"),
        "{}",
        r.text()
    );
    assert!(!slow.await.unwrap().is_error);
    kit.runner.close().await;
}

#[tokio::test]
async fn per_call_mode_keeps_state_within_a_call_only() {
    let kit = Kit::with(|c| c.mode = execkit_eval::KernelMode::PerCall);
    let r = kit
        .call(json!({"cells": [{"language": "py", "code": "x = 1"}, {"language": "py", "code": "x + 1"}]}))
        .await;
    assert!(r.text().ends_with("2"), "{}", r.text());
    let r = kit.py("x").await;
    assert!(r.is_error);
    assert!(r.text().contains("NameError"), "{}", r.text());
    assert!(kit.runner.pool().live(execkit_protocol::eval::Language::Py).await.is_empty());
    kit.runner.close().await;
}
