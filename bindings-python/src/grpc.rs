//! gRPC's retry and hedging policy (gRFC A6): `ServiceConfig`, `RetryPolicy` and `HedgingPolicy`
//! read from gRPC's own JSON (dicts, camelCase keys) and validated by the core; `grpc_retry` and
//! `grpc_hedge`, the core's decisions, with gRPC's `retryThrottling` bucket as the binding's
//! `RetryBudget`, locked for the call (nothing calls back into Python while it is held).

use pyo3::prelude::*;
use pyo3::types::PyString;
use retrypolicy as core;
use retrypolicy::grpc::{
    grpc_hedge as core_hedge, grpc_retry as core_retry, ClientOptions, CodeSet, GrpcAction, GrpcAttempt,
    GrpcCode, GrpcJitter, GrpcRetryState, HedgeEnd, HedgeEvent, HedgeEventKind, HedgeState,
    HedgingPolicyDocument, MethodPolicy, RetryPolicyDocument, ServiceConfigDocument, ThrottleEvent,
};

use crate::budget::{BudgetVerdict, RetryBudget};
use crate::convert::{
    core_wrapper, from_py_json, int_in, name, now_ms as clock_ms, opt_draw, to_py_json, utf8, wrong_type,
};
use crate::errors::{CoreError, IntoPy};

/// `e` with its field placed under `prefix` (`service_config.methodConfig[0]...`), as the JSON API
/// names it.
fn under(prefix: &str, e: core::Error) -> core::Error {
    let field = match e.field() {
        "" => prefix.to_owned(),
        f => format!("{prefix}.{f}"),
    };
    e.with_field(&field)
}

/// The client's options for `max_attempts_cap` (an int of at least 2; None: gRPC's 5), refused
/// as the JSON API refuses it.
fn options(cap: Option<&Bound<'_, PyAny>>) -> PyResult<ClientOptions> {
    let Some(cap) = cap.filter(|c| !c.is_none()) else {
        return Ok(ClientOptions::default());
    };
    let max_attempts_cap: u32 = int_in("max_attempts_cap", cap, "an integer of at least 2")?;
    ClientOptions::with_cap(max_attempts_cap, "max_attempts_cap").map_err(|e| CoreError(e).into())
}

/// A set of status codes as their names, by number.
fn code_names(codes: CodeSet) -> Vec<&'static str> {
    codes.codes().map(GrpcCode::name).collect()
}

/// A policy document read under `prefix` and validated by `validate` with the client's cap.
fn validated<D: serde::de::DeserializeOwned, T>(
    prefix: &str,
    document: &Bound<'_, PyAny>,
    max_attempts_cap: Option<&Bound<'_, PyAny>>,
    validate: fn(&D, &str, &ClientOptions) -> Result<T, core::Error>,
) -> PyResult<T> {
    let options = options(max_attempts_cap)?;
    let doc: D = from_py_json(prefix, document)?;
    validate(&doc, prefix, &options).py()
}

/// A validated gRPC `retryPolicy`; immutable.
#[pyclass(frozen, module = "retrypolicy._lowlevel")]
pub struct RetryPolicy {
    inner: core::grpc::RetryPolicy,
}

core_wrapper!(RetryPolicy {
    /// Attempts in all, the original included, after the client's cap.
    max_attempts: u32,
    /// `initialBackoff`, in nanoseconds.
    initial_backoff_ns: u64,
    /// `maxBackoff`, in nanoseconds.
    max_backoff_ns: u64,
    /// `backoffMultiplier`.
    backoff_multiplier: f64,
}
    /// A `retryPolicy` as gRPC writes it (`{"maxAttempts": 4, "initialBackoff": ".1s", ...}`),
    /// validated as gRFC A6 asks, `maxAttempts` capped at `max_attempts_cap` (None: 5); errors
    /// name `retry_policy.<field>`.
    #[new]
    #[pyo3(signature = (document, max_attempts_cap = None))]
    fn new(document: &Bound<'_, PyAny>, max_attempts_cap: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let inner = validated("retry_policy", document, max_attempts_cap, RetryPolicyDocument::validate)?;
        Ok(RetryPolicy { inner })
    }
    /// `retryableStatusCodes`, as names (`"UNAVAILABLE"`), by number.
    #[getter]
    fn retryable_status_codes(&self) -> Vec<&'static str> {
        code_names(self.inner.retryable_status_codes)
    }
);

/// A validated gRPC `hedgingPolicy`; immutable.
#[pyclass(frozen, module = "retrypolicy._lowlevel")]
pub struct HedgingPolicy {
    inner: core::grpc::HedgingPolicy,
}

