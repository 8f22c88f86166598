//! gRPC's retry and hedging policy (gRFC A6) for JavaScript: the service config and its policies
//! held as `#[napi]` class instances, validated once; `grpcRetry` and `grpcHedge`, the core's
//! decision for one attempt and one step of a hedged call, the throttling bucket (a `BudgetHandle`)
//! lent to the call. Documents (gRPC's camelCase JSON) and the call's state, attempt and event (the
//! wire form, written by the JavaScript layer) cross as JSON text; answers go out as JSON text.

use napi::bindgen_prelude::{Either, Env, Unknown};
use napi_derive::napi;
use retrypolicy::grpc::{
    self as core, ClientOptions, GrpcAttempt, GrpcJitter, GrpcRetryState, HedgeEvent, HedgeState,
    HedgingPolicy, HedgingPolicyDocument, MethodPolicy, RetryPolicy, RetryPolicyDocument, ServiceConfig,
    ServiceConfigDocument, DEFAULT_MAX_ATTEMPTS_CAP,
};
use retrypolicy::Error as CoreError;
use serde::Serialize;

use crate::budget::{document, BudgetHandle};
use crate::convert::{self, Js};
use crate::errors::{run, Res};

/// A core value as JSON text.
fn json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// The client's cap on `maxAttempts` (`maxAttemptsCap`; undefined: A6's 5), at least 2.
fn options(cap: Unknown) -> Res<ClientOptions> {
    let cap = convert::u32_or(&Js(cap), "maxAttemptsCap", Some(DEFAULT_MAX_ATTEMPTS_CAP))?;
    Ok(ClientOptions::with_cap(cap, "maxAttemptsCap")?)
}

/// A gRPC service config (its method configs and `retryThrottling`), validated.
#[napi]
pub struct GrpcServiceConfigHandle {
    config: ServiceConfig,
}

#[napi]
impl GrpcServiceConfigHandle {
    /// A service config from gRPC's JSON text, `maxAttemptsCap` capping every policy's `maxAttempts`;
    /// errors name the field (`methodConfig[0].retryPolicy.maxAttempts`).
    #[napi(constructor, catch_unwind)]
    pub fn new(env: Env, document_text: Unknown, max_attempts_cap: Unknown) -> napi::Result<Self> {
        run(&env, || {
            let options = options(max_attempts_cap)?;
            let doc: ServiceConfigDocument = convert::with_str(&Js(document_text), "serviceConfig", |s| {
                Ok(retrypolicy_wire::from_json_str(s)?)
            })?;
            Ok(GrpcServiceConfigHandle {
                config: ServiceConfig::from_document(&doc, &options)?,
            })
        })
    }

    /// Which name matched `service`/`method`: `exact`, `service`, `default`, or none.
    #[napi(catch_unwind)]
    pub fn matched(&self, env: Env, service: Unknown, method: Unknown) -> napi::Result<Option<&'static str>> {
        run(&env, || {
            let (service, method) = (
                convert::text(&Js(service), "service")?,
                convert::text(&Js(method), "method")?,
            );
            Ok(self.config.matched(&service, &method).map(|(how, _)| how))
        })
    }

    /// The policy for `service`/`method`: a retry or a hedging policy handle, or none.
    #[napi(catch_unwind)]
    pub fn policy_for(
        &self,
        env: Env,
        service: Unknown,
        method: Unknown,
    ) -> napi::Result<Option<Either<GrpcRetryPolicyHandle, GrpcHedgingPolicyHandle>>> {
        run(&env, || {
            let (service, method) = (
                convert::text(&Js(service), "service")?,
                convert::text(&Js(method), "method")?,
            );
            Ok(match self.config.policy_for(&service, &method) {
                MethodPolicy::Retry(policy) => Some(Either::A(GrpcRetryPolicyHandle { policy })),
                MethodPolicy::Hedging(policy) => Some(Either::B(GrpcHedgingPolicyHandle { policy })),
                MethodPolicy::None => None,
            })
        })
    }

    /// `retryThrottling` as a token bucket's budget document (JSON text), or none.
    #[napi(catch_unwind)]
    pub fn throttling(&self) -> Option<String> {
        self.config.throttling().map(|c| json(&c.to_document()))
    }
}

/// A validated `retryPolicy`.
#[napi]
pub struct GrpcRetryPolicyHandle {
    policy: RetryPolicy,
}

#[napi]
impl GrpcRetryPolicyHandle {
    /// A retry policy from gRPC's JSON text; errors name `retryPolicy.<field>`.
    #[napi(constructor, catch_unwind)]
    pub fn new(env: Env, document_text: Unknown, max_attempts_cap: Unknown) -> napi::Result<Self> {
        run(&env, || {
            let options = options(max_attempts_cap)?;
            let doc: RetryPolicyDocument = document(document_text, "retryPolicy")?;
            Ok(GrpcRetryPolicyHandle {
                policy: doc.validate("retryPolicy", &options)?,
            })
        })
    }

