//! `RetryBudget` and its `BudgetVerdict`: the core's retry budget behind a lock, so one object may
//! be shared by many threads. Arguments are converted before the lock is taken and nothing calls
//! back into Python while it is held.

use std::sync::{Mutex, MutexGuard};

use pyo3::prelude::*;
use pyo3::types::PyType;
use retrypolicy as core;
use retrypolicy::{BudgetConfig, BudgetDocument, BudgetEvent, BudgetSnapshot, RetryCause};

use crate::convert::{
    from_py_json, int_in, name, now_ms as clock_ms, opt_name, required_json, to_json, to_py_json,
};
use crate::errors::IntoPy;

/// A retry budget's answer to "may a retry be sent now?"; immutable.
#[pyclass(frozen, module = "retrypolicy._lowlevel")]
pub struct BudgetVerdict {
    pub inner: core::BudgetVerdict,
}

#[pymethods]
impl BudgetVerdict {
    /// The verdict of budget rule `rule` (e.g. `"token_bucket_at_or_below_half"`) with `balance`,
    /// for a verdict kept or received elsewhere; a budget's own come from `permit` and `try_retry`.
    #[new]
    #[pyo3(signature = (rule, balance = None))]
    fn new(rule: &Bound<'_, PyAny>, balance: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let rule: core::BudgetRule = name("rule", rule)?;
        let balance: u64 = match balance {
            Some(b) => int_in("balance", b, "0..=18446744073709551615")?,
            None => 0,
        };
        Ok(BudgetVerdict {
            inner: core::BudgetVerdict::of(rule, balance),
        })
    }
    /// A verdict from its JSON form (a dict as `budget_run` writes it), its fields checked against
    /// its rule; errors name `budget_verdict.<field>`.
    #[staticmethod]
    fn from_dict(document: &Bound<'_, PyAny>) -> PyResult<Self> {
        let value: serde_json::Value =
            retrypolicy_wire::from_json_str(&crate::convert::dumps("budget_verdict", document)?).py()?;
        Ok(BudgetVerdict {
            inner: retrypolicy_wire::budget_verdict_from_value(&value).py()?,
        })
    }
    /// Whether the retry may be sent.
    #[getter]
    fn permitted(&self) -> bool {
        self.inner.permitted
    }
    /// `"budget_exhausted"` when refused, else None.
    #[getter]
    fn cause(&self) -> Option<&'static str> {
        self.inner.cause.map(|_| "budget_exhausted")
    }
    /// The budget's kind: `token_bucket`, `retry_quota` or `percentage`.
    #[getter]
    fn kind(&self) -> &'static str {
        self.inner.kind.name()
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
    /// What the budget holds now: thousandths of a token (token bucket), tokens (retry quota), or
    /// retries still allowed in the window (percentage).
    #[getter]
    fn balance(&self) -> u64 {
        self.inner.balance
    }
    /// The verdict as JSON (the `budget_run` form).
    fn to_json(&self) -> String {
        to_json(&self.inner)
    }
    /// `BudgetVerdict(<JSON form>)`.
    fn __repr__(&self) -> String {
        format!("BudgetVerdict({})", self.to_json())
    }
}

/// The core's event for `event` and its keyword arguments (the core names a misplaced
/// `after_retry` or `cause` as `unknown_field`).
fn event_of(
    event: &Bound<'_, PyAny>,
    after_retry: &Bound<'_, PyAny>,
    cause: &Bound<'_, PyAny>,
) -> PyResult<BudgetEvent> {
    let kind: core::BudgetEventKind = name("event", event)?;
    let after_retry: Option<RetryCause> = opt_name("after_retry", after_retry)?;
    let cause: Option<RetryCause> = opt_name("cause", cause)?;
    BudgetEvent::from_kind("", kind, after_retry, cause).py()
}

/// A retry budget (gRPC's token bucket, the AWS retry quota or Finagle's percentage) from its
/// document; safe to share between threads. Errors name fields under `budget.` and `state.`.
#[pyclass(frozen, module = "retrypolicy._lowlevel")]
pub struct RetryBudget {
    inner: Mutex<core::RetryBudget>,
}

