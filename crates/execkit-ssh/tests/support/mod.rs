//! A real sshd on 127.0.0.1, built by the tests themselves (spec-ssh "Test recipe").
//!
//! Throwaway host and user keys in a short temp dir, a config on a free port, and
//! `sshd -D` as a direct child of the test so the test reaps it. Running as root, the test
//! logs in as root with the throwaway key (authorized only by this sshd's own
//! AuthorizedKeysFile); otherwise as the current user. Drop sends `-O exit` to every master
//! in the test's control directory, then stops sshd: nothing is left running.

use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use execkit_process::{Supervisor, SupervisorConfig};
use execkit_ssh::{Environment, SshClient, SshOptions};
use serde_json::{Value, json};

/// Why the sshd tests cannot run here, or `None` when they can.
pub fn skip_reason() -> Option<String> {
    if std::env::var("EXECKIT_TEST_SSHD").as_deref() == Ok("0") {
        return Some("EXECKIT_TEST_SSHD=0".into());
    }
    for tool in ["ssh", "ssh-keygen"] {
        if which(tool).is_none() {
            return Some(format!("{tool} not found"));
        }
    }
    if sshd_path().is_none() {
        return Some("sshd not found (apt-get install openssh-server)".into());
    }
    None
}

/// Skips the calling test with a visible reason.
#[macro_export]
macro_rules! require_sshd {
    () => {
        if let Some(reason) = support::skip_reason() {
            eprintln!("SKIPPED: no test sshd: {reason}");
            return;
        }
    };
}

fn which(tool: &str) -> Option<PathBuf> {
    let path = std::env::var("PATH").unwrap_or_default();
    path.split(':').map(|d| Path::new(d).join(tool)).find(|p| p.is_file())
}

fn sshd_path() -> Option<PathBuf> {
    which("sshd").or_else(|| Some(PathBuf::from("/usr/sbin/sshd")).filter(|p| p.is_file()))
}

fn user() -> String {
    std::env::var("USER").ok().filter(|u| !u.is_empty()).unwrap_or_else(|| {
        let out = Command::new("id").arg("-un").output().unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    })
}

fn run_ok(cmd: &mut Command) {
    let status = cmd.stdout(Stdio::null()).stderr(Stdio::null()).status().unwrap();
    assert!(status.success(), "{cmd:?} failed");
}

/// One sshd with its own keys and log.
pub struct Sshd {
    pub dir: tempfile::TempDir,
    pub port: u16,
    pub user: String,
    pub key: PathBuf,
    child: Child,
    /// A throwaway user this sshd logs in as, removed on drop.
    made_user: bool,
}

impl Sshd {
    pub fn start(max_sessions: u32) -> Sshd {
        Sshd::start_for(max_sessions, None)
    }

    /// As root: logs in as a throwaway user whose login shell is `/bin/sh` with no rc
    /// files, so timings measure ssh and not the login shell's startup. Otherwise as
    /// [`Sshd::start`].
    pub fn start_with_plain_user(max_sessions: u32) -> Sshd {
        if unsafe { libc::geteuid() } != 0 {
            return Sshd::start(max_sessions);
        }
        let user = format!("ektest{}", std::process::id());
        run_ok(Command::new("useradd").args(["-m", "-s", "/bin/sh", &user]));
        run_ok(Command::new("usermod").args(["-p", "*", &user]));
        let mut sshd = Sshd::start_for(max_sessions, Some(user));
        sshd.made_user = true;
        sshd
    }

