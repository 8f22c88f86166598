//! The AWS SDKs' retry modes: `AwsRetryConfig` (a retry document, checked by the core),
//! `aws_decide` (the decision after a failed attempt, given the retry quota's verdict as
//! `decide_with_budget` takes one), and adaptive mode's `AdaptiveRateLimiter`, the core's limiter
//! behind a lock like `RetryBudget` (nothing calls back into Python while it is held).

use std::sync::{Mutex, MutexGuard};

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyType};
use retrypolicy as core;
use retrypolicy::aws::{
    aws_decide as core_decide, AwsAction, AwsBehavior, AwsError, AwsRetryDocument, RateLimiterConfig,
    RateLimiterDocument, RateLimiterSnapshot,
};

use crate::budget::{locked, BudgetVerdict};
use crate::convert::{
    core_wrapper, from_py_json, int_in, name_of, now_ms as clock_ms, opt_draw, required_json, to_json,
    to_py_json, wrong_type,
};
use crate::errors::IntoPy;

/// An AWS retry configuration (mode, behaviour, attempts, service, backoff cap, long polling),
/// checked; immutable.
#[pyclass(frozen, module = "retrypolicy._lowlevel")]
pub struct AwsRetryConfig {
    inner: core::aws::AwsRetryConfig,
}

#[pymethods]
impl AwsRetryConfig {
    /// A configuration of `document` (a dict: `mode`, `behavior`, `max_attempts`, `service`,
    /// `max_backoff_ms`, `long_polling`, every key optional; None: standard mode's defaults);
    /// errors name `config.<field>`.
    #[new]
    #[pyo3(signature = (document = None))]
    fn new(document: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let doc: AwsRetryDocument = match document.filter(|d| !d.is_none()) {
            Some(d) => from_py_json("config", d)?,
            None => AwsRetryDocument::default(),
        };
        Ok(AwsRetryConfig {
            inner: core::aws::AwsRetryConfig::from_document(&doc, "config").py()?,
        })
    }
    /// `"standard"`, `"adaptive"` or `"legacy"`.
    #[getter]
    fn mode(&self) -> &'static str {
        self.inner.mode.name()
    }
    /// Standard mode's behaviour: `"classic"` or `"2026"` (legacy: `"classic"`, unused).
    #[getter]
    fn behavior(&self) -> &'static str {
        match self.inner.behavior {
            AwsBehavior::Classic => "classic",
            AwsBehavior::Retries2026 => "2026",
        }
    }
    /// Attempts in all, the first included.
    #[getter]
    fn max_attempts(&self) -> u32 {
        self.inner.max_attempts
    }
    /// The service, if named.
    #[getter]
    fn service(&self) -> Option<String> {
        self.inner.service.clone()
    }
    /// The longest backoff before jitter, in ms (standard and adaptive).
    #[getter]
    fn max_backoff_ms(&self) -> u64 {
        self.inner.max_backoff_ms
    }
    /// Whether the operation long-polls (standard and adaptive).
    #[getter]
    fn long_polling(&self) -> bool {
        self.inner.long_polling
    }
    /// The normalized document (version 1, every field of the mode set), as a dict.
    #[getter]
    fn document(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py_json(py, &self.inner.to_document())
    }
    /// The normalized document, as a dict (the same as `document`).
    fn to_document(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.document(py)
    }
    /// `AwsRetryConfig(<document>)`.
    fn __repr__(&self) -> String {
        format!("AwsRetryConfig({})", to_json(&self.inner.to_document()))
    }
}

/// The decision after a failed attempt in an AWS retry mode; immutable.
#[pyclass(frozen, module = "retrypolicy._lowlevel")]
pub struct AwsDecision {
    inner: core::aws::AwsDecision,
}

impl From<core::aws::AwsDecision> for AwsDecision {
    fn from(inner: core::aws::AwsDecision) -> Self {
        AwsDecision { inner }
    }
}

