//! The desired breakpoint set: owned by the tool, not by a session, so breakpoints set before
//! `launch` are sent during configuration and survive from one session to the next. Each
//! file's list is kept sorted by line and always sent whole, as DAP's `setBreakpoints` wants.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use execkit_dap::BreakpointPlan;
use execkit_dap::wire::{Breakpoint, FunctionBreakpoint, SourceBreakpoint};
use serde_json::{Value, json};

/// One line breakpoint and what the adapter last said about it.
#[derive(Debug, Clone, PartialEq)]
pub struct LineBreakpoint {
    pub line: i64,
    pub condition: Option<String>,
    pub hit_condition: Option<String>,
    pub log_message: Option<String>,
    pub verified: bool,
    /// The line the adapter moved it to, when different.
    pub actual_line: Option<i64>,
    pub message: Option<String>,
}

impl LineBreakpoint {
    pub fn new(line: i64) -> LineBreakpoint {
        LineBreakpoint {
            line,
            condition: None,
            hit_condition: None,
            log_message: None,
            verified: false,
            actual_line: None,
            message: None,
        }
    }

    fn wire(&self) -> SourceBreakpoint {
        SourceBreakpoint {
            line: self.line,
            condition: self.condition.clone(),
            hit_condition: self.hit_condition.clone(),
            log_message: self.log_message.clone(),
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct Breakpoints {
    pub files: BTreeMap<PathBuf, Vec<LineBreakpoint>>,
    pub functions: Vec<FunctionBreakpoint>,
    pub exception_filters: Option<Vec<String>>,
    pub instructions: Vec<Value>,
    pub data: Vec<Value>,
}

impl Breakpoints {
    /// Adds or replaces the breakpoint at `bp.line` in `file`.
    pub fn set_line(&mut self, file: &Path, bp: LineBreakpoint) {
        let list = self.files.entry(file.to_path_buf()).or_default();
        list.retain(|b| b.line != bp.line);
        list.push(bp);
        list.sort_by_key(|b| b.line);
    }

    /// Removes one line (or, with `None`, the whole file); false when there was nothing.
    pub fn remove_line(&mut self, file: &Path, line: Option<i64>) -> bool {
        let Some(list) = self.files.get_mut(file) else { return false };
        let before = list.len();
        match line {
            Some(line) => list.retain(|b| b.line != line && b.actual_line != Some(line)),
            None => list.clear(),
        }
        before != list.len()
    }

    /// The whole list `setBreakpoints` sends for `file` (empty clears it).
    pub fn file_request(&self, file: &Path) -> Value {
        let lines: Vec<SourceBreakpoint> =
            self.files.get(file).into_iter().flatten().map(LineBreakpoint::wire).collect();
        json!({"source": {"path": file}, "breakpoints": lines})
    }

    /// Records the adapter's answer for `file`, in request order; files left empty go.
    pub fn apply_results(&mut self, file: &Path, results: &[Breakpoint]) {
        if let Some(list) = self.files.get_mut(file) {
            for (bp, result) in list.iter_mut().zip(results) {
                bp.verified = result.verified;
                bp.message = result.message.clone();
                bp.actual_line = result.line.filter(|l| *l != bp.line);
            }
            if list.is_empty() {
                self.files.remove(file);
            }
        }
    }

    /// What configuration sends when a session starts.
    pub fn plan(&self) -> BreakpointPlan {
        BreakpointPlan {
            files: self
                .files
                .iter()
                .filter(|(_, list)| !list.is_empty())
                .map(|(path, list)| {
                    (path.display().to_string(), list.iter().map(LineBreakpoint::wire).collect())
                })
                .collect(),
            functions: self.functions.clone(),
            exception_filters: self.exception_filters.clone(),
            instructions: self.instructions.clone(),
            data: self.data.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_stay_sorted_and_whole() {
        let mut set = Breakpoints::default();
        let file = Path::new("/x/calc.py");
        set.set_line(file, LineBreakpoint::new(12));
        set.set_line(file, LineBreakpoint::new(3));
        set.set_line(file, LineBreakpoint::new(12));
        let lines: Vec<i64> = set.files[file].iter().map(|b| b.line).collect();
        assert_eq!(lines, [3, 12]);
        assert!(set.remove_line(file, Some(3)));
        assert!(!set.remove_line(file, Some(3)));
        assert!(set.remove_line(file, None));
        assert_eq!(set.file_request(file)["breakpoints"], json!([]));
    }
}