    fn start_for(max_sessions: u32, as_user: Option<String>) -> Sshd {
        let dir = tempfile::Builder::new().prefix("ek-sshd-").tempdir_in("/tmp").unwrap();
        let d = dir.path();
        for name in ["host_ed25519", "id_ed25519"] {
            run_ok(
                Command::new("ssh-keygen")
                    .args(["-q", "-t", "ed25519", "-N", ""])
                    .arg("-f")
                    .arg(d.join(name)),
            );
        }
        let public = std::fs::read_to_string(d.join("id_ed25519.pub")).unwrap();
        std::fs::write(d.join("authorized_keys"), public).unwrap();
        set_mode(&d.join("authorized_keys"), 0o644);
        set_mode(d, 0o711);
        if unsafe { libc::geteuid() } == 0 {
            std::fs::create_dir_all("/run/sshd").unwrap();
        }
        let user = as_user.unwrap_or_else(|| {
            if unsafe { libc::geteuid() } == 0 { "root".to_string() } else { user() }
        });
        for _ in 0..3 {
            let port = free_port();
            write_config(d, port, &user, max_sessions);
            let mut child = Command::new(sshd_path().unwrap())
                .arg("-D")
                .arg("-f")
                .arg(d.join("sshd_config"))
                .arg("-E")
                .arg(d.join("sshd.log"))
                .stdin(Stdio::null())
                .spawn()
                .unwrap();
            if wait_ready(port, &mut child) {
                let key = d.join("id_ed25519");
                return Sshd { dir, port, user, key, child, made_user: false };
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!(
            "sshd did not start: {}",
            std::fs::read_to_string(d.join("sshd.log")).unwrap_or_default()
        );
    }

    /// Logins sshd accepted so far (the log is at LogLevel VERBOSE).
    pub fn logins(&self) -> usize {
        let log = std::fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default();
        log.lines().filter(|l| l.contains("Accepted publickey")).count()
    }

    /// A host entry for this sshd, merged with `extra`.
    pub fn entry(&self, extra: Value) -> Value {
        let mut entry = json!({
            "host": "127.0.0.1",
            "port": self.port,
            "username": self.user,
            "key": self.key,
            "ssh_config": "none",
            "known_hosts": self.dir.path().join("known_hosts"),
        });
        if let (Some(base), Some(more)) = (entry.as_object_mut(), extra.as_object()) {
            base.extend(more.clone());
        }
        entry
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let until = Instant::now() + Duration::from_secs(5);
        let mut exited = false;
        while Instant::now() < until && !exited {
            exited = matches!(self.child.try_wait(), Ok(Some(_)));
            if !exited {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        if !exited {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        if self.made_user {
            let _ = Command::new("userdel").args(["-r", &self.user]).stderr(Stdio::null()).status();
        }
    }
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn write_config(dir: &Path, port: u16, user: &str, max_sessions: u32) {
    let d = dir.display();
    let text = format!(
        "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_ed25519\nAuthorizedKeysFile {d}/authorized_keys\n\
         PidFile none\nUsePAM no\nStrictModes no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
         PermitRootLogin prohibit-password\nAllowUsers {user}\nLogLevel VERBOSE\nMaxSessions {max_sessions}\n\
         MaxStartups 100\n"
    );
    std::fs::write(dir.join("sshd_config"), text).unwrap();
}

/// Ready when the port sends an SSH banner; false when sshd exited first or 10 s passed.
fn wait_ready(port: u16, child: &mut Child) -> bool {
    let until = Instant::now() + Duration::from_secs(10);
    while Instant::now() < until {
        if let Ok(Some(_)) = child.try_wait() {
            return false;
        }
        if let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) {
            stream.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
            let mut banner = [0u8; 8];
            if stream.read_exact(&mut banner).is_ok() && banner.starts_with(b"SSH-") {
                return true;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

/// A project with `.execkit/ssh.json`, a short private control directory and its own HOME
/// (for the probe cache). Drop stops every master in the control directory.
pub struct Project {
    pub root: tempfile::TempDir,
    pub control: PathBuf,
    pub home: tempfile::TempDir,
    _control_parent: tempfile::TempDir,
}

impl Project {
    pub fn new(hosts: Value) -> Project {
        let root = tempfile::tempdir().unwrap();
        let control_parent = tempfile::Builder::new().prefix("ek").tempdir_in("/tmp").unwrap();
        let control = control_parent.path().join("c");
        let home = tempfile::tempdir().unwrap();
        let project = Project { root, control, home, _control_parent: control_parent };
        project.write(json!({ "hosts": hosts }));
        project
    }

    pub fn write(&self, document: Value) {
        let dir = self.root.path().join(".execkit");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("ssh.json"), serde_json::to_string_pretty(&document).unwrap())
            .unwrap();
    }

    pub fn env(&self) -> Environment {
        Environment::from_vars([
            ("PATH", std::env::var("PATH").unwrap_or_default()),
            ("HOME", self.home.path().display().to_string()),
            ("EXECKIT_SSH_CONTROL_DIR", self.control.display().to_string()),
        ])
    }

    pub fn client(&self) -> SshClient {
        self.client_with(SshOptions::default())
    }

    pub fn client_with(&self, options: SshOptions) -> SshClient {
        SshClient::new(self.root.path(), self.env(), supervisor(), options)
    }

    /// `ssh -O check` on a socket: the master's pid when it answers.
    pub fn master_pid(socket: &Path) -> Option<u32> {
        let out = Command::new("ssh")
            .arg("-S")
            .arg(socket)
            .args(["-O", "check", "none"])
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stderr);
        let at = text.find("pid=")? + 4;
        text[at..].trim_end_matches([')', '\n', '\r']).trim_end_matches(')').parse().ok()
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        let Ok(entries) = std::fs::read_dir(&self.control) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_none() {
                let _ = Command::new("ssh")
                    .arg("-S")
                    .arg(&path)
                    .args(["-o", "BatchMode=yes", "-O", "exit", "none"])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status();
            }
        }
    }
}

pub fn supervisor() -> Supervisor {
    Supervisor::start(SupervisorConfig::default()).unwrap()
}

/// ssh processes whose command line mentions `needle`.
pub fn processes_mentioning(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if text.contains(needle) && !text.contains("cargo") {
            found.push(text);
        }
    }
    found
}

/// Pids whose whole command line is `cmdline` (words joined by spaces).
pub fn pids_running(cmdline: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let raw = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let text = String::from_utf8_lossy(&raw).trim_end_matches('\0').replace('\0', " ");
        if text == cmdline {
            found.push(pid);
        }
    }
    found
}

/// Sends SIGKILL to these pids when dropped, panics included.
pub struct KillOnDrop(pub Vec<u32>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        for pid in &self.0 {
            unsafe { libc::kill(*pid as i32, libc::SIGKILL) };
        }
    }
}
