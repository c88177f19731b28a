//! The command as the remote login shell receives it (spec-ssh S29, S30).
//!
//! POSIX shells and fish first print their pid on stderr, so a timed-out command's process
//! group can be killed over a second session. The cd is a separate guard line rather than
//! `cd … && command`, so no later statement of the command can run in the wrong directory.

use base64::Engine;

use crate::config::Shell;
use crate::error::SshError;

/// The first stderr line of a wrapped command on a POSIX shell or fish: `<MARKER><pid>`.
pub const PID_MARKER: &str = "__EXECKIT_PID__=";

/// `'…'` for sh, bash and zsh: `'` becomes `'\''`.
pub fn sh_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// `'…'` for fish: `\` becomes `\\` and `'` becomes `\'`.
fn fish_quote(text: &str) -> String {
    format!("'{}'", text.replace('\\', r"\\").replace('\'', r"\'"))
}

/// What a host runs commands with: its login shell, or bash under Windows compat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wrapper {
    Shell(Shell),
    /// Windows with a POSIX bash: the sh wrapper, base64-encoded through bash.
    CompatBash,
    /// A login shell execkit cannot wrap (csh, nu, …): the command goes unchanged.
    Unknown,
}

impl Wrapper {
    /// True when the wrapped command reports its pid first on stderr.
    pub fn reports_pid(self) -> bool {
        matches!(
            self,
            Wrapper::Shell(Shell::Sh | Shell::Bash | Shell::Zsh | Shell::Fish)
                | Wrapper::CompatBash
        )
    }
}

/// The remote command line for `command` in `cwd`. `name` and `shell_name` only go into
/// error texts.
pub fn wrap(
    wrapper: Wrapper,
    command: &str,
    cwd: Option<&str>,
    name: &str,
    shell_name: &str,
) -> Result<String, SshError> {
    Ok(match wrapper {
        Wrapper::Shell(Shell::Sh | Shell::Bash | Shell::Zsh) => posix(command, cwd),
        Wrapper::Shell(Shell::Fish) => {
            let mut lines = vec!["echo __EXECKIT_PID__=$fish_pid >&2".to_string()];
            if let Some(cwd) = cwd {
                lines.push(format!("cd {}; or exit 1", fish_quote(cwd)));
            }
            lines.push(command.to_string());
            lines.join("\n")
        }
        Wrapper::Shell(Shell::PowerShell) => match cwd {
            Some(cwd) => format!(
                "Set-Location -LiteralPath '{}' -ErrorAction Stop; {command}",
                cwd.replace('\'', "''")
            ),
            None => command.to_string(),
        },
        Wrapper::Shell(Shell::Cmd) => match cwd {
            Some(cwd) if cwd.contains(['"', '%']) => {
                return Err(SshError::Argument(format!(
                    "cwd contains characters cmd.exe cannot quote: {cwd}"
                )));
            }
            Some(cwd) => format!("cd /d \"{cwd}\" && {command}"),
            None => command.to_string(),
        },
        Wrapper::CompatBash => through_bash(&posix(command, cwd)),
        Wrapper::Unknown => match cwd {
            Some(_) => {
                return Err(SshError::Argument(format!(
                    "cwd is not supported on {name}: its login shell ({shell_name}) is not one execkit can wrap"
                )));
            }
            None => command.to_string(),
        },
    })
}

/// `script` for bash on a Windows host, base64-encoded so that neither cmd nor PowerShell
/// reinterprets a character of it.
fn through_bash(script: &str) -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(script);
    format!("bash -c \"source <(base64 -d <<<{b64})\"")
}

fn posix(command: &str, cwd: Option<&str>) -> String {
    let mut lines = vec!["echo __EXECKIT_PID__=$$ >&2".to_string()];
    if let Some(cwd) = cwd {
        lines.push(format!("cd -- {} || exit 1", sh_quote(cwd)));
    }
    lines.push(command.to_string());
    lines.join("\n")
}

/// The pid from a marker line (without its newline), when it is one.
pub fn parse_pid_marker(line: &[u8]) -> Option<u32> {
    let text = std::str::from_utf8(line).ok()?;
    let digits = text.strip_suffix('\r').unwrap_or(text).strip_prefix(PID_MARKER)?;
    digits.parse().ok().filter(|pid| *pid > 1)
}

/// Kills a timed-out command's process group over a second session (S33). Without a PTY,
/// sshd does not signal the command when its channel closes, so nothing else would.
/// `kill --` is not used: dash rejects it. The SIGKILL follow-up runs detached, so this
/// session ends at once instead of holding the caller for the grace.
pub fn kill_command(pid: u32) -> String {
    format!(
        "kill -TERM -{pid} 2>/dev/null; (sleep 2; kill -KILL -{pid} 2>/dev/null) </dev/null >/dev/null 2>&1 & true"
    )
}

/// The kill for a command wrapped by `wrapper`: under Windows compat the pid is bash's, so
/// the kill goes through bash too.
pub fn kill_for(wrapper: Wrapper, pid: u32) -> String {
    match wrapper {
        Wrapper::CompatBash => through_bash(&kill_command(pid)),
        _ => kill_command(pid),
    }
}

#[cfg(test)]
mod tests;
