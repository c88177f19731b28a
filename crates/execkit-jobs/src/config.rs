//! Job knobs (spec-bash J3, J7, J12).

use std::time::Duration;

use execkit_output::clamp::{Knob, KnobError};

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
    /// The kill grace, which bounds how long a cancel waits.
    pub kill_grace: Duration,
}

impl JobConfig {
    pub fn from_lookup(
        lookup: &dyn Fn(&str) -> Option<String>,
        notes: &mut Vec<String>,
        kill_grace: Duration,
    ) -> Result<JobConfig, KnobError> {
        Ok(JobConfig {
            max_running: MAX_RUNNING.read(lookup, notes)? as usize,
            retention: Duration::from_secs(RETENTION.read(lookup, notes)?),
            wait: Duration::from_secs(WAIT.read(lookup, notes)?),
            kill_grace,
        })
    }
}

impl Default for JobConfig {
    fn default() -> Self {
        JobConfig {
            max_running: MAX_RUNNING.default as usize,
            retention: Duration::from_secs(RETENTION.default),
            wait: Duration::from_secs(WAIT.default),
            kill_grace: Duration::from_millis(2000),
        }
    }
}
