//! The job tool's knobs: how many jobs may run at once (J3), how long finished ones stay
//! listed (J7) and how long one poll waits (J12).

use std::time::Duration;

use execkit_tool::{Knob, KnobError, Lookup, Notes};

const MAX_RUNNING: Knob = Knob { name: "EXECKIT_JOB_MAX_RUNNING", default: 16, min: 1, max: 64 };
const RETENTION: Knob = Knob { name: "EXECKIT_JOB_RETENTION", default: 300, min: 0, max: 86400 };
const WAIT: Knob = Knob { name: "EXECKIT_JOB_WAIT", default: 30, min: 1, max: 600 };

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobConfig {
    /// Running jobs at once, adopted ones included.
    pub max_running: usize,
    /// How long a finished job stays listed.
    pub retention: Duration,
    /// How long one poll waits for a watched job.
    pub wait: Duration,
    /// The kill grace, which bounds how long a cancel waits. Not a job knob: the Toolkit sets
    /// it from the process limits after reading (the default is the limits' default).
    pub kill_grace: Duration,
}

impl JobConfig {
    /// Reads the job knobs; `kill_grace` keeps its default.
    pub fn from_lookup(lookup: &Lookup, notes: &mut Notes) -> Result<JobConfig, KnobError> {
        Ok(JobConfig {
            max_running: MAX_RUNNING.read(lookup, notes)? as usize,
            retention: Duration::from_secs(RETENTION.read(lookup, notes)?),
            wait: Duration::from_secs(WAIT.read(lookup, notes)?),
            ..JobConfig::default()
        })
    }
}

impl Default for JobConfig {
    fn default() -> Self {
        JobConfig {
            max_running: MAX_RUNNING.default as usize,
            retention: Duration::from_secs(RETENTION.default),
            wait: Duration::from_secs(WAIT.default),
            kill_grace: Duration::from_millis(execkit_output::clamp::KILL_GRACE_MS.default),
        }
    }
}
