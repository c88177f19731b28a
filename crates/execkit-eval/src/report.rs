//! What is known about one cell once it has ended (or was skipped), before it becomes text.

use execkit_output::artifact::ArtifactId;
use execkit_output::sink::FooterParts;
use execkit_protocol::Content;
use execkit_protocol::eval::Language;
use serde_json::Value;

use crate::cell::ToolCallRecord;
use crate::collect::CellError;

/// A cell's status (E12).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Ok,
    Error,
    Timeout,
    Crashed,
    Cancelled,
    Skipped,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Error => "error",
            Status::Timeout => "timeout",
            Status::Crashed => "crashed",
            Status::Cancelled => "cancelled",
            Status::Skipped => "skipped",
        }
    }

    pub(crate) fn header_word(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Error => "failed",
            Status::Timeout => "timed out",
            Status::Crashed => "crashed",
            Status::Cancelled => "cancelled",
            Status::Skipped => "not run",
        }
    }
}

/// `kernel` in structuredContent.
#[derive(Debug, Clone, Default)]
pub struct KernelInfo {
    pub pid: Option<u32>,
    pub started: bool,
    pub start_ms: Option<u64>,
    pub killed: bool,
    pub state_lost: Option<&'static str>,
    pub bad_frames: u32,
}

/// Everything known about one cell once it has ended (or was skipped).
#[derive(Debug, Clone)]
pub struct CellReport {
    pub index: usize,
    pub title: Option<String>,
    pub language: Language,
    pub status: Status,
    pub duration_ms: u64,
    pub cpu_ms: Option<u64>,
    pub execution_count: Option<u64>,
    pub error: Option<CellError>,
    pub displays: Vec<Value>,
    pub images: Vec<Content>,
    pub image_count: usize,
    pub tool_calls: Vec<ToolCallRecord>,
    pub kernel: KernelInfo,
    /// Kernel announcements, shown first (E34).
    pub announcements: Vec<String>,
    /// The sink's window.
    pub body: String,
    /// The sink's footer (`[Showing lines …; full output: …]`), shown under the body.
    pub footer: Option<String>,
    /// What the footer is made of, so the call's artifact can be named in it instead of the
    /// sink's own.
    pub footer_parts: Option<FooterParts>,
    /// Timeout, crash and clamp notes, shown last.
    pub notes: Vec<String>,
    pub truncation: Option<Value>,
    /// The artifact the cell's sink spilled to; folded into the call's artifact (E23).
    pub spill: Option<ArtifactId>,
    /// The summary's reason: `failed: KeyError: 'name'.`, `timed out after 30 s …`.
    pub summary: Option<String>,
    pub timeout_s: u64,
    pub restored: Option<crate::park::Restored>,
}

impl CellReport {
    pub fn skipped(index: usize, title: Option<String>, language: Language) -> CellReport {
        CellReport {
            index,
            title,
            language,
            status: Status::Skipped,
            duration_ms: 0,
            cpu_ms: None,
            execution_count: None,
            error: None,
            displays: Vec::new(),
            images: Vec::new(),
            image_count: 0,
            tool_calls: Vec::new(),
            kernel: KernelInfo::default(),
            announcements: Vec::new(),
            body: String::new(),
            footer: None,
            footer_parts: None,
            notes: Vec::new(),
            truncation: None,
            spill: None,
            summary: None,
            timeout_s: 0,
            restored: None,
        }
    }

    pub(crate) fn label(&self) -> String {
        match &self.title {
            Some(t) => {
                let t = t.replace(['\n', '\r'], " ");
                let short: String = t.chars().take(80).collect();
                let ell = if t.chars().count() > 80 { "…" } else { "" };
                format!("Cell {} ({short}{ell})", self.index)
            }
            None => format!("Cell {}", self.index),
        }
    }
}

/// `--- Cell 2/3 (load config) [py] failed in 35 ms ---` (E14).
pub fn header(cell: &CellReport, n: usize) -> String {
    let mut header = format!("--- Cell {}/{n}", cell.index);
    if let Some(t) = &cell.title {
        let t = t.replace(['\n', '\r'], " ");
        let short: String = t.chars().take(80).collect();
        let ell = if t.chars().count() > 80 { "…" } else { "" };
        header.push_str(&format!(" ({short}{ell})"));
    }
    header.push_str(&format!(" [{}] {}", cell.language.as_str(), cell.status.header_word()));
    if cell.status != Status::Skipped {
        header.push_str(&format!(" in {} ms", cell.duration_ms));
    }
    header.push_str(" ---");
    header
}
