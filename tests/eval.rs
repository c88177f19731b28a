//! Integration tests: eval, with the real python3 (no mocks), driven through
//! `execkit_eval::EvalRunner` (the runner the dispatcher wires as the `eval` tool).
//!
//! Tests needing matplotlib, pandas or PIL print `SKIPPED <test>: python module <m> not
//! installed` to stderr (uncaptured, so it shows without `--nocapture`) and return, unless
//! `EXECKIT_TEST_STRICT=1`, where the missing module fails the test.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use execkit_eval::{EvalConfig, EvalDeps, EvalRunner};
use execkit_output::artifact::{ArtifactStore, StoreLimits};
use execkit_output::clamp::Limits;
use execkit_process::{CancellationToken, Supervisor, SupervisorConfig};
use execkit_protocol::eval::Language;
use execkit_protocol::{Content, Progress, ToolResult, parse_params};
use execkit_tool::{CallContext, Lookup, Notes};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

struct Kit {
    runner: EvalRunner,
    dir: tempfile::TempDir,
}

/// The test process's environment, as the binary saves it at start.
#[allow(clippy::disallowed_methods)] // tests start from the real environment on purpose
fn process_lookup() -> Lookup {
    Lookup::from_vars(std::env::vars_os())
}

fn kit_with(edit: impl FnOnce(&mut EvalConfig)) -> Kit {
    kit_with_lookup(process_lookup(), edit)
}

fn kit_with_lookup(lookup: Lookup, edit: impl FnOnce(&mut EvalConfig)) -> Kit {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("work")).unwrap();
    let supervisor = Supervisor::start(SupervisorConfig::default()).unwrap();
    let store = ArtifactStore::open(&dir.path().join("artifacts"), StoreLimits::default());
    let mut cfg = EvalConfig::from_lookup(&lookup, &mut Notes::default()).unwrap();
    cfg.prewarm = false;
    cfg.cache_dir = dir.path().join("cache");
    edit(&mut cfg);
    let deps = EvalDeps {
        supervisor,
        artifacts: store.map_err(|e| e.to_string()),
        limits: Limits::default(),
        lookup,
        cwd: dir.path().join("work"),
        tools: vec!["bash".into(), "debug".into(), "job".into(), "ssh".into()],
        tool_callback: None,
    };
    Kit { runner: EvalRunner::new(cfg, deps), dir }
}

impl Kit {
    async fn call(&self, args: Value) -> ToolResult {
        match parse_params(args) {
            Ok(p) => self.runner.call(p, &CallContext::default()).await,
            Err(e) => ToolResult::error(e.to_string()),
        }
    }

    async fn py(&self, code: &str) -> ToolResult {
        self.call(json!({"language": "py", "code": code})).await
    }
}

fn cell(r: &ToolResult, i: usize) -> Value {
    r.structured_content.as_ref().unwrap()["cells"][i].clone()
}

/// True when `module` imports in the interpreter the kernel uses; otherwise prints the skip
/// notice (or fails under EXECKIT_TEST_STRICT=1). The notice is written to fd 2 directly: the
/// test harness captures `eprintln!` output of passing tests, and a skip must stay visible.
async fn have_module(kit: &Kit, test: &str, module: &str) -> bool {
    let r = kit
        .py(&format!(
            "import importlib.util\nprint(importlib.util.find_spec('{module}') is not None)"
        ))
        .await;
    if r.text() == "True" {
        return true;
    }
    assert!(
        std::env::var("EXECKIT_TEST_STRICT").as_deref() != Ok("1"),
        "{test}: python module {module} not installed (EXECKIT_TEST_STRICT=1)"
    );
    let notice = format!("SKIPPED {test}: python module {module} not installed\n");
    let _ = std::io::Write::write_all(&mut std::io::stderr(), notice.as_bytes());
    false
}

