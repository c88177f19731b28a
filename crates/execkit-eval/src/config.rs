//! Eval configuration: the `EXECKIT_EVAL_*` knobs, read once through the Toolkit's lookup
//! when the runner is built.

use std::path::PathBuf;
use std::time::Duration;

use execkit_protocol::eval::Language;
use execkit_tool::{Knob, KnobError, Lookup, Notes};

/// Which backends `EXECKIT_EVAL_BACKENDS` enables (spec E25).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backends {
    Both,
    PythonOnly,
    JsOnly,
}

/// What `EXECKIT_EVAL_BACKENDS` accepts, for the start error.
const BACKENDS_ACCEPTS: &str = "one of 0, bash, js, 1, py, mix, both";

impl Backends {
    /// The setting's value; unset means both, an unknown word is an error naming the knob.
    pub fn parse(value: Option<&str>) -> Result<Backends, KnobError> {
        let Some(raw) = value else { return Ok(Backends::Both) };
        match raw.trim().to_ascii_lowercase().as_str() {
            "0" | "bash" | "js" => Ok(Backends::JsOnly),
            "1" | "py" => Ok(Backends::PythonOnly),
            "mix" | "both" | "" => Ok(Backends::Both),
            _ => Err(KnobError::new("EXECKIT_EVAL_BACKENDS", raw, BACKENDS_ACCEPTS)),
        }
    }

    pub fn enabled(&self, language: Language) -> bool {
        match self {
            Backends::Both => true,
            Backends::PythonOnly => language == Language::Py,
            Backends::JsOnly => language == Language::Js,
        }
    }

    /// The languages the published schema lists (spec E26).
    pub fn languages(&self) -> Vec<Language> {
        [Language::Py, Language::Js].into_iter().filter(|l| self.enabled(*l)).collect()
    }
}

/// Whether kernels live across calls or only for one call (spec E38).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelMode {
    Session,
    PerCall,
}

impl KernelMode {
    fn parse(value: Option<&str>) -> Result<KernelMode, KnobError> {
        match value.map(str::trim) {
            None | Some("" | "session") => Ok(KernelMode::Session),
            Some("per-call") => Ok(KernelMode::PerCall),
            Some(_) => Err(KnobError::new(
                "EXECKIT_EVAL_KERNEL_MODE",
                value.unwrap_or_default(),
                "one of session, per-call",
            )),
        }
    }
}

const MAX_KERNELS: Knob = Knob { name: "EXECKIT_EVAL_MAX_KERNELS", default: 4, min: 1, max: 16 };
const IDLE_TIMEOUT: Knob =
    Knob { name: "EXECKIT_EVAL_IDLE_TIMEOUT", default: 300, min: 0, max: 86_400 };
const PREWARM: Knob = Knob { name: "EXECKIT_EVAL_PREWARM", default: 1, min: 0, max: 1 };
const SNAPSHOT: Knob = Knob { name: "EXECKIT_EVAL_SNAPSHOT", default: 1, min: 0, max: 1 };

/// Everything the eval runner reads from its knobs.
#[derive(Debug, Clone)]
pub struct EvalConfig {
    pub backends: Backends,
    /// `EXECKIT_EVAL_BACKENDS` as written, for messages naming the setting.
    pub backends_value: Option<String>,
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
    /// How long a call waits for another call on its session to finish (spec E8).
    pub session_wait: Duration,
    /// Budget for the kernel's `ready` handshake (spec E30).
    pub ready_timeout: Duration,
    /// Grace between SIGINT and SIGKILL when a cell times out (spec P17).
    pub interrupt_grace: Duration,
    /// `EXECKIT_EVAL_TRACE`.
    pub trace: bool,
    /// Test hook: run this script with the resolved interpreter instead of the embedded
    /// runner. The protocol tests point it at fixture kernels that misbehave on purpose;
    /// nothing reads it from the environment.
    pub kernel_script: Option<PathBuf>,
}

