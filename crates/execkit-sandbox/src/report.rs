//! What the model sees of the policy: `structuredContent.sandbox` and the fail-closed text.

use std::path::PathBuf;

use serde::Serialize;

use crate::options::Mode;
use crate::policy::Policy;

/// How much of a confined policy the kernel enforces, found once when the Toolkit starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Enforcement {
    /// Every part of the policy.
    Full,
    /// The filesystem rules, without the parts named (`"protected paths (no user namespaces)"`).
    Partial { missing: Vec<String> },
    /// Nothing can be enforced: every call that would start a process fails, naming why.
    Unavailable { reason: String },
}

impl Enforcement {
    pub fn as_str(&self) -> &'static str {
        match self {
            Enforcement::Full => "full",
            Enforcement::Partial { .. } => "partial",
            Enforcement::Unavailable { .. } => "unavailable",
        }
    }
}

/// `structuredContent.sandbox` of a result whose tool starts processes, when confined.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SandboxReport {
    pub mode: &'static str,
    pub network: &'static str,
    pub writable_roots: Vec<PathBuf>,
    pub enforcement: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing: Option<Vec<String>>,
    pub denied: bool,
    pub runner_failed: bool,
    /// The call ran outside the sandbox with a person's approval.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub escalated: bool,
}

impl SandboxReport {
    /// The report of a call under `policy`, before anything about the call is known.
    pub fn new(policy: &Policy, enforcement: &Enforcement) -> SandboxReport {
        let missing = match enforcement {
            Enforcement::Partial { missing } => Some(missing.clone()),
            Enforcement::Unavailable { reason } => Some(vec![reason.clone()]),
            Enforcement::Full => None,
        };
        SandboxReport {
            mode: policy.mode.as_str(),
            network: policy.network.as_str(),
            writable_roots: policy.writable_roots.clone(),
            enforcement: enforcement.as_str(),
            missing,
            denied: false,
            runner_failed: matches!(enforcement, Enforcement::Unavailable { .. }),
            escalated: false,
        }
    }
}

/// The only text of a call refused because the mode cannot be enforced here.
pub fn unavailable_text(mode: Mode, reason: &str) -> String {
    if !cfg!(target_os = "linux") {
        return format!("Sandbox unavailable: {} is implemented on Linux only.", mode.as_str());
    }
    format!(
        "Sandbox unavailable: {} needs Landlock (Linux 5.13+, \"landlock\" in the kernel's LSM \
         list); this kernel reports {reason}. Nothing was run. Start execkit without --sandbox \
         to run unconfined.",
        mode.as_str()
    )
}
