//! Core errors → the Python exception classes of `retrypolicy.errors`, one per stable code.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyDict;

/// The `code → class` table of `retrypolicy.errors` (`ERRORS_BY_CODE`), looked up once.
static ERRORS_BY_CODE: PyOnceLock<Py<PyDict>> = PyOnceLock::new();
/// `retrypolicy.errors.RetryPolicyError`, the class for a code the table lacks.
static BASE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// A core error on its way to Python (a newtype: neither `PyErr` nor the core's error is ours).
pub struct CoreError(pub retrypolicy::Error);

impl From<retrypolicy::Error> for CoreError {
    fn from(e: retrypolicy::Error) -> Self {
        CoreError(e)
    }
}

impl From<CoreError> for PyErr {
    /// The exception of the error's code, carrying the message, `.code` and `.field`.
    fn from(CoreError(e): CoreError) -> PyErr {
        Python::attach(|py| {
            let build = || -> PyResult<PyErr> {
                let errors = py.import("retrypolicy.errors")?;
                let table = ERRORS_BY_CODE.get_or_try_init(py, || {
                    Ok::<_, PyErr>(errors.getattr("ERRORS_BY_CODE")?.cast_into::<PyDict>()?.unbind())
                })?;
                let cls = match table.bind(py).get_item(e.code())? {
                    Some(cls) => cls,
                    None => BASE
                        .get_or_try_init(py, || errors.getattr("RetryPolicyError").map(Bound::unbind))?
                        .bind(py)
                        .clone(),
                };
                Ok(PyErr::from_value(cls.call1((
                    e.to_string(),
                    e.code(),
                    e.field(),
                ))?))
            };
            build().unwrap_or_else(|err| err)
        })
    }
}

/// Shorthand: a core result as a Python result.
pub trait IntoPy<T> {
    /// Maps the core error to its Python exception.
    fn py(self) -> PyResult<T>;
}

impl<T> IntoPy<T> for Result<T, retrypolicy::Error> {
    fn py(self) -> PyResult<T> {
        self.map_err(|e| CoreError(e).into())
    }
}

/// The `invalid_type` exception for `field`, saying what was expected.
pub fn invalid_type(field: &str, message: String) -> PyErr {
    CoreError(retrypolicy::Error::InvalidType {
        field: field.to_owned(),
        message,
    })
    .into()
}
