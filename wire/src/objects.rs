//! The core's objects a host holds between calls (budgets, breakers, KV error maps, gRPC's
//! service config and policies, AWS's retry configuration and rate limiter) behind one JSON
//! interface: [`open`] makes one of a kind from its arguments, [`invoke`] calls a method on one.
//! The Node addon and the wasm module each hold an [`Object`] in one handle class and pass JSON
//! text both ways, so neither converts these objects' arguments itself.
//!
//! Arguments are a JSON object: documents and snapshots as JSON *text* in a string (so their
//! errors name fields inside them, `budget.max_tokens`, as when they are read alone), every other
//! argument as a JSON value (`now_ms`, `cause`, `random`). Answers are JSON text, or for
//! `policy_for` a new object. A method of a feature this build leaves out is the core's not-built
//! error naming what the host shows (the class or the function) and the feature.

// A build with only the HTTP rules has none of these objects: its helpers go unused.
#![cfg_attr(
    not(feature = "guards"),
    allow(dead_code, unused_imports, unused_variables, unreachable_code)
)]

#[cfg(feature = "guards")]
use retrypolicy::{
    BreakerConfig, BreakerDocument, BreakerOutcome, BreakerSnapshot, BudgetConfig, BudgetDocument,
    BudgetEvent, BudgetEventKind, BudgetSnapshot, CircuitBreaker, RetryBudget, RetryCause,
};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::{from_json_str, Error};

/// One of the core's objects, as a handle of a binding holds it.
pub enum Object {
    /// A retry budget (token bucket, AWS retry quota, Finagle's percentage).
    #[cfg(feature = "guards")]
    Budget(RetryBudget),
    /// A circuit breaker.
    #[cfg(feature = "guards")]
    Breaker(CircuitBreaker),
    /// A KV error map (RFC 0013).
    #[cfg(feature = "couchbase")]
    ErrorMap(retrypolicy::ErrorMap),
    /// A gRPC service config, validated.
    #[cfg(feature = "grpc")]
    GrpcServiceConfig(retrypolicy::grpc::ServiceConfig),
    /// A gRPC `retryPolicy`, validated.
    #[cfg(feature = "grpc")]
    GrpcRetryPolicy(retrypolicy::grpc::RetryPolicy),
    /// A gRPC `hedgingPolicy`, validated.
    #[cfg(feature = "grpc")]
    GrpcHedgingPolicy(retrypolicy::grpc::HedgingPolicy),
    /// An AWS retry configuration, validated.
    #[cfg(feature = "aws")]
    AwsRetryConfig(retrypolicy::aws::AwsRetryConfig),
    /// AWS adaptive mode's client-side rate limiter.
    #[cfg(feature = "aws")]
    RateLimiter(retrypolicy::aws::AdaptiveRateLimiter),
}

/// What [`invoke`] answers: JSON text, or a new object.
pub enum Reply {
    /// The answer as JSON text (`null` for none).
    Json(String),
    /// A new object (`policy_for`'s policy).
    Object(Box<Object>),
}

/// The kinds [`open`] makes: (kind, feature, the class the host shows).
const KINDS: &[(&str, &str, &str)] = &[
    ("budget", "guards", "RetryBudget"),
    ("breaker", "guards", "CircuitBreaker"),
    ("error_map", "couchbase", "ErrorMap"),
    ("grpc_service_config", "grpc", "ServiceConfig"),
    ("grpc_retry_policy", "grpc", "RetryPolicy"),
    ("grpc_hedging_policy", "grpc", "HedgingPolicy"),
    ("aws_retry_config", "aws", "AwsRetryConfig"),
    ("rate_limiter", "aws", "AdaptiveRateLimiter"),
];

/// The methods [`invoke`] calls without an object (their target is optional): (method, feature).
const FUNCTIONS: &[(&str, &str)] = &[
    ("grpc_retry", "grpc"),
    ("grpc_hedge", "grpc"),
    ("aws_decide", "aws"),
];

