//! Output handling shared by every execkit tool: pure or file-only, no processes, no async.
//!
//! - [`clamp`]: timeouts and every numeric knob, resolved once before anything runs.
//! - [`truncate`]: UTF-8-safe head/tail/middle truncation with exact accounting.
//! - [`sink`]: the streaming [`sink::OutputSink`] — sanitises a byte stream, keeps a bounded
//!   head+tail window with exact totals, and spills everything to an artifact.
//! - [`artifact`]: the on-disk [`artifact::ArtifactStore`] with retention and line-addressed reads.
//! - [`fsutil`]: [`fsutil::write_private`], the one writer of private (0600) files.
//! - [`image`]: whether bytes are a valid PNG, JPEG, GIF or WebP image small enough to show.
//! - [`notice`]: every text the model reads about clamping, truncation and artifacts.
//!
//! The model must never lose a byte silently: every window comes with counts that add up to
//! the whole stream, and what is not shown stays readable as `artifact://<id>`.

pub mod artifact;
pub mod clamp;
pub mod format;
pub mod fsutil;
pub mod image;
pub mod notice;
pub mod sink;
pub mod truncate;
