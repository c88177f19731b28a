//! Errors of the eval crate. Every message is one line a model can act on.

/// A kernel that did not come up (E30).
#[derive(Debug, Clone, thiserror::Error)]
pub enum StartError {
    /// Silence, an early exit or a bad first frame.
    #[error("{lang} kernel failed to start: {reason}")]
    Failed { lang: &'static str, reason: String, diag: String },
    #[error("{lang} kernel speaks protocol {got}, execkit expects 1; reinstall execkit")]
    Protocol { lang: &'static str, got: u32 },
    /// A frame before `ready` (E31): the kernel was killed; the cell is `crashed`.
    #[error("{lang} kernel broke the protocol ({reason})")]
    Broke { lang: &'static str, reason: String },
    /// No interpreter resolved (E27).
    #[error("{0}")]
    NoInterpreter(String),
    /// The kernel files could not be written to the cache directory.
    #[error("cannot write the kernel files to {path}: {reason}")]
    Files { path: String, reason: String },
}

impl StartError {
    /// The diagnostic tail captured while the kernel failed, when there is one.
    pub fn diag(&self) -> Option<&str> {
        match self {
            StartError::Failed { diag, .. } if !diag.is_empty() => Some(diag),
            _ => None,
        }
    }
}

/// Why a cell could not get a kernel (besides a failed start).
#[derive(Debug, Clone, thiserror::Error)]
pub enum PoolError {
    #[error(transparent)]
    Start(#[from] StartError),
    /// Every live kernel of the language is running a cell and the cap allows no more (spec E35).
    #[error(
        "all {max} {lang} kernels are busy; retry when a cell finishes or raise EXECKIT_EVAL_MAX_KERNELS"
    )]
    AllBusy { max: usize, lang: &'static str },
    /// The key's kernel died twice, so it is not restarted automatically (spec E33); the
    /// message is the KernelUnavailable evalue.
    #[error("{0}")]
    Unavailable(String),
}
