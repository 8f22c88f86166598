//! `CircuitBreaker`, its `BreakerVerdict` and its `BreakerChange`: the core's breaker (Couchbase's
//! parameters) behind a lock, so one object may be shared by many threads. Arguments are converted
//! before the lock is taken and nothing calls back into Python while it is held: a state change is
//! reported (the `on_state_change` callback, the `retrypolicy.breaker` log, OpenTelemetry) after
//! the lock is released, by `retrypolicy._observe.breaker_changes`.

use std::sync::{Mutex, MutexGuard};

use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;
use pyo3::PyTraverseError;
use retrypolicy as core;
use retrypolicy::{BreakerConfig, BreakerDocument, BreakerOutcome, BreakerSnapshot};

use crate::convert::{
    from_py_json, name, now_ms as clock_ms, required_json, to_json, to_py_json, wrong_type,
};
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

/// One change of a breaker's state made by a call (`permit`, `record`, a run's step; a call can
/// make two); immutable.
#[pyclass(frozen, eq, module = "retrypolicy._lowlevel")]
#[derive(PartialEq)]
pub struct BreakerChange {
    pub inner: core::BreakerChange,
}

#[pymethods]
impl BreakerChange {
    /// The state before this change: `closed`, `open` or `half_open`.
    #[getter(from_state)]
    fn state_before(&self) -> &'static str {
        self.inner.from.name()
    }
    /// The state after it.
    #[getter(to_state)]
    fn state_after(&self) -> &'static str {
        self.inner.to.name()
    }
    /// What moved it: `breaker_tripped`, `breaker_canary`, `canary_succeeded`, `canary_failed`,
    /// `canary_timed_out` or `canary_released`.
    #[getter]
    fn rule(&self) -> &'static str {
        self.inner.rule.name()
    }
    /// The change as JSON (`{"from", "to", "rule"}`, the `breaker_run` form).
    fn to_json(&self) -> String {
        to_json(&self.inner)
    }
    /// `BreakerChange(<JSON form>)`.
    fn __repr__(&self) -> String {
        format!("BreakerChange({})", self.to_json())
    }
}

/// A circuit breaker with Couchbase's parameters, from its document (None: Couchbase's
/// defaults); safe to share between threads. Errors name fields under `breaker.` and `state.`.
#[pyclass(frozen, module = "retrypolicy._lowlevel")]
pub struct CircuitBreaker {
    inner: Mutex<core::CircuitBreaker>,
    /// Called with the old state, the new state and the rule after each change, or None.
    on_state_change: Option<Py<PyAny>>,
    /// The name its metrics carry (`retrypolicy.breaker.name`).
    name: String,
}

/// The name of a breaker given none (`spec-fixtures/observability.json`, `breaker_name_default`).
const DEFAULT_NAME: &str = "default";

/// The name given as `name`: a str, or None for [`DEFAULT_NAME`] (else `invalid_type`).
fn name_of(v: Option<&Bound<'_, PyAny>>) -> PyResult<String> {
    match v.filter(|n| !n.is_none()) {
        None => Ok(DEFAULT_NAME.to_owned()),
        Some(n) => match n.cast::<pyo3::types::PyString>() {
            Ok(s) => Ok(crate::convert::utf8("name", s)?.into_owned()),
            Err(_) => Err(wrong_type("name", "a str (the breaker's name) or None", n)),
        },
    }
}

/// The callback given as `on_state_change`: a callable or None (else `invalid_type`).
fn callback(v: Option<Py<PyAny>>, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
    match v.filter(|c| !c.is_none(py)) {
        Some(c) if !c.bind(py).is_callable() => Err(wrong_type(
            "on_state_change",
            "a callable (old state, new state, rule) or None",
            c.bind(py),
        )),
        c => Ok(c),
    }
}

