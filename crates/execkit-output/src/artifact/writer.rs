//! Appending to an artifact: the 64 KiB write buffer, the per-artifact cap with its 1 MiB tail
//! ring and gap line (O27), and write errors that stop writing but never the stream (O19).

use std::fs::File;
use std::io::{self, Write};

use super::{ArtifactError, ArtifactId, ArtifactMeta, ArtifactStore, Gap, fsutil};
use crate::notice;

/// Bytes collected before one `write(2)`: large enough that syscalls are not the bottleneck,
/// small enough to be a fixed cost per sink (O18).
const WRITE_BUF: usize = 64 * 1024;
/// The newest bytes kept while a stream is over its cap (O27), so the end of a huge stream,
/// where errors usually are, stays readable.
pub(crate) const TAIL_RING: u64 = 1024 * 1024;

/// An artifact open for appending; held by a sink. Holds `flock(LOCK_EX)` until finished.
#[derive(Debug)]
pub struct ArtifactWriter {
    store: ArtifactStore,
    file: File,
    meta: ArtifactMeta,
    buf: Vec<u8>,
    /// Bytes the file accepted.
    written: u64,
    /// Bytes routed to the file (the capped prefix), accepted or not.
    routed: u64,
    /// Where the prefix ends: the cap minus the ring; binary streams keep the whole cap.
    prefix_limit: u64,
    prefix_lfs: u64,
    total_lfs: u64,
    last_byte: Option<u8>,
    ring: Ring,
    error: Option<(String, u64)>,
}

/// What a finished writer reports to its sink.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteOutcome {
    pub id: ArtifactId,
    /// The write error and the byte offset it happened at.
    pub error: Option<(String, u64)>,
    pub gap: Option<Gap>,
    pub cap: u64,
}

impl ArtifactWriter {
    pub(crate) fn start(
        store: ArtifactStore,
        file: File,
        meta: ArtifactMeta,
    ) -> Result<ArtifactWriter, ArtifactError> {
        let id = meta.id.clone();
        let locked = fsutil::try_lock(&file, fsutil::Lock::Exclusive)
            .map_err(|e| ArtifactError::io(format!("lock {id}"), e))?;
        if !locked {
            return Err(ArtifactError::io(
                format!("lock {id}"),
                io::Error::from(io::ErrorKind::WouldBlock),
            ));
        }
        if let Err(err) = store.write_meta(&meta) {
            let _ = std::fs::remove_file(store.out_file(&id));
            return Err(ArtifactError::io(format!("metadata {id}"), err));
        }
        let cap = meta.cap_bytes;
        let prefix_limit = if meta.binary { cap } else { cap.saturating_sub(TAIL_RING) };
        Ok(ArtifactWriter {
            store,
            file,
            meta,
            buf: Vec::with_capacity(WRITE_BUF),
            written: 0,
            routed: 0,
            prefix_limit,
            prefix_lfs: 0,
            total_lfs: 0,
            last_byte: None,
            ring: Ring::default(),
            error: None,
        })
    }

    pub fn id(&self) -> &ArtifactId {
        &self.meta.id
    }

    /// Marks an artifact created before its stream was classified as binary (O14). Only
    /// meaningful before the first write.
    pub fn set_binary(&mut self) {
        self.meta.binary = true;
        self.meta.mime = "application/octet-stream".to_string();
        self.prefix_limit = self.meta.cap_bytes;
    }

    /// The write error so far, with the offset it happened at.
    pub fn error(&self) -> Option<&(String, u64)> {
        self.error.as_ref()
    }

    /// Appends bytes. Errors are recorded, not returned: the stream goes on without the file.
    pub fn write(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        self.meta.total_bytes += bytes.len() as u64;
        let lfs = memchr::memchr_iter(b'\n', bytes).count() as u64;
        self.total_lfs += lfs;
        self.last_byte = bytes.last().copied();
        let room = usize::try_from(self.prefix_limit - self.routed).unwrap_or(usize::MAX);
        let (prefix, rest) = bytes.split_at(room.min(bytes.len()));
        if !prefix.is_empty() {
            self.routed += prefix.len() as u64;
            self.prefix_lfs += if rest.is_empty() {
                lfs
            } else {
                memchr::memchr_iter(b'\n', prefix).count() as u64
            };
            self.append(prefix);
        }
        if !rest.is_empty() && !self.meta.binary {
            self.ring.push(rest);
        }
    }

    fn append(&mut self, bytes: &[u8]) {
        if self.error.is_some() {
            return;
        }
        if self.buf.len() + bytes.len() > WRITE_BUF {
            self.flush();
        }
        if bytes.len() >= WRITE_BUF {
            self.write_out(bytes);
        } else {
            self.buf.extend_from_slice(bytes);
        }
    }

    fn flush(&mut self) {
        let buf = std::mem::take(&mut self.buf);
        self.write_out(&buf);
        self.buf = buf;
        self.buf.clear();
    }

