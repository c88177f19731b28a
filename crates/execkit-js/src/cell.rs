//! Running one cell: planning (JS3/JS4), evaluation, awaiting its value (JS5), and turning
//! failures into `error` frames with cell-relative stack lines and hints (JS8, JS11, JS12, JS14).

use crate::event_loop::{Inbox, Stop, drive};
use crate::executor::unhandled_rejection;
use crate::kernel::{Kernel, RECURSION_LIMIT};
use crate::rewrite::{Names, Plan, plan};
use boa_engine::builtins::promise::PromiseState;
use boa_engine::error::{EngineError, RuntimeLimitError};
use boa_engine::object::builtins::{JsArray, JsPromise};
use boa_engine::{JsError, JsNativeError, JsString, JsValue, Script, Source};
use execkit_protocol::kernel::KernelFrame;
use serde_json::{Value, json};
use std::path::Path;

/// How a cell ended.
#[derive(Debug)]
pub enum CellOutcome {
    /// Finished; the value of its last expression, if any.
    Value(Option<JsValue>),
    Error(ErrorInfo),
    Interrupted,
}

/// The fields of an `error` frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorInfo {
    pub ename: String,
    pub evalue: String,
    pub traceback: Vec<String>,
}

impl ErrorInfo {
    pub fn frame(&self, id: u64) -> KernelFrame {
        KernelFrame::Error {
            id,
            ename: self.ename.clone(),
            evalue: self.evalue.clone(),
            traceback: self.traceback.clone(),
        }
    }

    fn new(ename: &str, evalue: String) -> Self {
        Self { ename: ename.into(), traceback: vec![format!("{ename}: {evalue}")], evalue }
    }
}

type Run = Result<Option<JsValue>, CellOutcome>;

impl Kernel {
    pub(crate) fn run_cell(&mut self, id: u64, code: &str, n: u64) -> CellOutcome {
        let path = format!("<cell-{n}>");
        let planned = plan(code);
        let names = match &planned {
            Some(Plan::Sync { names, .. } | Plan::Async { names, .. }) => names.clone(),
            None => Names::default(),
        };
        let result = match planned {
            None => self.run_sync(id, code, code, &path),
            Some(Plan::Sync { code: rewritten, .. }) => self.run_sync(id, &rewritten, code, &path),
            Some(Plan::Async { declare, body, plain_body, .. }) => {
                self.run_async(id, &declare, [&body, &plain_body], code, &path)
            }
        };
        self.note_declarations(&names);
        match result {
            Ok(value) => CellOutcome::Value(value),
            Err(CellOutcome::Error(info)) => {
                CellOutcome::Error(self.with_hints(info, code, &names))
            }
            Err(other) => other,
        }
    }

    fn note_declarations(&mut self, names: &Names) {
        let mut list: Vec<JsValue> = Vec::new();
        for (name, source) in &names.sources {
            let pair = [name, source].map(|s| JsValue::from(JsString::from(s.as_str())));
            list.push(JsArray::from_iter(pair, &mut self.context).into());
        }
        if list.is_empty() {
            return;
        }
        let array = JsArray::from_iter(list, &mut self.context);
        let _ = self.hook("noteDeclarations", &[array.into()]);
    }

    fn parse(&mut self, code: &str, path: &str) -> Result<Script, JsError> {
        let source = Source::from_bytes(code.as_bytes()).with_path(Path::new(path));
        Script::parse(source, None, &mut self.context)
    }

    /// The first candidate that parses, or the first candidate's error.
    fn parse_any(&mut self, candidates: &[&str], path: &str) -> Result<Script, JsError> {
        let mut first = None;
        for code in candidates {
            match self.parse(code, path) {
                Ok(script) => return Ok(script),
                Err(e) => {
                    first.get_or_insert(e);
                }
            }
        }
        Err(first.unwrap_or_else(|| JsNativeError::syntax().with_message("empty cell plan").into()))
    }

    fn run_sync(&mut self, id: u64, code: &str, original: &str, path: &str) -> Run {
        // The rewrite is tried first; the cell as written is the fallback (JS3).
        let script = match self.parse_any(&[code, original], path) {
            Ok(script) => script,
            Err(first) => {
                let err = self.parse(original, path).err().unwrap_or(first);
                return Err(self.failure(err));
            }
        };
        let value = script.evaluate(&mut self.context).map_err(|e| self.failure(e))?;
        let (value, settled) = self.await_value(id, value)?;
        self.finish_jobs(id, settled.as_ref())?;
        Ok(Some(value))
    }

    fn run_async(
        &mut self,
        id: u64,
        declare: &str,
        bodies: [&str; 2],
        original: &str,
        path: &str,
    ) -> Run {
        if !declare.is_empty() {
            let script = self.parse(declare, path).map_err(|e| self.failure(e))?;
            script.evaluate(&mut self.context).map_err(|e| self.failure(e))?;
        }
        let script = match self.parse_any(&bodies, path) {
            Ok(script) => script,
            Err(body_err) => {
                // The cell's own syntax error has exact positions; use it unless it only
                // complains about what the async wrapper exists for.
                let err = match self.parse(original, path) {
                    Err(e) if !is_wrapper_complaint(&e) => e,
                    _ => body_err,
                };
                return Err(self.failure(err));
            }
        };
        let promise = script.evaluate(&mut self.context).map_err(|e| self.failure(e))?;
        let (value, settled) = self.await_value(id, promise)?;
        self.finish_jobs(id, settled.as_ref())?;
        Ok(Some(value))
    }

