//! The artifact store: whole streams kept on disk, addressed as `artifact://<id>` (O24–O32).
//!
//! An artifact is `<id>.out` (the bytes) plus `<id>.json` (its [`ArtifactMeta`]). Writers hold
//! `flock(LOCK_EX)` on the `.out` for their whole life, so GC (which only takes locks
//! non-blocking) never deletes a stream that is still being written.

mod gc;
mod grep;
mod id;
mod read;
mod render;
mod writer;

use std::fs::{self, File};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use execkit_tool::Lookup;
use serde::{Deserialize, Serialize};

pub use id::SelectionOptions;
pub(crate) use render::{back, put_char, render_line};
pub use writer::{ArtifactWriter, WriteOutcome};

use crate::{fsutil, notice};

/// Eight lowercase hex digits.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ArtifactId(String);

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

impl ArtifactError {
    pub(crate) fn io(what: impl Into<String>, source: io::Error) -> Self {
        ArtifactError::Io { what: what.into(), source }
    }
}

/// Store-wide limits: one artifact's cap, the store's total, the age retention removes at (O6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreLimits {
    pub max_bytes: u64,
    pub store_bytes: u64,
    pub max_age_s: u64,
}

impl StoreLimits {
    /// The store's part of the limits.
    pub fn from_limits(limits: &crate::clamp::Limits) -> StoreLimits {
        StoreLimits {
            max_bytes: limits.artifact_max_bytes,
            store_bytes: limits.artifact_store_bytes,
            max_age_s: limits.artifact_max_age_s,
        }
    }
}

impl Default for StoreLimits {
    fn default() -> Self {
        use crate::clamp::{ARTIFACT_MAX_AGE, ARTIFACT_MAX_BYTES, ARTIFACT_STORE_BYTES};
        StoreLimits {
            max_bytes: ARTIFACT_MAX_BYTES.default,
            store_bytes: ARTIFACT_STORE_BYTES.default,
            max_age_s: ARTIFACT_MAX_AGE.default,
        }
    }
}

/// Line gap recorded when the per-artifact cap dropped the middle of a stream (O27).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gap {
    pub first_line: u64,
    pub last_line: u64,
    pub bytes: u64,
}

/// The `<id>.json` metadata kept beside each artifact's output (O26).
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

/// Which part of an artifact a read returns (O29).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    Whole,
    Lines { from: u64, to: u64 },
    Head(u64),
    Tail(u64),
    Grep { pattern: String, context: u64, max: u64 },
}

/// What a read returns: text for the model, or the raw bytes of a binary/image artifact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadOutput {
    Text(String),
    Binary { mime: String, bytes: Vec<u8> },
}

/// How long a label may be (O26): enough to recognise a command in a listing.
const LABEL_CHARS: usize = 120;

/// Handle to the store; cheap to clone.
#[derive(Debug, Clone)]
pub struct ArtifactStore {
    dir: Arc<Path>,
    limits: StoreLimits,
    /// Bytes in the store as of the last GC plus what this process wrote since; `u64::MAX`
    /// until the first GC has measured it. A new artifact runs GC first when it is over.
    usage: Arc<AtomicU64>,
}

impl ArtifactStore {
    /// `EXECKIT_ARTIFACT_DIR`, else `$HOME/.execkit/artifacts` (the temporary directory when
    /// `HOME` is unset), both read from the Toolkit's lookup.
    pub fn default_dir(lookup: &Lookup) -> PathBuf {
        if let Some(dir) = lookup.non_empty("EXECKIT_ARTIFACT_DIR") {
            return PathBuf::from(dir);
        }
        let home = lookup.non_empty("HOME").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
        home.join(".execkit").join("artifacts")
    }