#[tokio::test]
async fn eval_shorthand_equals_one_cell_and_headers() {
    let kit = kit_with(|_| {});
    let a = kit.py("21 * 2").await;
    let b = kit.call(json!({"cells": [{"language": "python", "code": "21 * 2"}]})).await;
    assert_eq!(a.text(), "42");
    assert_eq!(b.text(), "42");
    let r = kit
        .call(json!({"cells": [
            {"language": "py", "code": "import math", "title": "imports"},
            {"language": "py", "code": "print(math.pi)", "title": "a\nlong title ".repeat(10)},
        ]}))
        .await;
    let text = r.text();
    assert!(text.starts_with("--- Cell 1/2 (imports) [py] ok in "), "{text}");
    assert!(text.contains("(no output)"), "{text}");
    assert!(text.contains("--- Cell 2/2 (a long title a long title"), "{text}");
    assert!(text.contains("…) [py] ok in "), "{text}");
    let s = r.structured_content.unwrap();
    assert_eq!(s["session"], "default");
    assert_eq!(s["failed_cell"], Value::Null);
    assert_eq!(s["cells"][1]["execution_count"], 4);
    kit.runner.close().await;
}

#[tokio::test]
async fn eval_progress_streams_while_a_cell_runs() {
    let kit = kit_with(|_| {});
    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = seen.clone();
    let progress: Arc<dyn Fn(Progress) + Send + Sync> =
        Arc::new(move |p| sink.lock().unwrap().push(p));
    let p = parse_params(json!({"cells": [{"language": "py", "title": "tick",
        "code": "import time\nfor i in range(5):\n    print('step', i, flush=True)\n    time.sleep(0.1)"}]}))
    .unwrap();
    let ctx = CallContext { progress: Some(progress), cancel: CancellationToken::new() };
    let r = kit.runner.call(p, &ctx).await;
    assert!(!r.is_error);
    let (count, last) = {
        let seen = seen.lock().unwrap();
        (seen.len(), seen.last().cloned().unwrap())
    };
    assert!(count >= 2, "{count}");
    assert!(last.message.starts_with("Cell 1/1 (tick) [py] running "), "{}", last.message);
    assert!(last.tail.contains("step"), "{}", last.tail);
    kit.runner.close().await;
}

