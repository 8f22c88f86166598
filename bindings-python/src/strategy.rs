//! Strategies: the built-in `BestEffort` and `FailFast`, and any Python object with
//! `retry_after(request, reason)` seen by the core as a host strategy.

use std::cell::RefCell;
use std::collections::VecDeque;

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
    /// The request to hand it; None: a `Request` of the core's request each time it is asked.
    request: Option<&'a Bound<'py, Request>>,
    /// Its answers, in order (kept for a run, which replays them).
    answers: RefCell<VecDeque<StrategyVerdict>>,
    /// The exception raised while asking (by host code, or for its answer), re-raised unchanged.
    raised: RefCell<Option<PyErr>>,
}

impl PyStrategy<'_, '_> {
    /// Asks the Python object; its answer is a `timedelta`, seconds, or None for "do not retry".
    fn ask(&self, request: &core::Request, reason: core::RetryReason) -> PyResult<StrategyVerdict> {
        let py = self.strategy.py();
        let request = match self.request {
            Some(r) => r.clone(),
            None => Bound::new(
                py,
                Request {
                    inner: request.clone(),
                },
            )?,
        };
        let answer = self.strategy.call_method1(
            pyo3::intern!(py, "retry_after"),
            (request, reason::to_py(py, reason)?),
        )?;
        let verdict = match opt_duration_ms(ANSWER_FIELD, &answer)? {
            Some(ms) => StrategyVerdict::custom_retry(ms),
            None => StrategyVerdict::custom_no_retry(),
        };
        self.answers.borrow_mut().push_back(verdict);
        Ok(verdict)
    }
}

impl RetryStrategy for PyStrategy<'_, '_> {
    fn retry_after(
        &self,
        request: &core::Request,
        reason: core::RetryReason,
    ) -> Result<StrategyVerdict, core::Error> {
        self.ask(request, reason).map_err(|e| {
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
    if let Some(b) = builtin(s) {
        return f(Some(b)).py();
    }
    let host = PyStrategy {
        strategy: s,
        request: Some(request),
        answers: RefCell::default(),
        raised: RefCell::new(None),
    };
    let result = f(Some(&host));
    result.map_err(|e| host.raised.take().unwrap_or_else(|| CoreError(e).into()))
}

/// The core's own strategy for exactly the built-in classes (not subclasses, which may override
/// `retry_after`), else None.
pub fn builtin<'a>(s: &'a Bound<'_, PyAny>) -> Option<&'a dyn RetryStrategy> {
    if let Ok(be) = s.cast_exact::<BestEffort>() {
        return Some(&be.get().inner);
    }
    if s.cast_exact::<FailFast>().is_ok() {
        return Some(&core::FailFast);
    }
    None
}

/// A host strategy's answers to one call of the core, asked with no lock held (a run replays them).
pub struct HostAnswers;

impl HostAnswers {
    /// Runs `f` with `strategy` as a host strategy (each question gets a `Request` of the core's
    /// request) and returns its answers in order; its exceptions propagate unchanged.
    pub fn ask<T>(
        strategy: &Bound<'_, PyAny>,
        f: impl FnOnce(&dyn RetryStrategy) -> Result<T, core::Error>,
    ) -> PyResult<VecDeque<StrategyVerdict>> {
        let host = PyStrategy {
            strategy,
            request: None,
            answers: RefCell::default(),
            raised: RefCell::new(None),
        };
        match f(&host) {
            Ok(_) => Ok(host.answers.take()),
            Err(e) => Err(host.raised.take().unwrap_or_else(|| CoreError(e).into())),
        }
    }
}
