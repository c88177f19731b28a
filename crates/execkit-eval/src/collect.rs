//! Collecting one cell's output: text through an `OutputSink` (bounded memory whatever the cell
//! prints, E21/E24), images as blocks or artifacts (E16/E19), structured displays (E18).

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use execkit_output::artifact::ArtifactStore;
use execkit_output::clamp::Limits;
use execkit_output::format::measured;
use execkit_output::sink::{OutputSink, SinkConfig, Spill};
use execkit_protocol::{Content, Progress};
use execkit_tool::ProgressThrottle;
use serde_json::{Map, Value, json};

use crate::cell::CellObserver;
use crate::frame::StreamName;
use crate::render::{Rendered, choose};

/// The text window of one cell and of the whole call (E21, E22).
pub const WINDOW_BYTES: u64 = 51_200;
pub const WINDOW_LINES: u64 = 3000;
/// At most this many image blocks per call, each at most this size (E19).
pub const MAX_IMAGES: usize = 8;
pub const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;
/// A JSON display larger than this is stored as an artifact in structuredContent (E18).
const DISPLAY_JSON_MAX: usize = 256 * 1024;
/// Progress carries the last 2 KiB of the cell's output (E11).
const PROGRESS_TAIL: usize = 2048;

pub type ProgressFn = Arc<dyn Fn(Progress) + Send + Sync>;

/// Per-call image bookkeeping shared by the cells of one call.
#[derive(Debug, Default)]
pub struct CallImages {
    pub numbered: usize,
    pub inline: usize,
}

/// The error a cell raised.
#[derive(Debug, Clone, PartialEq)]
pub struct CellError {
    pub ename: String,
    pub evalue: String,
    pub traceback: Vec<String>,
}

/// The cell's sink configuration: a 50 KiB / 3000-line window split into head and tail.
pub fn sink_config(limits: &Limits) -> SinkConfig {
    SinkConfig {
        head_bytes: WINDOW_BYTES * 2 / 5,
        head_lines: WINDOW_LINES * 2 / 5,
        tail_bytes: WINDOW_BYTES * 3 / 5,
        tail_lines: WINDOW_LINES * 3 / 5,
        line_bytes: limits.line_bytes.max(80),
        spill_from_start: false,
    }
}

pub struct Collector<'a> {
    pub sink: OutputSink,
    pub images: Vec<Content>,
    pub displays: Vec<Value>,
    pub image_count: usize,
    pub error: Option<CellError>,
    /// The kernel cut a value's text before sending it (its note says so in the text).
    pub value_cut: bool,
    /// The last stream text did not end with a newline.
    mid_line: bool,
    store: Option<ArtifactStore>,
    call_images: &'a mut CallImages,
    progress: Option<ProgressFn>,
    throttle: ProgressThrottle,
    label: String,
    deadline_ms: f64,
}

impl<'a> Collector<'a> {
    pub fn new(
        limits: &Limits,
        artifacts: &Result<ArtifactStore, String>,
        call_images: &'a mut CallImages,
        progress: Option<ProgressFn>,
        label: String,
        deadline_ms: f64,
    ) -> Collector<'a> {
        let (spill, disabled) = match artifacts {
            Ok(store) => (
                Some(Spill { store: store.clone(), tool: "eval".into(), label: label.clone() }),
                None,
            ),
            Err(reason) => (None, Some(reason.clone())),
        };
        Collector {
            sink: OutputSink::new(sink_config(limits), spill, disabled),
            images: Vec::new(),
            displays: Vec::new(),
            image_count: 0,
            error: None,
            value_cut: false,
            mid_line: false,
            store: artifacts.as_ref().ok().cloned(),
            call_images,
            progress,
            throttle: ProgressThrottle::default(),
            label,
            deadline_ms,
        }
    }

    /// A display, error or note: on a line of its own, even after a partial output line.
    fn push_text(&mut self, text: &str) {
        if self.mid_line {
            self.sink.push(b"\n");
        }
        self.sink.push(text.as_bytes());
        if !text.ends_with('\n') {
            self.sink.push(b"\n");
        }
        self.mid_line = false;
    }

    fn save(&self, bytes: &[u8], mime: &str) -> Result<String, String> {
        match &self.store {
            Some(store) => store
                .put("eval", bytes, mime, &self.label)
                .map(|id| id.uri())
                .map_err(|e| e.to_string()),
            None => Err("artifacts are off".into()),
        }
    }

    fn image(&mut self, mime: String, bytes: Vec<u8>) {
        self.call_images.numbered += 1;
        self.image_count += 1;
        let n = self.call_images.numbered;
        let dims = execkit_output::image::inspect(&bytes)
            .filter(|info| info.mime == mime)
            .map(|info| format!(" {}x{}", info.width, info.height))
            .unwrap_or_default();
        let head = format!("[image {n}: {mime}{dims}, {}", measured(bytes.len() as u64));
        if self.call_images.inline < MAX_IMAGES && bytes.len() <= MAX_IMAGE_BYTES {
            self.call_images.inline += 1;
            let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
            self.images.push(Content::Image { data, mime_type: mime });
            self.push_text(&format!("{head}]"));
        } else {
            let saved = match self.save(&bytes, &mime) {
                Ok(uri) => format!("saved as {uri}"),
                Err(why) => format!("not saved ({why})"),
            };
            self.push_text(&format!(
                "{head} {saved}; at most {MAX_IMAGES} images (5 MiB each) are returned inline]"
            ));
        }
    }
}