core_wrapper!(AwsDecision {
    /// The wait before the retry, in ms; None when not retrying.
    delay_ms: Option<u64>,
    /// The wait before returning the error without a retry (a long-polling operation whose retry
    /// the quota refused, 2026 behaviour), in ms; else None.
    wait_ms: Option<u64>,
    /// The bound the jitter drew the wait under, in ms; None when no wait was computed.
    ceiling_ms: Option<u64>,
    /// A valid `x-amz-retry-after` the 2026 behaviour read, in ms; else None.
    retry_after_ms: Option<u64>,
    /// Whether the error is retryable at all (attempts and quota aside).
    retryable: bool,
    /// Whether the error is a throttling error (an adaptive limiter records it as one).
    throttling: bool,
    /// Attempts made, the failed one included.
    attempts: u32,
    /// The configuration's attempt limit.
    max_attempts: u32,
    /// The rule that decided.
    rule: &'static str,
    /// Its source.
    section: &'static str,
}
    /// `"retry"` or `"no_retry"`.
    #[getter]
    fn action(&self) -> &'static str {
        match self.inner.action {
            AwsAction::Retry => "retry",
            AwsAction::NoRetry => "no_retry",
        }
    }
    /// Whether to retry.
    #[getter]
    fn is_retry(&self) -> bool {
        self.inner.action == AwsAction::Retry
    }
    /// What a retry is charged for in the quota (`"error"`, `"timeout"`, `"throttling"`: pass it
    /// to `RetryBudget.try_retry`), or None when the error is not retryable.
    #[getter]
    fn cause(&self) -> Option<String> {
        self.inner.cause.as_ref().map(name_of)
    }
);

/// The decision after a failed attempt: `attempts` made (the failed one included), `error` what
/// it produced (a dict: `code`, `status`, `connection_error`, `timeout`, `retryable_trait`,
/// `retry_after`, `crc32_mismatch`), the caller's draw `random`, and the retry quota's verdict
/// (`RetryBudget.try_retry(now_ms, decision.cause)`), which turns a retry it refuses into a
/// no-retry; `config` None is standard mode's defaults.
#[pyfunction]
#[pyo3(signature = (config, attempts, error, random = None, budget_verdict = None))]
pub fn aws_decide(
    config: &Bound<'_, PyAny>,
    attempts: &Bound<'_, PyAny>,
    error: &Bound<'_, PyAny>,
    random: Option<&Bound<'_, PyAny>>,
    budget_verdict: Option<&Bound<'_, PyAny>>,
) -> PyResult<AwsDecision> {
    let default;
    let config = match config.is_none() {
        true => {
            default = core::aws::AwsRetryConfig::default();
            &default
        }
        false => {
            &config
                .cast::<AwsRetryConfig>()
                .map_err(|_| wrong_type("config", "an AwsRetryConfig or None", config))?
                .get()
                .inner
        }
    };
    let attempts: u32 = int_in("attempts", attempts, "1..=4294967295")?;
    let error: AwsError = from_py_json("error", error)?;
    let random = random.map(|r| opt_draw("random", r)).transpose()?.flatten();
    let verdict = match budget_verdict.filter(|v| !v.is_none()) {
        None => None,
        Some(v) => Some(
            v.cast::<BudgetVerdict>()
                .map_err(|_| wrong_type("budget_verdict", "a BudgetVerdict or None", v))?
                .get()
                .inner,
        ),
    };
    let inner = core_decide(config, attempts, &error, random, verdict.as_ref()).py()?;
    Ok(AwsDecision { inner })
}

/// A rate limiter's answer to "may an attempt be sent now?"; immutable.
#[pyclass(frozen, module = "retrypolicy._lowlevel")]
pub struct AcquireVerdict {
    inner: core::aws::AcquireVerdict,
}

core_wrapper!(AcquireVerdict {
    /// Whether the attempt may be sent now (a token was taken, or the limiter is off).
    acquired: bool,
    /// When not: how long to wait before asking again, in ms; else None.
    wait_ms: Option<u64>,
    /// Tokens left in the bucket.
    capacity: f64,
    /// `"limiter_off"`, `"token_taken"` or `"wait_for_token"`.
    rule: &'static str,
    /// Its source.
    section: &'static str,
});

/// What a response did to a rate limiter; immutable.
#[pyclass(frozen, module = "retrypolicy._lowlevel")]
pub struct RateUpdate {
    inner: core::aws::RateUpdate,
}