/// Whether this crate was built with `feature` (its own flag, which its code below is built by).
#[allow(clippy::match_like_matches_macro)] // each arm's value depends on the build
fn built(feature: &str) -> bool {
    match feature {
        "guards" => cfg!(feature = "guards"),
        "couchbase" => cfg!(feature = "couchbase"),
        "grpc" => cfg!(feature = "grpc"),
        "aws" => cfg!(feature = "aws"),
        _ => false,
    }
}

/// The error for a name that is none of `names`.
fn unknown(field: &str, value: &str, names: impl Iterator<Item = &'static str>) -> Error {
    Error::UnknownName {
        field: field.to_owned(),
        value: value.to_owned(),
        expected: names.collect::<Vec<_>>().join(", "),
    }
}

/// The error for an object or a budget lent to a call while another call holds it (a run's
/// strategy reaching the run's own budget, or one object passed as two arguments).
pub fn busy(field: &str) -> Error {
    Error::InvalidType {
        field: field.to_owned(),
        message: "in use by a retry run's call (its strategy may not use the run's own budget or breaker)"
            .to_owned(),
    }
}

/// JSON text read into `T`, its errors naming fields under `prefix` (`budget.max_tokens`); an
/// error about the text as a whole (malformed JSON, the document's version) keeps its own field.
pub fn from_json_under<T: DeserializeOwned>(text: &str, prefix: &str) -> Result<T, Error> {
    from_json_str(text).map_err(|e| match e.field() {
        "" | "version" => e,
        f => {
            let field = format!("{prefix}.{f}");
            e.with_field(&field)
        }
    })
}

/// A core value as JSON text, its keys in the order the core declares them.
fn json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// An optional document argument read as `T` under `prefix`.
fn optional<T: DeserializeOwned>(text: &Option<String>, prefix: &str) -> Result<Option<T>, Error> {
    text.as_deref().map(|t| from_json_under(t, prefix)).transpose()
}

/// Arguments of `open`: a document and, for stateful kinds, a snapshot; gRPC's cap; a limiter's start.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // each field is read by the kinds that take it, when their feature is built
struct OpenArgs {
    #[serde(default)]
    document: Option<String>,
    #[serde(default)]
    state: Option<String>,
    #[serde(default)]
    max_attempts_cap: Option<u32>,
    #[serde(default, with = "retrypolicy::serde_form::ms::or_zero")]
    start_ms: u64,
}

/// An object of `kind` from `args` (JSON text: `document`, `state`, `max_attempts_cap`,
/// `start_ms`); errors name the argument's field (`budget.max_tokens`, `state.balance`).
pub fn open(kind: &str, args: &str) -> Result<Object, Error> {
    let Some(&(_, feature, class)) = KINDS.iter().find(|(k, _, _)| *k == kind) else {
        return Err(unknown("kind", kind, KINDS.iter().map(|k| k.0)));
    };
    if !built(feature) {
        return Err(retrypolicy::features::not_built("class", class, feature));
    }
    let a: OpenArgs = from_json_str(args)?;
    opened(kind, &a)
}

/// The document argument's text, required (missing: `missing_field` naming `field`).
fn document_text<'a>(a: &'a OpenArgs, field: &str) -> Result<&'a str, Error> {
    a.document.as_deref().ok_or_else(|| Error::MissingField {
        field: field.to_owned(),
    })
}

/// The document argument, required, its errors named under `prefix`.
fn document<T: DeserializeOwned>(a: &OpenArgs, prefix: &str) -> Result<T, Error> {
    from_json_under(document_text(a, prefix)?, prefix)
}

