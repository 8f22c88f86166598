//! Core errors → the Python exception classes of `retrypolicy.errors`, one per stable code.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyModule;

static ERRORS: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

/// The Python class name for a core error code.
fn class_name(code: &str) -> &'static str {
    match code {
        "unknown_reason" => "UnknownReasonError",
        "unknown_name" => "UnknownNameError",
        "invalid_duration" => "InvalidDurationError",
        "invalid_random" => "InvalidRandomError",
        "out_of_range" => "OutOfRangeError",
        "invalid_type" => "InvalidTypeError",
        "unknown_field" => "UnknownFieldError",
        "missing_field" => "MissingFieldError",
        "malformed_json" => "MalformedJsonError",
        "unsupported_version" => "UnsupportedVersionError",
        _ => "RetryPolicyError",
    }
}

/// Builds the Python exception for a core error, carrying `.code`, `.field` and the message.
pub fn to_py(e: retrypolicy::Error) -> PyErr {
    Python::attach(|py| {
        let build = || -> PyResult<PyErr> {
            let module = ERRORS.get_or_try_init(py, || py.import("retrypolicy.errors").map(Bound::unbind))?;
            let cls = module.bind(py).getattr(class_name(e.code()))?;
            let inst = cls.call1((e.to_string(), e.code(), e.field()))?;
            Ok(PyErr::from_value(inst))
        };
        build().unwrap_or_else(|err| err)
    })
}

/// Shorthand: a core result as a Python result.
pub trait IntoPy<T> {
    /// Maps the core error to its Python exception.
    fn py(self) -> PyResult<T>;
}

impl<T> IntoPy<T> for Result<T, retrypolicy::Error> {
    fn py(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}
