//! Eval configuration: `EXECKIT_EVAL_*` knobs, read once when the runner is built.

use std::path::PathBuf;
use std::time::Duration;

use execkit_output::clamp::Knob;
use execkit_protocol::eval::Language;

/// Which backends `EXECKIT_EVAL_BACKENDS` enables (E25).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backends {
    Both,
    PythonOnly,
    JsOnly,
    /// Any other value: every eval call and doctor report it.
    Invalid(String),
}

impl Backends {
    pub fn parse(value: Option<&str>) -> Backends {
        let Some(raw) = value else { return Backends::Both };
        match raw.trim().to_ascii_lowercase().as_str() {
            "0" | "bash" | "js" => Backends::JsOnly,
            "1" | "py" => Backends::PythonOnly,
            "mix" | "both" | "" => Backends::Both,
            _ => Backends::Invalid(raw.to_string()),
        }
    }

    pub fn enabled(&self, language: Language) -> bool {
        match self {
            Backends::Both => true,
            Backends::PythonOnly => language == Language::Py,
            Backends::JsOnly => language == Language::Js,
            Backends::Invalid(_) => false,
        }
    }

    /// The message for an invalid value, when it is one.
    pub fn invalid_message(&self) -> Option<String> {
        match self {
            Backends::Invalid(v) => Some(format!(
                "EXECKIT_EVAL_BACKENDS={v:?} is invalid; use one of 0, bash, js, 1, py, mix, both"
            )),
            _ => None,
        }
    }

    /// The languages the published schema lists (E26).
    pub fn languages(&self) -> Vec<Language> {
        [Language::Py, Language::Js].into_iter().filter(|l| self.enabled(*l)).collect()
    }
}

/// Whether kernels live across calls (E38).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelMode {
    Session,
    PerCall,
}

/// Everything the eval runner reads from the environment.
#[derive(Debug, Clone)]
pub struct EvalConfig {
    /// The Toolkit's working directory (canonicalised by the runner).
    pub cwd: PathBuf,
    pub backends: Backends,
    /// `EXECKIT_EVAL_MAX_KERNELS`, 1..16, per language.
    pub max_kernels: usize,
    /// `EXECKIT_EVAL_IDLE_TIMEOUT`; `None` = never.
    pub idle_timeout: Option<Duration>,
    pub prewarm: bool,
    pub mode: KernelMode,
    pub snapshot: bool,
    /// `EXECKIT_PYTHON`.
    pub python: Option<String>,
    /// `EXECKIT_EVAL_ENV_ALLOW` entries (names or `PREFIX_*`).
    pub env_allow: Vec<String>,
    /// Where the kernel files and the interpreter cache live (`~/.execkit/cache`).
    pub cache_dir: PathBuf,
    /// How long a call waits for its session (E8).
    pub session_wait: Duration,
    /// Budget for the `ready` handshake (E30).
    pub ready_timeout: Duration,
    /// Grace between SIGINT and SIGKILL on timeout (P17).
    pub interrupt_grace: Duration,
    /// Names of the tools `tool.<name>` may call (eval itself excluded by the runner).
    pub tools: Vec<String>,
    /// `EXECKIT_EVAL_TRACE`.
    pub trace: bool,
    /// The environment kernels start from, before the allowlist and scrub; `None` is this
    /// process's environment. The dispatcher passes its own view, so embedders and tests never
    /// have to change the process environment.
    pub base_env: Option<Vec<(std::ffi::OsString, std::ffi::OsString)>>,
    /// Test hook: run this script with the resolved interpreter instead of the embedded
    /// runner. The protocol tests point it at fixture kernels that misbehave on purpose
    /// (E30–E31); nothing reads it from the environment.
    pub kernel_script: Option<PathBuf>,
    /// Doctor notes collected while reading the knobs.
    pub notes: Vec<String>,
}

impl EvalConfig {
    /// Reads every knob through `lookup` (normally `std::env::var`).
    pub fn from_lookup(cwd: PathBuf, lookup: &dyn Fn(&str) -> Option<String>) -> EvalConfig {
        let mut notes = Vec::new();
        // The shared knob reader; a value that is not a number keeps the default with a
        // doctor note, so a typo in an eval knob never stops bash from working.
        let mut num = |name: &'static str, default: u64, min: u64, max: u64| -> u64 {
            let knob = Knob { name, default, min, max };
            knob.read(lookup, &mut notes).unwrap_or_else(|err| {
                notes.push(format!("{err}; using {default}"));
                default
            })
        };
        let max_kernels = num("EXECKIT_EVAL_MAX_KERNELS", 4, 1, 16) as usize;
        let idle = num("EXECKIT_EVAL_IDLE_TIMEOUT", 300, 0, 86_400);
        let prewarm = num("EXECKIT_EVAL_PREWARM", 1, 0, 1) == 1;
        let snapshot = num("EXECKIT_EVAL_SNAPSHOT", 1, 0, 1) == 1;
        let mode = match lookup("EXECKIT_EVAL_KERNEL_MODE").as_deref() {
            Some("per-call") => KernelMode::PerCall,
            _ => KernelMode::Session,
        };
        let home = lookup("HOME").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
        let env_allow = lookup("EXECKIT_EVAL_ENV_ALLOW")
            .map(|v| {
                v.split(|c: char| c == ',' || c.is_whitespace())
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        EvalConfig {
            cwd,
            backends: Backends::parse(lookup("EXECKIT_EVAL_BACKENDS").as_deref()),
            max_kernels,
            idle_timeout: (idle > 0).then(|| Duration::from_secs(idle)),
            prewarm,
            mode,
            snapshot,
            python: lookup("EXECKIT_PYTHON").filter(|s| !s.is_empty()),
            env_allow,
            cache_dir: home.join(".execkit").join("cache"),
            session_wait: Duration::from_secs(30),
            ready_timeout: Duration::from_secs(10),
            interrupt_grace: Duration::from_secs(5),
            tools: vec!["bash".into(), "debug".into(), "job".into(), "ssh".into()],
            trace: lookup("EXECKIT_EVAL_TRACE").as_deref() == Some("1"),
            kernel_script: None,
            notes,
            base_env: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backends_values() {
        for (v, want) in [
            (None, Backends::Both),
            (Some("0"), Backends::JsOnly),
            (Some("BASH"), Backends::JsOnly),
            (Some("js"), Backends::JsOnly),
            (Some("1"), Backends::PythonOnly),
            (Some("Py"), Backends::PythonOnly),
            (Some("mix"), Backends::Both),
            (Some("both"), Backends::Both),
        ] {
            assert_eq!(Backends::parse(v), want, "{v:?}");
        }
        let bad = Backends::parse(Some("ruby"));
        assert_eq!(
            bad.invalid_message().unwrap(),
            "EXECKIT_EVAL_BACKENDS=\"ruby\" is invalid; use one of 0, bash, js, 1, py, mix, both"
        );
        assert!(bad.languages().is_empty());
        assert_eq!(Backends::PythonOnly.languages(), vec![Language::Py]);
    }

    #[test]
    fn knobs_clamp_with_notes() {
        let cfg = EvalConfig::from_lookup(PathBuf::from("/"), &|name| match name {
            "EXECKIT_EVAL_MAX_KERNELS" => Some("40".into()),
            "EXECKIT_EVAL_IDLE_TIMEOUT" => Some("0".into()),
            _ => None,
        });
        assert_eq!(cfg.max_kernels, 16);
        assert_eq!(cfg.idle_timeout, None);
        assert_eq!(cfg.notes, vec!["EXECKIT_EVAL_MAX_KERNELS=40 is outside 1..16; using 16"]);
    }
}
