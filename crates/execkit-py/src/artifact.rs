//! `read_artifact`: the dispatcher's artifact store read the way the CLI's `execkit artifact`
//! and MCP `resources/read` read it, with the store's errors as Python exceptions.

use std::io::Read as _;

use execkit::{ArtifactError, ArtifactId, ArtifactStore, ReadOutput, SelectionOptions};
use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

/// What one read returns before it becomes a Python `str` or `bytes`.
pub enum ReadBack {
    Text(String),
    Bytes(Vec<u8>),
}

impl ReadBack {
    pub fn into_python(self, py: Python<'_>) -> Py<PyAny> {
        match self {
            ReadBack::Text(text) => PyString::new(py, &text).into_any().unbind(),
            ReadBack::Bytes(bytes) => PyBytes::new(py, &bytes).into_any().unbind(),
        }
    }
}

/// Reads `target` (`3f9a0c12` or `artifact://3f9a0c12[?query]`): the selected text, the bytes
/// of a binary artifact, or with `raw` the stored bytes unchanged.
pub fn read(
    store: &ArtifactStore,
    target: &str,
    options: &SelectionOptions,
    raw: bool,
) -> Result<ReadBack, ArtifactError> {
    let (id, query) = ArtifactId::parse(target)?;
    if raw {
        if !options.is_empty() || query.as_deref().is_some_and(|q| !q.is_empty()) {
            return Err(ArtifactError::BadSelection(
                "raw reads the whole artifact; give no selector".into(),
            ));
        }
        let mut bytes = Vec::new();
        store
            .open_raw(&id)?
            .read_to_end(&mut bytes)
            .map_err(|source| ArtifactError::Io { what: format!("{id} read"), source })?;
        return Ok(ReadBack::Bytes(bytes));
    }
    let selection = options.resolve(query.as_deref())?;
    Ok(match store.read(&id, &selection)? {
        ReadOutput::Text(text) => ReadBack::Text(text),
        ReadOutput::Binary { bytes, .. } => ReadBack::Bytes(bytes),
    })
}

/// The exception a caller can catch by kind: a bad id or selector is a `ValueError`, a missing
/// artifact `FileNotFoundError`, artifacts turned off `RuntimeError`, a disk error `OSError`.
pub fn to_exception(err: ArtifactError) -> PyErr {
    let message = err.to_string();
    match err {
        ArtifactError::InvalidUri(_) | ArtifactError::BadSelection(_) => {
            PyValueError::new_err(message)
        }
        ArtifactError::NotFound(_) => PyFileNotFoundError::new_err(message),
        ArtifactError::Disabled(_) => PyRuntimeError::new_err(message),
        ArtifactError::Io { .. } => PyOSError::new_err(message),
    }
}