/// An object of a built `kind`.
fn opened(kind: &str, a: &OpenArgs) -> Result<Object, Error> {
    match kind {
        #[cfg(feature = "guards")]
        "budget" => {
            let config = BudgetConfig::from_document(&document::<BudgetDocument>(a, "budget")?, "budget")?;
            Ok(Object::Budget(
                match optional::<BudgetSnapshot>(&a.state, "state")? {
                    Some(s) => RetryBudget::restore(&config, &s, "state")?,
                    None => RetryBudget::new(&config),
                },
            ))
        }
        #[cfg(feature = "guards")]
        "breaker" => {
            let config =
                BreakerConfig::from_document(&document::<BreakerDocument>(a, "breaker")?, "breaker")?;
            Ok(Object::Breaker(
                match optional::<BreakerSnapshot>(&a.state, "state")? {
                    Some(s) => CircuitBreaker::restore(&config, &s, "state")?,
                    None => CircuitBreaker::new(&config),
                },
            ))
        }
        #[cfg(feature = "couchbase")]
        "error_map" => {
            // The map's errors name its own keys, as `classify_kv`'s do.
            Ok(Object::ErrorMap(from_json_str(document_text(a, "errorMap")?)?))
        }
        #[cfg(feature = "grpc")]
        "grpc_service_config" | "grpc_retry_policy" | "grpc_hedging_policy" => grpc::open(kind, a),
        #[cfg(feature = "aws")]
        "aws_retry_config" => {
            let doc = optional(&a.document, "config")?.unwrap_or_default();
            Ok(Object::AwsRetryConfig(
                retrypolicy::aws::AwsRetryConfig::from_document(&doc, "config")?,
            ))
        }
        #[cfg(feature = "aws")]
        "rate_limiter" => {
            use retrypolicy::aws::{AdaptiveRateLimiter, RateLimiterConfig, RateLimiterSnapshot};
            let doc = optional(&a.document, "limiter")?.unwrap_or_default();
            let config = RateLimiterConfig::from_document(&doc, "limiter")?;
            Ok(Object::RateLimiter(
                match optional::<RateLimiterSnapshot>(&a.state, "state")? {
                    Some(s) => AdaptiveRateLimiter::restore(&config, &s, "state")?,
                    None => AdaptiveRateLimiter::new(&config, a.start_ms),
                },
            ))
        }
        _ => unreachable!("every kind of KINDS whose feature is built is opened above"),
    }
}

/// Arguments of a call that reads the caller's clock and nothing else.
#[cfg(feature = "guards")]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Clock {
    #[serde(with = "retrypolicy::serde_form::ms")]
    now_ms: u64,
}

/// Arguments of a budget's `permit` and `try_retry`: the clock and what the retry repeats.
#[cfg(feature = "guards")]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Ask {
    #[serde(with = "retrypolicy::serde_form::ms")]
    now_ms: u64,
    #[serde(default, deserialize_with = "retrypolicy::serde_form::or_default")]
    cause: RetryCause,
}

/// Arguments of a budget's `record`: the clock and the event.
#[cfg(feature = "guards")]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Record {
    #[serde(with = "retrypolicy::serde_form::ms")]
    now_ms: u64,
    event: Event,
}

/// A budget event: its kind, what the retry a success follows repeated, what a retry repeats.
#[cfg(feature = "guards")]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Event {
    kind: BudgetEventKind,
    #[serde(default)]
    after_retry: Option<RetryCause>,
    #[serde(default)]
    cause: Option<RetryCause>,
}

/// Arguments of a breaker's `record`: the clock and how the request ended.
#[cfg(feature = "guards")]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Ended {
    #[serde(with = "retrypolicy::serde_form::ms")]
    now_ms: u64,
    outcome: BreakerOutcome,
}

/// Calls `method` on `target` (none: a function whose target is optional, `grpc_retry`,
/// `aws_decide`) with `args` (JSON text), `lent` the budget lent to the call (gRPC's throttling
/// bucket); errors name the argument's field.
pub fn invoke(
    target: Option<&mut Object>,
    method: &str,
    args: &str,
    lent: Option<&mut Object>,
) -> Result<Reply, Error> {
    let Some(target) = target else {
        return match FUNCTIONS.iter().find(|(m, _)| *m == method) {
            Some((_, feature)) if !built(feature) => {
                Err(retrypolicy::features::not_built("function", method, feature))
            }
            Some(_) => free(method, args, lent),
            None => Err(unknown("method", method, FUNCTIONS.iter().map(|f| f.0))),
        };
    };
    let answer: Result<String, Error> = match *target {
        #[cfg(feature = "guards")]
        Object::Budget(ref mut budget) => guards::budget(budget, method, args),
        #[cfg(feature = "guards")]
        Object::Breaker(ref mut breaker) => guards::breaker(breaker, method, args),
        #[cfg(feature = "couchbase")]
        Object::ErrorMap(ref map) => match method {
            "to_json" => Ok(json(map)),
            _ => Err(unknown("method", method, ["to_json"].into_iter())),
        },
        #[cfg(feature = "grpc")]
        Object::GrpcServiceConfig(_) | Object::GrpcRetryPolicy(_) | Object::GrpcHedgingPolicy(_) => {
            return grpc::invoke(target, method, args, lent);
        }
        #[cfg(feature = "aws")]
        Object::AwsRetryConfig(_) | Object::RateLimiter(_) => aws::invoke(target, method, args),
    };
    answer.map(Reply::Json)
}

