//! The environment every kernel starts from, whatever its language (spec P4): an allowlist of
//! the saved environment, the shared credential scrub, and settings that keep tools quiet and
//! non-interactive. A backend adds its own settings on top.

use std::ffi::OsString;

use execkit_process::env::{EnvBuilder, ScrubRules};

/// Names kept from the saved environment (spec P4); `LC_*` and `XDG_*` by prefix. The Python
/// names are kept for every kernel: a kernel of another language may start Python tools.
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

/// The allowlisted, scrubbed environment: `allow` adds names or `PREFIX_*` patterns
/// (`EXECKIT_EVAL_ENV_ALLOW`), and an exact name there also survives the credential scrub.
pub fn allowed_env(
    vars: impl IntoIterator<Item = (OsString, OsString)>,
    allow: &[String],
) -> EnvBuilder {
    let kept = vars.into_iter().filter(|(k, _)| k.to_str().is_some_and(|k| allowed(k, allow)));
    let mut env = EnvBuilder::from_vars(kept);
    let exact: Vec<String> = allow.iter().filter(|a| !a.ends_with('*')).cloned().collect();
    env.scrub(&ScrubRules { keep: exact, extra: Vec::new() });
    env
}

/// Settings every kernel gets last: no pager, no colour, a dumb terminal, and its session.
pub fn common_settings(env: &mut EnvBuilder, session: &str) {
    for (k, v) in [("TERM", "dumb"), ("NO_COLOR", "1"), ("PAGER", "cat"), ("GIT_PAGER", "cat")] {
        env.set(k, v);
    }
    env.set("EXECKIT_SESSION", session);
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
