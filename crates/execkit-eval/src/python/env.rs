//! The Python kernel's environment (spec P4): an allowlist of the saved environment, the
//! credential scrub, the interpreter's venv on PATH, and fixed settings.

use std::ffi::OsString;

use execkit_process::env::{EnvBuilder, ScrubRules};

use crate::python::interpreter::Interpreter;

/// Names kept from the host environment (P4); `LC_*` and `XDG_*` by prefix.
const ALLOW: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TERM",
    "TMPDIR",
    "TEMP",
    "TMP",
    "PYTHONPATH",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "CONDA_DEFAULT_ENV",
    "LD_LIBRARY_PATH",
    "SSH_AUTH_SOCK",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
];

fn allowed(name: &str, extra: &[String]) -> bool {
    ALLOW.contains(&name)
        || name.starts_with("LC_")
        || name.starts_with("XDG_")
        || extra.iter().any(|pat| match pat.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => pat == name,
        })
}

/// The kernel's environment (P4): allowlist, credential scrub, fixed settings.
pub fn kernel_env(
    vars: impl IntoIterator<Item = (OsString, OsString)>,
    allow: &[String],
    interp: &Interpreter,
    session: &str,
) -> Vec<(OsString, OsString)> {
    let kept = vars.into_iter().filter(|(k, _)| k.to_str().is_some_and(|k| allowed(k, allow)));
    let mut env = EnvBuilder::from_vars(kept);
    let exact: Vec<String> = allow.iter().filter(|a| !a.ends_with('*')).cloned().collect();
    env.scrub(&ScrubRules { keep: exact, extra: Vec::new() });
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
        ("TERM", "dumb"),
        ("NO_COLOR", "1"),
        ("PAGER", "cat"),
        ("GIT_PAGER", "cat"),
        ("PIP_NO_INPUT", "1"),
        ("PIP_DISABLE_PIP_VERSION_CHECK", "1"),
    ] {
        env.set(k, v);
    }
    env.set("EXECKIT_SESSION", session);
    env.into_vars()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowlist_and_globs() {
        assert!(allowed("PATH", &[]));
        assert!(allowed("LC_ALL", &[]));
        assert!(!allowed("CARGO_HOME", &[]));
        assert!(allowed("MYAPP_X", &["MYAPP_*".into()]));
        assert!(allowed("FOO", &["FOO".into()]));
    }
}
