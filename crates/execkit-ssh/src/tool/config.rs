//! The ssh tool's knob: which mux client opens sessions on a master.

use execkit_tool::{KnobError, Lookup, Notes};

use crate::client::MuxClient;

const MUX: &str = "EXECKIT_SSH_MUX";

/// What the Toolkit reads for the ssh tool before anything starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshToolConfig {
    /// `native` (default): sessions open on the master's socket with no process per command;
    /// `process`: one `ssh -S` process per command.
    pub mux: MuxClient,
}

impl SshToolConfig {
    pub fn from_lookup(lookup: &Lookup, _notes: &mut Notes) -> Result<SshToolConfig, KnobError> {
        let mux = match lookup.get(MUX).map(str::trim) {
            None | Some("") | Some("native") => MuxClient::Native,
            Some("process") => MuxClient::Process,
            Some(other) => return Err(KnobError::new(MUX, other, "one of native, process")),
        };
        Ok(SshToolConfig { mux })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mux_words() {
        let read = |v: &str| {
            SshToolConfig::from_lookup(&Lookup::from_vars([(MUX, v)]), &mut Notes::default())
        };
        assert_eq!(read("process").map(|c| c.mux), Ok(MuxClient::Process));
        assert_eq!(read("native").map(|c| c.mux), Ok(MuxClient::Native));
        assert_eq!(
            read("fast").unwrap_err().to_string(),
            r#"EXECKIT_SSH_MUX="fast" is not one of native, process"#
        );
    }
}
