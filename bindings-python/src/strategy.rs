//! Strategies: the built-in `BestEffort` and `FailFast`, and any Python object with
//! `retry_after(request, reason)` seen by the core as a host strategy.

use std::cell::RefCell;

use pyo3::prelude::*;
use retrypolicy as core;
use retrypolicy::{RetryStrategy, StrategyVerdict};

use crate::convert::{opt_duration_ms, timedelta};
use crate::errors::{CoreError, IntoPy};
use crate::policy::Policy;
use crate::reason;
use crate::request::Request;

/// RFC 0049's default strategy; subclass it and override `retry_after` to change one case.
#[pyclass(frozen, subclass, module = "retrypolicy._lowlevel")]
pub struct BestEffort {
    inner: core::BestEffort,
}

#[pymethods]
impl BestEffort {
    /// Best effort with the policy's backoff and jitter (the RFC default when None).
    #[new]
    #[pyo3(signature = (policy = None))]
    fn new(policy: Option<&Bound<'_, Policy>>) -> Self {
        BestEffort {
            inner: policy.map(|p| p.get().inner.best_effort()).unwrap_or_default(),
        }
    }
    /// The delay before retrying `request` after `reason`, or None when not safe to retry.
    fn retry_after(
        &self,
        py: Python<'_>,
        request: &Bound<'_, Request>,
        reason: &Bound<'_, PyAny>,
    ) -> PyResult<Option<Py<PyAny>>> {
        let r = reason::from_py("reason", reason)?;
        let verdict = self.inner.retry_after(&request.get().inner, r).py()?;
        verdict.delay_ms.map(|ms| timedelta(py, ms)).transpose()
    }
}

/// RFC 0049's internal fail-fast strategy: never retries (always-retry reasons still are).
#[pyclass(frozen, subclass, module = "retrypolicy._lowlevel")]
pub struct FailFast;

#[pymethods]
impl FailFast {
    /// The fail-fast strategy.
    #[new]
    fn new() -> Self {
        FailFast
    }
    /// Always None.
    fn retry_after(&self, _request: &Bound<'_, Request>, _reason: &Bound<'_, PyAny>) -> Option<Py<PyAny>> {
        None
    }
}

/// The field a host strategy's bad answer is reported under.
const ANSWER_FIELD: &str = "strategy.retry_after";

/// A Python object with `retry_after(request, reason)`, seen by the core as a host strategy.
struct PyStrategy<'a, 'py> {
    strategy: &'a Bound<'py, PyAny>,
    request: &'a Bound<'py, Request>,
    /// The exception raised while asking (by host code, or for its answer), re-raised unchanged.
    raised: RefCell<Option<PyErr>>,
}

impl PyStrategy<'_, '_> {
    /// Asks the Python object; its answer is a `timedelta`, seconds, or None for "do not retry".
    fn ask(&self, reason: core::RetryReason) -> PyResult<StrategyVerdict> {
        let py = self.strategy.py();
        let answer = self.strategy.call_method1(
            pyo3::intern!(py, "retry_after"),
            (self.request, reason::to_py(py, reason)?),
        )?;
        Ok(match opt_duration_ms(ANSWER_FIELD, &answer)? {
            Some(ms) => StrategyVerdict::custom_retry(ms),
            None => StrategyVerdict::custom_no_retry(),
        })
    }
}

impl RetryStrategy for PyStrategy<'_, '_> {
    fn retry_after(
        &self,
        _: &core::Request,
        reason: core::RetryReason,
    ) -> Result<StrategyVerdict, core::Error> {
        self.ask(reason).map_err(|e| {
            *self.raised.borrow_mut() = Some(e);
            // A stand-in the core passes back; `with_host` re-raises the Python exception instead.
            core::Error::InvalidType {
                field: ANSWER_FIELD.to_owned(),
                message: "the host strategy raised".to_owned(),
            }
        })
    }
}

/// Runs `f` with `strategy` as the core sees it: None, a built-in one, or a Python host strategy
/// (whose exceptions propagate unchanged).
pub fn with_host<T>(
    strategy: Option<&Bound<'_, PyAny>>,
    request: &Bound<'_, Request>,
    f: impl FnOnce(Option<&dyn RetryStrategy>) -> Result<T, core::Error>,
) -> PyResult<T> {
    let Some(s) = strategy else {
        return f(None).py();
    };
    // Exactly the built-in classes (not subclasses, which may override `retry_after`): the core's own.
    if let Ok(be) = s.cast_exact::<BestEffort>() {
        return f(Some(&be.get().inner)).py();
    }
    if s.cast_exact::<FailFast>().is_ok() {
        return f(Some(&core::FailFast)).py();
    }
    let host = PyStrategy {
        strategy: s,
        request,
        raised: RefCell::new(None),
    };
    let result = f(Some(&host));
    result.map_err(|e| host.raised.take().unwrap_or_else(|| CoreError(e).into()))
}
