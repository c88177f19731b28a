//! The artifacts this server's tool calls produced: what `resources/list` shows (O30).
//!
//! The store is shared by every execkit process of the user, so listing the store would show
//! other sessions' outputs. A tool result names each artifact it made in a structured field
//! `artifact` (`artifact://<id>`); those are recorded as the call returns.

use std::sync::{Arc, Mutex, PoisonError};

use execkit::{ArtifactId, ToolResult};
use serde_json::Value;

/// How many ids are remembered; the oldest are forgotten first (they stay readable by id).
const REMEMBERED: usize = 10_000;

#[derive(Clone, Default)]
pub struct OwnedArtifacts {
    ids: Arc<Mutex<Vec<ArtifactId>>>,
}

impl OwnedArtifacts {
    /// Records every artifact `result` names in its structured content.
    pub fn record(&self, result: &ToolResult) {
        let Some(structured) = &result.structured_content else { return };
        let mut found = Vec::new();
        collect(structured, &mut found);
        if found.is_empty() {
            return;
        }
        let mut ids = self.ids.lock().unwrap_or_else(PoisonError::into_inner);
        for id in found {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        let excess = ids.len().saturating_sub(REMEMBERED);
        ids.drain(..excess);
    }

    /// The recorded ids, oldest first.
    pub fn snapshot(&self) -> Vec<ArtifactId> {
        self.ids.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

fn collect(value: &Value, found: &mut Vec<ArtifactId>) {
    match value {
        Value::Object(object) => {
            for (key, value) in object {
                if key == "artifact"
                    && let Some(uri) = value.as_str()
                    && let Ok((id, _)) = ArtifactId::parse(uri)
                {
                    found.push(id);
                }
                collect(value, found);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect(item, found)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn records_the_artifact_fields_once() {
        let owned = OwnedArtifacts::default();
        let result = ToolResult {
            content: Vec::new(),
            structured_content: Some(json!({
                "artifact": "artifact://0000abcd",
                "truncation": {"artifact": "artifact://0000abcd"},
                "cells": [{"displays": [{"artifact": "artifact://0000beef"}]}],
                "tail": "artifact://12345678",
            })),
            is_error: false,
        };
        owned.record(&result);
        let ids: Vec<String> = owned.snapshot().iter().map(ToString::to_string).collect();
        assert_eq!(ids, ["0000abcd", "0000beef"]);
    }
}
