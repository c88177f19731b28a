//! A Python callable as the Toolkit's approver for bash calls that ask to run outside the
//! sandbox. It is called on a blocking thread with the request as a dict (`command`,
//! `justification`, `message`) and answers `"once"`, `"session"` or `"decline"` (`True` is
//! once, `False`/`None` decline). Anything else, or an exception, declines the call and is
//! reported as unraisable; a callback that never returns is bounded by the Toolkit's answer
//! timeout (`EXECKIT_SANDBOX_APPROVAL_TIMEOUT_S`), so the call ends either way.

use std::sync::Arc;

use execkit::{Approval, ApprovalRequest, Approver};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

pub fn approver(callback: Py<PyAny>) -> Approver {
    let callback = Arc::new(callback);
    Arc::new(move |request: ApprovalRequest| {
        let callback = Arc::clone(&callback);
        Box::pin(async move {
            let asked = tokio::task::spawn_blocking(move || ask(&callback, &request));
            asked.await.unwrap_or(Approval::Declined)
        })
    })
}

/// Calls the callback with the GIL held; every failure is a decline.
fn ask(callback: &Py<PyAny>, request: &ApprovalRequest) -> Approval {
    Python::attach(|py| {
        let answer = request_dict(py, request)
            .and_then(|dict| callback.call1(py, (dict,)))
            .and_then(|answer| parse(answer.bind(py)));
        answer.unwrap_or_else(|err| {
            err.write_unraisable(py, Some(callback.bind(py)));
            Approval::Declined
        })
    })
}

fn request_dict<'py>(py: Python<'py>, request: &ApprovalRequest) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("command", &request.command)?;
    dict.set_item("justification", &request.justification)?;
    dict.set_item("message", &request.message)?;
    Ok(dict)
}

fn parse(answer: &Bound<'_, PyAny>) -> PyResult<Approval> {
    if answer.is_none() {
        return Ok(Approval::Declined);
    }
    if let Ok(yes) = answer.extract::<bool>() {
        return Ok(if yes { Approval::Once } else { Approval::Declined });
    }
    let text: String = answer.extract().map_err(|_| bad_answer(answer))?;
    match text.as_str() {
        "once" => Ok(Approval::Once),
        "session" => Ok(Approval::Session),
        "decline" => Ok(Approval::Declined),
        _ => Err(bad_answer(answer)),
    }
}

fn bad_answer(answer: &Bound<'_, PyAny>) -> PyErr {
    let shown = answer.repr().map(|r| r.to_string()).unwrap_or_else(|_| "?".into());
    PyValueError::new_err(format!(
        "approve must return \"once\", \"session\" or \"decline\" (or a bool), not {shown}; \
         the call was declined"
    ))
}
