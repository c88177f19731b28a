//! The debug tool's knobs, read once through the Toolkit's lookup.

use std::path::PathBuf;
use std::time::Duration;

use execkit_tool::{Knob, KnobError, Lookup, Notes};

/// How long a session may sit unused before it is terminated (spec: 600 s; tests lower it).
const IDLE_SECS: Knob = Knob { name: "EXECKIT_DEBUG_IDLE_SECS", default: 600, min: 1, max: 86_400 };

/// How often the idle sweep looks; never longer than half the idle time, so a short idle
/// limit (tests) is honoured within its own order of magnitude.
const SWEEP_EVERY: Duration = Duration::from_secs(30);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DebugConfig {
    pub idle: Duration,
    pub sweep: Duration,
    /// Credential-looking values are masked in results (`EXECKIT_DEBUG_REDACT=0` turns it off).
    pub redact: bool,
    /// `EXECKIT_DAP_TRACE`: an NDJSON trace of every DAP message.
    pub trace: Option<PathBuf>,
    /// `EXECKIT_DEBUGPY_NODELAY=0` turns off the TCP_NODELAY fix for debugpy debuggees.
    pub debugpy_nodelay: bool,
}

impl DebugConfig {
    pub fn from_lookup(lookup: &Lookup, notes: &mut Notes) -> Result<DebugConfig, KnobError> {
        let idle = Duration::from_secs(IDLE_SECS.read(lookup, notes)?);
        Ok(DebugConfig {
            idle,
            sweep: SWEEP_EVERY.min(idle / 2).max(Duration::from_millis(200)),
            redact: switch(lookup, "EXECKIT_DEBUG_REDACT")?,
            trace: lookup.non_empty("EXECKIT_DAP_TRACE").map(PathBuf::from),
            debugpy_nodelay: switch(lookup, "EXECKIT_DEBUGPY_NODELAY")?,
        })
    }
}

/// An on-by-default switch: unset, empty or `1` is on, `0` is off.
fn switch(lookup: &Lookup, name: &str) -> Result<bool, KnobError> {
    match lookup.get(name).map(str::trim) {
        None | Some("") | Some("1") => Ok(true),
        Some("0") => Ok(false),
        Some(other) => Err(KnobError::new(name, other, "0 or 1")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_switches() {
        let mut notes = Notes::default();
        let config = DebugConfig::from_lookup(&Lookup::default(), &mut notes).unwrap();
        assert_eq!(config.idle, Duration::from_secs(600));
        assert_eq!(config.sweep, Duration::from_secs(30));
        assert!(config.redact && config.debugpy_nodelay);
        let lookup =
            Lookup::from_vars([("EXECKIT_DEBUG_IDLE_SECS", "2"), ("EXECKIT_DEBUG_REDACT", "0")]);
        let config = DebugConfig::from_lookup(&lookup, &mut notes).unwrap();
        assert_eq!(config.sweep, Duration::from_secs(1));
        assert!(!config.redact);
        let bad = Lookup::from_vars([("EXECKIT_DEBUG_REDACT", "yes")]);
        assert!(DebugConfig::from_lookup(&bad, &mut notes).is_err());
    }
}
