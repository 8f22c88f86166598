//! The native module `retrypolicy._lowlevel`: conversion and error mapping over the core, nothing else.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList};
use retrypolicy as core;

mod convert;
mod error;

use convert::{count_u32, draw, duration_ms, int_in, name, opt_bool, reason};
use error::IntoPy;

static REASON_CLASS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static TIMEDELTA: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// The Python `RetryReason` enum member for a core reason.
fn py_reason(py: Python<'_>, r: core::RetryReason) -> PyResult<Py<PyAny>> {
    let cls = REASON_CLASS.get_or_try_init(py, || {
        py.import("retrypolicy._reason")?
            .getattr("RetryReason")
            .map(Bound::unbind)
    })?;
    Ok(cls.bind(py).call1((r as usize,))?.unbind())
}

/// A `datetime.timedelta` of `ms` milliseconds.
fn timedelta(py: Python<'_>, ms: u64) -> PyResult<Py<PyAny>> {
    let cls = TIMEDELTA.get_or_try_init(py, || {
        py.import("datetime")?.getattr("timedelta").map(Bound::unbind)
    })?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("milliseconds", ms)?;
    Ok(cls.bind(py).call((), Some(&kwargs))?.unbind())
}

/// What is being retried: a service plus what idempotency depends on.
#[pyclass(frozen, eq, hash, module = "retrypolicy._lowlevel")]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Operation {
    inner: core::Operation,
}

#[pymethods]
impl Operation {
    /// A KV operation by its snake_case name (`"get"`, `"upsert"`, ...).
    #[staticmethod]
    fn kv(operation: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Operation {
            inner: core::Operation::Kv(name("operation", operation)?),
        })
    }
    /// A query; idempotent only when `readonly`.
    #[staticmethod]
    #[pyo3(signature = (readonly = false))]
    fn query(readonly: bool) -> Self {
        Operation {
            inner: core::Operation::Query { readonly },
        }
    }
    /// An analytics query; idempotent only when `readonly`.
    #[staticmethod]
    #[pyo3(signature = (readonly = false))]
    fn analytics(readonly: bool) -> Self {
        Operation {
            inner: core::Operation::Analytics { readonly },
        }
    }
    /// A search request (always idempotent).
    #[staticmethod]
    fn search() -> Self {
        Operation {
            inner: core::Operation::Search,
        }
    }
    /// A views request (always idempotent).
    #[staticmethod]
    fn views() -> Self {
        Operation {
            inner: core::Operation::Views,
        }
    }
    /// A cluster manager call with its HTTP method (idempotent iff GET).
    #[staticmethod]
    fn cluster_manager(method: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Operation {
            inner: core::Operation::ClusterManager(name("method", method)?),
        })
    }
    /// A management API call with its HTTP method (idempotent iff GET).
    #[staticmethod]
    fn management(method: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Operation {
            inner: core::Operation::Management(name("method", method)?),
        })
    }
    /// Parses the JSON form (`{"service": "kv", "operation": "get"}`).
    #[staticmethod]
    fn from_json(text: &str) -> PyResult<Self> {
        Ok(Operation {
            inner: core::json::from_json_str(text).py()?,
        })
    }
    /// The JSON form.
    fn to_json(&self) -> String {
        serde_json::to_string(&self.inner).unwrap_or_default()
    }
    /// The service name.
    #[getter]
    fn service(&self) -> String {
        serde_json::to_value(self.inner.service())
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
    }
    /// Whether RFC 0049's idempotent list calls it idempotent.
    #[getter]
    fn idempotent(&self) -> bool {
        self.inner.is_idempotent()
    }
    fn __repr__(&self) -> String {
        format!("Operation({})", self.to_json())
    }
}

/// The state of one request when it failed: everything a decision depends on.
#[pyclass(frozen, module = "retrypolicy._lowlevel")]
#[derive(Clone)]
pub struct Request {
    inner: core::Request,
}

