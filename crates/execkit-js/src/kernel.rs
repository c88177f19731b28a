//! The VM thread: one boa `Context` for the kernel's life, the prelude, and the command loop
//! (spec-eval.md JS1–JS17).

use crate::cell::{CellOutcome, ErrorInfo};
use crate::event_loop::cancel_tool_calls;
use crate::executor::{CellInfo, KernelHooks, QueueingExecutor, executor};
use crate::modules::FileLoader;
use crate::wire::{PROTOCOL, emit, emit_all, emit_stream};
use boa_engine::{Context, JsObject, JsResult, JsString, JsValue, Script, Source};
use execkit_protocol::kernel::{DoneStatus, HostFrame, KernelFrame, StreamName};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::path::Path;
use std::rc::Rc;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

/// The prelude source (§11), evaluated once per kernel.
pub const PRELUDE: &str = include_str!("../../../prelude/prelude.js");
/// The engine version announced in `ready`.
pub const ENGINE: &str = "boa_engine 0.22";
/// JS12: calls deeper than this fail with `RuntimeLimitError`.
pub const RECURSION_LIMIT: usize = 4096;
/// JS12: loop iterations allowed per second of cell timeout.
pub const LOOP_ITERATIONS_PER_SECOND: u64 = 20_000_000;
/// Strings longer than this are rendered (and cut) by the prelude.
const PRIMITIVE_TEXT_MAX: usize = 65536;
/// The VM's value stack; large enough that the recursion limit is what deep calls hit.
const VALUE_STACK_LIMIT: usize = 1 << 22;

/// The kernel's state on the VM thread.
pub struct Kernel {
    pub(crate) context: Context,
    pub(crate) commands: Receiver<HostFrame>,
    pub(crate) deferred: VecDeque<HostFrame>,
    pub(crate) hooks: JsObject,
    pub(crate) loader: Rc<FileLoader>,
    count: u64,
    /// The tool list last given to the prelude (it rarely changes between cells).
    tools: Vec<String>,
    pub(crate) last_snapshot: Option<(String, u64)>,
}

impl Kernel {
    /// Builds the context and installs the prelude.
    pub fn new(commands: Receiver<HostFrame>) -> Result<Self, String> {
        let loader = Rc::new(FileLoader::default());
        let mut context = Context::builder()
            .job_executor(Rc::new(QueueingExecutor))
            .host_hooks(Rc::new(KernelHooks))
            .module_loader(loader.clone())
            .build()
            .map_err(|e| format!("cannot create the JavaScript context: {e}"))?;
        let limits = context.runtime_limits_mut();
        limits.set_recursion_limit(RECURSION_LIMIT);
        limits.set_stack_size_limit(VALUE_STACK_LIMIT);
        limits.set_loop_iteration_limit(LOOP_ITERATIONS_PER_SECOND * 30);
        let hooks =
            install_prelude(&mut context).map_err(|e| format!("the prelude failed: {e}"))?;
        Ok(Self {
            context,
            commands,
            deferred: VecDeque::new(),
            hooks,
            loader,
            count: 0,
            tools: Vec::new(),
            last_snapshot: None,
        })
    }

    /// Serves commands until the process is told to exit (by the reader thread).
    pub fn run(mut self) {
        emit(&KernelFrame::Ready {
            protocol: PROTOCOL,
            language: "javascript".into(),
            version: ENGINE.into(),
            pid: std::process::id(),
        });
        loop {
            let cmd = match self.deferred.pop_front() {
                Some(cmd) => cmd,
                None => match self.commands.recv() {
                    Ok(cmd) => cmd,
                    Err(_) => return,
                },
            };
            match cmd {
                HostFrame::Execute { id, code, timeout_ms, tools, .. } => {
                    self.execute(id, &code, timeout_ms, &tools);
                }
                HostFrame::Snapshot { id, path } => self.snapshot(id, Path::new(&path)),
                HostFrame::Restore { id, path } => self.restore(id, Path::new(&path)),
                // A late reply or a stale interrupt: the cell it was for has ended.
                HostFrame::ToolResult { .. }
                | HostFrame::Interrupt { .. }
                | HostFrame::Shutdown => {}
            }
        }
    }

    /// Calls one of the prelude's hooks.
    pub(crate) fn hook(&mut self, name: &str, args: &[JsValue]) -> JsResult<JsValue> {
        let f = self.hooks.get(JsString::from(name), &mut self.context)?;
        match f.as_callable() {
            Some(f) => f.call(&JsValue::undefined(), args, &mut self.context),
            None => Ok(JsValue::undefined()),
        }
    }

    /// A hook that returns JSON text, parsed.
    pub(crate) fn hook_json(&mut self, name: &str, args: &[JsValue]) -> Result<Value, String> {
        let value = self.hook(name, args).map_err(|e| e.to_string())?;
        let text = value.to_string(&mut self.context).map_err(|e| e.to_string())?;
        serde_json::from_str(&text.to_std_string_lossy()).map_err(|e| e.to_string())
    }