    /// Awaits `value` if it is a thenable (JS5); returns the value and the settled promise.
    fn await_value(
        &mut self,
        id: u64,
        value: JsValue,
    ) -> Result<(JsValue, Option<JsPromise>), CellOutcome> {
        let Some(obj) = value.as_object() else { return Ok((value, None)) };
        let then =
            obj.get(JsString::from("then"), &mut self.context).map_err(|e| self.failure(e))?;
        if !then.is_callable() {
            return Ok((value, None));
        }
        let promise = match JsPromise::from_object(obj.clone()) {
            Ok(p) => p,
            Err(_) => {
                JsPromise::resolve(value.clone(), &mut self.context).map_err(|e| self.failure(e))?
            }
        };
        self.drive(id, Some(&promise))?;
        match promise.state() {
            PromiseState::Fulfilled(v) => Ok((v, Some(promise))),
            PromiseState::Rejected(reason) => Err(self.failure(JsError::from_opaque(reason))),
            PromiseState::Pending => Err(CellOutcome::Interrupted),
        }
    }

    /// Runs what microtasks remain, then fails the cell on a rejection nobody handled (JS8).
    fn finish_jobs(&mut self, id: u64, settled: Option<&JsPromise>) -> Result<(), CellOutcome> {
        self.drive(id, None)?;
        let Some(promise) = unhandled_rejection(settled) else { return Ok(()) };
        let PromiseState::Rejected(reason) = promise.state() else { return Ok(()) };
        let message = self.failure_info(JsError::from_opaque(reason)).evalue;
        Err(CellOutcome::Error(ErrorInfo::new(
            "UnhandledRejection",
            format!("{message} (missing await?)"),
        )))
    }

    fn drive(&mut self, id: u64, promise: Option<&JsPromise>) -> Result<(), CellOutcome> {
        let mut inbox =
            Inbox { commands: &self.commands, deferred: &mut self.deferred, cell_id: id };
        match drive(&mut self.context, promise, &mut inbox) {
            Ok(()) => Ok(()),
            Err(Stop::Interrupted) => Err(CellOutcome::Interrupted),
            Err(Stop::Failed(err)) => Err(self.failure(err)),
        }
    }

    fn failure(&mut self, err: JsError) -> CellOutcome {
        CellOutcome::Error(self.failure_info(err))
    }

    /// `ename`, `evalue` and the stack lines of an error, without prelude frames (JS14).
    pub(crate) fn failure_info(&mut self, err: JsError) -> ErrorInfo {
        if let Some(engine) = err.as_engine() {
            return engine_error(engine, self.context.runtime_limits().loop_iteration_limit());
        }
        let value = match err.into_opaque(&mut self.context) {
            Ok(v) => v,
            Err(e) => return ErrorInfo::new("InternalError", e.to_string()),
        };
        let parsed = self
            .hook_json("formatError", &[value])
            .unwrap_or_else(|e| json!({"ename": "Error", "evalue": e}));
        let text = |k: &str| parsed.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
        let (ename, evalue) = (text("ename"), text("evalue"));
        let mut traceback = vec![format!("{ename}: {evalue}")];
        let stack = parsed.get("stack").and_then(Value::as_array).cloned().unwrap_or_default();
        traceback.extend(
            stack
                .iter()
                .filter_map(Value::as_str)
                .filter(|line| !line.contains("<execkit-prelude>"))
                .map(str::to_string),
        );
        ErrorInfo { ename, evalue, traceback }
    }

    fn with_hints(&mut self, mut info: ErrorInfo, code: &str, names: &Names) -> ErrorInfo {
        if info.ename != "SyntaxError" {
            return info;
        }
        let lower = info.evalue.to_lowercase();
        if lower.contains("already") || lower.contains("redeclar") || lower.contains("duplicate") {
            let name = names
                .all()
                .find(|n| info.evalue.contains(n.as_str()))
                .cloned()
                .or_else(|| quoted_name(&info.evalue))
                .or_else(|| names.all().next().cloned())
                .unwrap_or_else(|| "the name".into());
            info.traceback.push(format!(
                "[hint: \"{name}\" was declared with let/const/class in an earlier cell; assign to it instead, or run with \"reset\": true]"
            ));
        } else if crate::hints::looks_like_typescript(code) {
            info.traceback
                .push("[hint: TypeScript syntax is not supported; write plain JavaScript]".into());
        }
        info
    }
}

fn is_wrapper_complaint(err: &JsError) -> bool {
    let text = err.to_string();
    ["await", "return", "import"].iter().any(|w| text.contains(w))
}

fn quoted_name(text: &str) -> Option<String> {
    for quote in ['\'', '"', '`'] {
        let mut parts = text.split(quote);
        if let (Some(_), Some(name)) = (parts.next(), parts.next())
            && !name.is_empty()
        {
            return Some(name.to_string());
        }
    }
    None
}

fn engine_error(engine: &EngineError, loop_iterations: u64) -> ErrorInfo {
    let evalue = match engine {
        EngineError::RuntimeLimit(RuntimeLimitError::LoopIteration) => format!(
            "loop ran more than {loop_iterations} iterations (limit = 2e7 per second of cell timeout)"
        ),
        EngineError::RuntimeLimit(RuntimeLimitError::Recursion | RuntimeLimitError::StackSize) => {
            format!("recursion deeper than {RECURSION_LIMIT} calls")
        }
        other => return ErrorInfo::new("InternalError", other.to_string()),
    };
    ErrorInfo::new("RuntimeLimitError", evalue)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::loop_limit;

    #[test]
    fn loop_limit_scales_with_the_timeout() {
        assert_eq!(loop_limit(5000), 100_000_000);
        assert_eq!(loop_limit(30_000), 600_000_000);
    }

    #[test]
    fn quoted_names_are_found() {
        assert_eq!(quoted_name("variable 'x' already declared"), Some("x".into()));
        assert_eq!(quoted_name("no quotes"), None);
    }
}
