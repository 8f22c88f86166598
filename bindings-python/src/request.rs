//! `Request`: the state of one request when it failed, built from keywords or the JSON form.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use retrypolicy as core;

use crate::convert::{
    count_u32, duration_ms, from_json, name_of, opt_bool, opt_draw, opt_duration_ms, opt_name, to_json,
};
use crate::errors::{invalid_type, CoreError};
use crate::operation::Operation;
use crate::reason;

/// The state of one request when it failed: everything a decision depends on.
#[pyclass(frozen, module = "retrypolicy._lowlevel")]
#[derive(Clone)]
pub struct Request {
    /// The core request.
    pub inner: core::Request,
}

/// Sets one keyword of the constructor (or of `replace`) on a core request.
fn set_field(r: &mut core::Request, key: &str, v: &Bound<'_, PyAny>) -> PyResult<()> {
    match key {
        "operation" => {
            let op = v
                .cast::<Operation>()
                .map_err(|_| invalid_type("operation", "expected an Operation".into()))?;
            r.operation = op.get().inner;
        }
        "attempts" => r.attempts = count_u32("attempts", v)?,
        "elapsed" => r.elapsed_ms = duration_ms("elapsed", v)?,
        "timeout" => r.timeout_ms = duration_ms("timeout", v)?,
        "idempotent" => r.idempotent = opt_bool("idempotent", v)?,
        "strategy" => r.strategy = opt_name("strategy", v)?,
        "random" => r.random = opt_draw("random", v)?,
        "previous_delay" => r.previous_delay_ms = opt_duration_ms("previous_delay", v)?,
        "previous_reasons" => {
            r.previous_reasons = v
                .try_iter()?
                .map(|item| reason::from_py("previous_reasons", &item?))
                .collect::<PyResult<_>>()?;
        }
        other => {
            let field = retrypolicy::error::shorten(other);
            return Err(CoreError(core::Error::UnknownField { field }).into());
        }
    }
    Ok(())
}

#[pymethods]
impl Request {
    /// A request; durations are `datetime.timedelta` or seconds.
    #[new]
    #[pyo3(signature = (operation, *, timeout, elapsed = None, attempts = None, idempotent = None,
                        strategy = None, random = None, previous_delay = None, previous_reasons = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        operation: &Bound<'_, PyAny>,
        timeout: &Bound<'_, PyAny>,
        elapsed: Option<&Bound<'_, PyAny>>,
        attempts: Option<&Bound<'_, PyAny>>,
        idempotent: Option<&Bound<'_, PyAny>>,
        strategy: Option<&Bound<'_, PyAny>>,
        random: Option<&Bound<'_, PyAny>>,
        previous_delay: Option<&Bound<'_, PyAny>>,
        previous_reasons: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let mut r = core::Request::new(core::Operation::Search, 0, 0);
        let fields = [
            ("operation", Some(operation)),
            ("timeout", Some(timeout)),
            ("elapsed", elapsed),
            ("attempts", attempts),
            ("idempotent", idempotent),
            ("strategy", strategy),
            ("random", random),
            ("previous_delay", previous_delay),
            ("previous_reasons", previous_reasons),
        ];
        for (k, v) in fields {
            if let Some(v) = v {
                set_field(&mut r, k, v)?;
            }
        }
        Ok(Request { inner: r })
    }
    /// A copy with the given fields changed (same keywords as the constructor).
    #[pyo3(signature = (**changes))]
    fn replace(&self, changes: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let mut r = self.inner.clone();
        for (k, v) in changes.into_iter().flat_map(|c| c.iter()) {
            set_field(&mut r, &crate::convert::text("replace", &k)?, &v)?;
        }
        Ok(Request { inner: r })
    }
    /// Parses the JSON form used by the spec fixtures (`*_ms` integer milliseconds).
    #[staticmethod]
    fn from_json(text: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Request {
            inner: from_json(&crate::convert::text("json", text)?)?,
        })
    }
    /// The JSON form.
    fn to_json(&self) -> String {
        to_json(&self.inner)
    }
    /// The operation.
    #[getter]
    fn operation(&self) -> Operation {
        self.inner.operation.into()
    }
    /// Retries already made.
    #[getter]
    fn attempts(&self) -> u32 {
        self.inner.attempts
    }
    /// Time since the start, in milliseconds.
    #[getter]
    fn elapsed_ms(&self) -> u64 {
        self.inner.elapsed_ms
    }
    /// The timeout, in milliseconds.
    #[getter]
    fn timeout_ms(&self) -> u64 {
        self.inner.timeout_ms
    }
    /// Whether the request counts as idempotent (override, else the operation list).
    #[getter]
    fn idempotent(&self) -> bool {
        self.inner.is_idempotent()
    }
    /// The per-request strategy override, if any.
    #[getter]
    fn strategy(&self) -> Option<String> {
        self.inner.strategy.as_ref().map(name_of)
    }
    /// The random draw, if any.
    #[getter]
    fn random(&self) -> Option<f64> {
        self.inner.random
    }
    /// The previous retry's delay in milliseconds, if any.
    #[getter]
    fn previous_delay_ms(&self) -> Option<u64> {
        self.inner.previous_delay_ms
    }
    /// Reasons of earlier retries.
    #[getter]
    fn previous_reasons<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let items = self
            .inner
            .previous_reasons
            .iter()
            .map(|r| reason::to_py(py, *r))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }
    /// `Request(<JSON form>)`.
    fn __repr__(&self) -> String {
        format!("Request({})", self.to_json())
    }
}