    fn execute(&mut self, id: u64, code: &str, timeout_ms: u64, tools: &[String]) {
        self.count += 1;
        let n = self.count;
        emit(&KernelFrame::Started { id, execution_count: n });
        let timeout_ms = timeout_ms.max(1);
        self.context.runtime_limits_mut().set_loop_iteration_limit(loop_limit(timeout_ms));
        let deadline = Instant::now() + Duration::from_millis(timeout_ms);
        *executor().cell.borrow_mut() = Some(CellInfo { id, deadline: Some(deadline) });
        self.loader.refresh();
        if self.tools != tools {
            self.tools = tools.to_vec();
            let names: Vec<JsValue> =
                tools.iter().map(|t| JsString::from(t.as_str()).into()).collect();
            let list = boa_engine::object::builtins::JsArray::from_iter(names, &mut self.context);
            let _ = self.hook("setTools", &[list.into()]);
        }
        let outcome = self.run_cell(id, code, n);
        self.finish_cell(id, n, outcome);
    }

    fn finish_cell(&mut self, id: u64, n: u64, outcome: CellOutcome) {
        let ex = executor();
        let cancelled = ex.cancel_timers();
        if cancelled > 0 {
            let s = if cancelled == 1 { "" } else { "s" };
            emit_stream(
                id,
                StreamName::Stderr,
                &format!("[{cancelled} pending timer{s} cancelled when the cell ended]\n"),
            );
        }
        cancel_tool_calls();
        ex.promise_jobs.borrow_mut().clear();
        ex.async_jobs.borrow_mut().clear();
        ex.generic_jobs.borrow_mut().clear();
        ex.rejections.borrow_mut().clear();
        let mut last = Vec::new();
        let status = match outcome {
            CellOutcome::Value(value) => {
                last.extend(self.result_frame(id, value));
                DoneStatus::Ok
            }
            CellOutcome::Error(info) => {
                last.push(info.frame(id));
                DoneStatus::Error
            }
            CellOutcome::Interrupted => {
                let info = ErrorInfo {
                    ename: "Interrupted".into(),
                    evalue: "the cell was interrupted while waiting".into(),
                    traceback: vec!["Interrupted: the cell was interrupted while waiting".into()],
                };
                last.push(info.frame(id));
                DoneStatus::Interrupted
            }
        };
        *ex.cell.borrow_mut() = None;
        last.push(KernelFrame::Done { id, status, execution_count: n });
        emit_all(&last);
    }

    fn result_frame(&mut self, id: u64, value: Option<JsValue>) -> Option<KernelFrame> {
        let value = value.filter(|v| !v.is_undefined())?;
        let bundle = match self.primitive_bundle(&value) {
            Some(data) => Ok(data),
            None => self.hook_json("bundle", &[value]),
        };
        match bundle {
            Ok(Value::Object(data)) => Some(KernelFrame::Result { id, data, metadata: None }),
            Ok(other) => {
                let e = format!("the bundle is not an object: {other}");
                emit_stream(
                    id,
                    StreamName::Stderr,
                    &format!("[the result could not be rendered: {e}]\n"),
                );
                None
            }
            Err(e) => {
                emit_stream(
                    id,
                    StreamName::Stderr,
                    &format!("[the result could not be rendered: {e}]\n"),
                );
                None
            }
        }
    }
}

impl Kernel {
    /// The JS6 bundle of a string, boolean, null or finite number, without calling into the
    /// prelude (the common case of a warm trivial cell). Other values return `None`.
    fn primitive_bundle(&mut self, value: &JsValue) -> Option<Value> {
        if let Some(s) = value.as_string() {
            if s.len() > PRIMITIVE_TEXT_MAX {
                return None; // the prelude cuts long text
            }
            let text = s.to_std_string_lossy();
            return Some(json!({"application/json": text, "text/plain": text}));
        }
        let finite_number =
            value.as_number().is_some_and(|n| n.is_finite() && !(n == 0.0 && n.is_sign_negative()));
        if !(finite_number || value.as_boolean().is_some() || value.is_null()) {
            return None;
        }
        // JSON.stringify writes a number as its JS string, so parsing that text gives exactly
        // what the prelude's bundle would.
        let text = value.to_string(&mut self.context).ok()?.to_std_string_lossy();
        let json: Value = serde_json::from_str(&text).ok()?;
        Some(json!({"application/json": json, "text/plain": text}))
    }
}

/// JS12: `2×10^7 × timeout_s` loop iterations.
pub fn loop_limit(timeout_ms: u64) -> u64 {
    LOOP_ITERATIONS_PER_SECOND.saturating_mul(timeout_ms) / 1000
}

fn install_prelude(context: &mut Context) -> JsResult<JsObject> {
    let source = Source::from_bytes(PRELUDE.as_bytes()).with_path(Path::new("<execkit-prelude>"));
    let script = Script::parse(source, None, context)?;
    let installer = script.evaluate(context)?;
    let natives = crate::natives::natives(context);
    let Some(installer) = installer.as_callable() else {
        return Err(boa_engine::JsNativeError::typ()
            .with_message("the prelude is not a function")
            .into());
    };
    let hooks = installer.call(&JsValue::undefined(), &[natives.into()], context)?;
    crate::event_loop::run_microtasks(context)?;
    hooks.as_object().ok_or_else(|| {
        boa_engine::JsNativeError::typ().with_message("the prelude returned no hooks").into()
    })
}
