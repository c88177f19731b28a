//! The `Toolkit` class: one dispatcher and the runtime it runs on, for one Python host.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use execkit::{CallContext, SandboxOptions, SelectionOptions, ToolFormat, Toolkit};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use tokio::runtime::Runtime;
use tokio_util::sync::CancellationToken;

use crate::approve::approver;
use crate::artifact;
use crate::convert::{to_json, to_python};
use crate::options::ToolkitOptions;
use crate::progress::progress_fn;
use crate::wait::Running;

/// Runtime threads per Toolkit: tool calls mostly wait on their children, so a few threads
/// serve many concurrent calls (8 Python threads calling at once is the tested case).
const WORKER_THREADS: usize = 4;

/// How long closing waits for the runtime's blocking tasks (artifact retention rounds) after
/// the Toolkit itself has closed.
const RUNTIME_SHUTDOWN: Duration = Duration::from_secs(1);

/// A live Toolkit: cheap to clone out of the lock, so calls never hold it while they run.
#[derive(Clone)]
struct Live {
    runtime: Arc<Runtime>,
    toolkit: Toolkit,
}

/// Runs execkit tools in this process: `call(name, args)` returns the ToolResult as a dict.
#[pyclass(name = "Toolkit", module = "execkit._native", subclass, weakref, frozen)]
pub struct PyToolkit {
    live: Mutex<Option<Live>>,
    progress: Option<Py<PyAny>>,
}

/// A call started with `Toolkit.start`; `cancel()` kills what it started.
#[pyclass(module = "execkit._native", frozen)]
pub struct CallHandle {
    cancel: CancellationToken,
}

#[pymethods]
impl CallHandle {
    /// Cancels the call: its process tree is killed and it ends as cancelled.
    fn cancel(&self) {
        self.cancel.cancel();
    }
}

