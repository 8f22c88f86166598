//! gRPC's retry and hedging policy (gRFC A6) as JavaScript objects: the service config and its
//! policies validated once; `grpcRetry` and `grpcHedge`, the core's decision for one attempt and one
//! step of a hedged call, with the throttling bucket (a `BudgetHandle`'s shared cell) lent to the
//! call. Documents (gRPC's camelCase JSON) and the call's state, attempt and event (the wire form,
//! written by the facade) cross as JSON text; answers go out as JSON text.

use retrypolicy::grpc::{
    self as core, ClientOptions, GrpcAttempt, GrpcJitter, GrpcRetryState, HedgeEvent, HedgeState,
    HedgingPolicy, HedgingPolicyDocument, MethodPolicy, RetryPolicy, RetryPolicyDocument, ServiceConfig,
    ServiceConfigDocument, DEFAULT_MAX_ATTEMPTS_CAP,
};
use retrypolicy::{Error, RetryBudget};
use wasm_bindgen::prelude::*;

use crate::budget::{parsed, BudgetHandle};
use crate::errors::Fallible;
use crate::json_text;
use crate::read::{count, millis, name, number, optional, text};
use crate::run::busy;

/// The client's cap on `maxAttempts` (`maxAttemptsCap`; undefined or null: A6's 5), at least 2.
fn options(cap: &JsValue) -> Result<ClientOptions, Error> {
    let cap =
        optional(cap, "maxAttemptsCap", |v, f| count(v, f, u32::MAX))?.unwrap_or(DEFAULT_MAX_ATTEMPTS_CAP);
    ClientOptions::with_cap(cap, "maxAttemptsCap")
}

/// A service or method name; undefined or null is the empty name.
fn method_name(v: &JsValue, field: &str) -> Result<String, Error> {
    Ok(optional(v, field, text)?.unwrap_or_default())
}

/// A gRPC service config (its method configs and `retryThrottling`), validated.
#[wasm_bindgen]
pub struct GrpcServiceConfigHandle(ServiceConfig);

#[wasm_bindgen]
impl GrpcServiceConfigHandle {
    /// A service config from gRPC's JSON text, `maxAttemptsCap` capping every policy's
    /// `maxAttempts`; errors name the field (`methodConfig[0].retryPolicy.maxAttempts`).
    #[wasm_bindgen(constructor)]
    pub fn new(document: &str, max_attempts_cap: JsValue) -> Fallible<GrpcServiceConfigHandle> {
        let options = options(&max_attempts_cap)?;
        let doc: ServiceConfigDocument = retrypolicy_wire::from_json_str(document)?;
        Ok(GrpcServiceConfigHandle(ServiceConfig::from_document(
            &doc, &options,
        )?))
    }

    /// Which name matched `service`/`method`: `exact`, `service`, `default`, or undefined.
    pub fn matched(&self, service: JsValue, method: JsValue) -> Fallible<Option<String>> {
        let (service, method) = (method_name(&service, "service")?, method_name(&method, "method")?);
        Ok(self.0.matched(&service, &method).map(|(how, _)| how.to_owned()))
    }

    /// The policy for `service`/`method`: a retry or a hedging policy handle, or undefined.
    #[wasm_bindgen(js_name = policyFor)]
    pub fn policy_for(&self, service: JsValue, method: JsValue) -> Fallible<JsValue> {
        let (service, method) = (method_name(&service, "service")?, method_name(&method, "method")?);
        Ok(match self.0.policy_for(&service, &method) {
            MethodPolicy::Retry(p) => GrpcRetryPolicyHandle(Some(p)).into(),
            MethodPolicy::Hedging(p) => GrpcHedgingPolicyHandle(Some(p)).into(),
            MethodPolicy::None => JsValue::UNDEFINED,
        })
    }

    /// `retryThrottling` as a token bucket's budget document (JSON text), or undefined.
    pub fn throttling(&self) -> Option<String> {
        self.0.throttling().map(|c| json_text(&c.to_document()))
    }
}

/// A validated `retryPolicy`, or none (a method without one: only transparent retries).
#[wasm_bindgen]
pub struct GrpcRetryPolicyHandle(Option<RetryPolicy>);

#[wasm_bindgen]
impl GrpcRetryPolicyHandle {
    /// A retry policy from gRPC's JSON text; errors name `retryPolicy.<field>`.
    #[wasm_bindgen(constructor)]
    pub fn new(document: &str, max_attempts_cap: JsValue) -> Fallible<GrpcRetryPolicyHandle> {
        let options = options(&max_attempts_cap)?;
        let doc: RetryPolicyDocument = parsed(document, "retryPolicy")?;
        Ok(GrpcRetryPolicyHandle(Some(
            doc.validate("retryPolicy", &options)?,
        )))
    }

    /// No retry policy, for `grpcRetry` (wasm-bindgen takes no optional reference).
    pub fn none() -> GrpcRetryPolicyHandle {
        GrpcRetryPolicyHandle(None)
    }

    /// The validated policy as JSON text (`{kind: "retry", max_attempts, initial_backoff_ns, ...}`).
    #[wasm_bindgen(js_name = toJson)]
    pub fn to_json(&self) -> String {
        json_text(&self.0.map_or(MethodPolicy::None, MethodPolicy::Retry))
    }
}

/// A validated `hedgingPolicy`.
#[wasm_bindgen]
pub struct GrpcHedgingPolicyHandle(Option<HedgingPolicy>);