#[tokio::test]
async fn eval_two_calls_on_one_session_run_in_turn() {
    let kit = Arc::new(kit_with(|_| {}));
    let (a, b) = (kit.clone(), kit.clone());
    let t = Instant::now();
    let first = tokio::spawn(async move { a.py("import time\ntime.sleep(0.5)\nx = 1").await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let second = tokio::spawn(async move { b.py("x + 1").await });
    let (first, second) = (first.await.unwrap(), second.await.unwrap());
    assert!(!first.is_error);
    assert_eq!(second.text(), "2");
    assert!(t.elapsed() >= Duration::from_millis(500));
    kit.runner.close().await;
}

#[tokio::test]
async fn eval_deleted_cwd_is_reported() {
    let kit = kit_with(|_| {});
    assert!(!kit.py("1").await.is_error);
    let work = kit.dir.path().join("work");
    std::fs::remove_dir_all(&work).unwrap();
    let r = kit.py("1").await;
    assert!(r.is_error);
    assert!(r.text().starts_with("working directory "), "{}", r.text());
    assert!(r.text().ends_with(" no longer exists"), "{}", r.text());
    assert!(kit.runner.pool().live(Language::Py).await.is_empty());
    kit.runner.close().await;
}

#[tokio::test]
async fn eval_backends_select_and_report() {
    let kit = kit_with(|c| c.backends = execkit_eval::Backends::JsOnly);
    let r = kit.py("1").await;
    assert!(r.is_error);
    assert!(
        r.text().starts_with("cells[0].language: \"py\" is disabled (EXECKIT_EVAL_BACKENDS="),
        "{}",
        r.text()
    );
    assert_eq!(kit.runner.languages(), vec![Language::Js]);
    // An unknown word fails the start, naming the knob and what it accepts.
    let lookup = Lookup::from_vars([("EXECKIT_EVAL_BACKENDS", "ruby")]);
    let err = EvalConfig::from_lookup(&lookup, &mut Notes::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "EXECKIT_EVAL_BACKENDS=\"ruby\" is not one of 0, bash, js, 1, py, mix, both"
    );
}

#[tokio::test]
async fn eval_shim_on_path_is_bypassed() {
    // A shell-script `python3` shim first on PATH: the kernel must run the real binary.
    let kit = kit_with(|_| {});
    let real = kit.py("import sys\nprint(sys.executable)").await.text();
    let shim_dir = kit.dir.path().join("shim");
    std::fs::create_dir_all(&shim_dir).unwrap();
    let shim = shim_dir.join("python3");
    std::fs::write(&shim, format!("#!/bin/sh\nexec {real} \"$@\"\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
    let kit2 = kit_with(|c| c.python = Some(shim.display().to_string()));
    let r = kit2.py("import sys\nprint(sys.executable)").await;
    assert_eq!(r.text(), real);
    let doctor = kit2.runner.doctor().join("\n");
    assert!(doctor.contains("is a shim; kernels start"), "{doctor}");
    kit.runner.close().await;
    kit2.runner.close().await;
}

#[tokio::test]
async fn eval_missing_python_names_candidates() {
    let kit = kit_with(|c| c.python = Some("/nonexistent/python3".into()));
    let r = kit.py("1").await;
    assert!(r.is_error);
    assert_eq!(
        r.text(),
        "no Python ≥ 3.8 found; tried: /nonexistent/python3 (not found); set EXECKIT_PYTHON or create .venv"
    );
}

#[tokio::test]
async fn eval_credentials_do_not_reach_the_kernel() {
    let mut lookup = process_lookup();
    lookup.set("EXECKIT_TEST_API_TOKEN", "abc");
    lookup.set("LC_EXECKIT_TEST", "kept");
    let kit = kit_with_lookup(lookup, |_| {});
    let r = kit.py("import os\nprint(os.environ.get('EXECKIT_TEST_API_TOKEN'), os.environ.get('LC_EXECKIT_TEST'))").await;
    assert_eq!(r.text(), "None kept");
    kit.runner.close().await;
}

#[tokio::test]
async fn eval_prewarm_is_shared_with_the_first_call() {
    let kit = kit_with(|c| c.prewarm = true);
    let r = kit.py("1").await;
    assert_eq!(r.text(), "1");
    // The pre-warmed kernel served the call: no second start.
    assert_eq!(cell(&r, 0)["kernel"]["started"], false);
    assert_eq!(kit.runner.pool().live(Language::Py).await.len(), 1);
    kit.runner.close().await;
}

#[tokio::test]
async fn a_python_cell_does_not_wait_for_the_javascript_kernel_to_start() {
    // A JavaScript kernel that never says it is ready: its pre-warm only ends at the 5 s
    // ready timeout, and the Python cell must not wait for that.
    let bin = tempfile::tempdir().unwrap();
    let never_ready = bin.path().join("js-kernel");
    std::fs::write(&never_ready, "#!/bin/sh\nexec sleep 60\n").unwrap();
    std::fs::set_permissions(&never_ready, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .unwrap();
    #[allow(clippy::disallowed_methods)] // the real environment plus one kernel path
    let vars = std::env::vars_os().chain([("EXECKIT_JS_KERNEL".into(), never_ready.into())]);
    let kit = kit_with_lookup(Lookup::from_vars(vars), |c| c.prewarm = true);
    let started = Instant::now();
    let r = kit.py("1+1").await;
    assert_eq!(r.text(), "2");
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    kit.runner.close().await;
}

#[tokio::test]
async fn eval_close_leaves_no_kernel_behind() {
    let kit = kit_with(|_| {});
    let r = kit.py("import subprocess\np = subprocess.Popen(['sleep', '1000'])\np.pid").await;
    let child: u32 = r.text().parse().unwrap();
    let kernel = cell(&r, 0)["kernel"]["pid"].as_u64().unwrap() as u32;
    kit.runner.close().await;
    for pid in [child, kernel] {
        let until = Instant::now() + Duration::from_secs(3);
        while Instant::now() < until && std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            if stat.contains(") Z ") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        assert!(stat.is_empty() || stat.contains(") Z "), "pid {pid} survived: {stat}");
    }
}

#[tokio::test]
async fn eval_matplotlib_figures_become_images() {
    let kit = kit_with(|_| {});
    if !have_module(&kit, "eval_matplotlib_figures_become_images", "matplotlib").await {
        return;
    }
    let r = kit
        .py("import matplotlib.pyplot as plt\nplt.figure(); plt.plot([1, 2])\nplt.figure(); plt.plot([2, 1])\nprint('drawn')")
        .await;
    assert!(!r.is_error, "{}", r.text());
    let images = r.content.iter().filter(|c| matches!(c, Content::Image { .. })).count();
    assert_eq!(images, 2);
    assert!(r.text().contains("[image 1: image/png "), "{}", r.text());
    assert!(r.text().contains("[image 2: image/png "), "{}", r.text());
    kit.runner.close().await;
}

#[tokio::test]
async fn eval_pandas_dataframe_is_markdown() {
    let kit = kit_with(|_| {});
    if !have_module(&kit, "eval_pandas_dataframe_is_markdown", "pandas").await {
        return;
    }
    let r = kit.py("import pandas as pd\npd.DataFrame({'a': [1, 2], 'b': ['x', 'y']})").await;
    assert_eq!(
        r.text(),
        "|  | a | b |\n|---|---|---|\n| 0 | 1 | x |\n| 1 | 2 | y |\n\n[2 rows x 2 columns]"
    );
    kit.runner.close().await;
}

#[tokio::test]
async fn eval_plt_show_order_and_figure_cap() {
    let kit = kit_with(|_| {});
    if !have_module(&kit, "eval_plt_show_order_and_figure_cap", "matplotlib").await {
        return;
    }
    let r = kit
        .py("import matplotlib.pyplot as plt\nprint('before')\nplt.plot([1, 2])\nplt.show()\nprint('after')")
        .await;
    let text = r.text();
    assert!(text.starts_with("before\n[image 1: image/png "), "{text}");
    assert!(text.ends_with("]\nafter"), "{text}");
    let r = kit.py("for i in range(12):\n    plt.figure()").await;
    let images = r.content.iter().filter(|c| matches!(c, Content::Image { .. })).count();
    assert_eq!(images, 8);
    assert!(r.text().contains("[2 more figures closed without display]"), "{}", r.text());
    assert!(r.text().contains("[image 9: image/png "), "{}", r.text());
    assert!(
        r.text().contains("at most 8 images (5 MiB each) are returned inline]"),
        "{}",
        r.text()
    );
    kit.runner.close().await;
}

#[tokio::test]
async fn eval_pil_images_are_downscaled() {
    let kit = kit_with(|_| {});
    if !have_module(&kit, "eval_pil_images_are_downscaled", "PIL").await {
        return;
    }
    let r = kit.py("from PIL import Image\nImage.new('RGB', (4000, 1000), 'red')").await;
    assert!(r.text().starts_with("[image 1: image/png 2048x512, "), "{}", r.text());
    kit.runner.close().await;
}

#[tokio::test]
async fn eval_long_dataframes_are_elided() {
    let kit = kit_with(|_| {});
    if !have_module(&kit, "eval_long_dataframes_are_elided", "pandas").await {
        return;
    }
    let r = kit.py("import pandas as pd\npd.DataFrame({'n': range(60)})").await;
    let text = r.text();
    assert!(text.contains("| 24 | 24 |\n| … | … |\n| 55 | 55 |"), "{text}");
    assert!(text.ends_with("[60 rows x 1 columns]"), "{text}");
    kit.runner.close().await;
}

#[tokio::test]
async fn eval_closing_descriptors_keeps_the_session_usable() {
    let kit = kit_with(|_| {});
    for code in [
        "import os\nos.closerange(3, 1024)\nprint('closed')",
        "import os\ntry:\n    os.close(3)\nexcept OSError:\n    pass\nprint('closed')",
    ] {
        let r = kit.py(code).await;
        assert!(!r.is_error, "{}", r.text());
        assert_eq!(r.text(), "closed");
        let r = kit.py("import subprocess\nsubprocess.run(['echo', 'child'])\nprint('next')").await;
        assert!(!r.is_error, "{}", r.text());
        assert_eq!(r.text(), "child\nnext");
        assert_eq!(cell(&r, 0)["kernel"]["started"], false, "the kernel survived");
    }
    kit.runner.close().await;
}

/// Cells run through ipykernel and through eval: each eval text must contain what Jupyter
/// shows (stdout, stderr, the `text/plain` result) and fail with the same exception name.
/// Left out: values whose layout IPython's own pretty-printer changes (default object reprs,
/// sets), where the two cannot agree by design.
const DIFFERENTIAL_CELLS: [&str; 36] = [
    "1 + 1",
    "a = 3\na != 3",
    "(1, 'x')",
    "{'k': None}",
    "2**64 + 1",
    "{1: 'a', '1': 'b'}",
    "{None: 1, 'null': 2}",
    "'hello'",
    "\"it's\"",
    "1 / 3",
    "float('nan')",
    "[1, 2.5, None, True]",
    "list(range(40))",
    "{f'key{i}': i for i in range(20)}",
    "import sys\nprint('out')\nprint('err', file=sys.stderr)",
    "for i in range(3):\n    print(i)",
    "x = 5",
    "x * 2",
    "1 / 0",
    "{}['k']",
    "undefined_name",
    "int('x')",
    "b'bytes'",
    "None",
    "complex(1, 2)",
    "[[1, 2], [3, 4]]",
    "('a' * 100, 'b')",
    "import math\nmath.pi",
    "dict(a=1, b=[1, 2, {'c': (3,)}])",
    "raise RuntimeError('boom')",
    "'multi\\nline'",
    "y = [1]\ny.append(2)\ny",
    "import sys\nsys.stdout.write('partial')",
    "print('a', end='')\nprint('b')",
    "10**20",
    "'é' * 3",
];

/// Runs DIFFERENTIAL_CELLS in a fresh ipykernel from inside an eval cell and writes what
/// Jupyter showed to `jupyter.json` in the kernel's cwd.
const JUPYTER_DRIVER: &str = r#"
import json
from jupyter_client.manager import start_new_kernel
km, kc = start_new_kernel(kernel_name="python3", startup_timeout=120)
shown = []
try:
    for code in json.loads(CELLS):
        msg_id = kc.execute(code)
        rec = {"stdout": "", "stderr": "", "result": None, "ename": None}
        while True:
            msg = kc.get_iopub_msg(timeout=120)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                rec[content["name"]] += content["text"]
            elif kind == "execute_result":
                rec["result"] = content["data"].get("text/plain")
            elif kind == "error":
                rec["ename"] = content["ename"]
            elif kind == "status" and content["execution_state"] == "idle":
                break
        shown.append(rec)
finally:
    kc.stop_channels()
    km.shutdown_kernel(now=True)
with open("jupyter.json", "w") as f:
    json.dump(shown, f)
print(len(shown))
"#;

fn normalised(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[tokio::test]
async fn eval_matches_jupyter_on_plain_cells() {
    let test = "eval_matches_jupyter_on_plain_cells";
    let kit = kit_with(|_| {});
    if !have_module(&kit, test, "ipykernel").await
        || !have_module(&kit, test, "jupyter_client").await
    {
        return;
    }
    let cells = serde_json::to_string(&DIFFERENTIAL_CELLS.to_vec()).unwrap();
    let driver = format!("CELLS = {}\n{JUPYTER_DRIVER}", serde_json::to_string(&cells).unwrap());
    let r = kit
        .call(json!({"session": "jupyter", "cells": [{"language": "py", "code": driver, "timeout": 300}]}))
        .await;
    assert!(!r.is_error, "{}", r.text());
    let shown: Vec<Value> =
        serde_json::from_slice(&std::fs::read(kit.dir.path().join("work/jupyter.json")).unwrap())
            .unwrap();
    assert_eq!(shown.len(), DIFFERENTIAL_CELLS.len());
    for (code, jupyter) in DIFFERENTIAL_CELLS.iter().zip(&shown) {
        let r =
            kit.call(json!({"session": "diff", "cells": [{"language": "py", "code": code}]})).await;
        let ours = normalised(&r.text());
        for part in ["stdout", "stderr", "result"] {
            if let Some(expected) = jupyter[part].as_str() {
                let expected = normalised(expected);
                assert!(
                    ours.contains(&expected),
                    "{code:?}: Jupyter {part} {expected:?}, eval shows {ours:?}"
                );
            }
        }
        let ename = cell(&r, 0)["error"]["ename"].as_str().map(str::to_string);
        assert_eq!(ename.as_deref(), jupyter["ename"].as_str(), "{code:?}: {ours}");
    }
    kit.runner.close().await;
}

#[tokio::test]
async fn eval_parks_and_restores_twice_with_definitions_as_source() {
    let kit = kit_with(|c| c.idle_timeout = Some(Duration::from_secs(1)));
    let pid_of = |r: &ToolResult| cell(r, 0)["kernel"]["pid"].as_u64().unwrap() as u32;
    let gone = |pid: u32| async move {
        let until = Instant::now() + Duration::from_secs(10);
        while Instant::now() < until && std::path::Path::new(&format!("/proc/{pid}")).exists() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let r = kit
        .py("def f(x):\n    return x + 1\nclass P:\n    def __init__(self, v):\n        self.v = v\nitems = [P(1)]\nn = f(1)")
        .await;
    gone(pid_of(&r)).await;
    let r = kit.py("n = f(n) * 10\nitems.append(P(n))").await;
    assert!(r.text().contains("restored 4 names"), "{}", r.text());
    gone(pid_of(&r)).await;
    let r = kit.py("print(n, f(n), [p.v for p in items], type(items[0]).__name__)").await;
    assert!(!r.is_error, "{}", r.text());
    assert!(r.text().contains("restored 4 names"), "{}", r.text());
    assert!(!r.text().contains("not restored"), "{}", r.text());
    assert!(r.text().ends_with("30 31 [1, 30] P"), "{}", r.text());
    kit.runner.close().await;
}

#[tokio::test]
async fn eval_a_knob_that_does_not_parse_stops_the_toolkit() {
    // The same policy as every tool's knobs: a bad value fails the start, naming the knob and
    // what it accepts, instead of becoming a note.
    for (name, value) in [("EXECKIT_EVAL_BACKENDS", "ruby"), ("EXECKIT_EVAL_MAX_KERNELS", "many")] {
        let dir = tempfile::tempdir().unwrap();
        let built = execkit::Toolkit::builder()
            .cwd(dir.path())
            .var("EXECKIT_ARTIFACT_DIR", dir.path().join("a").to_string_lossy())
            .var(name, value)
            .build();
        let err = built.err().expect("a bad eval knob fails construction");
        assert!(err.starts_with(&format!("{name}=\"{value}\" is not ")), "{err}");
    }
}

/// Python and JavaScript sessions side by side in one Toolkit, with a JavaScript cell calling
/// bash through the real dispatcher; the kernel binary is found next to this test binary's
/// profile directory, where the workspace build puts it.
#[tokio::test]
async fn eval_python_and_javascript_sessions_in_one_toolkit() {
    let kit = crate::support::Kit::new();
    let mut pids = Vec::new();
    for s in ["a", "b"] {
        let r = kit
            .call(
                "eval",
                json!({"session": s, "cells": [
                    {"language": "py", "code": format!("n = '{s}-py'")},
                    {"language": "js", "code": format!("var n = '{s}-js'")},
                ]}),
            )
            .await;
        assert!(!r.is_error, "{}", r.text());
        for i in 0..2 {
            pids.push(cell(&r, i)["kernel"]["pid"].as_u64().unwrap() as u32);
        }
    }
    let r = kit
        .call(
            "eval",
            json!({"session": "a", "cells": [
                {"language": "py", "code": "print(n)"},
                {"language": "js", "code": "n"},
                {"language": "js", "code": "(await tool.bash({command: 'echo from-bash'})).text"},
            ]}),
        )
        .await;
    assert!(!r.is_error, "{}", r.text());
    let text = r.text();
    assert!(text.contains("---\na-py\n"), "{text}");
    assert!(text.contains("---\n\"a-js\"\n"), "{text}");
    assert!(text.contains("from-bash"), "{text}");
    assert_eq!(cell(&r, 2)["tool_calls"][0]["name"], "bash");
    let doctor = kit.toolkit.doctor();
    let eval = doctor.sections.iter().find(|s| s.title == "eval").unwrap();
    assert!(
        eval.lines.iter().any(|l| l.starts_with("javascript: ") && l.contains("execkit-js-kernel")),
        "{:?}",
        eval.lines
    );
    kit.toolkit.close().await;
    for pid in pids {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        assert!(stat.is_empty() || stat.contains(") Z "), "kernel {pid} survived: {stat}");
    }
}
