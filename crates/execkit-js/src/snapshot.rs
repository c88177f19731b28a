//! The per-cell JSON snapshot of globals (spec-eval.md JS17): written on `snapshot`, replayed
//! on `restore` in a fresh kernel after the host killed a busy one.

use crate::kernel::Kernel;
use crate::wire::emit;
use boa_engine::{JsString, JsValue};
use execkit_protocol::kernel::{KernelFrame, NameReason};
use serde_json::{Value, json};
use std::hash::{Hash, Hasher};
use std::path::Path;

/// Time the encoder may spend before the remaining names are skipped.
const BUDGET_MS: u32 = 10;
/// Largest encoded value.
const MAX_VALUE: u32 = 1 << 20;
/// Largest snapshot.
const MAX_TOTAL: u32 = 16 << 20;
/// `skipped` lists at most this many names, then one `+<k> more` entry, so the frame stays
/// far below the 16 MiB line limit even with a million globals.
const MAX_LISTED: u32 = 1000;

impl Kernel {
    pub(crate) fn snapshot(&mut self, id: u64, path: &Path) {
        let args = [BUDGET_MS, MAX_VALUE, MAX_TOTAL, MAX_LISTED].map(JsValue::from);
        let encoded = match self.hook_json("snapshot", &args) {
            Ok(v) => v,
            Err(e) => {
                let skipped = vec![everything(format!("the snapshot failed: {e}"))];
                emit(&KernelFrame::SnapshotDone { id, saved: Vec::new(), skipped, bytes: 0 });
                return;
            }
        };
        let entries = encoded.get("entries").cloned().unwrap_or_else(|| json!([]));
        let saved: Vec<String> = entries
            .as_array()
            .map(|a| a.iter().filter_map(|e| e.get("name")?.as_str().map(String::from)).collect())
            .unwrap_or_default();
        let mut skipped = name_reasons(encoded.get("skipped"));
        let more = encoded.get("more").and_then(Value::as_u64).unwrap_or(0);
        if more > 0 {
            let reason = encoded.get("moreReason").and_then(Value::as_str);
            let reason = reason.unwrap_or("snapshot budget").to_string();
            skipped.push(NameReason { name: format!("+{more} more"), reason });
        }
        let file = json!({"format": "execkit-js-snapshot", "version": 1, "entries": entries});
        let text = file.to_string();
        if let Err(e) = self.write_if_changed(path, &text) {
            skipped.push(everything(format!("cannot write the snapshot: {e}")));
        }
        emit(&KernelFrame::SnapshotDone { id, saved, skipped, bytes: text.len() as u64 });
    }

    /// Rewrites the file only when the encoding changed, through a temporary file and a rename.
    fn write_if_changed(&mut self, path: &Path, text: &str) -> std::io::Result<()> {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        text.hash(&mut hasher);
        let key = (path.to_string_lossy().into_owned(), hasher.finish());
        if self.last_snapshot.as_ref() == Some(&key) && path.exists() {
            return Ok(());
        }
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, path)?;
        self.last_snapshot = Some(key);
        Ok(())
    }

    pub(crate) fn restore(&mut self, id: u64, path: &Path) {
        let fail = |reason: String| {
            let failed = vec![everything(reason)];
            emit(&KernelFrame::RestoreDone { id, restored: Vec::new(), failed });
        };
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => return fail(format!("cannot read the snapshot: {e}")),
        };
        let arg: JsValue = JsString::from(text.as_str()).into();
        match self.hook_json("restore", &[arg]) {
            Ok(result) => {
                let restored = result.get("restored").cloned().unwrap_or_default();
                let restored = serde_json::from_value(restored).unwrap_or_default();
                let failed = name_reasons(result.get("failed"));
                emit(&KernelFrame::RestoreDone { id, restored, failed });
            }
            Err(e) => fail(format!("the snapshot did not load: {e}")),
        }
        let _ = crate::event_loop::run_microtasks(&mut self.context);
    }
}

/// `{name: "*", reason}`: the whole snapshot or restore, not one name.
fn everything(reason: String) -> NameReason {
    NameReason { name: "*".into(), reason }
}

/// The prelude's `[{name, reason}]` list.
fn name_reasons(value: Option<&Value>) -> Vec<NameReason> {
    value.and_then(|v| serde_json::from_value(v.clone()).ok()).unwrap_or_default()
}