core_wrapper!(RateUpdate {
    /// Whether the response was recorded as a throttle.
    throttled: bool,
    /// The measured send rate after it, requests per second.
    measured_rate: f64,
    /// The rate CUBIC asks for, before the cap of twice the measured rate.
    calculated_rate: f64,
    /// The bucket's fill rate now.
    fill_rate: f64,
    /// The bucket's capacity now.
    max_capacity: f64,
    /// Whether the token bucket is on.
    enabled: bool,
    /// The term that gave `calculated_rate`: `"throttle_beta"` or `"cubic_curve"`.
    rule: &'static str,
    /// What set the fill rate instead: `"capped_at_twice_measured"`, `"raised_to_min_fill_rate"`;
    /// else None.
    bound: Option<&'static str>,
});

/// Adaptive mode's client-side rate limiter (botocore's token bucket with its CUBIC rate) on the
/// caller's clock, from its document; safe to share between threads. Errors name fields under
/// `limiter.` and `state.`.
#[pyclass(frozen, module = "retrypolicy._lowlevel")]
pub struct AdaptiveRateLimiter {
    inner: Mutex<core::aws::AdaptiveRateLimiter>,
}

/// A limiter's document, checked (errors under `limiter.`); None is the SDKs' constants.
fn limiter_config(document: Option<&Bound<'_, PyAny>>) -> PyResult<RateLimiterConfig> {
    let doc: RateLimiterDocument = match document.filter(|d| !d.is_none()) {
        Some(d) => from_py_json("limiter", d)?,
        None => RateLimiterDocument::default(),
    };
    RateLimiterConfig::from_document(&doc, "limiter").py()
}

impl AdaptiveRateLimiter {
    /// The state, locked.
    fn lock(&self) -> MutexGuard<'_, core::aws::AdaptiveRateLimiter> {
        locked(&self.inner)
    }
}

#[pymethods]
impl AdaptiveRateLimiter {
    /// A limiter of `document` (a dict: `min_fill_rate`, `beta`, `scale_constant`, `smoothing`;
    /// None: the SDKs' constants) created at `start_ms` on the caller's clock: off until the
    /// first throttle.
    #[new]
    #[pyo3(signature = (document = None, start_ms = None))]
    fn new(document: Option<&Bound<'_, PyAny>>, start_ms: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let config = limiter_config(document)?;
        let start = start_ms
            .map(|s| clock_ms("start_ms", s))
            .transpose()?
            .unwrap_or(0);
        Ok(AdaptiveRateLimiter {
            inner: Mutex::new(core::aws::AdaptiveRateLimiter::new(&config, start)),
        })
    }

    /// A limiter of `document` in the state `snapshot` (a dict from `snapshot()`).
    #[classmethod]
    fn restore(
        _cls: &Bound<'_, PyType>,
        document: Option<&Bound<'_, PyAny>>,
        snapshot: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let config = limiter_config(document)?;
        let snapshot: RateLimiterSnapshot = required_json("state", snapshot)?;
        Ok(AdaptiveRateLimiter {
            inner: Mutex::new(core::aws::AdaptiveRateLimiter::restore(&config, &snapshot, "state").py()?),
        })
    }

    /// Asks for a token before an attempt at `now_ms`: go, or wait `wait_ms` and ask again.
    fn acquire(&self, now_ms: &Bound<'_, PyAny>) -> PyResult<AcquireVerdict> {
        let now = clock_ms("now_ms", now_ms)?;
        Ok(AcquireVerdict {
            inner: self.lock().acquire(now),
        })
    }

    /// Tells the limiter of a response at `now_ms`: `throttled` when it was a throttling error
    /// (`AwsDecision.throttling`).
    fn record(&self, now_ms: &Bound<'_, PyAny>, throttled: &Bound<'_, PyAny>) -> PyResult<RateUpdate> {
        let now = clock_ms("now_ms", now_ms)?;
        if !throttled.is_instance_of::<PyBool>() {
            return Err(wrong_type("throttled", "a bool", throttled));
        }
        let throttled: bool = throttled.extract()?;
        Ok(RateUpdate {
            inner: self.lock().record(now, throttled),
        })
    }

    /// The limiter's state as a JSON-shaped dict, to keep anywhere and `restore`.
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

    /// The normalized document, as a dict (the same as `document`).
    fn to_document(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.document(py)
    }

    /// `AdaptiveRateLimiter(<document>)`.
    fn __repr__(&self) -> String {
        format!(
            "AdaptiveRateLimiter({})",
            to_json(&self.lock().config().to_document())
        )
    }
}