core_wrapper!(HedgingPolicy {
    /// Attempts in all, the original included, after the client's cap.
    max_attempts: u32,
    /// `hedgingDelay`, in nanoseconds (0: every attempt at once).
    hedging_delay_ns: u64,
}
    /// A `hedgingPolicy` as gRPC writes it (`{"maxAttempts": 3, "hedgingDelay": "0.5s",
    /// "nonFatalStatusCodes": [...]}`), validated as gRFC A6 asks, `maxAttempts` capped at
    /// `max_attempts_cap` (None: 5); errors name `hedging_policy.<field>`.
    #[new]
    #[pyo3(signature = (document, max_attempts_cap = None))]
    fn new(document: &Bound<'_, PyAny>, max_attempts_cap: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let inner = validated("hedging_policy", document, max_attempts_cap, HedgingPolicyDocument::validate)?;
        Ok(HedgingPolicy { inner })
    }
    /// `nonFatalStatusCodes`, as names, by number.
    #[getter]
    fn non_fatal_status_codes(&self) -> Vec<&'static str> {
        code_names(self.inner.non_fatal_status_codes)
    }
);

/// A method's policy as a Python object: a `RetryPolicy`, a `HedgingPolicy`, or None.
fn policy_object(py: Python<'_>, policy: MethodPolicy) -> PyResult<Option<Py<PyAny>>> {
    Ok(match policy {
        MethodPolicy::None => None,
        MethodPolicy::Retry(p) => Some(Py::new(py, RetryPolicy { inner: p })?.into_any()),
        MethodPolicy::Hedging(p) => Some(Py::new(py, HedgingPolicy { inner: p })?.into_any()),
    })
}

/// A validated gRPC service config: its method configs' policies and its `retryThrottling`;
/// immutable.
#[pyclass(frozen, module = "retrypolicy._lowlevel")]
pub struct ServiceConfig {
    inner: core::grpc::ServiceConfig,
}

#[pymethods]
impl ServiceConfig {
    /// A service config as gRPC writes it (a dict: `methodConfig`, `retryThrottling`; the fields
    /// gRFC A6 does not read are ignored), validated, `maxAttempts` capped at `max_attempts_cap`
    /// (None: 5); errors name `service_config.<field>` (`service_config.methodConfig[0].retryPolicy.maxAttempts`).
    #[new]
    #[pyo3(signature = (document, max_attempts_cap = None))]
    fn new(document: &Bound<'_, PyAny>, max_attempts_cap: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let from_document = |doc: &ServiceConfigDocument, field: &str, options: &ClientOptions| {
            core::grpc::ServiceConfig::from_document(doc, options).map_err(|e| under(field, e))
        };
        let inner = validated("service_config", document, max_attempts_cap, from_document)?;
        Ok(ServiceConfig { inner })
    }
    /// The policy of `service`/`method` (the exact method's config, else the service's, else the
    /// default config's): a `RetryPolicy`, a `HedgingPolicy`, or None.
    #[pyo3(signature = (service, method = None))]
    fn policy_for(
        &self,
        py: Python<'_>,
        service: &Bound<'_, PyAny>,
        method: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Option<Py<PyAny>>> {
        let (service, method) = names(service, method)?;
        policy_object(py, self.inner.policy_for(&service, &method))
    }
    /// Which method config applies to `service`/`method`: `"exact"`, `"service"`, `"default"`,
    /// or None when none does.
    #[pyo3(signature = (service, method = None))]
    fn matched(
        &self,
        service: &Bound<'_, PyAny>,
        method: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Option<&'static str>> {
        let (service, method) = names(service, method)?;
        Ok(self.inner.matched(&service, &method).map(|(how, _)| how))
    }
    /// `retryThrottling` as the token bucket's budget document (a dict; `RetryBudget(it)` is the
    /// bucket), or None.
    #[getter]
    fn throttling(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.inner
            .throttling()
            .map(|c| to_py_json(py, &c.to_document()))
            .transpose()
    }
}

/// A method's service and method names (a missing method: the service's default).
fn names(service: &Bound<'_, PyAny>, method: Option<&Bound<'_, PyAny>>) -> PyResult<(String, String)> {
    let text = |field: &str, v: &Bound<'_, PyAny>| -> PyResult<String> {
        let s = v.cast::<PyString>().map_err(|_| wrong_type(field, "a str", v))?;
        Ok(utf8(field, s)?.into_owned())
    };
    let method = match method.filter(|m| !m.is_none()) {
        Some(m) => text("method", m)?,
        None => String::new(),
    };
    Ok((text("service", service)?, method))
}

