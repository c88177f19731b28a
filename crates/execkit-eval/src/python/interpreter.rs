//! What probing a Python interpreter tells: the accepted interpreter and, when none is
//! accepted, every candidate with the reason it was rejected.

use std::path::PathBuf;

/// A probed, accepted interpreter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interpreter {
    /// What was found (the candidate path, maybe a shim).
    pub candidate: PathBuf,
    /// Where it came from: `EXECKIT_PYTHON`, `VIRTUAL_ENV`, `.venv`, `PATH`, ….
    pub source: String,
    /// The real binary (`sys.executable`), used for every spawn.
    pub executable: PathBuf,
    pub version: (u32, u32, u32),
    pub prefix: PathBuf,
    pub is_venv: bool,
}

/// The outcome of resolution: the chosen interpreter and every rejected candidate.
#[derive(Debug, Clone, Default)]
pub struct Resolution {
    pub chosen: Option<Interpreter>,
    pub rejected: Vec<(PathBuf, String)>,
}

impl Resolution {
    /// The message when no interpreter was accepted, naming every candidate tried and why it
    /// was rejected (spec E27).
    pub fn missing_message(&self) -> String {
        let tried: Vec<String> =
            self.rejected.iter().map(|(path, why)| format!("{} ({why})", path.display())).collect();
        format!(
            "no Python ≥ 3.8 found; tried: {}; set EXECKIT_PYTHON or create .venv",
            if tried.is_empty() { "nothing".to_string() } else { tried.join(", ") }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_message_lists_candidates() {
        let r = Resolution {
            chosen: None,
            rejected: vec![(
                PathBuf::from("/usr/bin/python3"),
                "Python 3.7.3 is older than 3.8".into(),
            )],
        };
        assert_eq!(
            r.missing_message(),
            "no Python ≥ 3.8 found; tried: /usr/bin/python3 (Python 3.7.3 is older than 3.8); \
             set EXECKIT_PYTHON or create .venv"
        );
    }
}
