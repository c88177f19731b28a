//! BM3–BM5: the JavaScript kernel (`execkit-js-kernel`) against a minimal Node JSON-lines REPL
//! (`bench/node_repl.mjs`, one `vm` context), both driven over pipes by this harness in the
//! same run: cold start (kernel: spawn → `ready`; Node: spawn → first reply), idle RSS, the
//! warm `1+1` round trip (kernel: `execute` → `done`, alone and with the `snapshot` request
//! eval sends after every `ok` cell queued behind it) and `fib(27)`.
//!
//! The kernel is `EXECKIT_BENCH_JS_KERNEL`, else `execkit-js-kernel` next to this binary;
//! Node is `node` on PATH.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use crate::stats::{ms, summarize};

const WARMUP: usize = 50;
const RUNS: usize = 1000;
const COLD_RUNS: usize = 30;
const FIB: &str = "function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2) }\nfib(27)";

/// One REPL process driven over two pipes, one request line in, reply lines out.
struct Repl {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    line: String,
    /// The reply line that ends a request: `"type":"done"` for the kernel, any line for Node.
    end_marker: Option<&'static str>,
    next_id: u64,
    /// The kernel only: the snapshot file requested after each cell, when measured that way.
    snapshot: Option<PathBuf>,
}

impl Repl {
    /// The kernel with fd 3 = commands and fd 4 = events, as eval starts it.
    fn kernel(path: &Path) -> std::io::Result<Repl> {
        let (cmd_r, cmd_w) = std::io::pipe()?;
        let (evt_r, evt_w) = std::io::pipe()?;
        let mut command = Command::new(path);
        command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
        let (cmd_fd, evt_fd) = (raw(&cmd_r), raw(&evt_w));
        // SAFETY: fcntl and dup2 are async-signal-safe; the pipe fds stay open until the spawn
        // returns. Copying both above 10 first keeps one from landing on the other's target.
        unsafe {
            command.pre_exec(move || {
                let (c, e) = (
                    libc::fcntl(cmd_fd, libc::F_DUPFD, 10),
                    libc::fcntl(evt_fd, libc::F_DUPFD, 10),
                );
                if c < 0 || e < 0 || libc::dup2(c, 3) < 0 || libc::dup2(e, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn()?;
        drop((cmd_r, evt_w));
        let input = ChildStdin::from(std::os::fd::OwnedFd::from(cmd_w));
        let output = BufReader::new(ChildStdout::from(std::os::fd::OwnedFd::from(evt_r)));
        let end_marker = Some("\"type\":\"done\"");
        Ok(Repl {
            child,
            input,
            output,
            line: String::new(),
            end_marker,
            next_id: 0,
            snapshot: None,
        })
    }

    fn node(script: &Path) -> std::io::Result<Repl> {
        let mut child = Command::new("node")
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let input = child.stdin.take().ok_or_else(|| std::io::Error::other("no stdin"))?;
        let output =
            BufReader::new(child.stdout.take().ok_or_else(|| std::io::Error::other("no stdout"))?);
        Ok(Repl {
            child,
            input,
            output,
            line: String::new(),
            end_marker: None,
            next_id: 0,
            snapshot: None,
        })
    }

    fn read_line(&mut self) -> std::io::Result<()> {
        self.line.clear();
        if self.output.read_line(&mut self.line)? == 0 {
            return Err(std::io::Error::other("the process closed its output"));
        }
        Ok(())
    }

    /// Sends `code` and reads until its reply ends.
    fn run(&mut self, code: &str) -> std::io::Result<()> {
        self.next_id += 1;
        let id = self.next_id;
        let code = serde_json::to_string(code).unwrap_or_default();
        let mut request = match self.end_marker {
            Some(_) => format!(
                "{{\"type\":\"execute\",\"id\":{id},\"code\":{code},\"timeout_ms\":30000,\
                 \"cell\":{{\"index\":1,\"title\":null}},\"tools\":[]}}\n"
            ),
            None => format!("{{\"id\":{id},\"code\":{code}}}\n"),
        };
        if let Some(path) = &self.snapshot {
            // What eval does after an ok cell: ask for the snapshot, and do not wait for it.
            let path = serde_json::to_string(&path.display().to_string()).unwrap_or_default();
            request.push_str(&format!(
                "{{\"type\":\"snapshot\",\"id\":{},\"path\":{path}}}\n",
                id + 1_000_000
            ));
        }
        self.input.write_all(request.as_bytes())?;
        loop {
            self.read_line()?;
            match self.end_marker {
                Some(marker) if !self.line.contains(marker) => continue,
                _ => return Ok(()),
            }
        }
    }

    fn rss_mib(&self) -> Option<f64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
        let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib / 1024.0)
    }
}

impl Drop for Repl {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn raw(fd: &impl std::os::fd::AsRawFd) -> i32 {
    fd.as_raw_fd()
}

fn kernel_path() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("EXECKIT_BENCH_JS_KERNEL") {
        return Some(PathBuf::from(path));
    }
    let beside = std::env::current_exe().ok()?.parent()?.join("execkit-js-kernel");
    beside.exists().then_some(beside)
}

fn node_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("node_repl.mjs")
}

/// Kernel: spawn → `ready` (and its RSS then); Node: spawn → the reply to `1+1`.
fn cold(kernel: &Path) -> std::io::Result<()> {
    let (mut ours, mut theirs, mut rss_ours, mut rss_theirs) = (vec![], vec![], 0.0, 0.0);
    for _ in 0..COLD_RUNS {
        let t = Instant::now();
        let mut k = Repl::kernel(kernel)?;
        k.read_line()?;
        ours.push(t.elapsed());
        rss_ours = k.rss_mib().unwrap_or(0.0);
        let t = Instant::now();
        let mut n = Repl::node(&node_script())?;
        n.run("1+1")?;
        theirs.push(t.elapsed());
        rss_theirs = n.rss_mib().unwrap_or(0.0);
    }
    let (a, b) = (summarize(ours), summarize(theirs));
    println!(
        "js cold start: kernel spawn→ready median {:.1} ms (p99 {:.1}); node spawn→first reply \
         median {:.1} ms (p99 {:.1}); ratio {:.2} (target ≤ 0.25)",
        ms(a.median),
        ms(a.p99),
        ms(b.median),
        ms(b.p99),
        a.median.as_secs_f64() / b.median.as_secs_f64()
    );
    println!(
        "js idle RSS: kernel after ready {rss_ours:.1} MiB (target ≤ 16); node after first reply {rss_theirs:.1} MiB"
    );
    Ok(())
}

/// Warm round trips, interleaved so both see the same machine load.
fn warm(kernel: &Path, snapshot: Option<PathBuf>) -> std::io::Result<()> {
    let label =
        if snapshot.is_some() { "with eval's per-cell snapshot" } else { "execute → done" };
    let mut k = Repl::kernel(kernel)?;
    k.read_line()?;
    k.snapshot = snapshot;
    let mut n = Repl::node(&node_script())?;
    let (mut ours, mut theirs) = (Vec::with_capacity(RUNS), Vec::with_capacity(RUNS));
    for i in 0..WARMUP + RUNS {
        let t = Instant::now();
        k.run("1+1")?;
        let a = t.elapsed();
        let t = Instant::now();
        n.run("1+1")?;
        let b = t.elapsed();
        if i >= WARMUP {
            ours.push(a);
            theirs.push(b);
        }
    }
    let p90 = |v: &[Duration]| {
        let mut v = v.to_vec();
        v.sort();
        v[(v.len() - 1) * 9 / 10]
    };
    let (p90a, p90b) = (p90(&ours), p90(&theirs));
    let (a, b) = (summarize(ours), summarize(theirs));
    println!(
        "js warm 1+1 ({label}): kernel median {:.0} µs (p90 {:.0}, p99 {:.0}); node median {:.0} µs \
         (p90 {:.0}, p99 {:.0}); ratio {:.2} (target ≤ 1.0)",
        a.median.as_secs_f64() * 1e6,
        p90a.as_secs_f64() * 1e6,
        a.p99.as_secs_f64() * 1e6,
        b.median.as_secs_f64() * 1e6,
        p90b.as_secs_f64() * 1e6,
        b.p99.as_secs_f64() * 1e6,
        a.median.as_secs_f64() / b.median.as_secs_f64()
    );
    Ok(())
}

/// BM5, without a target: boa interprets where V8 compiles.
fn fib(kernel: &Path) -> std::io::Result<()> {
    let mut k = Repl::kernel(kernel)?;
    k.read_line()?;
    let mut n = Repl::node(&node_script())?;
    let t = Instant::now();
    k.run(FIB)?;
    let a = t.elapsed();
    let t = Instant::now();
    n.run(FIB)?;
    let b = t.elapsed();
    println!(
        "js fib(27): kernel {:.0} ms, node {:.1} ms ({:.0}× slower; heavy compute belongs in Python)",
        ms(a),
        ms(b),
        a.as_secs_f64() / b.as_secs_f64()
    );
    Ok(())
}

pub fn kernel_vs_node() {
    let Some(kernel) = kernel_path() else {
        return println!(
            "js: build the kernel first (cargo build --release -p execkit-js) or set EXECKIT_BENCH_JS_KERNEL"
        );
    };
    let Ok(dir) = tempfile::tempdir() else { return println!("js: no temp dir") };
    let outcome = cold(&kernel)
        .and_then(|()| warm(&kernel, None))
        .and_then(|()| warm(&kernel, Some(dir.path().join("snapshot.json"))))
        .and_then(|()| fib(&kernel));
    if let Err(err) = outcome {
        println!("js: {err} (kernel {}; is node on PATH?)", kernel.display());
    }
}
