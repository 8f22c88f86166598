//! Retry reasons both ways: a `RetryReason` member (an int) or its name in, the enum member out.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyInt, PyString};
use retrypolicy::{Error, RetryReason};

use crate::convert::{echo, wrong_type};
use crate::errors::{CoreError, IntoPy};

/// `retrypolicy._reason.RetryReason`, looked up once.
static REASON_CLASS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// The Python `RetryReason` enum member for a core reason.
pub fn to_py(py: Python<'_>, r: RetryReason) -> PyResult<Py<PyAny>> {
    let cls = REASON_CLASS.get_or_try_init(py, || {
        py.import("retrypolicy._reason")?
            .getattr("RetryReason")
            .map(Bound::unbind)
    })?;
    Ok(cls.bind(py).call1((r as usize,))?.unbind())
}

/// A reason given as a `RetryReason` member (an int subclass) or its name (aliases accepted).
pub fn from_py(field: &str, v: &Bound<'_, PyAny>) -> PyResult<RetryReason> {
    if v.is_instance_of::<PyInt>() && !v.is_instance_of::<PyBool>() {
        if let Some(r) = v.extract::<usize>().ok().and_then(|i| RetryReason::ALL.get(i)) {
            return Ok(*r);
        }
        return Err(CoreError(Error::UnknownReason {
            field: field.to_owned(),
            value: echo(v),
        })
        .into());
    }
    if let Ok(s) = v.cast::<PyString>() {
        return RetryReason::parse(field, &crate::convert::utf8(field, s)?).py();
    }
    Err(wrong_type(field, "a RetryReason or its name", v))
}

/// Every reason as (index, name, allows_non_idempotent_retry, always_retry), in the RFC table's order.
#[pyfunction]
pub fn reason_table() -> Vec<(usize, &'static str, bool, bool)> {
    retrypolicy::reason::REASON_TABLE
        .iter()
        .map(|r| {
            (
                r.reason as usize,
                r.name,
                r.allows_non_idempotent_retry,
                r.always_retry,
            )
        })
        .collect()
}

/// Parses a reason name (aliases accepted) to its index.
#[pyfunction]
pub fn parse_reason(value: &Bound<'_, PyAny>) -> PyResult<usize> {
    Ok(from_py("reason", value)? as usize)
}
