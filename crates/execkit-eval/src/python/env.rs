//! The Python kernel's environment: the shared kernel environment, the interpreter's venv on
//! PATH, and Python's own settings (spec P4).

use std::ffi::OsString;

use crate::kernel_env::{allowed_env, common_settings};
use crate::python::interpreter::Interpreter;

/// The kernel's environment for `interp` in `session`.
pub fn kernel_env(
    vars: impl IntoIterator<Item = (OsString, OsString)>,
    allow: &[String],
    interp: &Interpreter,
    session: &str,
) -> Vec<(OsString, OsString)> {
    let mut env = allowed_env(vars, allow);
    if interp.is_venv {
        let bin = interp.prefix.join("bin");
        let path = env.get("PATH").map(|p| p.to_os_string()).unwrap_or_default();
        let mut joined = bin.into_os_string();
        if !path.is_empty() {
            joined.push(":");
            joined.push(path);
        }
        env.set("PATH", joined);
        env.set("VIRTUAL_ENV", interp.prefix.clone().into_os_string());
    }
    for (k, v) in [
        ("MPLBACKEND", "Agg"),
        ("PYTHONIOENCODING", "utf-8"),
        ("PYTHONUNBUFFERED", "1"),
        ("PIP_NO_INPUT", "1"),
        ("PIP_DISABLE_PIP_VERSION_CHECK", "1"),
    ] {
        env.set(k, v);
    }
    common_settings(&mut env, session);
    env.into_vars()
}
