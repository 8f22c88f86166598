//! `Decision` and the decide functions: whole (`decide`), or in the two steps around a host strategy.

use pyo3::prelude::*;
use retrypolicy as core;
use retrypolicy::{BudgetedDecision, StrategyVerdict};

use crate::budget::BudgetVerdict;

use crate::convert::{opt_duration_ms, timedelta};
use crate::errors::IntoPy;
use crate::policy::{self, Policy};
use crate::reason;
use crate::request::Request;
use crate::strategy::with_host;

/// The outcome of one decision (a budget's refusal of a retry included); immutable.
#[pyclass(frozen, module = "retrypolicy._lowlevel")]
pub struct Decision {
    inner: BudgetedDecision,
}

impl From<core::Decision> for Decision {
    fn from(d: core::Decision) -> Self {
        Decision {
            inner: BudgetedDecision::Decided(d),
        }
    }
}

impl From<BudgetedDecision> for Decision {
    fn from(inner: BudgetedDecision) -> Self {
        Decision { inner }
    }
}

impl Decision {
    /// The core's decision, when the budget did not refuse.
    fn decided(&self) -> Option<&core::Decision> {
        match &self.inner {
            BudgetedDecision::Decided(d) => Some(d),
            BudgetedDecision::Refused(_) => None,
        }
    }
}

#[pymethods]
impl Decision {
    /// `"retry"` or `"no_retry"`.
    #[getter]
    fn action(&self) -> &'static str {
        if self.inner.is_retry() {
            "retry"
        } else {
            "no_retry"
        }
    }
    /// Whether to retry.
    #[getter]
    fn is_retry(&self) -> bool {
        self.inner.is_retry()
    }
    /// Milliseconds to wait before the retry, or None.
    #[getter]
    fn delay_ms(&self) -> Option<u64> {
        self.inner.delay_ms()
    }
    /// The delay as a `datetime.timedelta`, or None.
    #[getter]
    fn delay(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.inner.delay_ms().map(|ms| timedelta(py, ms)).transpose()
    }
    /// The reason decided on.
    #[getter]
    fn reason(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let r = match &self.inner {
            BudgetedDecision::Decided(d) => d.reason(),
            BudgetedDecision::Refused(r) => r.reason,
        };
        reason::to_py(py, r)
    }
    /// Why not retried (`not_idempotent`, `strategy_declined`, `deadline_passed`, `unknown_reason`,
    /// `budget_exhausted`), or None.
    #[getter]
    fn cause(&self) -> Option<&'static str> {
        match self.inner {
            BudgetedDecision::Decided(core::Decision::NoRetry(n)) => Some(match n.cause {
                core::NoRetryCause::NotIdempotent => "not_idempotent",
                core::NoRetryCause::StrategyDeclined => "strategy_declined",
                core::NoRetryCause::DeadlinePassed => "deadline_passed",
                core::NoRetryCause::UnknownReason => "unknown_reason",
            }),
            BudgetedDecision::Refused(_) => Some("budget_exhausted"),
            BudgetedDecision::Decided(core::Decision::Retry(_)) => None,
        }
    }
    /// The rule that decided (the budget's rule when it refused).
    #[getter]
    fn rule(&self) -> &'static str {
        self.inner.rule_name()
    }
    /// The spec section (or the budget's source) behind the rule.
    #[getter]
    fn section(&self) -> &'static str {
        self.inner.section()
    }
    /// Whether the delay was cut to the time left.
    #[getter]
    fn capped(&self) -> bool {
        matches!(self.decided(), Some(core::Decision::Retry(r)) if r.capped)
    }
    /// Whether to cancel (time out) when the delay ends instead of resending.
    #[getter]
    fn then_cancel(&self) -> bool {
        matches!(self.decided(), Some(core::Decision::Retry(r)) if r.then_cancel)
    }
    /// Retries made before this decision.
    #[getter]
    fn attempts(&self) -> u32 {
        match self.inner {
            BudgetedDecision::Decided(core::Decision::Retry(r)) => r.attempts,
            BudgetedDecision::Decided(core::Decision::NoRetry(n)) => n.attempts,
            BudgetedDecision::Refused(r) => r.attempts,
        }
    }
    /// Whether the request counted as idempotent.
    #[getter]
    fn idempotent(&self) -> bool {
        match self.inner {
            BudgetedDecision::Decided(core::Decision::Retry(r)) => r.idempotent,
            BudgetedDecision::Decided(core::Decision::NoRetry(n)) => n.idempotent,
            BudgetedDecision::Refused(r) => r.idempotent,
        }
    }
    /// The budget's verdict when it refused the retry (cause `budget_exhausted`), else None.
    #[getter]
    fn budget(&self) -> Option<BudgetVerdict> {
        match self.inner {
            BudgetedDecision::Refused(r) => Some(BudgetVerdict { inner: r.verdict }),
            BudgetedDecision::Decided(_) => None,
        }
    }
    /// The delay `decide` asked for before the budget refused, else None.
    #[getter]
    fn refused_delay_ms(&self) -> Option<u64> {
        match self.inner {
            BudgetedDecision::Refused(r) => Some(r.refused_delay_ms),
            BudgetedDecision::Decided(_) => None,
        }
    }
    /// The decision as JSON (the spec-fixture output keys).
    fn to_json(&self) -> String {
        self.inner.to_json()
    }
    /// The log line RFC 0049 asks for.
    fn __str__(&self) -> String {
        self.inner.to_string()
    }
    /// `Decision(<JSON form>)`.
    fn __repr__(&self) -> String {
        format!("Decision({})", self.inner.to_json())
    }
}