    /// Opens (creating with 0700) the store. `Err(Disabled(reason))` when the directory is not
    /// private (O24); the caller keeps running with artifacts off.
    pub fn open(dir: &Path, limits: StoreLimits) -> Result<ArtifactStore, ArtifactError> {
        let shown = dir.display().to_string();
        let unusable = |err: &io::Error| {
            ArtifactError::Disabled(notice::dir_unusable(&shown, &fsutil::describe_io(err)))
        };
        match fs::symlink_metadata(dir) {
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(dir)
                    .map_err(|e| unusable(&e))?;
            }
            Err(err) => return Err(unusable(&err)),
            Ok(_) => {}
        }
        let meta = fs::symlink_metadata(dir).map_err(|e| unusable(&e))?;
        let not_private =
            |why: String| ArtifactError::Disabled(notice::dir_not_private(&shown, &why));
        if meta.file_type().is_symlink() {
            return Err(not_private("it is a symlink".to_string()));
        }
        if !meta.is_dir() {
            return Err(not_private("not a directory".to_string()));
        }
        let uid = fsutil::current_uid();
        if meta.uid() != uid {
            return Err(not_private(format!("owned by uid {}, not {uid}", meta.uid())));
        }
        if meta.mode() & 0o077 != 0 {
            fs::set_permissions(dir, fs::Permissions::from_mode(0o700)).map_err(|e| {
                not_private(format!(
                    "mode {:o} cannot be tightened: {}",
                    meta.mode() & 0o777,
                    fsutil::describe_io(&e)
                ))
            })?;
        }
        Ok(ArtifactStore { dir: Arc::from(dir), limits, usage: Arc::new(AtomicU64::new(u64::MAX)) })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn limits(&self) -> StoreLimits {
        self.limits
    }

    /// Creates a new, empty, locked artifact for streaming.
    pub fn create(
        &self,
        tool: &str,
        label: &str,
        mime: &str,
    ) -> Result<ArtifactWriter, ArtifactError> {
        self.create_with(tool, label, mime, &mut || rand::random::<u32>())
    }

    /// [`Self::create`] with the id source given, so the collision retry can be tested.
    pub(crate) fn create_with(
        &self,
        tool: &str,
        label: &str,
        mime: &str,
        next_id: &mut dyn FnMut() -> u32,
    ) -> Result<ArtifactWriter, ArtifactError> {
        if self.usage.load(Ordering::Relaxed) > self.limits.store_bytes {
            self.gc();
        }
        // Ids are 32 random bits: a collision is rare, eight in a row means something else
        // (a full directory, a hostile filler) is wrong.
        const ATTEMPTS: usize = 8;
        let mut last = None;
        for _ in 0..ATTEMPTS {
            let id = ArtifactId(format!("{:08x}", next_id()));
            match fsutil::create_private(&self.out_file(&id)) {
                Ok(file) => {
                    let meta = ArtifactMeta {
                        id: id.clone(),
                        tool: tool.to_string(),
                        label: label.chars().take(LABEL_CHARS).collect(),
                        mime: mime.to_string(),
                        created: fsutil::now_secs(),
                        finished: None,
                        complete: false,
                        error: None,
                        binary: !mime.starts_with("text/"),
                        total_bytes: 0,
                        total_lines: 0,
                        stored_bytes: 0,
                        cap_bytes: self.limits.max_bytes,
                        gap: None,
                    };
                    return ArtifactWriter::start(self.clone(), file, meta);
                }
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists => last = Some(err),
                Err(err) => return Err(ArtifactError::io(format!("create {}", id), err)),
            }
        }
        let err = last.unwrap_or_else(|| io::Error::from(io::ErrorKind::AlreadyExists));
        Err(ArtifactError::io("create: no free id", err))
    }

    /// Stores a finished blob (an image, an eval display, an oversized text).
    pub fn put(
        &self,
        tool: &str,
        bytes: &[u8],
        mime: &str,
        label: &str,
    ) -> Result<ArtifactId, ArtifactError> {
        let mut writer = self.create(tool, label, mime)?;
        writer.write(bytes);
        let outcome = writer.finish();
        match outcome.error {
            Some((error, _)) => {
                Err(ArtifactError::io(format!("write {}", outcome.id), io::Error::other(error)))
            }
            None => Ok(outcome.id),
        }
    }

    /// Path of an existing artifact's `.out` file (bash B8 substitutes it into commands).
    pub fn out_path(&self, id: &ArtifactId) -> Result<PathBuf, ArtifactError> {
        let path = self.out_file(id);
        if self.json_file(id).exists() && path.exists() {
            Ok(path)
        } else {
            Err(self.not_found(id))
        }
    }

