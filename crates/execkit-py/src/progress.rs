//! A Python callable as the call's progress sink: each event arrives as a dict, on a runtime
//! thread that takes the GIL for the call. An exception in the callback is reported as
//! unraisable and never stops the tool call.

use std::sync::Arc;

use execkit::{Progress, ProgressFn};
use pyo3::prelude::*;

use crate::convert::to_python;

pub fn progress_fn(callback: Py<PyAny>) -> ProgressFn {
    Arc::new(move |event: Progress| {
        Python::attach(|py| {
            let delivered = to_python(py, &event).and_then(|dict| callback.call1(py, (dict,)));
            if let Err(err) = delivered {
                err.write_unraisable(py, Some(callback.bind(py)));
            }
        });
    })
}