/// The throttling bucket argument: a `RetryBudget` or None (else `invalid_type` naming `throttling`).
fn bucket<'a, 'py>(v: Option<&'a Bound<'py, PyAny>>) -> PyResult<Option<&'a Bound<'py, RetryBudget>>> {
    match v.filter(|b| !b.is_none()) {
        None => Ok(None),
        Some(b) => b.cast::<RetryBudget>().map(Some).map_err(|_| {
            wrong_type(
                "throttling",
                "a RetryBudget (the retryThrottling bucket) or None",
                b,
            )
        }),
    }
}

/// What the throttling bucket was told, by name.
fn throttle_name(t: Option<ThrottleEvent>) -> Option<&'static str> {
    t.map(|t| match t {
        ThrottleEvent::Success => "success",
        ThrottleEvent::Failure => "failure",
    })
}

/// The decision after one attempt of a retried gRPC call; immutable.
#[pyclass(frozen, module = "retrypolicy._lowlevel")]
pub struct GrpcRetryDecision {
    inner: core::grpc::GrpcRetryDecision,
}

impl From<core::grpc::GrpcRetryDecision> for GrpcRetryDecision {
    fn from(inner: core::grpc::GrpcRetryDecision) -> Self {
        GrpcRetryDecision { inner }
    }
}

core_wrapper!(GrpcRetryDecision {
    /// Retry: the wait before the next attempt, in ms; else None.
    delay_ms: Option<u64>,
    /// Retry: whether it is a transparent retry (not counted toward `maxAttempts`).
    transparent: bool,
    /// The valid pushback the server sent, in ms, or None.
    pushback_ms: Option<u64>,
    /// The rule that decided.
    rule: &'static str,
    /// Its source.
    section: &'static str,
}
    /// `"succeeded"`, `"retry"` or `"fail"`.
    #[getter]
    fn action(&self) -> &'static str {
        match self.inner.action {
            GrpcAction::Succeeded => "succeeded",
            GrpcAction::Retry => "retry",
            GrpcAction::Fail => "fail",
        }
    }
    /// What the throttling bucket is told of this attempt (`"success"`, `"failure"`), or None.
    #[getter]
    fn throttle(&self) -> Option<&'static str> {
        throttle_name(self.inner.throttle)
    }
    /// The throttling bucket's verdict when it was asked, or None.
    #[getter]
    fn budget(&self) -> Option<BudgetVerdict> {
        self.inner.budget.map(|inner| BudgetVerdict { inner })
    }
    /// Retry: the call's state for the next attempt's decision (a dict), else None.
    #[getter]
    fn next(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.inner.next.map(|n| to_py_json(py, &n)).transpose()
    }
);

/// The decision after `attempt` (a dict: `status`, `pushback`, `committed`, `reach`) of a call in
/// `state` (a dict: `attempts`, `retries`, `retries_since_pushback`, `elapsed_ms`, `deadline_ms`)
/// under `policy` (None: the method has no retry policy), with the caller's draw `random`, the
/// `jitter` (`"plus_minus_20_percent"`, A6's, by default, or `"full"`, A6's before 2024-08-29),
/// and the `throttling` bucket (a `RetryBudget`, told this attempt's success or failure and asked
/// at `now_ms`).
#[pyfunction]
#[pyo3(signature = (policy, state, attempt, random = None, jitter = None, throttling = None, now_ms = None))]
#[allow(clippy::too_many_arguments)]
pub fn grpc_retry(
    policy: &Bound<'_, PyAny>,
    state: &Bound<'_, PyAny>,
    attempt: &Bound<'_, PyAny>,
    random: Option<&Bound<'_, PyAny>>,
    jitter: Option<&Bound<'_, PyAny>>,
    throttling: Option<&Bound<'_, PyAny>>,
    now_ms: Option<&Bound<'_, PyAny>>,
) -> PyResult<GrpcRetryDecision> {
    let policy = match policy.is_none() {
        true => None,
        false => Some(
            policy
                .cast::<RetryPolicy>()
                .map_err(|_| wrong_type("policy", "a grpc.RetryPolicy or None", policy))?
                .get()
                .inner,
        ),
    };
    let state: GrpcRetryState = from_py_json("state", state)?;
    let attempt: GrpcAttempt = from_py_json("attempt", attempt)?;
    let random = random.map(|r| opt_draw("random", r)).transpose()?.flatten();
    let jitter: GrpcJitter = match jitter.filter(|j| !j.is_none()) {
        Some(j) => name("jitter", j)?,
        None => GrpcJitter::default(),
    };
    let bucket = bucket(throttling)?;
    let now = now_ms.map(|n| clock_ms("now_ms", n)).transpose()?.unwrap_or(0);
    let mut guard = bucket.map(|b| b.get().lock());
    let inner = core_retry(
        policy.as_ref(),
        &state,
        &attempt,
        random,
        jitter,
        guard.as_deref_mut().map(|b| (b, now)),
    )
    .py()?;
    Ok(GrpcRetryDecision { inner })
}

