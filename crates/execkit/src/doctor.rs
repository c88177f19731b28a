//! `execkit doctor`: what the Toolkit found about its environment, one section per part.

use execkit_output::artifact::ArtifactStore;
use execkit_output::clamp::Limits;
use execkit_process::{Containment, Supervisor};

/// One section of `execkit doctor`.
#[derive(Debug, Clone)]
pub struct DoctorSection {
    pub title: String,
    pub lines: Vec<String>,
}

impl DoctorSection {
    pub(crate) fn new(title: &str, lines: Vec<String>) -> DoctorSection {
        DoctorSection { title: title.to_string(), lines }
    }
}

#[derive(Debug, Clone)]
pub struct Doctor {
    pub sections: Vec<DoctorSection>,
}

/// Containment, the run directory, the kill grace and the watchdog.
pub(crate) fn processes(supervisor: &Supervisor, limits: &Limits) -> DoctorSection {
    let containment = match supervisor.containment() {
        Containment::Cgroup { root } => format!("containment: cgroup v2 ({})", root.display()),
        Containment::ProcessGroup { reason } => format!(
            "containment: process group ({reason}); to enable cgroups run under \
             `systemd-run --user --scope -p Delegate=yes execkit mcp`"
        ),
    };
    let run_dir = match supervisor.run_dir_note() {
        Some(why) => format!("run directory: {} ({why})", supervisor.run_dir().display()),
        None => format!("run directory: {}", supervisor.run_dir().display()),
    };
    DoctorSection::new(
        "processes",
        vec![
            containment,
            run_dir,
            format!("kill grace: {} ms", limits.kill_grace_ms),
            watchdog_line(supervisor),
        ],
    )
}

/// Where artifacts are kept, or why they are off.
pub(crate) fn artifacts(store: &Result<ArtifactStore, String>) -> DoctorSection {
    let line = match store {
        Ok(store) => format!("directory: {}", store.dir().display()),
        Err(reason) => format!("off: {reason}"),
    };
    DoctorSection::new("artifacts", vec![line])
}

/// What kills this process's children's descendants if it dies by SIGKILL (O41).
fn watchdog_line(supervisor: &Supervisor) -> String {
    match (supervisor.watchdog(), supervisor.containment()) {
        (Err(why), _) => format!("watchdog: off ({why})"),
        (Ok(pid), Containment::Cgroup { .. }) => format!("watchdog: pid {pid}"),
        (Ok(pid), Containment::ProcessGroup { .. }) => format!(
            "watchdog: pid {pid}; without cgroups a `setsid` escapee is in no process group it \
             knows and can outlive a SIGKILL of execkit"
        ),
    }
}