impl Collector<'_> {
    /// Keeps a display's JSON value in structuredContent under `field`, whole up to 256 KiB,
    /// as an artifact beyond (E18).
    fn keep_json(&mut self, mime: &str, field: &str, value: Value) {
        let bytes = serde_json::to_vec(&value).unwrap_or_default();
        if bytes.len() <= DISPLAY_JSON_MAX {
            self.displays.push(json!({"mime": mime, field: value}));
        } else {
            let uri = self.save(&bytes, "application/json").unwrap_or_default();
            self.displays.push(json!({"mime": mime, "artifact": uri, "bytes": bytes.len()}));
        }
    }
}

impl CellObserver for Collector<'_> {
    fn stream(&mut self, _name: StreamName, text: &str) {
        self.sink.push(text.as_bytes());
        if !text.is_empty() {
            self.mid_line = !text.ends_with('\n');
        }
    }

    fn display(&mut self, data: Map<String, Value>, metadata: Option<Value>, _result: bool) {
        if metadata.as_ref().and_then(|m| m.get("cut")).and_then(Value::as_bool) == Some(true) {
            self.value_cut = true;
        }
        match choose(&data) {
            Rendered::Image { mime, bytes } => self.image(mime, bytes),
            Rendered::Text { mime, text, json } => {
                self.push_text(&text);
                if let Some(value) = json {
                    self.keep_json(&mime, "data", value);
                } else if let Some(value) =
                    metadata.and_then(|mut m| m.get_mut("json").map(Value::take))
                {
                    // A built-in value is shown as its repr; its JSON copy is for programs.
                    self.keep_json(&mime, "json", value);
                }
            }
            Rendered::Other { mime, bytes } => {
                let note = match self.save(&bytes, &mime) {
                    Ok(uri) => {
                        format!(
                            "[display: {mime}, {} saved as {uri}]",
                            measured(bytes.len() as u64)
                        )
                    }
                    Err(why) => {
                        format!(
                            "[display: {mime}, {} not saved ({why})]",
                            measured(bytes.len() as u64)
                        )
                    }
                };
                self.push_text(&note);
            }
            Rendered::Dropped(note) => self.push_text(&note),
            Rendered::Empty => {}
        }
    }

    fn error(&mut self, ename: &str, evalue: &str, traceback: &[String]) {
        let text =
            if traceback.is_empty() { format!("{ename}: {evalue}") } else { traceback.join("\n") };
        self.push_text(&text);
        let keep = traceback.len().saturating_sub(200);
        self.error = Some(CellError {
            ename: ename.to_string(),
            evalue: evalue.to_string(),
            traceback: traceback[keep..].to_vec(),
        });
    }

    fn tick(&mut self, elapsed: Duration) {
        let Some(progress) = &self.progress else { return };
        if !self.throttle.due(self.sink.total_bytes()) {
            return;
        }
        self.throttle.sent(self.sink.total_bytes());
        let snapshot = self.sink.snapshot();
        let mut cut = snapshot.len().saturating_sub(PROGRESS_TAIL);
        while !snapshot.is_char_boundary(cut) {
            cut += 1;
        }
        progress(Progress {
            progress: elapsed.as_millis() as f64,
            total: Some(self.deadline_ms),
            message: format!("{} running {:.1} s", self.label, elapsed.as_secs_f64()),
            elapsed_ms: elapsed.as_millis() as u64,
            total_bytes: self.sink.total_bytes(),
            total_lines: self.sink.total_lines(),
            tail: snapshot[cut..].to_string(),
        });
    }
}