/// The machine's answer to one event of a hedged gRPC call; immutable.
#[pyclass(frozen, module = "retrypolicy._lowlevel")]
pub struct GrpcHedgeStep {
    inner: core::grpc::HedgeStep,
}

core_wrapper!(GrpcHedgeStep {
    /// Send this many attempts now.
    send: u32,
    /// Tell the machine `"hedge_due"` after this many ms (replacing any earlier wait); None: no
    /// hedge is due.
    next_hedge_in_ms: Option<u64>,
    /// Whether to cancel every attempt still out.
    cancel_others: bool,
    /// The rule that decided.
    rule: &'static str,
    /// Its source.
    section: &'static str,
}
    /// The call is over: `"succeeded"` or `"failed"`; else None.
    #[getter]
    fn end(&self) -> Option<&'static str> {
        self.inner.end.map(|e| match e {
            HedgeEnd::Succeeded => "succeeded",
            HedgeEnd::Failed => "failed",
        })
    }
    /// The status the call fails with (`"UNAVAILABLE"`), or None.
    #[getter]
    fn status(&self) -> Option<&'static str> {
        self.inner.status.map(GrpcCode::name)
    }
    /// What the throttling bucket was told of the ended attempt (`"success"`, `"failure"`), or None.
    #[getter]
    fn throttle(&self) -> Option<&'static str> {
        throttle_name(self.inner.throttle)
    }
    /// The throttling bucket's verdict on the last hedge it was asked for, or None.
    #[getter]
    fn budget(&self) -> Option<BudgetVerdict> {
        self.inner.budget.map(|inner| BudgetVerdict { inner })
    }
    /// The call's state after the event (a dict, to pass to the next `grpc_hedge`).
    #[getter]
    fn state(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py_json(py, &self.inner.state)
    }
);

/// A hedging event: a kind's name for the kinds without fields (`"start"`, `"hedge_due"`,
/// `"committed"`), or a dict (`{"event": "attempt_ended", "attempt": {...}}`); errors name `event`.
fn event_of(v: &Bound<'_, PyAny>) -> PyResult<HedgeEvent> {
    let Ok(s) = v.cast::<PyString>() else {
        let value: serde_json::Value = from_py_json("event", v)?;
        return retrypolicy_wire::from_json_value::<HedgeEvent>(&value)
            .map_err(|e| retrypolicy_wire::placed("event", e))
            .py();
    };
    let kind: HedgeEventKind = retrypolicy_wire::parse_name("event", &utf8("event", s)?).py()?;
    HedgeEvent::new(kind, None)
        .map_err(|e| retrypolicy_wire::placed("event", e))
        .py()
}

/// One step of the hedged call in `state` (a dict from the last step's `state`; None: a new
/// call) under `policy`, for `event`; the `throttling` bucket (a `RetryBudget`) is asked before
/// each hedge and told each ended attempt at `now_ms`.
#[pyfunction]
#[pyo3(signature = (policy, state, event, throttling = None, now_ms = None))]
pub fn grpc_hedge(
    policy: &Bound<'_, PyAny>,
    state: &Bound<'_, PyAny>,
    event: &Bound<'_, PyAny>,
    throttling: Option<&Bound<'_, PyAny>>,
    now_ms: Option<&Bound<'_, PyAny>>,
) -> PyResult<GrpcHedgeStep> {
    let policy = policy
        .cast::<HedgingPolicy>()
        .map_err(|_| wrong_type("policy", "a grpc.HedgingPolicy", policy))?
        .get()
        .inner;
    let state: HedgeState = match state.is_none() {
        true => HedgeState::default(),
        false => from_py_json("state", state)?,
    };
    let event = event_of(event)?;
    let bucket = bucket(throttling)?;
    let now = now_ms.map(|n| clock_ms("now_ms", n)).transpose()?.unwrap_or(0);
    let mut guard = bucket.map(|b| b.get().lock());
    let inner = core_hedge(&policy, &state, &event, guard.as_deref_mut().map(|b| (b, now))).py()?;
    Ok(GrpcHedgeStep { inner })
}