    fn write_out(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() && self.error.is_none() {
            match self.file.write(bytes) {
                Ok(0) => self.fail(&io::Error::from(io::ErrorKind::WriteZero)),
                Ok(n) => {
                    self.written += n as u64;
                    bytes = &bytes[n..];
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => self.fail(&err),
            }
        }
    }

    fn fail(&mut self, err: &io::Error) {
        self.error = Some((fsutil::describe_io(err), self.written));
        self.buf = Vec::new();
        self.ring = Ring::default();
    }

    /// Appends the ring (after the gap line when bytes were dropped), writes the final
    /// metadata, and closes the file, which releases the lock.
    pub fn finish(mut self) -> WriteOutcome {
        let gap = self.close_ring();
        self.flush();
        let total_lines = self.total_lfs + u64::from(self.last_byte.is_some_and(|b| b != b'\n'));
        self.meta.finished = Some(fsutil::now_secs());
        self.meta.total_lines = total_lines;
        self.meta.stored_bytes = self.written;
        self.meta.gap = gap.clone();
        self.meta.complete = self.error.is_none();
        self.meta.error = self.error.as_ref().map(|(e, at)| format!("{e} after {at} bytes"));
        if let Err(err) = self.store.write_meta(&self.meta)
            && self.error.is_none()
        {
            self.error = Some((fsutil::describe_io(&err), self.written));
        }
        self.store.record_usage(self.written);
        WriteOutcome { id: self.meta.id.clone(), error: self.error, gap, cap: self.meta.cap_bytes }
    }

    fn close_ring(&mut self) -> Option<Gap> {
        let ring = std::mem::take(&mut self.ring);
        let (older, newer) = ring.slices();
        if ring.dropped == 0 {
            self.append(older);
            self.append(newer);
            return None;
        }
        let mut kept: Vec<u8> = [older, newer].concat();
        let starts_line = match memchr::memchr(b'\n', &kept) {
            Some(at) => {
                kept.drain(..=at);
                true
            }
            None => false,
        };
        let total = self.meta.total_bytes;
        let kept_lines = memchr::memchr_iter(b'\n', &kept).count() as u64
            + u64::from(kept.last().is_some_and(|&b| b != b'\n'));
        let all_lines = self.total_lfs + u64::from(self.last_byte.is_some_and(|b| b != b'\n'));
        let first = self.prefix_lfs + 1;
        let last = if starts_line { all_lines.saturating_sub(kept_lines) } else { all_lines };
        let gap = Gap {
            first_line: first,
            last_line: last.max(first),
            bytes: total - self.routed - kept.len() as u64,
        };
        if self.routed > 0 && self.ends_mid_line() {
            self.append(b"\n");
        }
        let line = notice::gap_line(gap.first_line, gap.last_line, gap.bytes, self.meta.cap_bytes);
        self.append(line.as_bytes());
        self.append(b"\n");
        self.append(&kept);
        Some(gap)
    }

    fn ends_mid_line(&self) -> bool {
        self.buf.last().map(|&b| b != b'\n').unwrap_or_else(|| {
            // The buffer was just flushed; the prefix ended mid-line unless its last byte was LF.
            self.prefix_ends_mid_line()
        })
    }

    fn prefix_ends_mid_line(&self) -> bool {
        use std::io::{Read, Seek, SeekFrom};
        let mut last = [0u8; 1];
        let mut file = &self.file;
        let ok = file.seek(SeekFrom::End(-1)).is_ok() && file.read_exact(&mut last).is_ok();
        let _ = file.seek(SeekFrom::End(0));
        !ok || last[0] != b'\n'
    }
}

/// The newest [`TAIL_RING`] bytes of a capped stream.
#[derive(Debug, Default)]
struct Ring {
    data: Vec<u8>,
    /// Index of the oldest byte once full.
    start: usize,
    dropped: u64,
}

impl Ring {
    fn push(&mut self, bytes: &[u8]) {
        let cap = TAIL_RING as usize;
        if self.data.len() < cap {
            let room = cap - self.data.len();
            let take = room.min(bytes.len());
            self.data.extend_from_slice(&bytes[..take]);
            if take == bytes.len() {
                return;
            }
            return self.push(&bytes[take..]);
        }
        if bytes.len() >= cap {
            // A push into a full ring drops exactly as many bytes as it brings.
            self.dropped += bytes.len() as u64;
            self.data.copy_from_slice(&bytes[bytes.len() - cap..]);
            self.start = 0;
            return;
        }
        self.dropped += bytes.len() as u64;
        let first = (cap - self.start).min(bytes.len());
        self.data[self.start..self.start + first].copy_from_slice(&bytes[..first]);
        self.data[..bytes.len() - first].copy_from_slice(&bytes[first..]);
        self.start = (self.start + bytes.len()) % cap;
    }

    fn slices(&self) -> (&[u8], &[u8]) {
        (&self.data[self.start..], &self.data[..self.start])
    }
}
