//! The artifact store: whole streams kept on disk, addressed as `artifact://<id>` (O24–O32).

use std::fs::File;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Eight lowercase hex digits.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ArtifactId(String);

impl ArtifactId {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// `artifact://<id>`.
    pub fn uri(&self) -> String {
        format!("artifact://{}", self.0)
    }

    /// Parses a bare id (`3f9a0c12`) or a URI (`artifact://3f9a0c12?lines=1-5`), returning the
    /// query when present. Anything else is `Invalid artifact URI: <text>`.
    pub fn parse(text: &str) -> Result<(ArtifactId, Option<String>), ArtifactError> {
        let _ = text;
        todo!()
    }
}

impl std::fmt::Display for ArtifactId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ArtifactError {
    #[error("Invalid artifact URI: {0}")]
    InvalidUri(String),
    /// `artifact <id> not found (expired or deleted; artifacts are kept 7 days, 2 GiB in total)`
    #[error("{0}")]
    NotFound(String),
    /// Artifacts are off for this Toolkit; the text is the reason shown by doctor.
    #[error("{0}")]
    Disabled(String),
    /// A bad read selector or query (`lines start at 1`, `Invalid grep pattern: …`, …).
    #[error("{0}")]
    BadSelection(String),
    #[error("artifact {what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
}

/// Store-wide limits (O6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreLimits {
    pub max_bytes: u64,
    pub store_bytes: u64,
    pub max_age_s: u64,
}

/// Line gap recorded when the per-artifact cap dropped the middle of a stream (O27).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gap {
    pub first_line: u64,
    pub last_line: u64,
    pub bytes: u64,
}

/// The `<id>.json` metadata (O26).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArtifactMeta {
    pub id: ArtifactId,
    pub tool: String,
    pub label: String,
    pub mime: String,
    /// Unix seconds.
    pub created: u64,
    pub finished: Option<u64>,
    pub complete: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub binary: bool,
    pub total_bytes: u64,
    pub total_lines: u64,
    pub stored_bytes: u64,
    pub cap_bytes: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap: Option<Gap>,
}

/// A read selector (O29).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    Whole,
    Lines { from: u64, to: u64 },
    Head(u64),
    Tail(u64),
    Grep { pattern: String, context: u64, max: u64 },
}

impl Selection {
    /// Parses a URI query: `lines=a-b`, `head=n`, `tail=n`, `grep=<urlencoded>&context=n&max=n`.
    pub fn from_query(query: &str) -> Result<Selection, ArtifactError> {
        let _ = query;
        todo!()
    }
}

/// What a read returns: text for the model, or the raw bytes of a binary/image artifact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadOutput {
    Text(String),
    Binary { mime: String, bytes: Vec<u8> },
}

/// An artifact open for appending; held by a sink. Holds `flock(LOCK_EX)` until finished.
#[derive(Debug)]
pub struct ArtifactWriter {
    _private: (),
}

impl ArtifactWriter {
    pub fn id(&self) -> &ArtifactId {
        todo!()
    }
}

/// Handle to the store; cheap to clone.
#[derive(Debug, Clone)]
pub struct ArtifactStore {
    _private: (),
}

impl ArtifactStore {
    /// `EXECKIT_ARTIFACT_DIR`, else `~/.execkit/artifacts`.
    pub fn default_dir() -> PathBuf {
        todo!()
    }

    /// Opens (creating with 0700) the store. `Err(Disabled(reason))` when the directory is not
    /// private (O24); the caller keeps running with artifacts off.
    pub fn open(dir: &Path, limits: StoreLimits) -> Result<ArtifactStore, ArtifactError> {
        let _ = (dir, limits);
        todo!()
    }

    pub fn dir(&self) -> &Path {
        todo!()
    }

    pub fn limits(&self) -> StoreLimits {
        todo!()
    }

    /// Creates a new, empty, locked artifact for streaming.
    pub fn create(&self, tool: &str, label: &str, mime: &str) -> Result<ArtifactWriter, ArtifactError> {
        let _ = (tool, label, mime);
        todo!()
    }

    /// Stores a finished blob (an image, an eval display, an oversized text).
    pub fn put(
        &self,
        tool: &str,
        bytes: &[u8],
        mime: &str,
        label: &str,
    ) -> Result<ArtifactId, ArtifactError> {
        let _ = (tool, bytes, mime, label);
        todo!()
    }

    /// Path of an existing artifact's `.out` file (bash B8 substitutes it into commands).
    pub fn out_path(&self, id: &ArtifactId) -> Result<PathBuf, ArtifactError> {
        let _ = id;
        todo!()
    }

    pub fn meta(&self, id: &ArtifactId) -> Result<ArtifactMeta, ArtifactError> {
        let _ = id;
        todo!()
    }

    /// Reads through `truncate_middle` with the default window; the footer names the next step.
    pub fn read(&self, id: &ArtifactId, sel: &Selection) -> Result<ReadOutput, ArtifactError> {
        let _ = (id, sel);
        todo!()
    }

    /// The stored bytes, unchanged and uncapped (CLI `--raw`).
    pub fn open_raw(&self, id: &ArtifactId) -> Result<File, ArtifactError> {
        let _ = id;
        todo!()
    }

    /// The newest `n` artifacts, newest first.
    pub fn list(&self, n: usize) -> Vec<ArtifactMeta> {
        let _ = n;
        todo!()
    }

    /// One retention round (O28); skipped when another process holds `gc.lock`.
    pub fn gc(&self) -> GcReport {
        todo!()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GcReport {
    pub deleted: Vec<ArtifactId>,
    pub freed_bytes: u64,
    pub skipped_locked: bool,
}
