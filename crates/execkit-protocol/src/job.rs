//! Params of the `job` tool (spec-bash.md J10).

use schemars::JsonSchema;
use serde::Deserialize;

use crate::args::FieldHints;

/// Wait for, cancel or list background jobs.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JobParams {
    /// Job ids (`bg_<n>`) to wait for; empty or absent waits for any running job.
    #[serde(default)]
    pub poll: Option<Vec<String>>,
    /// Job ids to stop (the whole process tree).
    #[serde(default)]
    pub cancel: Option<Vec<String>>,
    /// List every job at once, newest first.
    #[serde(default)]
    pub list: Option<bool>,
}

impl FieldHints for JobParams {
    fn hint(_field: &str) -> Option<&'static str> {
        None
    }
}
