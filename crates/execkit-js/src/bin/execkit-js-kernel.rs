//! `execkit-js-kernel`: the JavaScript kernel process started by execkit's eval tool.

fn main() {
    std::process::exit(execkit_js::run_kernel());
}
