//! Every text the model reads about clamping, truncation and artifacts. Pinned by snapshots.

/// `[... <L> lines (<B> bytes) omitted ...]` (O20).
pub fn omitted_marker(lines: u64, bytes: u64) -> String {
    format!("[... {lines} lines ({bytes} bytes) omitted ...]")
}