impl EvalConfig {
    /// Reads every knob through `lookup`: a number out of range is clamped with a line in
    /// `notes`; a value that does not parse is an error, and the Toolkit does not start.
    pub fn from_lookup(lookup: &Lookup, notes: &mut Notes) -> Result<EvalConfig, KnobError> {
        let max_kernels = MAX_KERNELS.read(lookup, notes)? as usize;
        let idle = IDLE_TIMEOUT.read(lookup, notes)?;
        let backends_value = lookup.get("EXECKIT_EVAL_BACKENDS").map(str::to_string);
        // `temp_dir` is only the fallback when HOME is unset.
        let home = lookup.get("HOME").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
        Ok(EvalConfig {
            backends: Backends::parse(backends_value.as_deref())?,
            backends_value,
            max_kernels,
            idle_timeout: (idle > 0).then(|| Duration::from_secs(idle)),
            prewarm: PREWARM.read(lookup, notes)? == 1,
            mode: KernelMode::parse(lookup.get("EXECKIT_EVAL_KERNEL_MODE"))?,
            snapshot: SNAPSHOT.read(lookup, notes)? == 1,
            python: lookup.non_empty("EXECKIT_PYTHON"),
            env_allow: env_allow(lookup.get("EXECKIT_EVAL_ENV_ALLOW")),
            cache_dir: home.join(".execkit").join("cache"),
            session_wait: Duration::from_secs(30),
            ready_timeout: Duration::from_secs(10),
            interrupt_grace: Duration::from_secs(5),
            trace: lookup.is_on("EXECKIT_EVAL_TRACE"),
            kernel_script: None,
        })
    }
}

/// `EXECKIT_EVAL_ENV_ALLOW`: names or `PREFIX_*` patterns separated by commas or spaces.
fn env_allow(value: Option<&str>) -> Vec<String> {
    value
        .map(|v| {
            v.split(|c: char| c == ',' || c.is_whitespace())
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(vars: &[(&str, &str)]) -> (Result<EvalConfig, KnobError>, Notes) {
        let lookup = Lookup::from_vars(vars.iter().copied());
        let mut notes = Notes::default();
        (EvalConfig::from_lookup(&lookup, &mut notes), notes)
    }

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
            assert_eq!(Backends::parse(v), Ok(want), "{v:?}");
        }
        assert_eq!(Backends::PythonOnly.languages(), vec![Language::Py]);
    }

    #[test]
    fn an_unknown_word_fails_the_start_naming_what_is_accepted() {
        let (cfg, _) = read(&[("EXECKIT_EVAL_BACKENDS", "ruby")]);
        assert_eq!(
            cfg.unwrap_err().to_string(),
            "EXECKIT_EVAL_BACKENDS=\"ruby\" is not one of 0, bash, js, 1, py, mix, both"
        );
        let (cfg, _) = read(&[("EXECKIT_EVAL_KERNEL_MODE", "forever")]);
        assert_eq!(
            cfg.unwrap_err().to_string(),
            "EXECKIT_EVAL_KERNEL_MODE=\"forever\" is not one of session, per-call"
        );
        let (cfg, _) = read(&[("EXECKIT_EVAL_MAX_KERNELS", "many")]);
        assert!(cfg.unwrap_err().to_string().starts_with("EXECKIT_EVAL_MAX_KERNELS=\"many\""));
    }

    #[test]
    fn knobs_clamp_with_notes() {
        let (cfg, notes) =
            read(&[("EXECKIT_EVAL_MAX_KERNELS", "40"), ("EXECKIT_EVAL_IDLE_TIMEOUT", "0")]);
        let cfg = cfg.unwrap();
        assert_eq!(cfg.max_kernels, 16);
        assert_eq!(cfg.idle_timeout, None);
        assert_eq!(notes.lines(), ["EXECKIT_EVAL_MAX_KERNELS=40 is outside 1..16; using 16"]);
        let (cfg, _) = read(&[("EXECKIT_EVAL_KERNEL_MODE", "per-call")]);
        assert_eq!(cfg.unwrap().mode, KernelMode::PerCall);
    }
}
