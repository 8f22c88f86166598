//! `Classification` and the classifiers: a service's response (or an SDK-side failure) → a reason.

use pyo3::prelude::*;
use pyo3::types::PyString;
use retrypolicy as core;

use crate::convert::{from_json, int_in, name, to_json, wrong_type};
use crate::errors::IntoPy;
use crate::policy::{self, Policy};
use crate::reason;

/// The result of classifying one failure.
#[pyclass(frozen, module = "retrypolicy._lowlevel")]
pub struct Classification {
    inner: core::Classification,
}

impl From<core::Classification> for Classification {
    fn from(inner: core::Classification) -> Self {
        Classification { inner }
    }
}

#[pymethods]
impl Classification {
    /// The RetryReason to pass to `decide`, or None to fail without retry handling.
    #[getter]
    fn reason(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.inner.reason.map(|r| reason::to_py(py, r)).transpose()
    }
    /// The rule that matched.
    #[getter]
    fn rule(&self) -> &'static str {
        self.inner.rule
    }
    /// The spec section of that rule.
    #[getter]
    fn section(&self) -> &'static str {
        self.inner.section
    }
    /// The error to surface instead (e.g. `"cas_mismatch"`), or None.
    #[getter]
    fn surface_as(&self) -> Option<&'static str> {
        self.inner.surface_as
    }
    /// As JSON (the spec-fixture output keys).
    fn to_json(&self) -> String {
        to_json(&self.inner)
    }
    /// `Classification(<JSON form>)`.
    fn __repr__(&self) -> String {
        format!("Classification({})", self.to_json())
    }
}

/// The server's error map, given as JSON text (None for no map).
fn error_map(v: Option<&Bound<'_, PyAny>>) -> PyResult<Option<core::ErrorMap>> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    let text = v
        .cast::<PyString>()
        .map_err(|_| wrong_type("error_map", "the error map as JSON text", v))?;
    from_json(&crate::convert::utf8("error_map", text)?).map(Some)
}

/// A KV status: an int, or hex text such as `"0xa2"`.
fn kv_status(v: &Bound<'_, PyAny>) -> PyResult<u16> {
    match v.cast::<PyString>() {
        Ok(text) => {
            core::serde_form::status::parse_text("status", &crate::convert::utf8("status", text)?).py()
        }
        Err(_) => int_in("status", v, core::serde_form::STATUS_EXPECTED),
    }
}

/// Classifies a KV response status for a KV operation name; `error_map` is the server's JSON.
#[pyfunction]
#[pyo3(signature = (operation, status, *, error_map = None, policy = None))]
pub fn classify_kv(
    operation: &Bound<'_, PyAny>,
    status: &Bound<'_, PyAny>,
    error_map: Option<&Bound<'_, PyAny>>,
    policy: Option<&Bound<'_, Policy>>,
) -> PyResult<Classification> {
    let op = name("operation", operation)?;
    let status = kv_status(status)?;
    let map = self::error_map(error_map)?;
    let compat = policy::or_default(policy).compat;
    Ok(core::classify_kv(op, status, map.as_ref(), &compat).into())
}

/// Classifies the first error of a query response: its code, message and `"retry"` flag.
#[pyfunction]
#[pyo3(signature = (code, message = None, *, retry = None, policy = None))]
pub fn classify_query(
    code: &Bound<'_, PyAny>,
    message: Option<&Bound<'_, PyAny>>,
    retry: Option<&Bound<'_, PyAny>>,
    policy: Option<&Bound<'_, Policy>>,
) -> PyResult<Classification> {
    let code: u32 = int_in("code", code, "0..=4294967295")?;
    let message = message.map_or(Ok(String::new()), |m| crate::convert::text("message", m))?;
    let retry = match retry {
        Some(r) => crate::convert::opt_bool("retry", r)?.unwrap_or(false),
        None => false,
    };
    Ok(core::classify_query(code, &message, retry, &policy::or_default(policy).compat).into())
}

/// Classifies the first error of an analytics response.
#[pyfunction]
pub fn classify_analytics(code: &Bound<'_, PyAny>) -> PyResult<Classification> {
    Ok(core::classify_analytics(int_in("code", code, "0..=4294967295")?).into())
}

/// Classifies a search response's HTTP status.
#[pyfunction]
pub fn classify_search(http_status: &Bound<'_, PyAny>) -> PyResult<Classification> {
    Ok(core::classify_search(int_in("http_status", http_status, "0..=65535")?).into())
}

/// Classifies a views response from its HTTP status and body.
#[pyfunction]
#[pyo3(signature = (http_status, body = None))]
pub fn classify_views(
    http_status: &Bound<'_, PyAny>,
    body: Option<&Bound<'_, PyAny>>,
) -> PyResult<Classification> {
    let status = int_in("http_status", http_status, "0..=65535")?;
    let body = body.map_or(Ok(String::new()), |b| crate::convert::text("body", b))?;
    Ok(core::classify_views(status, &body).into())
}

/// Classifies a failure the SDK observed itself (`"socket_closed_while_in_flight"`, ...).
#[pyfunction]
pub fn classify_dispatch(failure: &Bound<'_, PyAny>) -> PyResult<Classification> {
    Ok(core::classify_dispatch(name("failure", failure)?).into())
}