fn apply_request_field(r: &mut core::Request, key: &str, v: &Bound<'_, PyAny>) -> PyResult<()> {
    match key {
        "operation" => {
            r.operation = v
                .cast::<Operation>()
                .map_err(|_| {
                    error::to_py(core::Error::InvalidType {
                        field: "operation".into(),
                        message: "expected an Operation".into(),
                    })
                })?
                .get()
                .inner
        }
        "attempts" => r.attempts = count_u32("attempts", v)?,
        "elapsed" => r.elapsed_ms = duration_ms("elapsed", v)?,
        "timeout" => r.timeout_ms = duration_ms("timeout", v)?,
        "idempotent" => r.idempotent = opt_bool("idempotent", v)?,
        "strategy" => {
            r.strategy = if v.is_none() {
                None
            } else {
                Some(name("strategy", v)?)
            }
        }
        "random" => {
            r.random = if v.is_none() {
                None
            } else {
                Some(draw("random", v)?)
            }
        }
        "previous_delay" => {
            r.previous_delay_ms = if v.is_none() {
                None
            } else {
                Some(duration_ms("previous_delay", v)?)
            }
        }
        "previous_reasons" => {
            let mut out = Vec::new();
            for item in v.try_iter()? {
                out.push(reason("previous_reasons", &item?)?);
            }
            r.previous_reasons = out;
        }
        other => {
            return Err(error::to_py(core::Error::UnknownField { field: other.into() }));
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
        apply_request_field(&mut r, "operation", operation)?;
        apply_request_field(&mut r, "timeout", timeout)?;
        let optional = [
            ("elapsed", elapsed),
            ("attempts", attempts),
            ("idempotent", idempotent),
            ("strategy", strategy),
            ("random", random),
            ("previous_delay", previous_delay),
            ("previous_reasons", previous_reasons),
        ];
        for (k, v) in optional {
            if let Some(v) = v {
                apply_request_field(&mut r, k, v)?;
            }
        }
        Ok(Request { inner: r })
    }
    /// A copy with the given fields changed (same keywords as the constructor).
    #[pyo3(signature = (**changes))]
    fn replace(&self, changes: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let mut r = self.inner.clone();
        if let Some(changes) = changes {
            for (k, v) in changes.iter() {
                apply_request_field(&mut r, &k.extract::<String>()?, &v)?;
            }
        }
        Ok(Request { inner: r })
    }
    /// Parses the JSON form used by the spec fixtures (`*_ms` integer milliseconds).
    #[staticmethod]
    fn from_json(text: &str) -> PyResult<Self> {
        Ok(Request {
            inner: core::json::from_json_str(text).py()?,
        })
    }
    /// The JSON form.
    fn to_json(&self) -> String {
        serde_json::to_string(&self.inner).unwrap_or_default()
    }
    /// The operation.
    #[getter]
    fn operation(&self) -> Operation {
        Operation {
            inner: self.inner.operation,
        }
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
        self.inner
            .strategy
            .and_then(|s| serde_json::to_value(s).ok())
            .and_then(|v| v.as_str().map(str::to_owned))
    }
    /// The random draw, if any.
    #[getter]
    fn random(&self) -> Option<f64> {
        self.inner.random
    }
    /// Reasons of earlier retries.
    #[getter]
    fn previous_reasons(&self, py: Python<'_>) -> PyResult<Py<PyList>> {
        let items = self
            .inner
            .previous_reasons
            .iter()
            .map(|r| py_reason(py, *r))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(PyList::new(py, items)?.unbind())
    }
    fn __repr__(&self) -> String {
        format!("Request({})", self.to_json())
    }
}

/// The whole retry configuration (strategy, backoff, jitter, compat), loaded from JSON.
#[pyclass(frozen, module = "retrypolicy._lowlevel")]
#[derive(Clone)]
pub struct Policy {
    inner: core::Policy,
}

#[pymethods]
impl Policy {
    /// The RFC 0049 default: best effort, 1..500 ms ×2, no jitter, no compat options.
    #[new]
    fn new() -> Self {
        Policy {
            inner: core::Policy::default(),
        }
    }
    /// Parses and validates a policy document.
    #[staticmethod]
    fn from_json(text: &str) -> PyResult<Self> {
        Ok(Policy {
            inner: core::Policy::from_json(text).py()?,
        })
    }
    /// The normalized policy document.
    fn to_json(&self) -> String {
        self.inner.to_json()
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<Policy>().is_ok_and(|o| o.get().inner == self.inner)
    }
    fn __repr__(&self) -> String {
        format!("Policy({})", self.to_json())
    }
}

/// The outcome of one decision; immutable.
#[pyclass(frozen, module = "retrypolicy._lowlevel")]
pub struct Decision {
    inner: core::Decision,
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
        py_reason(py, self.inner.reason())
    }
    /// Why not retried (`not_idempotent`, `strategy_declined`, `deadline_passed`, `unknown_reason`), or None.
    #[getter]
    fn cause(&self) -> Option<&'static str> {
        match self.inner {
            core::Decision::NoRetry(n) => Some(match n.cause {
                core::NoRetryCause::NotIdempotent => "not_idempotent",
                core::NoRetryCause::StrategyDeclined => "strategy_declined",
                core::NoRetryCause::DeadlinePassed => "deadline_passed",
                core::NoRetryCause::UnknownReason => "unknown_reason",
            }),
            core::Decision::Retry(_) => None,
        }
    }
    /// The rule that decided.
    #[getter]
    fn rule(&self) -> &'static str {
        self.inner.rule().name()
    }
    /// The spec section behind the rule.
    #[getter]
    fn section(&self) -> &'static str {
        self.inner.section()
    }
    /// Whether the delay was cut to the time left.
    #[getter]
    fn capped(&self) -> bool {
        matches!(self.inner, core::Decision::Retry(r) if r.capped)
    }
    /// Whether to cancel (time out) when the delay ends instead of resending.
    #[getter]
    fn then_cancel(&self) -> bool {
        matches!(self.inner, core::Decision::Retry(r) if r.then_cancel)
    }
    /// Retries made before this decision.
    #[getter]
    fn attempts(&self) -> u32 {
        match self.inner {
            core::Decision::Retry(r) => r.attempts,
            core::Decision::NoRetry(n) => n.attempts,
        }
    }
    /// Whether the request counted as idempotent.
    #[getter]
    fn idempotent(&self) -> bool {
        match self.inner {
            core::Decision::Retry(r) => r.idempotent,
            core::Decision::NoRetry(n) => n.idempotent,
        }
    }
    /// The decision as JSON (the spec-fixture output keys).
    fn to_json(&self) -> String {
        self.inner.to_json()
    }
    fn __str__(&self) -> String {
        self.inner.to_string()
    }
    fn __repr__(&self) -> String {
        format!("Decision({})", self.inner.to_json())
    }
}

