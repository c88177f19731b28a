//! ssh command lines (spec-ssh S12, S15–S17, S19).
//!
//! Options given on the command line override any ssh_config value (for ssh the first value
//! obtained wins), so these hold whatever the user's ssh_config says. The destination always
//! follows `--`, so nothing after it can be parsed as an option.

use std::ffi::OsString;
use std::path::Path;

use crate::config::{HostEntry, SshConfigFile};
use crate::error::SshError;

/// The options every ssh process of ours carries (S15), without `-n`: the caller adds it
/// except for a ProxyCommand hop, whose stdin carries the tunnel.
pub fn common_options(entry: &HostEntry, jump: Option<&HostEntry>, ssh: &Path) -> Vec<String> {
    let secs = entry.connect_timeout.as_secs();
    let mut args: Vec<String> = [
        "-o",
        "BatchMode=yes",
        "-o",
        "StrictHostKeyChecking=accept-new",
        "-o",
        &format!("ConnectTimeout={secs}"),
        "-o",
        "ServerAliveInterval=10",
        "-o",
        "ServerAliveCountMax=3",
        "-o",
        "RequestTTY=no",
        "-T",
        "-o",
        "RemoteCommand=none",
        "-o",
        "ClearAllForwardings=yes",
        "-o",
        "PermitLocalCommand=no",
        "-p",
        &entry.port.to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if let Some(user) = &entry.username {
        args.extend(["-l".into(), user.clone()]);
    }
    if let Some(key) = &entry.key {
        args.extend(["-i".into(), key.display().to_string()]);
        args.extend(["-o".into(), "IdentitiesOnly=yes".into()]);
    }
    if let Some(known) = &entry.known_hosts {
        args.extend(["-o".into(), format!("UserKnownHostsFile={}", known.display())]);
    }
    match &entry.ssh_config {
        None => {}
        Some(SshConfigFile::None) => args.extend(["-F".into(), "none".into()]),
        Some(SshConfigFile::Path(p)) => args.extend(["-F".into(), p.display().to_string()]),
    }
    if let Some(jump) = jump {
        args.extend(["-o".into(), proxy_command(jump, ssh)]);
    }
    args
}

/// `ProxyCommand=ssh <the hop's options> -W %h:%p -- <hop>`, every element single-quoted
/// because OpenSSH runs a ProxyCommand through a shell.
fn proxy_command(jump: &HostEntry, ssh: &Path) -> String {
    let mut words = vec![ssh.display().to_string()];
    words.extend(common_options(jump, None, ssh));
    words.extend(["-W".into(), "%h:%p".into(), "--".into(), jump.host.clone()]);
    let quoted: Vec<String> = words
        .iter()
        .map(|w| if w == "%h:%p" { w.clone() } else { crate::wrap::sh_quote(w) })
        .collect();
    format!("ProxyCommand={}", quoted.join(" "))
}

/// `ssh -M -N -f` on our socket: authenticates, then forks a detached master that lives
/// 3600 s past its last session. It logs to `<socket>.log`, the source of connect errors.
pub fn master_args(
    entry: &HostEntry,
    jump: Option<&HostEntry>,
    ssh: &Path,
    socket: &Path,
) -> Vec<OsString> {
    let mut args: Vec<String> = vec!["-M".into(), "-N".into(), "-f".into(), "-n".into()];
    args.extend(["-o".into(), "ControlPersist=3600".into()]);
    args.extend(["-o".into(), format!("ControlPath={}", socket.display())]);
    args.extend(["-E".into(), log_path(socket).display().to_string()]);
    args.extend(common_options(entry, jump, ssh));
    args.extend(["--".into(), entry.host.clone()]);
    args.into_iter().map(OsString::from).collect()
}

/// One command over a fresh login, sharing nothing: a hung master's bypass, or reuse off.
pub fn direct_args(
    entry: &HostEntry,
    jump: Option<&HostEntry>,
    ssh: &Path,
    command: &str,
) -> Vec<OsString> {
    let mut args: Vec<String> = vec!["-n".into()];
    args.extend(["-o".into(), "ControlMaster=no".into(), "-o".into(), "ControlPath=none".into()]);
    args.extend(["-o".into(), "LogLevel=ERROR".into()]);
    args.extend(common_options(entry, jump, ssh));
    args.extend(["--".into(), entry.host.clone(), command.into()]);
    args.into_iter().map(OsString::from).collect()
}

/// A process-mux client on our socket. Its destination is `none` port 9, so if the master
/// refused it, ssh's own fallback to a fresh login can reach nothing.
pub fn process_mux_args(socket: &Path, command: &str) -> Vec<OsString> {
    let socket = socket.display().to_string();
    let args = [
        "-n",
        "-T",
        "-S",
        &socket,
        "-o",
        "ControlMaster=no",
        "-o",
        "BatchMode=yes",
        "-o",
        "LogLevel=ERROR",
        "-o",
        "ConnectTimeout=1",
        "-F",
        "none",
        "-p",
        "9",
        "--",
        "none",
        command,
    ];
    args.iter().map(OsString::from).collect()
}

/// `-O <op>` to the master on `socket` (`check`, `exit`).
pub fn control_args(socket: &Path, op: &str) -> Vec<OsString> {
    let socket = socket.display().to_string();
    let args = ["-S", &socket, "-o", "BatchMode=yes", "-F", "none", "-O", op, "--", "none"];
    args.iter().map(OsString::from).collect()
}

pub fn log_path(socket: &Path) -> std::path::PathBuf {
    let mut log = socket.as_os_str().to_owned();
    log.push(".log");
    log.into()
}

/// The call-time guard (S12): the values that reach argv, re-checked in case something
/// changed since load.
pub fn guard(entry: &HostEntry) -> Result<(), SshError> {
    let bad = |field: &str| SshError::Injection { name: entry.name.clone(), field: field.into() };
    let breaks = |s: &str| s.contains(['\0', '\r', '\n']);
    if entry.host.starts_with('-') || breaks(&entry.host) {
        return Err(bad("host"));
    }
    if let Some(user) = &entry.username
        && (user.starts_with('-') || breaks(user))
    {
        return Err(bad("username"));
    }
    for (field, path) in [("key", &entry.key), ("known_hosts", &entry.known_hosts)] {
        if let Some(path) = path
            && (!path.is_absolute() || breaks(&path.display().to_string()))
        {
            return Err(bad(field));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::Duration;

    use super::*;
    use crate::config::Compat;

    fn entry(name: &str, host: &str) -> HostEntry {
        HostEntry {
            name: name.into(),
            host: host.into(),
            username: Some("deploy".into()),
            port: 2222,
            key: Some(PathBuf::from("/k/id")),
            description: None,
            compat: Compat::Auto,
            connect_timeout: Duration::from_secs(7),
            max_sessions: 8,
            shell: None,
            proxy_jump: None,
            known_hosts: Some(PathBuf::from("/k/known")),
            ssh_config: Some(SshConfigFile::None),
            source: PathBuf::from("/p/ssh.json"),
        }
    }

    #[test]
    fn master_command_line() {
        let args = master_args(
            &entry("web", "10.0.0.5"),
            None,
            Path::new("/usr/bin/ssh"),
            Path::new("/run/x/ab"),
        );
        let line: Vec<String> = args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        assert_eq!(
            line.join(" "),
            "-M -N -f -n -o ControlPersist=3600 -o ControlPath=/run/x/ab -E /run/x/ab.log \
             -o BatchMode=yes -o StrictHostKeyChecking=accept-new -o ConnectTimeout=7 \
             -o ServerAliveInterval=10 -o ServerAliveCountMax=3 -o RequestTTY=no -T \
             -o RemoteCommand=none -o ClearAllForwardings=yes -o PermitLocalCommand=no -p 2222 \
             -l deploy -i /k/id -o IdentitiesOnly=yes -o UserKnownHostsFile=/k/known -F none \
             -- 10.0.0.5"
        );
    }

    #[test]
    fn proxy_jump_is_one_quoted_hop_without_n() {
        let hop = entry("bastion", "b.example");
        let command = proxy_command(&hop, Path::new("/usr/bin/ssh"));
        assert!(
            command.starts_with("ProxyCommand='/usr/bin/ssh' '-o' 'BatchMode=yes'"),
            "{command}"
        );
        assert!(command.ends_with("'-W' %h:%p '--' 'b.example'"), "{command}");
        assert!(!command.contains("'-n'"));
    }

    #[test]
    fn process_mux_goes_nowhere_on_fallback() {
        let args = process_mux_args(Path::new("/run/x/ab"), "echo hi");
        let line: Vec<String> = args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        assert!(line.join(" ").ends_with("-p 9 -- none echo hi"));
    }

    #[test]
    fn call_time_guard() {
        let mut bad = entry("web", "h");
        bad.username = Some("-oProxyCommand=x".into());
        assert_eq!(
            guard(&bad).unwrap_err().to_string(),
            "Refusing to connect to web: username looks like an ssh option"
        );
        assert!(guard(&entry("web", "h")).is_ok());
    }
}
