//! The echo tool's params, and the request they resolve to.

use execkit_protocol::ArgError;
use execkit_protocol::args::FieldHints;
use schemars::JsonSchema;
use serde::Deserialize;

use super::config::EchoConfig;

/// Repeat a text.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EchoParams {
    /// The text to repeat.
    pub text: String,
    /// How many times (default 1).
    #[serde(default)]
    pub repeat: Option<u64>,
}

impl FieldHints for EchoParams {
    fn hint(field: &str) -> Option<&'static str> {
        (field == "text").then_some("the text to repeat")
    }
}

/// A resolved echo call.
pub(crate) struct EchoRequest {
    pub text: String,
    pub repeat: u64,
}

/// Checks the params against the configuration; an error names the field.
pub(crate) fn resolve(params: EchoParams, config: &EchoConfig) -> Result<EchoRequest, ArgError> {
    let repeat = params.repeat.unwrap_or(1);
    if repeat == 0 || repeat > config.max_repeat {
        let message = format!("must be from 1 to {} (got {repeat})", config.max_repeat);
        return Err(ArgError::new("repeat", message));
    }
    Ok(EchoRequest { text: params.text, repeat })
}
