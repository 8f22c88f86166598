//! `CircuitBreaker` and its `BreakerVerdict`: the core's breaker (Couchbase's parameters) behind a
//! lock, so one object may be shared by many threads. Arguments are converted before the lock is
//! taken and nothing calls back into Python while it is held.

use std::sync::{Mutex, MutexGuard};

use pyo3::prelude::*;
use pyo3::types::PyType;
use retrypolicy as core;
use retrypolicy::{BreakerConfig, BreakerDocument, BreakerOutcome, BreakerSnapshot};

use crate::convert::{from_py_json, name, now_ms as clock_ms, required_json, to_json, to_py_json};
use crate::errors::IntoPy;
use crate::reason;

/// A breaker's answer to "may a request be sent now?"; immutable.
#[pyclass(frozen, module = "retrypolicy._lowlevel")]
pub struct BreakerVerdict {
    pub inner: core::BreakerVerdict,
}

#[pymethods]
impl BreakerVerdict {
    /// Whether the request may be sent.
    #[getter]
    fn permitted(&self) -> bool {
        self.inner.permitted
    }
    /// Whether this request is the half-open canary.
    #[getter]
    fn canary(&self) -> bool {
        self.inner.canary
    }
    /// The circuit's state after this call: `closed`, `open` or `half_open`.
    #[getter]
    fn state(&self) -> &'static str {
        self.inner.state.name()
    }
    /// `RetryReason.CIRCUIT_BREAKER_OPEN` when refused (the reason to hand `decide`), else None.
    #[getter]
    fn reason(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.inner.reason.map(|r| reason::to_py(py, r)).transpose()
    }
    /// The rule that decided.
    #[getter]
    fn rule(&self) -> &'static str {
        self.inner.rule.name()
    }
    /// The source text of that rule.
    #[getter]
    fn source(&self) -> &'static str {
        self.inner.source
    }
    /// The verdict as JSON (the `breaker_run` form).
    fn to_json(&self) -> String {
        to_json(&self.inner)
    }
    /// `BreakerVerdict(<JSON form>)`.
    fn __repr__(&self) -> String {
        format!("BreakerVerdict({})", self.to_json())
    }
}

/// A circuit breaker with Couchbase's parameters, from its document (None: Couchbase's
/// defaults); safe to share between threads. Errors name fields under `breaker.` and `state.`.
#[pyclass(frozen, module = "retrypolicy._lowlevel")]
pub struct CircuitBreaker {
    inner: Mutex<core::CircuitBreaker>,
}

/// A breaker's document, checked (errors under `breaker.`); None is Couchbase's defaults.
fn config_of(document: Option<&Bound<'_, PyAny>>) -> PyResult<BreakerConfig> {
    let doc: BreakerDocument = match document.filter(|d| !d.is_none()) {
        Some(d) => from_py_json("breaker", d)?,
        None => BreakerDocument::default(),
    };
    BreakerConfig::from_document(&doc, "breaker").py()
}

impl CircuitBreaker {
    /// The state, locked.
    pub(crate) fn lock(&self) -> MutexGuard<'_, core::CircuitBreaker> {
        crate::budget::locked(&self.inner)
    }
}

#[pymethods]
impl CircuitBreaker {
    /// A closed breaker of `document` (a dict of Couchbase's fields, or None for its defaults).
    #[new]
    #[pyo3(signature = (document = None))]
    fn new(document: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        Ok(CircuitBreaker {
            inner: Mutex::new(core::CircuitBreaker::new(&config_of(document)?)),
        })
    }

    /// A breaker of `document` in the state `snapshot` (a dict from `snapshot()`).
    #[classmethod]
    fn restore(
        _cls: &Bound<'_, PyType>,
        document: Option<&Bound<'_, PyAny>>,
        snapshot: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let config = config_of(document)?;
        let snapshot: BreakerSnapshot = required_json("state", snapshot)?;
        Ok(CircuitBreaker {
            inner: Mutex::new(core::CircuitBreaker::restore(&config, &snapshot, "state").py()?),
        })
    }

    /// Whether a request may be sent at `now_ms`. After the sleep window this request becomes the
    /// one canary: call it only for a request about to be sent.
    fn permit(&self, now_ms: &Bound<'_, PyAny>) -> PyResult<BreakerVerdict> {
        let now = clock_ms("now_ms", now_ms)?;
        Ok(BreakerVerdict {
            inner: self.lock().permit(now),
        })
    }

    /// Tells the breaker how a request ended at `now_ms`: `"success"`, `"failure"` or `"timeout"`.
    fn record(&self, now_ms: &Bound<'_, PyAny>, outcome: &Bound<'_, PyAny>) -> PyResult<()> {
        let now = clock_ms("now_ms", now_ms)?;
        let outcome: BreakerOutcome = name("outcome", outcome)?;
        self.lock().record(now, outcome);
        Ok(())
    }

    /// The state at `now_ms` (`closed`, `open` or `half_open`); changes nothing.
    fn state(&self, now_ms: &Bound<'_, PyAny>) -> PyResult<&'static str> {
        let now = clock_ms("now_ms", now_ms)?;
        Ok(self.lock().state(now).name())
    }

    /// The circuit's state and counts as a JSON-shaped dict, to keep anywhere and `restore`.
    fn snapshot(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let snapshot = self.lock().snapshot();
        to_py_json(py, &snapshot)
    }

    /// The normalized document (version 1, every field set), as a dict.
    #[getter]
    fn document(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let document = self.lock().config().to_document();
        to_py_json(py, &document)
    }

    /// `CircuitBreaker(<document>)`.
    fn __repr__(&self) -> String {
        format!("CircuitBreaker({})", to_json(&self.lock().config().to_document()))
    }
}