    /// The validated policy as JSON text (`{kind: "retry", max_attempts, initial_backoff_ns, ...}`).
    #[napi(catch_unwind)]
    pub fn to_json(&self) -> String {
        json(&MethodPolicy::Retry(self.policy))
    }
}

/// A validated `hedgingPolicy`.
#[napi]
pub struct GrpcHedgingPolicyHandle {
    policy: HedgingPolicy,
}

#[napi]
impl GrpcHedgingPolicyHandle {
    /// A hedging policy from gRPC's JSON text; errors name `hedgingPolicy.<field>`.
    #[napi(constructor, catch_unwind)]
    pub fn new(env: Env, document_text: Unknown, max_attempts_cap: Unknown) -> napi::Result<Self> {
        run(&env, || {
            let options = options(max_attempts_cap)?;
            let doc: HedgingPolicyDocument = document(document_text, "hedgingPolicy")?;
            Ok(GrpcHedgingPolicyHandle {
                policy: doc.validate("hedgingPolicy", &options)?,
            })
        })
    }

    /// The validated policy as JSON text (`{kind: "hedging", max_attempts, hedging_delay_ns, ...}`).
    #[napi(catch_unwind)]
    pub fn to_json(&self) -> String {
        json(&MethodPolicy::Hedging(self.policy))
    }
}

/// The caller's clock reading for a lent bucket, `nowMs` (undefined: 0).
fn now(v: Unknown) -> Res<u64> {
    convert::millis(&Js(v), "nowMs", Some(0))
}

/// The decision for one attempt (gRFC A6) as JSON text: `policy` none for a method without a
/// retry policy; `state` and `attempt` JSON text in the wire form; `throttling` the bucket lent
/// for the call, told of the attempt and asked at `nowMs`.
#[napi(catch_unwind)]
#[allow(clippy::too_many_arguments)]
pub fn grpc_retry(
    env: Env,
    policy: Option<&GrpcRetryPolicyHandle>,
    state: Unknown,
    attempt: Unknown,
    random: Unknown,
    jitter: Unknown,
    throttling: Option<&mut BudgetHandle>,
    now_ms: Unknown,
) -> napi::Result<String> {
    run(&env, || {
        let state: GrpcRetryState = document(state, "state")?;
        let attempt: GrpcAttempt = document(attempt, "attempt")?;
        let random = convert::opt_draw(&Js(random), "random")?;
        let jitter: GrpcJitter = convert::opt_name(&Js(jitter), "jitter")?.unwrap_or_default();
        let now_ms = now(now_ms)?;
        let bucket = throttling.map(|h| (&mut h.budget, now_ms));
        let d = core::grpc_retry(
            policy.map(|p| &p.policy),
            &state,
            &attempt,
            random,
            jitter,
            bucket,
        )?;
        Ok(json(&d))
    })
}

/// The hedging policy a hedged call needs (none: `invalid_type` naming `policy`).
fn hedging(policy: Option<&GrpcHedgingPolicyHandle>) -> Res<&GrpcHedgingPolicyHandle> {
    policy.ok_or_else(|| {
        CoreError::InvalidType {
            field: "policy".to_owned(),
            message: "expected a grpc.HedgingPolicy, got none".to_owned(),
        }
        .into()
    })
}

/// One step of a hedged call (gRFC A6) as JSON text: `state` the previous step's (JSON text;
/// undefined: a call not started), `event` JSON text (`{"event": "attempt_ended", "attempt": {...}}`);
/// `throttling` the bucket lent for the step, at `nowMs`.
#[napi(catch_unwind)]
pub fn grpc_hedge(
    env: Env,
    policy: Option<&GrpcHedgingPolicyHandle>,
    state: Unknown,
    event: Unknown,
    throttling: Option<&mut BudgetHandle>,
    now_ms: Unknown,
) -> napi::Result<String> {
    run(&env, || {
        let state: HedgeState = Js(state).opt(|v| document(v.0, "state"))?.unwrap_or_default();
        let event: serde_json::Value = document(event, "event")?;
        let event: HedgeEvent = retrypolicy_wire::from_json_value::<HedgeEvent>(&event)
            .map_err(|e| retrypolicy_wire::placed("event", e))?;
        let now_ms = now(now_ms)?;
        let bucket = throttling.map(|h| (&mut h.budget, now_ms));
        Ok(json(&core::grpc_hedge(
            &hedging(policy)?.policy,
            &state,
            &event,
            bucket,
        )?))
    })
}