/// A function called without its optional target.
#[cfg_attr(not(feature = "grpc"), allow(unused_variables))]
fn free(method: &str, args: &str, lent: Option<&mut Object>) -> Result<Reply, Error> {
    match method {
        #[cfg(feature = "grpc")]
        "grpc_retry" | "grpc_hedge" => grpc::call(None, method, args, lent),
        #[cfg(feature = "aws")]
        "aws_decide" => aws::decide(None, args).map(Reply::Json),
        _ => unreachable!("every built function of FUNCTIONS is called above"),
    }
}

impl Object {
    /// The kind [`open`] made it as (`budget`, `breaker`, ...).
    pub fn kind(&self) -> &'static str {
        match *self {
            #[cfg(feature = "guards")]
            Object::Budget(_) => "budget",
            #[cfg(feature = "guards")]
            Object::Breaker(_) => "breaker",
            #[cfg(feature = "couchbase")]
            Object::ErrorMap(_) => "error_map",
            #[cfg(feature = "grpc")]
            Object::GrpcServiceConfig(_) => "grpc_service_config",
            #[cfg(feature = "grpc")]
            Object::GrpcRetryPolicy(_) => "grpc_retry_policy",
            #[cfg(feature = "grpc")]
            Object::GrpcHedgingPolicy(_) => "grpc_hedging_policy",
            #[cfg(feature = "aws")]
            Object::AwsRetryConfig(_) => "aws_retry_config",
            #[cfg(feature = "aws")]
            Object::RateLimiter(_) => "rate_limiter",
        }
    }

    /// The budget this object is, for a run's or a call's use; none when it is another kind.
    pub fn budget_mut(&mut self) -> Option<&mut retrypolicy::RetryBudget> {
        match self {
            #[cfg(feature = "guards")]
            Object::Budget(b) => Some(b),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }

    /// The breaker this object is; none when it is another kind.
    pub fn breaker_mut(&mut self) -> Option<&mut retrypolicy::CircuitBreaker> {
        match self {
            #[cfg(feature = "guards")]
            Object::Breaker(b) => Some(b),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }

    /// The KV error map this object is; none when it is another kind.
    #[cfg(feature = "couchbase")]
    pub fn error_map(&self) -> Option<&retrypolicy::ErrorMap> {
        match self {
            Object::ErrorMap(m) => Some(m),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }
}

/// Budgets and breakers.
#[cfg(feature = "guards")]
mod guards {
    use super::*;

    /// A budget's method.
    pub(super) fn budget(budget: &mut RetryBudget, method: &str, args: &str) -> Result<String, Error> {
        Ok(match method {
            "permit" => {
                let a: Ask = from_json_str(args)?;
                json(&budget.permit(a.now_ms, a.cause))
            }
            "try_retry" => {
                let a: Ask = from_json_str(args)?;
                json(&budget.try_retry(a.now_ms, a.cause))
            }
            "record" => {
                let a: Record = from_json_str(args)?;
                let e = a.event;
                budget.record(
                    a.now_ms,
                    BudgetEvent::from_kind("event", e.kind, e.after_retry, e.cause)?,
                );
                "null".to_owned()
            }
            "snapshot" => json(&budget.snapshot()),
            "to_json" => json(&budget.config().to_document()),
            _ => {
                let names = ["permit", "try_retry", "record", "snapshot", "to_json"];
                return Err(unknown("method", method, names.into_iter()));
            }
        })
    }

    /// A breaker's method.
    pub(super) fn breaker(breaker: &mut CircuitBreaker, method: &str, args: &str) -> Result<String, Error> {
        Ok(match method {
            "permit" => json(&breaker.permit(from_json_str::<Clock>(args)?.now_ms)),
            "record" => {
                let a: Ended = from_json_str(args)?;
                breaker.record(a.now_ms, a.outcome);
                "null".to_owned()
            }
            "last_changes" => json(&breaker.last_changes()),
            "state" => json(&breaker.state(from_json_str::<Clock>(args)?.now_ms).name()),
            "snapshot" => json(&breaker.snapshot()),
            "to_json" => json(&breaker.config().to_document()),
            _ => {
                let names = ["permit", "record", "last_changes", "state", "snapshot", "to_json"];
                return Err(unknown("method", method, names.into_iter()));
            }
        })
    }
}

/// gRPC's service config and policies, and the calls that decide with them.
#[cfg(feature = "grpc")]
mod grpc {
    use retrypolicy::grpc::{
        self as core, ClientOptions, GrpcAttempt, GrpcJitter, GrpcRetryState, HedgeEvent, HedgeState,
        HedgingPolicyDocument, MethodPolicy, RetryPolicyDocument, ServiceConfig, ServiceConfigDocument,
        DEFAULT_MAX_ATTEMPTS_CAP,
    };

    use super::*;

    /// A gRPC object of `kind`: the document (gRPC's camelCase JSON), `max_attempts_cap` capping
    /// every `maxAttempts` (default A6's 5).
    pub(super) fn open(kind: &str, a: &OpenArgs) -> Result<Object, Error> {
        let cap = a.max_attempts_cap.unwrap_or(DEFAULT_MAX_ATTEMPTS_CAP);
        let options = ClientOptions::with_cap(cap, "max_attempts_cap")?;
        Ok(match kind {
            "grpc_service_config" => {
                let doc: ServiceConfigDocument = from_json_str(document_text(a, "serviceConfig")?)?;
                Object::GrpcServiceConfig(ServiceConfig::from_document(&doc, &options)?)
            }
            "grpc_retry_policy" => {
                let doc: RetryPolicyDocument = document(a, "retryPolicy")?;
                Object::GrpcRetryPolicy(doc.validate("retryPolicy", &options)?)
            }
            _ => {
                let doc: HedgingPolicyDocument = document(a, "hedgingPolicy")?;
                Object::GrpcHedgingPolicy(doc.validate("hedgingPolicy", &options)?)
            }
        })
    }

    /// A method or a service name: `{service, method}` (none: the empty name).
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Name {
        #[serde(default, deserialize_with = "retrypolicy::serde_form::or_default")]
        service: String,
        #[serde(default, deserialize_with = "retrypolicy::serde_form::or_default")]
        method: String,
    }

    /// `grpc_retry`'s arguments: the call's state and the attempt (JSON text in the wire form),
    /// the draw, the jitter, the clock for the lent bucket (default 0).
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Retry {
        state: String,
        attempt: String,
        #[serde(default, deserialize_with = "retrypolicy::serde_form::draw::deserialize")]
        random: Option<f64>,
        #[serde(default, deserialize_with = "retrypolicy::serde_form::or_default")]
        jitter: GrpcJitter,
        #[serde(default, with = "retrypolicy::serde_form::ms::or_zero")]
        now_ms: u64,
    }

    /// `grpc_hedge`'s arguments: the previous step's state (none: a call not started), the event
    /// (JSON text), the clock for the lent bucket (default 0).
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Hedge {
        #[serde(default)]
        state: Option<String>,
        event: String,
        #[serde(default, with = "retrypolicy::serde_form::ms::or_zero")]
        now_ms: u64,
    }

    /// A method of a gRPC object.
    pub(super) fn invoke(
        target: &mut Object,
        method: &str,
        args: &str,
        lent: Option<&mut Object>,
    ) -> Result<Reply, Error> {
        if matches!(
            (&*target, method),
            (Object::GrpcRetryPolicy(_), "grpc_retry") | (Object::GrpcHedgingPolicy(_), "grpc_hedge")
        ) {
            return call(Some(target), method, args, lent);
        }
        let json = |t: String| Ok(Reply::Json(t));
        match (&*target, method) {
            (Object::GrpcServiceConfig(c), "matched") => {
                let n: Name = from_json_str(args)?;
                json(super::json(&c.matched(&n.service, &n.method).map(|(how, _)| how)))
            }
            (Object::GrpcServiceConfig(c), "policy_for") => {
                let n: Name = from_json_str(args)?;
                Ok(match c.policy_for(&n.service, &n.method) {
                    MethodPolicy::Retry(p) => Reply::Object(Box::new(Object::GrpcRetryPolicy(p))),
                    MethodPolicy::Hedging(p) => Reply::Object(Box::new(Object::GrpcHedgingPolicy(p))),
                    MethodPolicy::None => Reply::Json("null".to_owned()),
                })
            }
            (Object::GrpcServiceConfig(c), "throttling") => {
                json(super::json(&c.throttling().map(|t| t.to_document())))
            }
            (Object::GrpcRetryPolicy(p), "to_json") => json(super::json(&MethodPolicy::Retry(*p))),
            (Object::GrpcHedgingPolicy(p), "to_json") => json(super::json(&MethodPolicy::Hedging(*p))),
            (Object::GrpcServiceConfig(_), _) => Err(unknown(
                "method",
                method,
                ["matched", "policy_for", "throttling"].into_iter(),
            )),
            (Object::GrpcRetryPolicy(_), _) => {
                Err(unknown("method", method, ["to_json", "grpc_retry"].into_iter()))
            }
            _ => Err(unknown("method", method, ["to_json", "grpc_hedge"].into_iter())),
        }
    }

    /// `grpc_retry` or `grpc_hedge` with `policy` (none: a method without a retry policy; a
    /// hedged call needs one), the throttling bucket `lent`.
    pub(super) fn call(
        policy: Option<&mut Object>,
        method: &str,
        args: &str,
        lent: Option<&mut Object>,
    ) -> Result<Reply, Error> {
        let bucket = match lent {
            Some(o) => Some(o.budget_mut().ok_or_else(|| Error::InvalidType {
                field: "throttling".to_owned(),
                message: "expected a RetryBudget".to_owned(),
            })?),
            None => None,
        };
        let answer = if method == "grpc_retry" {
            let a: Retry = from_json_str(args)?;
            let state: GrpcRetryState = from_json_under(&a.state, "state")?;
            let attempt: GrpcAttempt = from_json_under(&a.attempt, "attempt")?;
            let policy = match policy.as_deref() {
                Some(Object::GrpcRetryPolicy(p)) => Some(p),
                _ => None,
            };
            let bucket = bucket.map(|b| (b, a.now_ms));
            json(&core::grpc_retry(
                policy, &state, &attempt, a.random, a.jitter, bucket,
            )?)
        } else {
            let a: Hedge = from_json_str(args)?;
            let state: HedgeState = optional(&a.state, "state")?.unwrap_or_default();
            let event: serde_json::Value = from_json_under(&a.event, "event")?;
            let event: HedgeEvent = crate::from_json_value(&event).map_err(|e| crate::placed("event", e))?;
            let Some(Object::GrpcHedgingPolicy(policy)) = policy.as_deref() else {
                return Err(Error::InvalidType {
                    field: "policy".to_owned(),
                    message: "expected a grpc.HedgingPolicy, got none".to_owned(),
                });
            };
            json(&core::grpc_hedge(
                policy,
                &state,
                &event,
                bucket.map(|b| (b, a.now_ms)),
            )?)
        };
        Ok(Reply::Json(answer))
    }
}

/// AWS's retry configuration and rate limiter, and the call that decides with a configuration.
#[cfg(feature = "aws")]
mod aws {
    use retrypolicy::aws::{self as core, AwsError, AwsRetryConfig};

    use super::*;

    /// `aws_decide`'s arguments: the attempts made, the error (JSON text in the wire form), the
    /// draw, the retry quota's verdict on this retry (JSON text), if asked.
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Decide {
        attempts: u32,
        error: String,
        #[serde(default, deserialize_with = "retrypolicy::serde_form::draw::deserialize")]
        random: Option<f64>,
        #[serde(default)]
        budget_verdict: Option<String>,
    }

    /// A limiter's `record`: the clock, and whether the response was throttled.
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Response {
        #[serde(with = "retrypolicy::serde_form::ms")]
        now_ms: u64,
        throttled: bool,
    }

    /// The decision after a failed attempt with `config` (none: standard mode's defaults).
    pub(super) fn decide(config: Option<&AwsRetryConfig>, args: &str) -> Result<String, Error> {
        let a: Decide = from_json_str(args)?;
        let error: AwsError = from_json_under(&a.error, "error")?;
        let verdict = match &a.budget_verdict {
            Some(text) => {
                let value: serde_json::Value = from_json_str(text)?;
                Some(crate::budget_verdict_from_value(&value)?)
            }
            None => None,
        };
        let standard = AwsRetryConfig::default();
        let config = config.unwrap_or(&standard);
        Ok(json(&core::aws_decide(
            config,
            a.attempts,
            &error,
            a.random,
            verdict.as_ref(),
        )?))
    }

    /// A method of an AWS object.
    pub(super) fn invoke(target: &mut Object, method: &str, args: &str) -> Result<String, Error> {
        match (target, method) {
            (Object::AwsRetryConfig(c), "to_json") => Ok(json(&c.to_document())),
            (Object::AwsRetryConfig(c), "aws_decide") => decide(Some(c), args),
            (Object::RateLimiter(l), "acquire") => Ok(json(&l.acquire(from_json_str::<Clock>(args)?.now_ms))),
            (Object::RateLimiter(l), "record") => {
                let a: Response = from_json_str(args)?;
                Ok(json(&l.record(a.now_ms, a.throttled)))
            }
            (Object::RateLimiter(l), "snapshot") => Ok(json(&l.snapshot())),
            (Object::RateLimiter(l), "to_json") => Ok(json(&l.config().to_document())),
            (Object::AwsRetryConfig(_), _) => {
                Err(unknown("method", method, ["to_json", "aws_decide"].into_iter()))
            }
            _ => Err(unknown(
                "method",
                method,
                ["acquire", "record", "snapshot", "to_json"].into_iter(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(code, field)` of what `r` refused.
    fn refused<T>(r: Result<T, Error>) -> (&'static str, String) {
        match r {
            Ok(_) => panic!("accepted"),
            Err(e) => (e.code(), e.field().to_owned()),
        }
    }

    /// The JSON answer of `method` on `target`.
    fn answer(target: Option<&mut Object>, method: &str, args: &str) -> serde_json::Value {
        match invoke(target, method, args, None).unwrap() {
            Reply::Json(text) => serde_json::from_str(&text).unwrap(),
            Reply::Object(_) => panic!("an object, not JSON"),
        }
    }

    #[test]
    fn an_unknown_kind_or_function_is_refused_by_name() {
        assert_eq!(refused(open("nope", "{}")), ("unknown_name", "kind".to_owned()));
        assert_eq!(
            refused(invoke(None, "nope", "{}", None)),
            ("unknown_name", "method".to_owned())
        );
    }

    #[cfg(feature = "guards")]
    #[test]
    fn a_budget_is_made_asked_and_told_through_json_and_its_errors_name_the_argument() {
        let doc = r#"{"document": "{\"kind\": \"retry_quota\", \"capacity\": 10}"}"#;
        let mut budget = open("budget", doc).unwrap();
        assert_eq!(budget.kind(), "budget");
        let verdict = answer(
            Some(&mut budget),
            "try_retry",
            r#"{"now_ms": 0, "cause": "timeout"}"#,
        );
        assert_eq!(verdict["permitted"], true);
        assert_eq!(verdict["balance"], 0); // a timeout retry costs the quota's 10
        let refusal = answer(Some(&mut budget), "try_retry", r#"{"now_ms": 1}"#);
        assert_eq!(refusal["permitted"], false);
        let told = r#"{"now_ms": 2, "event": {"kind": "success", "after_retry": "timeout"}}"#;
        assert_eq!(answer(Some(&mut budget), "record", told), serde_json::Value::Null);
        assert_eq!(answer(Some(&mut budget), "snapshot", "{}")["balance"], 10);
        let bad = r#"{"document": "{\"kind\": \"retry_quota\", \"capacity\": -1}"}"#;
        assert_eq!(
            refused(open("budget", bad)),
            ("out_of_range", "budget.capacity".to_owned())
        );
        let (code, field) = refused(invoke(Some(&mut budget), "permit", "{}", None));
        assert_eq!((code, field.as_str()), ("missing_field", "now_ms"));
        let args = r#"{"now_ms": 0, "event": {"kind": "failure", "cause": "error"}}"#;
        assert_eq!(
            refused(invoke(Some(&mut budget), "record", args, None)).1,
            "event.cause"
        );
        assert_eq!(
            refused(invoke(Some(&mut budget), "state", "{}", None)).1,
            "method"
        );
    }

    #[cfg(feature = "guards")]
    #[test]
    fn a_breaker_reports_its_changes_and_restores_from_its_snapshot() {
        let doc = r#"{"document": "{\"volume_threshold\": 1, \"error_threshold_percentage\": 50}"}"#;
        let mut breaker = open("breaker", doc).unwrap();
        answer(
            Some(&mut breaker),
            "record",
            r#"{"now_ms": 0, "outcome": "failure"}"#,
        );
        let changes = answer(Some(&mut breaker), "last_changes", "{}");
        assert_eq!(changes[0]["to"], "open");
        assert_eq!(answer(Some(&mut breaker), "state", r#"{"now_ms": 1}"#), "open");
        let snapshot = answer(Some(&mut breaker), "snapshot", "{}").to_string();
        let args =
            serde_json::json!({"document": "{\"volume_threshold\": 1}", "state": snapshot}).to_string();
        let mut restored = open("breaker", &args).unwrap();
        assert_eq!(answer(Some(&mut restored), "state", r#"{"now_ms": 1}"#), "open");
    }

    #[cfg(feature = "grpc")]
    #[test]
    fn a_grpc_call_borrows_only_a_budget_as_its_bucket() {
        let args =
            r#"{"state": "{\"attempts\": 1}", "attempt": "{\"status\": \"UNAVAILABLE\"}", "random": 0.5}"#;
        let mut breaker = open("breaker", r#"{"document": "{}"}"#).unwrap();
        let wrong = invoke(None, "grpc_retry", args, Some(&mut breaker));
        assert_eq!(refused(wrong), ("invalid_type", "throttling".to_owned()));
        let policy = r#"{"maxAttempts": 3, "initialBackoff": "1s", "maxBackoff": "2s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}"#;
        let config = serde_json::json!({"document": serde_json::json!({"methodConfig": [{"name": [{"service": "s"}], "retryPolicy": serde_json::from_str::<serde_json::Value>(policy).unwrap()}]}).to_string()}).to_string();
        let mut config = open("grpc_service_config", &config).unwrap();
        let Reply::Object(mut found) =
            invoke(Some(&mut config), "policy_for", r#"{"service": "s"}"#, None).unwrap()
        else {
            panic!("no policy for s")
        };
        assert_eq!(found.kind(), "grpc_retry_policy");
        let d = answer(Some(&mut found), "grpc_retry", args);
        assert_eq!(d["action"], "retry");
        assert_eq!(answer(None, "grpc_retry", args)["action"], "fail");
        let none = answer(Some(&mut config), "policy_for", r#"{"service": "other"}"#);
        assert_eq!(none, serde_json::Value::Null);
        let hedge = invoke(None, "grpc_hedge", r#"{"event": "{\"event\": \"start\"}"}"#, None);
        assert_eq!(refused(hedge), ("invalid_type", "policy".to_owned()));
    }

    #[cfg(not(feature = "guards"))]
    #[test]
    fn a_kind_or_function_this_build_leaves_out_is_the_not_built_error() {
        let e = open("budget", "{}").err().unwrap();
        assert_eq!((e.code(), e.field()), ("unknown_name", "class"));
        assert!(e.to_string().contains("RetryBudget") && e.to_string().contains("guards"));
        let e = invoke(None, "grpc_retry", "{}", None).err().unwrap();
        assert!(e.to_string().contains("grpc_retry") && e.to_string().contains("grpc"));
    }
}
