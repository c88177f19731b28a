//! The output ring of one session tree: 128 KiB of debuggee and adapter output, oldest chunks
//! dropped first, with exact byte counts per category.

use std::collections::{BTreeMap, VecDeque};

/// The ring's size: enough for the recent history an agent reads, bounded per session tree
/// whatever the debuggee writes.
pub const RING_BYTES: usize = 128 * 1024;

/// One `output` event's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// The byte offset of this chunk in everything ever pushed.
    pub offset: u64,
    pub session: String,
    pub category: String,
    pub text: String,
}

#[derive(Debug, Default)]
pub struct OutputRing {
    chunks: VecDeque<Chunk>,
    held: usize,
    pub bytes_total: u64,
    pub bytes_dropped: u64,
    pub telemetry_dropped: u64,
    pub by_category: BTreeMap<String, u64>,
}

impl OutputRing {
    /// Adds one chunk; `telemetry` is counted and dropped.
    pub fn push(&mut self, session: &str, category: &str, text: &str) {
        if category == "telemetry" {
            self.telemetry_dropped += 1;
            return;
        }
        if text.is_empty() {
            return;
        }
        *self.by_category.entry(category.to_string()).or_default() += text.len() as u64;
        let offset = self.bytes_total;
        self.bytes_total += text.len() as u64;
        let text = keep_tail(text, RING_BYTES);
        self.bytes_dropped += (self.bytes_total - offset) - text.len() as u64;
        self.held += text.len();
        let chunk = Chunk { offset, session: session.into(), category: category.into(), text };
        self.chunks.push_back(chunk);
        self.evict();
    }

    fn evict(&mut self) {
        while self.held > RING_BYTES {
            let excess = self.held - RING_BYTES;
            let Some(front) = self.chunks.front_mut() else { return };
            if front.text.len() <= excess {
                self.held -= front.text.len();
                self.bytes_dropped += front.text.len() as u64;
                self.chunks.pop_front();
            } else {
                let cut = keep_tail(&front.text, front.text.len() - excess);
                let removed = front.text.len() - cut.len();
                front.offset += removed as u64;
                front.text = cut;
                self.held -= removed;
                self.bytes_dropped += removed as u64;
            }
        }
    }

    /// The chunks whose bytes start at or after `offset` (cut to it), optionally one category.
    pub fn since(&self, offset: u64, category: Option<&str>) -> Vec<Chunk> {
        self.chunks
            .iter()
            .filter(|c| category.is_none_or(|want| c.category == want))
            .filter(|c| c.offset + c.text.len() as u64 > offset)
            .map(|c| {
                let skip = offset.saturating_sub(c.offset) as usize;
                let mut chunk = c.clone();
                if skip > 0 {
                    chunk.text = keep_tail(&c.text, c.text.len() - skip);
                    chunk.offset = c.offset + (c.text.len() - chunk.text.len()) as u64;
                }
                chunk
            })
            .collect()
    }

    /// The offset of the oldest byte still held.
    pub fn first_offset(&self) -> u64 {
        self.chunks.front().map_or(self.bytes_total, |c| c.offset)
    }
}

/// The last `max` bytes of `text`, starting on a UTF-8 boundary.
pub fn keep_tail(text: &str, max: usize) -> String {
    let mut start = text.len().saturating_sub(max);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    text[start..].to_string()
}

/// Renders chunks in arrival order: stdout as it is; each run of another category starts a
/// new line prefixed `[<category>] `.
pub fn render(chunks: &[Chunk]) -> String {
    let mut out = String::new();
    let mut previous: Option<&str> = None;
    for chunk in chunks {
        let changed = previous != Some(chunk.category.as_str());
        if changed && previous.is_some() && !out.ends_with('\n') {
            out.push('\n');
        }
        if changed && chunk.category != "stdout" {
            out.push_str(&format!("[{}] ", chunk.category));
        }
        out.push_str(&chunk.text);
        previous = Some(&chunk.category);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_exact_and_the_oldest_goes_first() {
        let mut ring = OutputRing::default();
        ring.push("debug-1", "stdout", &"a".repeat(RING_BYTES));
        ring.push("debug-1", "stderr", "boom\n");
        ring.push("debug-1", "telemetry", "x");
        assert_eq!(ring.bytes_total, RING_BYTES as u64 + 5);
        assert_eq!(ring.bytes_dropped, 5);
        assert_eq!(ring.telemetry_dropped, 1);
        assert_eq!(ring.by_category["stderr"], 5);
        let all = ring.since(0, None);
        assert_eq!(all.iter().map(|c| c.text.len()).sum::<usize>(), RING_BYTES);
        assert_eq!(ring.since(0, Some("stderr"))[0].text, "boom\n");
    }

    #[test]
    fn cuts_fall_on_utf8_boundaries() {
        let mut ring = OutputRing::default();
        ring.push("debug-1", "stdout", &"é".repeat(RING_BYTES));
        let text: String = ring.since(0, None).into_iter().map(|c| c.text).collect();
        assert!(text.len() <= RING_BYTES && text.chars().all(|c| c == 'é'));
        assert_eq!(ring.bytes_dropped + text.len() as u64, ring.bytes_total);
    }

    #[test]
    fn categories_other_than_stdout_are_marked() {
        let mut ring = OutputRing::default();
        ring.push("d", "stdout", "hi\n");
        ring.push("d", "console", "note");
        ring.push("d", "stdout", "more\n");
        assert_eq!(render(&ring.since(0, None)), "hi\n[console] note\nmore\n");
        let later = ring.since(4, None);
        assert_eq!(later[0].text, "ote");
    }
}
