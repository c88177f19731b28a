//! Retention (O28): by age, then by total size, then orphaned `.out` files. Every deletion
//! takes the artifact's lock non-blocking first, so a stream being written is never deleted,
//! and `gc.lock` makes concurrent processes take turns.

use std::fs;
use std::time::{Duration, SystemTime};

use super::{ArtifactId, ArtifactMeta, ArtifactStore, GcReport, fsutil};

/// An `.out` without metadata is a writer that died between the two creates; after an hour it
/// is certainly not being finished.
const ORPHAN_AGE: Duration = Duration::from_secs(3600);

pub(super) struct Entry {
    pub(super) meta: ArtifactMeta,
    pub(super) bytes: u64,
}

/// Every artifact with readable metadata.
pub(super) fn scan(store: &ArtifactStore) -> Vec<Entry> {
    let Ok(dir) = fs::read_dir(store.dir()) else { return Vec::new() };
    let mut out = Vec::new();
    for entry in dir.flatten() {
        let name = entry.file_name();
        let Some(stem) = name.to_str().and_then(|n| n.strip_suffix(".json")) else { continue };
        let Ok((id, None)) = ArtifactId::parse(stem) else { continue };
        let Ok(meta) = store.meta(&id) else { continue };
        let json = entry.metadata().map(|m| m.len()).unwrap_or(0);
        let out_len = fs::symlink_metadata(store.out_file(&id)).map(|m| m.len()).unwrap_or(0);
        out.push(Entry { meta, bytes: json + out_len });
    }
    out
}

pub(super) fn run(store: &ArtifactStore, now: u64) -> GcReport {
    let mut report = GcReport::default();
    let lock = fsutil::open_lock_file(&store.dir().join("gc.lock"));
    let Ok(lock) = lock else { return report };
    if !fsutil::try_lock(&lock, fsutil::Lock::Exclusive).unwrap_or(false) {
        report.skipped_locked = true;
        return report;
    }
    let limits = store.limits();
    let mut entries = scan(store);
    entries.sort_by(|a, b| a.meta.created.cmp(&b.meta.created).then(a.meta.id.cmp(&b.meta.id)));
    let mut total: u64 = entries.iter().map(|e| e.bytes).sum();
    let mut kept = Vec::new();
    for entry in entries {
        let expired = now.saturating_sub(entry.meta.created) > limits.max_age_s;
        if expired && delete(store, &entry.meta.id) {
            total -= entry.bytes;
            report.freed_bytes += entry.bytes;
            report.deleted.push(entry.meta.id);
        } else {
            kept.push(entry);
        }
    }
    for entry in kept {
        if total <= limits.store_bytes {
            break;
        }
        if delete(store, &entry.meta.id) {
            total -= entry.bytes;
            report.freed_bytes += entry.bytes;
            report.deleted.push(entry.meta.id);
        }
    }
    remove_orphans(store, &mut report);
    store.set_usage(total);
    report
}

/// Deletes one artifact unless a writer holds its lock. Metadata goes first, so a reader
/// racing with GC sees `not found` rather than a half-deleted artifact.
fn delete(store: &ArtifactStore, id: &ArtifactId) -> bool {
    let out = store.out_file(id);
    let file = match fsutil::open_read(&out) {
        Ok(file) => Some(file),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
        Err(_) => return false,
    };
    if let Some(file) = &file
        && !fsutil::try_lock(file, fsutil::Lock::Exclusive).unwrap_or(false)
    {
        return false;
    }
    let _ = fs::remove_file(store.json_file(id));
    let _ = fs::remove_file(&out);
    true
}

fn remove_orphans(store: &ArtifactStore, report: &mut GcReport) {
    let Ok(dir) = fs::read_dir(store.dir()) else { return };
    let now = SystemTime::now();
    for entry in dir.flatten() {
        let name = entry.file_name();
        let Some(stem) = name.to_str().and_then(|n| n.strip_suffix(".out")) else { continue };
        let Ok((id, None)) = ArtifactId::parse(stem) else { continue };
        if store.json_file(&id).exists() {
            continue;
        }
        let Ok(meta) = entry.metadata() else { continue };
        let old = meta
            .modified()
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .is_some_and(|age| age > ORPHAN_AGE);
        if old && delete(store, &id) {
            report.freed_bytes += meta.len();
            report.deleted.push(id);
        }
    }
}