/// Reports `changes`, all made by one call on `breaker` whose lock is released by now, to
/// `retrypolicy._observe.breaker_changes` (the callback, the log, OpenTelemetry, in order, those a
/// callback makes after them); nothing when the call changed nothing. An exception the callback
/// raises is that function's to handle.
pub(crate) fn report(breaker: &Bound<'_, CircuitBreaker>, changes: &[core::BreakerChange]) -> PyResult<()> {
    if changes.is_empty() {
        return Ok(());
    }
    static HOOK: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let hook = HOOK.import(breaker.py(), "retrypolicy._observe", "breaker_changes")?;
    let list: Vec<BreakerChange> = changes.iter().map(|&inner| BreakerChange { inner }).collect();
    hook.call1((breaker, list))?;
    Ok(())
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
    /// A closed breaker of `document` (a dict of Couchbase's fields, or None for its defaults);
    /// `on_state_change(old, new, rule)` is called after each change of its state; `name` (None:
    /// `"default"`) is the `retrypolicy.breaker.name` its metrics carry.
    #[new]
    #[pyo3(signature = (document = None, *, on_state_change = None, name = None))]
    fn new(
        py: Python<'_>,
        document: Option<&Bound<'_, PyAny>>,
        on_state_change: Option<Py<PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let config = config_of(document)?;
        Ok(CircuitBreaker {
            inner: Mutex::new(core::CircuitBreaker::new(&config)),
            on_state_change: callback(on_state_change, py)?,
            name: name_of(name)?,
        })
    }

    /// A breaker of `document` in the state `snapshot` (a dict from `snapshot()`), with an
    /// optional `on_state_change` callback and `name`.
    #[classmethod]
    #[pyo3(signature = (document, snapshot, *, on_state_change = None, name = None))]
    fn restore(
        cls: &Bound<'_, PyType>,
        document: Option<&Bound<'_, PyAny>>,
        snapshot: &Bound<'_, PyAny>,
        on_state_change: Option<Py<PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let config = config_of(document)?;
        let snapshot: BreakerSnapshot = required_json("state", snapshot)?;
        Ok(CircuitBreaker {
            inner: Mutex::new(core::CircuitBreaker::restore(&config, &snapshot, "state").py()?),
            on_state_change: callback(on_state_change, cls.py())?,
            name: name_of(name)?,
        })
    }

    /// The name its metrics carry as `retrypolicy.breaker.name` (`"default"` when none was given).
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// Whether a request may be sent at `now_ms`. After the sleep window this request becomes the
    /// one canary: call it only for a request about to be sent.
    fn permit(slf: &Bound<'_, Self>, now_ms: &Bound<'_, PyAny>) -> PyResult<BreakerVerdict> {
        let now = clock_ms("now_ms", now_ms)?;
        let (inner, changes) = {
            let mut b = slf.get().lock();
            (b.permit(now), b.last_changes())
        };
        report(slf, &changes)?;
        Ok(BreakerVerdict { inner })
    }

    /// Tells the breaker how a request ended at `now_ms`: `"success"`, `"failure"` or `"timeout"`.
    fn record(slf: &Bound<'_, Self>, now_ms: &Bound<'_, PyAny>, outcome: &Bound<'_, PyAny>) -> PyResult<()> {
        let now = clock_ms("now_ms", now_ms)?;
        let outcome: BreakerOutcome = name("outcome", outcome)?;
        let changes = {
            let mut b = slf.get().lock();
            b.record(now, outcome);
            b.last_changes()
        };
        report(slf, &changes)
    }

    /// The changes of state the last `permit` or `record` made (directly, or in a run's step), in
    /// order: an empty list when it made none, two when a timed-out canary was replaced at once.
    #[getter]
    fn last_changes(&self) -> Vec<BreakerChange> {
        self.lock()
            .last_changes()
            .into_iter()
            .map(|inner| BreakerChange { inner })
            .collect()
    }

    /// The callback given as `on_state_change`, or None.
    #[getter]
    fn on_state_change(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.on_state_change.as_ref().map(|c| c.clone_ref(py))
    }

    /// The garbage collector's view of the callback (it may refer back to this breaker).
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.on_state_change)
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
