//! The execkit JavaScript kernel: one persistent boa_engine VM per process, speaking the eval
//! NDJSON protocol on fds 3 and 4 (spec-eval.md §6 and §10). The binary `execkit-js-kernel`
//! is a thin `main` around [`run_kernel`].

mod cell;
mod event_loop;
mod executor;
mod hints;
mod kernel;
mod modules;
mod natives;
pub mod rewrite;
mod snapshot;
pub mod tokenizer;
mod wire;

pub use kernel::{ENGINE, LOOP_ITERATIONS_PER_SECOND, RECURSION_LIMIT, loop_limit};
pub use modules::bare_specifier_message;
pub use wire::PROTOCOL;

use std::sync::mpsc;

/// The VM thread's stack (JS1).
const VM_STACK: usize = 64 << 20;
/// Default address-space limit in MiB (JS13).
const DEFAULT_MEMORY_MB: u64 = 2048;

/// Runs the kernel; returns only on a start failure, with the exit code to use.
pub fn run_kernel() -> i32 {
    let fds = match wire::take_protocol_fds() {
        Ok(fds) => fds,
        Err(e) => {
            diag(&format!("execkit-js-kernel: {e}"));
            return 2;
        }
    };
    limit_memory();
    // The host interrupts a JS cell with the `interrupt` frame, never with a signal; a stray
    // SIGINT to the process group must not kill the kernel and its state.
    // SAFETY: setting a signal disposition to SIG_IGN has no preconditions.
    unsafe { libc::signal(libc::SIGINT, libc::SIG_IGN) };
    wire::install_events(fds.events);
    // A panic anywhere is a kernel crash: abort so the host sees a signal, never a hang.
    std::panic::set_hook(Box::new(|info| {
        diag(&format!("execkit-js-kernel: internal error: {info}"));
        std::process::abort();
    }));
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::Builder::new()
        .name("execkit-js-commands".into())
        .spawn(move || wire::read_commands(fds.commands, tx));
    if reader.is_err() {
        diag("execkit-js-kernel: cannot start the command reader");
        return 70;
    }
    let vm = std::thread::Builder::new().name("execkit-js-vm".into()).stack_size(VM_STACK).spawn(
        move || match kernel::Kernel::new(rx) {
            Ok(k) => {
                k.run();
                0
            }
            Err(e) => {
                diag(&format!("execkit-js-kernel: {e}"));
                70
            }
        },
    );
    match vm.map(|h| h.join()) {
        Ok(Ok(code)) => code,
        _ => 70,
    }
}

/// Sets RLIMIT_AS to `EXECKIT_EVAL_JS_MEMORY_MB` (default 2048): an allocation beyond it
/// aborts the process, which the host reports as out of memory. The kernel is a program of its
/// own, so it reads the variable the host set for it from its own environment.
#[allow(clippy::disallowed_methods)]
fn limit_memory() {
    let mb = match std::env::var("EXECKIT_EVAL_JS_MEMORY_MB") {
        Ok(v) => match v.trim().parse::<u64>() {
            Ok(n) if n > 0 => n,
            _ => {
                diag(&format!(
                    "execkit-js-kernel: EXECKIT_EVAL_JS_MEMORY_MB={v:?} is not a positive number; using {DEFAULT_MEMORY_MB}"
                ));
                DEFAULT_MEMORY_MB
            }
        },
        Err(_) => DEFAULT_MEMORY_MB,
    };
    let bytes = mb.saturating_mul(1 << 20) as libc::rlim_t;
    let limit = libc::rlimit { rlim_cur: bytes, rlim_max: bytes };
    // SAFETY: setrlimit reads a valid rlimit struct; it has no other preconditions.
    if unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) } != 0 {
        diag("execkit-js-kernel: cannot set RLIMIT_AS; running without a memory limit");
    }
}

/// Writes one line to the diagnostic pipe (fd 2).
fn diag(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}
