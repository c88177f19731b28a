//! Windows hosts with a POSIX bash (spec-ssh S27): whether commands go through bash, from
//! the host's `compat` setting and what the probe found.
//!
//! OpenSSH on Windows starts commands with cmd.exe or PowerShell. Where Git Bash, MSYS2 or
//! WSL puts a `bash` on the PATH, `compat` (`auto` by default) runs every command through
//! it, so cwd quoting, the pid marker and the timeout kill work as on Unix.

use crate::config::Compat;
use crate::error::SshError;
use crate::probe::HostInfo;
use crate::wrap::Wrapper;

/// Run by the host's own shell: cmd and PowerShell both pass the quoted word to bash.
pub const BASH_PROBE: &str = "bash -c \"echo EXECKIT_BASH_OK\"";
const BASH_OK: &str = "EXECKIT_BASH_OK";

/// True when the bash probe's output shows bash ran (login noise around it is ignored).
pub fn parse_bash_probe(stdout: &[u8]) -> bool {
    String::from_utf8_lossy(stdout).lines().any(|line| line.trim() == BASH_OK)
}

/// Whether the host still needs the bash probe: Windows, compat not off, not yet probed.
pub fn needs_bash_probe(info: &HostInfo, compat: Compat) -> bool {
    info.os == "windows" && compat != Compat::Off && info.bash.is_none()
}

/// How commands are wrapped on the host `name`.
pub fn wrapper(info: &HostInfo, compat: Compat, name: &str) -> Result<Wrapper, SshError> {
    if info.os != "windows" {
        return Ok(info.wrapper());
    }
    let has_bash = info.bash == Some(true);
    match compat {
        Compat::Off => Ok(info.wrapper()),
        Compat::Auto if has_bash => Ok(Wrapper::CompatBash),
        Compat::Auto => Ok(info.wrapper()),
        Compat::On if has_bash => Ok(Wrapper::CompatBash),
        Compat::On => {
            Err(SshError::Argument(format!("compat is on for {name} but no bash was found on it")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Shell;
    use crate::probe::{ProbeSource, parse_probe};

    fn windows(shell: &str, bash: Option<bool>) -> HostInfo {
        HostInfo {
            os: "windows".into(),
            shell: shell.into(),
            shell_path: None,
            bash,
            source: ProbeSource::Probed,
        }
    }

    #[test]
    fn the_bash_probe_is_read_through_noise() {
        assert!(parse_bash_probe(b"Microsoft Windows\r\nEXECKIT_BASH_OK\r\n"));
        assert!(!parse_bash_probe(
            b"'bash' is not recognized as an internal or external command,\r\n"
        ));
        assert!(!parse_bash_probe(b""));
    }

    #[test]
    fn compat_decides_the_wrapper_on_windows_only() {
        let cmd = parse_probe(b"EXECKIT_PROBE Windows_NT $SHELL; uname -s\r\n").unwrap();
        assert!(needs_bash_probe(&cmd, Compat::Auto));
        assert!(!needs_bash_probe(&cmd, Compat::Off));
        let with = windows("cmd", Some(true));
        let without = windows("powershell", Some(false));
        assert!(!needs_bash_probe(&with, Compat::On));
        assert_eq!(wrapper(&with, Compat::Auto, "w").unwrap(), Wrapper::CompatBash);
        assert_eq!(wrapper(&with, Compat::On, "w").unwrap(), Wrapper::CompatBash);
        assert_eq!(wrapper(&with, Compat::Off, "w").unwrap(), Wrapper::Shell(Shell::Cmd));
        assert_eq!(
            wrapper(&without, Compat::Auto, "w").unwrap(),
            Wrapper::Shell(Shell::PowerShell)
        );
        assert_eq!(
            wrapper(&without, Compat::On, "w").unwrap_err().to_string(),
            "compat is on for w but no bash was found on it"
        );
        let linux = parse_probe(b"EXECKIT_PROBE %OS% /bin/bash\nLinux\n").unwrap();
        assert!(!needs_bash_probe(&linux, Compat::On));
        assert_eq!(wrapper(&linux, Compat::On, "l").unwrap(), Wrapper::Shell(Shell::Bash));
    }
}
