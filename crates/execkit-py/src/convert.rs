//! Values across the boundary: Python objects to and from JSON through Python's own `json`
//! module, so what a caller may pass is exactly what `json.dumps` accepts, with its errors.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use serde::Serialize;
use serde_json::Value;

static DUMPS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static LOADS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// A Python value (a dict of arguments) as JSON; `None` is `{}`.
pub fn to_json(py: Python<'_>, value: Option<&Bound<'_, PyAny>>) -> PyResult<Value> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(Value::Object(serde_json::Map::new()));
    };
    let dumps = DUMPS.import(py, "json", "dumps")?;
    let text: String = dumps.call1((value,))?.extract()?;
    serde_json::from_str(&text).map_err(|e| PyValueError::new_err(format!("arguments: {e}")))
}

/// A serialisable value (a ToolResult, a progress event) as Python objects.
pub fn to_python<T: Serialize>(py: Python<'_>, value: &T) -> PyResult<Py<PyAny>> {
    let text = serde_json::to_string(value)
        .map_err(|e| PyValueError::new_err(format!("cannot encode the result: {e}")))?;
    let loads = LOADS.import(py, "json", "loads")?;
    Ok(loads.call1((text,))?.unbind())
}