#[wasm_bindgen]
impl GrpcHedgingPolicyHandle {
    /// A hedging policy from gRPC's JSON text; errors name `hedgingPolicy.<field>`.
    #[wasm_bindgen(constructor)]
    pub fn new(document: &str, max_attempts_cap: JsValue) -> Fallible<GrpcHedgingPolicyHandle> {
        let options = options(&max_attempts_cap)?;
        let doc: HedgingPolicyDocument = parsed(document, "hedgingPolicy")?;
        Ok(GrpcHedgingPolicyHandle(Some(
            doc.validate("hedgingPolicy", &options)?,
        )))
    }

    /// No hedging policy: `grpcHedge` refuses it (wasm-bindgen takes no optional reference).
    pub fn none() -> GrpcHedgingPolicyHandle {
        GrpcHedgingPolicyHandle(None)
    }

    /// The validated policy as JSON text (`{kind: "hedging", max_attempts, hedging_delay_ns, ...}`).
    #[wasm_bindgen(js_name = toJson)]
    pub fn to_json(&self) -> String {
        json_text(&self.0.map_or(MethodPolicy::None, MethodPolicy::Hedging))
    }
}

/// Calls `f` with the throttling bucket lent for the call (none without one) at `nowMs` (default 0).
fn with_bucket<R>(
    throttling: Option<&BudgetHandle>,
    now_ms: &JsValue,
    f: impl FnOnce(Option<(&mut RetryBudget, u64)>) -> Result<R, Error>,
) -> Result<R, Error> {
    let now_ms = optional(now_ms, "nowMs", millis)?.unwrap_or(0);
    let Some(handle) = throttling else { return f(None) };
    let cell = handle.shared();
    let mut bucket = cell.try_borrow_mut().map_err(|_| busy("throttling"))?;
    f(Some((&mut bucket, now_ms)))
}

/// `grpcRetry` and `grpcRetryThrottled`: the decision as JSON text.
fn retry(
    policy: &GrpcRetryPolicyHandle,
    (state, attempt): (&str, &str),
    (random, jitter): (JsValue, JsValue),
    throttling: Option<&BudgetHandle>,
    now_ms: JsValue,
) -> Fallible<String> {
    let state: GrpcRetryState = parsed(state, "state")?;
    let attempt: GrpcAttempt = parsed(attempt, "attempt")?;
    let random = optional(&random, "random", number)?;
    let jitter: GrpcJitter = optional(&jitter, "jitter", name)?.unwrap_or_default();
    let d = with_bucket(throttling, &now_ms, |bucket| {
        core::grpc_retry(policy.0.as_ref(), &state, &attempt, random, jitter, bucket)
    })?;
    Ok(json_text(&d))
}

/// The decision for one attempt (gRFC A6) as JSON text, without a throttling bucket: `policy` a
/// retry policy or `GrpcRetryPolicyHandle.none()`; `state` and `attempt` JSON text in the wire form.
#[wasm_bindgen(js_name = grpcRetry)]
pub fn grpc_retry(
    policy: &GrpcRetryPolicyHandle,
    state: &str,
    attempt: &str,
    random: JsValue,
    jitter: JsValue,
    now_ms: JsValue,
) -> Fallible<String> {
    retry(policy, (state, attempt), (random, jitter), None, now_ms)
}

/// `grpcRetry` with the throttling bucket lent for the call, told of the attempt and asked at `nowMs`.
#[wasm_bindgen(js_name = grpcRetryThrottled)]
pub fn grpc_retry_throttled(
    policy: &GrpcRetryPolicyHandle,
    state: &str,
    attempt: &str,
    random: JsValue,
    jitter: JsValue,
    throttling: &BudgetHandle,
    now_ms: JsValue,
) -> Fallible<String> {
    retry(
        policy,
        (state, attempt),
        (random, jitter),
        Some(throttling),
        now_ms,
    )
}

/// `grpcHedge` and `grpcHedgeThrottled`: the step as JSON text.
fn hedge(
    policy: &GrpcHedgingPolicyHandle,
    state: Option<String>,
    event: &str,
    throttling: Option<&BudgetHandle>,
    now_ms: JsValue,
) -> Fallible<String> {
    let state: HedgeState = state
        .map(|s| parsed(&s, "state"))
        .transpose()?
        .unwrap_or_default();
    let event: serde_json::Value = parsed(event, "event")?;
    let event: HedgeEvent = retrypolicy_wire::from_json_value::<HedgeEvent>(&event)
        .map_err(|e| retrypolicy_wire::placed("event", e))?;
    let step = with_bucket(throttling, &now_ms, |bucket| {
        let policy = policy.0.as_ref().ok_or_else(|| Error::InvalidType {
            field: "policy".to_owned(),
            message: "expected a grpc.HedgingPolicy, got none".to_owned(),
        })?;
        core::grpc_hedge(policy, &state, &event, bucket)
    })?;
    Ok(json_text(&step))
}

/// One step of a hedged call (gRFC A6) as JSON text, without a throttling bucket: `state` the
/// previous step's (JSON text; undefined: a call not started), `event` JSON text
/// (`{"event": "attempt_ended", "attempt": {...}}`).
#[wasm_bindgen(js_name = grpcHedge)]
pub fn grpc_hedge(
    policy: &GrpcHedgingPolicyHandle,
    state: Option<String>,
    event: &str,
    now_ms: JsValue,
) -> Fallible<String> {
    hedge(policy, state, event, None, now_ms)
}

/// `grpcHedge` with the throttling bucket lent for the step, asked before a hedge at `nowMs`.
#[wasm_bindgen(js_name = grpcHedgeThrottled)]
pub fn grpc_hedge_throttled(
    policy: &GrpcHedgingPolicyHandle,
    state: Option<String>,
    event: &str,
    throttling: &BudgetHandle,
    now_ms: JsValue,
) -> Fallible<String> {
    hedge(policy, state, event, Some(throttling), now_ms)
}