    /// Deletes a finished artifact whose content now lives elsewhere (eval folds its cells'
    /// spills into one artifact per call). A writer's artifact is never removed.
    pub fn remove(&self, id: &ArtifactId) -> Result<(), ArtifactError> {
        let out = self.out_file(id);
        let file = fsutil::open_read(&out).map_err(|_| self.not_found(id))?;
        if self.being_written(id, &file) {
            return Err(ArtifactError::io(
                format!("remove {id}"),
                io::Error::new(io::ErrorKind::WouldBlock, "the artifact is still being written"),
            ));
        }
        let _ = std::fs::remove_file(self.json_file(id));
        std::fs::remove_file(&out).map_err(|e| ArtifactError::io(format!("remove {id}"), e))
    }

    /// Whether a writer still has `file` (the artifact's `.out`) open. The lock alone can
    /// mislead: a child forked by another thread holds a copy of the writer's descriptor, and
    /// with it the lock, until it execs. Metadata marked finished settles it.
    pub(crate) fn being_written(&self, id: &ArtifactId, file: &std::fs::File) -> bool {
        !fsutil::try_lock(file, fsutil::Lock::Exclusive).unwrap_or(false)
            && self.meta(id).map_or(true, |m| m.finished.is_none())
    }

    pub fn meta(&self, id: &ArtifactId) -> Result<ArtifactMeta, ArtifactError> {
        let file = fsutil::open_read(&self.json_file(id)).map_err(|_| self.not_found(id))?;
        serde_json::from_reader(io::BufReader::new(file))
            .map_err(|e| ArtifactError::io(format!("metadata {id}"), io::Error::other(e)))
    }

    /// Reads through `truncate_middle` with the default window; the footer names the next step.
    pub fn read(&self, id: &ArtifactId, sel: &Selection) -> Result<ReadOutput, ArtifactError> {
        read::read(self, id, sel)
    }

    /// The stored bytes, unchanged and uncapped (CLI `--raw`).
    pub fn open_raw(&self, id: &ArtifactId) -> Result<File, ArtifactError> {
        self.meta(id)?;
        fsutil::open_read(&self.out_file(id)).map_err(|_| self.not_found(id))
    }

    /// The newest `n` artifacts, newest first.
    pub fn list(&self, n: usize) -> Vec<ArtifactMeta> {
        let mut all = gc::scan(self);
        all.sort_by(|a, b| b.meta.created.cmp(&a.meta.created).then(b.meta.id.cmp(&a.meta.id)));
        all.into_iter().take(n).map(|entry| entry.meta).collect()
    }

    /// One retention round (O28); skipped when another process holds `gc.lock`.
    pub fn gc(&self) -> GcReport {
        gc::run(self, fsutil::now_secs())
    }

    pub(crate) fn record_usage(&self, bytes: u64) {
        let _ = self
            .usage
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |u| Some(u.saturating_add(bytes)));
    }

    pub(crate) fn set_usage(&self, bytes: u64) {
        self.usage.store(bytes, Ordering::Relaxed);
    }

    pub(crate) fn out_file(&self, id: &ArtifactId) -> PathBuf {
        self.dir.join(format!("{id}.out"))
    }

    pub(crate) fn json_file(&self, id: &ArtifactId) -> PathBuf {
        self.dir.join(format!("{id}.json"))
    }

    pub(crate) fn not_found(&self, id: &ArtifactId) -> ArtifactError {
        ArtifactError::NotFound(notice::artifact_not_found(
            id.as_str(),
            self.limits.max_age_s,
            self.limits.store_bytes,
        ))
    }

    /// Replaces `<id>.json` atomically: a fresh 0600 file renamed over the old one.
    pub(crate) fn write_meta(&self, meta: &ArtifactMeta) -> io::Result<()> {
        let json = serde_json::to_vec(meta).map_err(io::Error::other)?;
        fsutil::write_private(&self.json_file(&meta.id), &json)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GcReport {
    pub deleted: Vec<ArtifactId>,
    pub freed_bytes: u64,
    pub skipped_locked: bool,
}

#[cfg(test)]
mod tests;
