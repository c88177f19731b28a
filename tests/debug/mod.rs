//! The debug tool through a real Toolkit, with real adapters: debugpy on a Python script,
//! lldb-dap on a C program built with `gcc -g -O0`, dlv on a Go program. A missing adapter
//! skips its test with the reason printed (and fails under `EXECKIT_DAP_REQUIRE_ADAPTERS=1`).

mod children;
mod fixtures;
mod lifecycle;
#[path = "../../crates/execkit-dap/tests/support/programs.rs"]
mod programs;
mod sandboxed;
mod sessions;
mod watch;