#[pymethods]
impl PyToolkit {
    #[new]
    #[pyo3(signature = (
        cwd=None, *, vars=None, one_shot=false, subreaper=false, progress=None,
        sandbox=None, network=None, writable=None, protect=None, deny_read=None, approve=None
    ))]
    // The Python signature: one keyword per option, as the CLI has one flag each.
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        cwd: Option<PathBuf>,
        vars: Option<std::collections::HashMap<String, String>>,
        one_shot: bool,
        subreaper: bool,
        progress: Option<Py<PyAny>>,
        sandbox: Option<String>,
        network: Option<String>,
        writable: Option<Vec<PathBuf>>,
        protect: Option<Vec<PathBuf>>,
        deny_read: Option<Vec<PathBuf>>,
        approve: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        let sandbox = SandboxOptions {
            mode: sandbox,
            network,
            writable: writable.unwrap_or_default(),
            protect: protect.unwrap_or_default(),
            deny_read: deny_read.unwrap_or_default(),
        };
        let options = ToolkitOptions {
            cwd,
            vars: vars.unwrap_or_default(),
            one_shot,
            subreaper,
            sandbox,
            approver: approve.map(approver),
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(WORKER_THREADS)
            .thread_name("execkit")
            .enable_all()
            .build()
            .map_err(|e| PyRuntimeError::new_err(format!("failed to start the runtime: {e}")))?;
        let built = py.detach(|| {
            let _entered = runtime.enter();
            options.builder().build()
        });
        let toolkit = built.map_err(|reason| {
            PyValueError::new_err(format!("failed to start the toolkit: {reason}"))
        })?;
        let live = Live { runtime: Arc::new(runtime), toolkit };
        Ok(PyToolkit { live: Mutex::new(Some(live)), progress })
    }

    /// Runs one tool call and returns its result; `progress` (or the Toolkit's) receives
    /// progress events while it runs.
    #[pyo3(signature = (name, args=None, *, progress=None))]
    fn call(
        &self,
        py: Python<'_>,
        name: &str,
        args: Option<&Bound<'_, PyAny>>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let live = self.live()?;
        let running = self.spawn(py, &live, name, args, progress)?;
        let result = running.wait(py, &live.runtime)?;
        to_python(py, &result)
    }

    /// Starts one tool call and returns at once; `done(result)` is called on a runtime thread
    /// when it ends (also after `cancel()`). The package's `acall` is built on it.
    #[pyo3(signature = (name, args, done, *, progress=None))]
    fn start(
        &self,
        py: Python<'_>,
        name: &str,
        args: Option<&Bound<'_, PyAny>>,
        done: Py<PyAny>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<CallHandle> {
        let live = self.live()?;
        let running = self.spawn(py, &live, name, args, progress)?;
        let cancel = running.cancel.clone();
        live.runtime.spawn(async move {
            let result = running.handle.await;
            Python::attach(|py| {
                let delivered = result
                    .map_err(|e| PyRuntimeError::new_err(format!("tool call failed: {e}")))
                    .and_then(|result| to_python(py, &result))
                    .and_then(|result| done.call1(py, (result,)));
                if let Err(err) = delivered {
                    err.write_unraisable(py, Some(done.bind(py)));
                }
            });
        });
        Ok(CallHandle { cancel })
    }

    /// The tool definitions in `format`: "mcp", "openai", "anthropic" or "gemini".
    #[pyo3(signature = (format="mcp"))]
    fn tools(&self, py: Python<'_>, format: &str) -> PyResult<Py<PyAny>> {
        let format = ToolFormat::from_name(format).map_err(PyValueError::new_err)?;
        let live = self.live()?;
        let list: Vec<serde_json::Value> =
            live.toolkit.tools().iter().map(|spec| spec.render(format)).collect();
        to_python(py, &list)
    }

    /// Reads an artifact (`artifact://<id>[?query]` or the bare id): the selected text, the
    /// bytes of a binary artifact, or with `raw=True` the stored bytes unchanged.
    #[pyo3(signature = (uri, *, lines=None, head=None, tail=None, grep=None, context=None, max=None, raw=false))]
    // The Python signature: one keyword per selector, as `execkit artifact` has one flag each.
    #[allow(clippy::too_many_arguments)]
    fn read_artifact(
        &self,
        py: Python<'_>,
        uri: &str,
        lines: Option<String>,
        head: Option<u64>,
        tail: Option<u64>,
        grep: Option<String>,
        context: Option<u64>,
        max: Option<u64>,
        raw: bool,
    ) -> PyResult<Py<PyAny>> {
        let options = SelectionOptions { lines, head, tail, grep, context, max };
        let live = self.live()?;
        let store = live
            .toolkit
            .artifacts()
            .cloned()
            .map_err(|reason| PyRuntimeError::new_err(reason.to_owned()))?;
        let read = py.detach(|| artifact::read(&store, uri, &options, raw));
        Ok(read.map_err(artifact::to_exception)?.into_python(py))
    }

    /// What this machine offers, one section per part: `{title: [lines]}`.
    fn doctor(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let doctor = self.live()?.toolkit.doctor();
        let sections: serde_json::Map<String, serde_json::Value> = doctor
            .sections
            .into_iter()
            .map(|s| (s.title, serde_json::Value::from(s.lines)))
            .collect();
        to_python(py, &sections)
    }

    /// The base working directory of every call.
    #[getter]
    fn cwd(&self) -> PyResult<PathBuf> {
        Ok(self.live()?.toolkit.cwd().to_path_buf())
    }

    #[getter]
    fn closed(&self) -> bool {
        lock(&self.live).is_none()
    }

    /// Kills every job, kernel and process tree the Toolkit started; calls in flight end as
    /// cancelled. Idempotent.
    fn close(&self, py: Python<'_>) {
        let live = lock(&self.live).take();
        if let Some(live) = live {
            py.detach(|| shut_down(live));
        }
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.close(py);
        false
    }

    fn __repr__(slf: &Bound<'_, Self>) -> String {
        let class: String = slf
            .get_type()
            .qualname()
            .map(|name| name.to_string())
            .unwrap_or_else(|_| "Toolkit".into());
        let this = slf.get();
        match lock(&this.live).as_ref() {
            Some(live) => format!("<{class} cwd={:?}>", live.toolkit.cwd().display().to_string()),
            None => format!("<{class} closed>"),
        }
    }

    #[classattr]
    fn formats(py: Python<'_>) -> Py<PyAny> {
        let names: Vec<&str> = ToolFormat::ALL.iter().map(|f| f.name()).collect();
        pyo3::types::PyTuple::new(py, names)
            .map(|t| t.into_any().unbind())
            .unwrap_or_else(|_| py.None())
    }
}

impl PyToolkit {
    fn live(&self) -> PyResult<Live> {
        lock(&self.live).clone().ok_or_else(|| PyRuntimeError::new_err("the toolkit is closed"))
    }

    /// Starts `name(args)` on the runtime with a fresh cancellation token.
    fn spawn(
        &self,
        py: Python<'_>,
        live: &Live,
        name: &str,
        args: Option<&Bound<'_, PyAny>>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Running> {
        let args = to_json(py, args)?;
        let progress = progress.or_else(|| self.progress.as_ref().map(|p| p.clone_ref(py)));
        let cancel = CancellationToken::new();
        let ctx = CallContext { progress: progress.map(progress_fn), cancel: cancel.clone() };
        let toolkit = live.toolkit.clone();
        let name = name.to_owned();
        let handle = live.runtime.spawn(async move { toolkit.call(&name, args, ctx).await });
        Ok(Running { handle, cancel })
    }
}

impl Drop for PyToolkit {
    /// Garbage-collected without `close()`: close now, so no process outlives the object.
    fn drop(&mut self) {
        let live = self.live.get_mut().map(Option::take).unwrap_or_else(|p| p.into_inner().take());
        if let Some(live) = live {
            Python::attach(|py| py.detach(|| shut_down(live)));
        }
    }
}

/// Closes the Toolkit, then stops its runtime once no call holds it any more.
fn shut_down(live: Live) {
    live.runtime.block_on(live.toolkit.close());
    drop(live.toolkit);
    if let Ok(runtime) = Arc::try_unwrap(live.runtime) {
        runtime.shutdown_timeout(RUNTIME_SHUTDOWN);
    }
}

fn lock(live: &Mutex<Option<Live>>) -> MutexGuard<'_, Option<Live>> {
    live.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
