//! The kernel backends this build has, one line each. A language without a line here is
//! reported as not available (by calls using it and by doctor).

use std::sync::Arc;

use crate::backend::KernelBackend;
use crate::js::JsBackend;
use crate::python::PythonBackend;

/// Every backend, in the order doctor lists them.
pub fn backends() -> Vec<Arc<dyn KernelBackend>> {
    vec![Arc::new(PythonBackend::default()), Arc::new(JsBackend::default())]
}
