//! The checks a call passes before any process starts (spec-ssh S2–S4, S12, S13).

use crate::config::{HostConfig, HostEntry};
use crate::error::SshError;
use crate::keys;
use crate::run::{MAX_COMMAND_BYTES, RunRequest};

pub(crate) fn too_long(n: usize) -> SshError {
    SshError::Argument(format!(
        "command is too long for a remote shell: {n} bytes after wrapping (limit {MAX_COMMAND_BYTES})"
    ))
}

/// The checks that need no process (S2–S4, S12, S13): the entry when they pass.
pub(crate) fn check_request<'a>(
    config: &'a HostConfig,
    request: &RunRequest,
) -> Result<&'a HostEntry, SshError> {
    let entry = config.hosts.get(&request.host).ok_or_else(|| SshError::UnknownHost {
        name: request.host.clone(),
        configured: config.hosts.keys().cloned().collect(),
    })?;
    check_command(&request.command)?;
    if let Some(cwd) = &request.cwd {
        check_cwd(cwd)?;
    }
    crate::args::guard(entry)?;
    if let Some(key) = &entry.key {
        keys::check_key(&entry.name, key)?;
    }
    Ok(entry)
}

fn check_command(command: &str) -> Result<(), SshError> {
    if command.trim().is_empty() {
        return Err(SshError::Argument("command: must not be empty".into()));
    }
    if command.contains('\0') {
        return Err(SshError::Argument("command: must not contain a NUL byte".into()));
    }
    if command.len() > MAX_COMMAND_BYTES {
        return Err(too_long(command.len()));
    }
    Ok(())
}

/// The OS-independent cwd rules: no `~`, no NUL/CR/LF, absolute for some OS.
fn check_cwd(cwd: &str) -> Result<(), SshError> {
    if cwd == "~" || cwd.starts_with("~/") {
        return Err(SshError::Argument(
            "cwd must be an absolute remote path; \"~\" is not expanded. Omit cwd to start in the login directory.".into(),
        ));
    }
    if cwd.contains(['\0', '\r', '\n']) {
        return Err(SshError::Argument("cwd must not contain NUL, CR or LF".into()));
    }
    let bytes = cwd.as_bytes();
    let windows = bytes.len() >= 3
        && bytes[0].is_ascii_alphabetic()
        && bytes[1] == b':'
        && matches!(bytes[2], b'\\' | b'/');
    if !(cwd.starts_with('/') || windows || cwd.starts_with(r"\\")) {
        return Err(SshError::Argument(format!("cwd must be an absolute path: {cwd}")));
    }
    Ok(())
}

/// The OS-dependent rule: POSIX paths start with `/`; Windows ones with `X:\`, `X:/` or `\\`.
pub(crate) fn check_cwd_for_os(name: &str, os: &str, cwd: Option<&str>) -> Result<(), SshError> {
    let Some(cwd) = cwd else { return Ok(()) };
    let posix = cwd.starts_with('/');
    let ok = match os {
        "windows" => !posix,
        "unknown" => true,
        _ => posix,
    };
    if ok {
        Ok(())
    } else {
        Err(SshError::Argument(format!("cwd must be an absolute path on {name} ({os}): {cwd}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(r: Result<(), SshError>) -> String {
        r.unwrap_err().to_string()
    }

    #[test]
    fn cwd_rules() {
        let tilde = "cwd must be an absolute remote path; \"~\" is not expanded. Omit cwd to start in the login directory.";
        assert_eq!(err(check_cwd("~")), tilde);
        assert_eq!(err(check_cwd("~/src")), tilde);
        assert_eq!(err(check_cwd("src")), "cwd must be an absolute path: src");
        assert_eq!(err(check_cwd("/tmp/a\nb")), "cwd must not contain NUL, CR or LF");
        for ok in ["/tmp/it's $(reboot)", "C:\\src", "C:/src", "\\\\server\\share"] {
            assert!(check_cwd(ok).is_ok(), "{ok}");
        }
        assert_eq!(
            err(check_cwd_for_os("win", "windows", Some("/tmp"))),
            "cwd must be an absolute path on win (windows): /tmp"
        );
        assert_eq!(
            err(check_cwd_for_os("box", "linux", Some("C:\\src"))),
            "cwd must be an absolute path on box (linux): C:\\src"
        );
        assert!(check_cwd_for_os("box", "linux", Some("/srv")).is_ok());
    }

    #[test]
    fn command_rules() {
        assert_eq!(err(check_command("  ")), "command: must not be empty");
        assert_eq!(err(check_command("echo \0")), "command: must not contain a NUL byte");
        assert_eq!(
            err(check_command(&"x".repeat(200 * 1024))),
            "command is too long for a remote shell: 204800 bytes after wrapping (limit 131072)"
        );
    }
}
