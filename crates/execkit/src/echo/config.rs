//! The echo tool's knob: how many times one call may repeat its text.

use execkit_tool::{Knob, KnobError, Lookup, Notes};

const MAX_REPEAT: Knob = Knob { name: "EXECKIT_ECHO_MAX_REPEAT", default: 3, min: 1, max: 10 };

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EchoConfig {
    pub max_repeat: u64,
}

impl EchoConfig {
    pub fn from_lookup(lookup: &Lookup, notes: &mut Notes) -> Result<EchoConfig, KnobError> {
        Ok(EchoConfig { max_repeat: MAX_REPEAT.read(lookup, notes)? })
    }
}