/// The result of classifying one failure.
#[pyclass(frozen, module = "retrypolicy._lowlevel")]
pub struct Classification {
    inner: core::Classification,
}

#[pymethods]
impl Classification {
    /// The RetryReason to pass to `decide`, or None to fail without retry handling.
    #[getter]
    fn reason(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.inner.reason.map(|r| py_reason(py, r)).transpose()
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
        serde_json::to_string(&self.inner).unwrap_or_default()
    }
    fn __repr__(&self) -> String {
        format!("Classification({})", self.to_json())
    }
}

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
        reason_: &Bound<'_, PyAny>,
    ) -> PyResult<Option<Py<PyAny>>> {
        use core::RetryStrategy;
        let r = reason("reason", reason_)?;
        let v = self.inner.retry_after(&request.get().inner, r).py()?;
        v.delay_ms.map(|ms| timedelta(py, ms)).transpose()
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

fn policy_or_default(policy: Option<&Bound<'_, Policy>>) -> core::Policy {
    policy.map(|p| p.get().inner).unwrap_or_default()
}

/// A Python object with `retry_after(request, reason)`, seen by the core as a host strategy.
struct PyStrategy<'a, 'py> {
    strategy: &'a Bound<'py, PyAny>,
    request: &'a Bound<'py, Request>,
    /// The exception the host code raised, handed back unchanged after the core returns.
    raised: std::cell::RefCell<Option<PyErr>>,
}

impl core::RetryStrategy for PyStrategy<'_, '_> {
    fn retry_after(
        &self,
        _: &core::Request,
        reason: core::RetryReason,
    ) -> Result<core::StrategyVerdict, core::Error> {
        let py = self.strategy.py();
        let answer = py_reason(py, reason).and_then(|r| {
            self.strategy
                .call_method1(pyo3::intern!(py, "retry_after"), (self.request, r))
        });
        let verdict = answer.and_then(|a| {
            if a.is_none() {
                Ok(core::StrategyVerdict::custom_no_retry())
            } else {
                duration_ms("retry_after", &a).map(core::StrategyVerdict::custom_retry)
            }
        });
        verdict.map_err(|e| {
            *self.raised.borrow_mut() = Some(e);
            core::Error::InvalidType {
                field: "strategy".to_owned(),
                message: "the host strategy raised".to_owned(),
            }
        })
    }
}

/// Decides whether and when to retry `request` after `reason` under `policy` and an optional strategy.
#[pyfunction]
#[pyo3(signature = (request, reason, policy = None, strategy = None))]
fn decide(
    py: Python<'_>,
    request: &Bound<'_, Request>,
    reason: &Bound<'_, PyAny>,
    policy: Option<&Bound<'_, Policy>>,
    strategy: Option<&Bound<'_, PyAny>>,
) -> PyResult<Decision> {
    let req = &request.get().inner;
    let r = convert::reason("reason", reason)?;
    let pol = policy_or_default(policy);
    let inner = match strategy {
        None => core::decide(req, r, &pol).py()?,
        Some(s) if s.get_type().is(py.get_type::<BestEffort>()) => {
            let be = s.cast::<BestEffort>()?.get().inner;
            core::decide_with(req, r, &pol, Some(&be)).py()?
        }
        Some(s) if s.get_type().is(py.get_type::<FailFast>()) => {
            core::decide_with(req, r, &pol, Some(&core::FailFast)).py()?
        }
        Some(s) => {
            let host = PyStrategy {
                strategy: s,
                request,
                raised: std::cell::RefCell::new(None),
            };
            match core::decide_with(req, r, &pol, Some(&host)) {
                Ok(d) => d,
                // An exception raised by host code propagates unchanged.
                Err(e) => return Err(host.raised.take().unwrap_or_else(|| error::to_py(e))),
            }
        }
    };
    Ok(Decision { inner })
}

/// A no-op with `decide`'s signature and return type, for the benchmark's baseline.
#[pyfunction]
#[pyo3(signature = (request, reason, policy = None, strategy = None))]
fn _noop_decide(
    request: &Bound<'_, Request>,
    reason: &Bound<'_, PyAny>,
    policy: Option<&Bound<'_, Policy>>,
    strategy: Option<&Bound<'_, PyAny>>,
) -> Decision {
    let _ = (request, reason, policy, strategy);
    Decision {
        inner: core::Decision::NoRetry(core::NoRetry {
            reason: core::RetryReason::Unknown,
            cause: core::NoRetryCause::UnknownReason,
            rule: core::Rule::UnknownNeverRetried,
            section: "",
            attempts: 0,
            idempotent: false,
        }),
    }
}

/// Every reason as (index, name, allows_non_idempotent_retry, always_retry), in the RFC table's order.
#[pyfunction]
fn reason_table() -> Vec<(usize, &'static str, bool, bool)> {
    core::reason::REASON_TABLE
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
fn parse_reason(value: &Bound<'_, PyAny>) -> PyResult<usize> {
    Ok(reason("reason", value)? as usize)
}

fn error_map(v: Option<&Bound<'_, PyAny>>) -> PyResult<Option<core::ErrorMap>> {
    match v {
        None => Ok(None),
        Some(v) if v.is_none() => Ok(None),
        Some(v) => {
            let text: String = v.extract().map_err(|_| {
                error::to_py(core::Error::InvalidType {
                    field: "error_map".into(),
                    message: "expected the error map as JSON text".into(),
                })
            })?;
            core::json::from_json_str(&text).py().map(Some)
        }
    }
}

/// Classifies a KV response status (an int) for a KV operation name; `error_map` is the server's JSON.
#[pyfunction]
#[pyo3(signature = (operation, status, *, error_map = None, policy = None))]
fn classify_kv(
    operation: &Bound<'_, PyAny>,
    status: &Bound<'_, PyAny>,
    error_map: Option<&Bound<'_, PyAny>>,
    policy: Option<&Bound<'_, Policy>>,
) -> PyResult<Classification> {
    let op = name("operation", operation)?;
    let status: u16 = match status.cast::<pyo3::types::PyString>() {
        Ok(text) => core::json::status::parse_text("status", &text.to_cow()?).py()?,
        Err(_) => int_in("status", status, "0..=65535")?,
    };
    let map = self::error_map(error_map)?;
    let pol = policy_or_default(policy);
    Ok(Classification {
        inner: core::classify_kv(op, status, map.as_ref(), &pol.compat),
    })
}

/// Classifies the first error of a query response.
#[pyfunction]
#[pyo3(signature = (code, message = "", *, policy = None))]
fn classify_query(
    code: &Bound<'_, PyAny>,
    message: &str,
    policy: Option<&Bound<'_, Policy>>,
) -> PyResult<Classification> {
    let code: u32 = int_in("code", code, "0..=4294967295")?;
    Ok(Classification {
        inner: core::classify_query(code, message, &policy_or_default(policy).compat),
    })
}

/// Classifies the first error of an analytics response.
#[pyfunction]
fn classify_analytics(code: &Bound<'_, PyAny>) -> PyResult<Classification> {
    let code: u32 = int_in("code", code, "0..=4294967295")?;
    Ok(Classification {
        inner: core::classify_analytics(code),
    })
}

/// Classifies a search response's HTTP status.
#[pyfunction]
fn classify_search(http_status: &Bound<'_, PyAny>) -> PyResult<Classification> {
    let s: u16 = int_in("http_status", http_status, "0..=65535")?;
    Ok(Classification {
        inner: core::classify_search(s),
    })
}

/// Classifies a views response from its HTTP status and body.
#[pyfunction]
#[pyo3(signature = (http_status, body = ""))]
fn classify_views(http_status: &Bound<'_, PyAny>, body: &str) -> PyResult<Classification> {
    let s: u16 = int_in("http_status", http_status, "0..=65535")?;
    Ok(Classification {
        inner: core::classify_views(s, body),
    })
}

/// Classifies a failure the SDK observed itself (`"socket_closed_while_in_flight"`, ...).
#[pyfunction]
fn classify_dispatch(failure: &Bound<'_, PyAny>) -> PyResult<Classification> {
    Ok(Classification {
        inner: core::classify_dispatch(name("failure", failure)?),
    })
}

/// RFC 0049's controlled backoff, in milliseconds, after `attempt` retries.
#[pyfunction]
fn controlled_backoff_ms(attempt: &Bound<'_, PyAny>) -> PyResult<u64> {
    Ok(core::controlled_backoff(count_u32("attempt", attempt)?))
}

/// The best-effort delay, in milliseconds, under `policy`'s backoff and jitter.
#[pyfunction]
#[pyo3(signature = (policy, attempt, random = None, previous_delay_ms = None))]
fn backoff_delay_ms(
    policy: &Bound<'_, Policy>,
    attempt: &Bound<'_, PyAny>,
    random: Option<&Bound<'_, PyAny>>,
    previous_delay_ms: Option<&Bound<'_, PyAny>>,
) -> PyResult<u64> {
    let p = policy.get().inner;
    let attempt = count_u32("attempt", attempt)?;
    let random = random
        .filter(|r| !r.is_none())
        .map(|r| draw("random", r))
        .transpose()?;
    let prev = previous_delay_ms
        .filter(|r| !r.is_none())
        .map(|r| int_in::<u64>("previous_delay_ms", r, "0..=18446744073709551615"))
        .transpose()?;
    core::backoff_delay(&p.backoff, p.jitter, attempt, random, prev).py()
}

/// Replays a scenario (the core's JSON form) and returns the timeline as JSON.
#[pyfunction]
fn simulate_json(text: &str) -> PyResult<String> {
    let s: core::Scenario = core::json::from_json_str(text).py()?;
    let t = core::simulate(&s).py()?;
    Ok(serde_json::to_string(&t).unwrap_or_default())
}

/// Calls the core's JSON API by function name: JSON text in, JSON text out.
#[pyfunction]
fn call_json(function: &str, input: &str) -> PyResult<String> {
    let value: serde_json::Value = core::json::from_json_str(input).py()?;
    let out = core::api::call(function, &value).py()?;
    Ok(out.to_string())
}

/// The native module.
#[pymodule]
fn _lowlevel(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", core::VERSION)?;
    m.add_class::<Operation>()?;
    m.add_class::<Request>()?;
    m.add_class::<Policy>()?;
    m.add_class::<Decision>()?;
    m.add_class::<Classification>()?;
    m.add_class::<BestEffort>()?;
    m.add_class::<FailFast>()?;
    m.add_function(wrap_pyfunction!(decide, m)?)?;
    m.add_function(wrap_pyfunction!(_noop_decide, m)?)?;
    m.add_function(wrap_pyfunction!(reason_table, m)?)?;
    m.add_function(wrap_pyfunction!(parse_reason, m)?)?;
    m.add_function(wrap_pyfunction!(classify_kv, m)?)?;
    m.add_function(wrap_pyfunction!(classify_query, m)?)?;
    m.add_function(wrap_pyfunction!(classify_analytics, m)?)?;
    m.add_function(wrap_pyfunction!(classify_search, m)?)?;
    m.add_function(wrap_pyfunction!(classify_views, m)?)?;
    m.add_function(wrap_pyfunction!(classify_dispatch, m)?)?;
    m.add_function(wrap_pyfunction!(controlled_backoff_ms, m)?)?;
    m.add_function(wrap_pyfunction!(backoff_delay_ms, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_json, m)?)?;
    m.add_function(wrap_pyfunction!(call_json, m)?)?;
    Ok(())
}