/// Decides whether and when to retry `request` after `reason` under `policy`, asking `strategy`
/// (a built-in one or any object with `retry_after`) when no earlier rule decides.
#[pyfunction]
#[pyo3(signature = (request, reason, policy = None, strategy = None))]
pub fn decide(
    request: &Bound<'_, Request>,
    reason: &Bound<'_, PyAny>,
    policy: Option<&Bound<'_, Policy>>,
    strategy: Option<&Bound<'_, PyAny>>,
) -> PyResult<Decision> {
    let r = reason::from_py("reason", reason)?;
    let p = policy::or_default(policy);
    let req = &request.get().inner;
    with_host(strategy, request, |host| core::decide_with(req, r, &p, host)).map(Decision::from)
}

/// The decision made before a host strategy is asked (deadline, UNKNOWN, always-retry, the
/// request's own built-in strategy), or None when the host strategy must be asked.
#[pyfunction]
#[pyo3(signature = (request, reason, policy = None))]
pub fn decide_before_strategy(
    request: &Bound<'_, Request>,
    reason: &Bound<'_, PyAny>,
    policy: Option<&Bound<'_, Policy>>,
) -> PyResult<Option<Decision>> {
    let r = reason::from_py("reason", reason)?;
    let p = policy::or_default(policy);
    let decision = core::decide_before_strategy(&request.get().inner, r, &p).py()?;
    Ok(decision.map(Decision::from))
}

/// The decision for a host strategy's answer (a `timedelta`, seconds, or None for "do not
/// retry"), its delay capped to the timeout.
#[pyfunction]
pub fn decide_after_strategy(
    request: &Bound<'_, Request>,
    reason: &Bound<'_, PyAny>,
    retry_after: &Bound<'_, PyAny>,
) -> PyResult<Decision> {
    let r = reason::from_py("reason", reason)?;
    let verdict = match opt_duration_ms("retry_after", retry_after)? {
        Some(ms) => StrategyVerdict::custom_retry(ms),
        None => StrategyVerdict::custom_no_retry(),
    };
    Ok(core::decide_after_strategy(&request.get().inner, r, verdict).into())
}

/// Decides as `decide` does (without a host strategy), then lets `verdict` (a `BudgetVerdict`
/// from a `RetryBudget`) refuse a retry: a no-retry with cause `budget_exhausted`.
#[pyfunction]
#[pyo3(signature = (request, reason, policy = None, verdict = None))]
pub fn decide_with_budget(
    request: &Bound<'_, Request>,
    reason: &Bound<'_, PyAny>,
    policy: Option<&Bound<'_, Policy>>,
    verdict: Option<&Bound<'_, BudgetVerdict>>,
) -> PyResult<Decision> {
    let r = reason::from_py("reason", reason)?;
    let p = policy::or_default(policy);
    let v = verdict.map(|v| v.get().inner);
    core::decide_with_budget(&request.get().inner, r, &p, v.as_ref())
        .py()
        .map(Decision::from)
}

/// The decision of `decide_with_budget` as one sentence naming the rule and its source.
#[pyfunction]
#[pyo3(signature = (request, reason, policy = None, verdict = None))]
pub fn explain_with_budget(
    request: &Bound<'_, Request>,
    reason: &Bound<'_, PyAny>,
    policy: Option<&Bound<'_, Policy>>,
    verdict: Option<&Bound<'_, BudgetVerdict>>,
) -> PyResult<String> {
    let d = decide_with_budget(request, reason, policy, verdict)?;
    Ok(core::explain_with_budget(&request.get().inner, &d.inner))
}

/// A no-op with `decide`'s signature and return type, for the benchmark's baseline (bench builds only).
#[cfg(feature = "bench")]
#[pyfunction]
#[pyo3(signature = (request, reason, policy = None, strategy = None))]
pub fn _noop_decide(
    request: &Bound<'_, Request>,
    reason: &Bound<'_, PyAny>,
    policy: Option<&Bound<'_, Policy>>,
    strategy: Option<&Bound<'_, PyAny>>,
) -> Decision {
    let _ = (request, reason, policy, strategy);
    core::Decision::NoRetry(core::NoRetry {
        reason: core::RetryReason::Unknown,
        cause: core::NoRetryCause::UnknownReason,
        rule: core::Rule::UnknownNeverRetried,
        section: "",
        attempts: 0,
        idempotent: false,
    })
    .into()
}