/// `state` locked (a poisoned lock still holds a whole state: the core never panics midway).
pub(crate) fn locked<T>(state: &Mutex<T>) -> MutexGuard<'_, T> {
    state.lock().unwrap_or_else(|p| p.into_inner())
}

/// A budget's document, checked (errors under `budget.`).
fn config_of(document: &Bound<'_, PyAny>) -> PyResult<BudgetConfig> {
    let doc: BudgetDocument = from_py_json("budget", document)?;
    BudgetConfig::from_document(&doc, "budget").py()
}

impl RetryBudget {
    /// The state, locked.
    pub(crate) fn lock(&self) -> MutexGuard<'_, core::RetryBudget> {
        locked(&self.inner)
    }
}

#[pymethods]
impl RetryBudget {
    /// A budget of `document` (a dict such as `{"kind": "token_bucket"}`) in its initial state.
    #[new]
    fn new(document: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(RetryBudget {
            inner: Mutex::new(core::RetryBudget::new(&config_of(document)?)),
        })
    }

    /// A budget of `document` in the state `snapshot` (a dict from `snapshot()`).
    #[classmethod]
    fn restore(
        _cls: &Bound<'_, PyType>,
        document: &Bound<'_, PyAny>,
        snapshot: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let config = config_of(document)?;
        let snapshot: BudgetSnapshot = required_json("state", snapshot)?;
        Ok(RetryBudget {
            inner: Mutex::new(core::RetryBudget::restore(&config, &snapshot, "state").py()?),
        })
    }

    /// Whether a retry for `cause` (`"error"`, `"timeout"` or `"throttling"`) may be sent at
    /// `now_ms`; changes nothing.
    #[pyo3(signature = (now_ms, cause = None))]
    fn permit(&self, now_ms: &Bound<'_, PyAny>, cause: Option<&Bound<'_, PyAny>>) -> PyResult<BudgetVerdict> {
        let (now, cause) = (clock_ms("now_ms", now_ms)?, cause_of(cause)?);
        Ok(BudgetVerdict {
            inner: self.lock().permit(now, cause),
        })
    }

    /// Tells the budget what happened at `now_ms`: `event` is `"request"`, `"success"` (with
    /// `after_retry`, the cause of the retry that succeeded), `"failure"`, `"timeout"`, `"final"` (a failure not retried) or
    /// `"retry"` (with its `cause`).
    #[pyo3(signature = (now_ms, event, *, after_retry = None, cause = None))]
    fn record(
        &self,
        py: Python<'_>,
        now_ms: &Bound<'_, PyAny>,
        event: &Bound<'_, PyAny>,
        after_retry: Option<&Bound<'_, PyAny>>,
        cause: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let none = py.None().into_bound(py);
        let now = clock_ms("now_ms", now_ms)?;
        let event = event_of(event, after_retry.unwrap_or(&none), cause.unwrap_or(&none))?;
        self.lock().record(now, event);
        Ok(())
    }

    /// Asks for a retry for `cause` at `now_ms` and records it when permitted, in one step.
    #[pyo3(signature = (now_ms, cause = None))]
    fn try_retry(
        &self,
        now_ms: &Bound<'_, PyAny>,
        cause: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<BudgetVerdict> {
        let (now, cause) = (clock_ms("now_ms", now_ms)?, cause_of(cause)?);
        Ok(BudgetVerdict {
            inner: self.lock().try_retry(now, cause),
        })
    }

    /// The balance or the window's seconds as a JSON-shaped dict, to keep anywhere and `restore`.
    fn snapshot(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let snapshot = self.lock().snapshot();
        to_py_json(py, &snapshot)
    }

    /// The normalized document (version 1, every field of the kind set), as a dict.
    #[getter]
    fn document(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let document = self.lock().config().to_document();
        to_py_json(py, &document)
    }

    /// `RetryBudget(<document>)`.
    fn __repr__(&self) -> String {
        format!("RetryBudget({})", to_json(&self.lock().config().to_document()))
    }
}

/// A retry cause by name (`"error"`, the default, `"timeout"` or `"throttling"`).
fn cause_of(cause: Option<&Bound<'_, PyAny>>) -> PyResult<RetryCause> {
    Ok(match cause {
        Some(c) => opt_name::<RetryCause>("cause", c)?.unwrap_or_default(),
        None => RetryCause::default(),
    })
}
