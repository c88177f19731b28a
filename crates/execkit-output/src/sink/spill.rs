//! Spilling the stream to its artifact (O17, O19): the pre-spill buffer while everything still
//! fits the window, then every byte appended to the artifact as it arrives.

use crate::artifact::{ArtifactWriter, WriteOutcome};

use super::Spill;

#[derive(Debug)]
pub(crate) struct Spiller {
    target: Option<Spill>,
    disabled_reason: Option<String>,
    writer: Option<ArtifactWriter>,
    /// Why the artifact could not be created.
    pub(crate) create_error: Option<String>,
    prespill: Vec<u8>,
    /// Past the pre-spill stage: bytes now go to the writer, or nowhere if it failed.
    spilled: bool,
    budget: usize,
}

impl Spiller {
    pub(crate) fn new(target: Option<Spill>, disabled_reason: Option<String>, budget: u64) -> Self {
        Spiller {
            target,
            disabled_reason,
            writer: None,
            create_error: None,
            prespill: Vec::new(),
            spilled: false,
            budget: usize::try_from(budget).unwrap_or(usize::MAX),
        }
    }

    pub(crate) fn writer(&self) -> Option<&ArtifactWriter> {
        self.writer.as_ref()
    }

    /// Creates the artifact now, without writing to it yet.
    pub(crate) fn open(&mut self, mime: &str) {
        if self.writer.is_some() || self.create_error.is_some() {
            return;
        }
        let Some(target) = &self.target else { return };
        match target.store.create(&target.tool, &target.label, mime) {
            Ok(writer) => self.writer = Some(writer),
            Err(err) => self.create_error = Some(err.to_string()),
        }
    }

    /// Stores raw bytes of a binary stream.
    pub(crate) fn binary(&mut self, bytes: &[u8]) {
        if !self.spilled {
            self.spilled = true;
            self.prespill = Vec::new();
            match &mut self.writer {
                Some(writer) => writer.set_binary(),
                None => self.open("application/octet-stream"),
            }
        }
        if let Some(writer) = &mut self.writer {
            writer.write(bytes);
        }
    }

    /// Stores sanitised text. `must_spill` once the window lost something; `decided` is false
    /// while the stream may still turn out binary, so nothing reaches the file yet.
    pub(crate) fn text(&mut self, bytes: &[u8], must_spill: bool, decided: bool) {
        if self.spilled {
            if let Some(writer) = &mut self.writer {
                writer.write(bytes);
            }
            return;
        }
        let overflow = self.prespill.len() + bytes.len() > self.budget;
        let start = decided && (must_spill || overflow || self.writer.is_some());
        if !start {
            self.prespill.extend_from_slice(bytes);
            return;
        }
        self.spilled = true;
        self.open("text/plain; charset=utf-8");
        let held = std::mem::take(&mut self.prespill);
        if let Some(writer) = &mut self.writer {
            writer.write(&held);
            writer.write(bytes);
        }
    }

    /// Why nothing was saved, for the `full output not saved (…)` footer.
    pub(crate) fn not_saved_reason(&self) -> String {
        self.create_error
            .clone()
            .or_else(|| self.disabled_reason.clone())
            .unwrap_or_else(|| "artifacts are off".to_string())
    }

    pub(crate) fn finish(self) -> Option<WriteOutcome> {
        self.writer.map(ArtifactWriter::finish)
    }
}
