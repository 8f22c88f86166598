//! The WebAssembly face of the core: conversion and error mapping only, every rule in `retrypolicy`.
//!
//! Requests, decisions and a retry run's steps cross as plain JavaScript values
//! ([`decide`], [`run`]); everything else (classification too) goes through the wire crate's JSON API ([`call`]). Errors are
//! JavaScript `Error`s carrying the core's `code` and `field` ([`errors`]).

// The panic hook resets std's panic count and rewinds the shadow stack before it throws
// (errors.rs, `start`): an internal, perma-unstable std API and wasm inline assembly, reachable
// because the wasm build already needs RUSTC_BOOTSTRAP for -Zbuild-std. Only on wasm32, so the
// stable toolchain's clippy and tests never see them.
#![cfg_attr(
    target_arch = "wasm32",
    feature(rt, update_panic_count, asm_experimental_arch)
)]

#[cfg(feature = "aws")]
pub mod aws;
#[cfg(feature = "guards")]
pub mod budget;
pub mod decide;
pub mod errors;
#[cfg(feature = "grpc")]
pub mod grpc;
pub mod policy;
pub mod read;
pub mod request;
pub mod run;

use serde::Serialize;
use serde_json::json;
use wasm_bindgen::prelude::*;

use errors::Fallible;

/// The engine's version (the workspace version).
#[wasm_bindgen]
pub fn version() -> String {
    retrypolicy::VERSION.to_owned()
}

/// Calls the wire crate's JSON API: `function` by its spec-fixture name, `input` as JSON text; returns JSON text.
#[wasm_bindgen]
pub fn call(function: &str, input: &str) -> Fallible<String> {
    let input: serde_json::Value = retrypolicy_wire::from_json_str(input)?;
    Ok(retrypolicy_wire::api::call(function, &input)?.to_string())
}

/// A member's uses by the facade's backend: (`new`, a static method's name or `call`; `class` or
/// `function`; the name the facade shows).
type Uses = &'static [(&'static str, &'static str, &'static str)];

/// The members of this module each feature brings: its name, the feature, and how the facade's
/// backend uses it (`new`, the constructor; a static method's name; or `call`, a function) with
/// the class or function the facade shows for that use.
#[rustfmt::skip]
const FEATURE_MEMBERS: &[(&str, &str, Uses)] = &[
    ("BudgetHandle", "guards", &[("new", "class", "RetryBudget")]),
    ("BreakerHandle", "guards", &[("new", "class", "CircuitBreaker")]),
    ("ErrorMap", "couchbase", &[("parse", "class", "ErrorMap")]),
    ("GrpcServiceConfigHandle", "grpc", &[("new", "class", "ServiceConfig")]),
    ("GrpcRetryPolicyHandle", "grpc", &[("new", "class", "RetryPolicy"), ("none", "function", "grpc_retry")]),
    ("GrpcHedgingPolicyHandle", "grpc", &[("new", "class", "HedgingPolicy"), ("none", "function", "grpc_hedge")]),
    ("grpcRetry", "grpc", &[("call", "function", "grpc_retry")]),
    ("grpcRetryThrottled", "grpc", &[("call", "function", "grpc_retry")]),
    ("grpcHedge", "grpc", &[("call", "function", "grpc_hedge")]),
    ("grpcHedgeThrottled", "grpc", &[("call", "function", "grpc_hedge")]),
    ("AwsRetryConfigHandle", "aws", &[("new", "class", "AwsRetryConfig"), ("standard", "function", "aws_decide")]),
    ("awsDecide", "aws", &[("call", "function", "aws_decide")]),
    ("RateLimiterHandle", "aws", &[("new", "class", "AdaptiveRateLimiter")]),
];

/// The members of features this module was built without: for each, each use's error (the core's
/// not-built error naming the class or function and the feature, `{code, field, message}`), which
/// the facade's backend throws from a stand-in of that name.
fn unbuilt_members() -> serde_json::Map<String, serde_json::Value> {
    let built = |name: &str| retrypolicy::FEATURES.iter().any(|f| f.name == name && f.built);
    let error = |kind: &str, name: &str, feature: &str| {
        let e = retrypolicy::features::not_built(kind, name, feature);
        json!({"code": e.code(), "field": e.field(), "message": e.to_string()})
    };
    FEATURE_MEMBERS
        .iter()
        .filter(|(_, feature, _)| !built(feature))
        .map(|(member, feature, uses)| {
            let uses = uses
                .iter()
                .map(|(u, kind, name)| (u.to_string(), error(kind, name, feature)));
            (member.to_string(), serde_json::Value::Object(uses.collect()))
        })
        .collect()
}

/// The core's tables as JSON: `{reasons: [{name, allows_non_idempotent_retry, always_retry}],
/// kv_operations: [{name, idempotent}], mongo_operations: [{name, support}] (empty without the
/// `mongodb` feature), error_codes: [...], features: [the features this module was built with],
/// unbuilt: [the JSON API's functions it was built without], unbuilt_members: {the module's
/// members it was built without: {use: error}}}`.
#[wasm_bindgen]
pub fn tables() -> String {
    let reasons = retrypolicy::reason::REASON_TABLE.iter().map(|r| {
        json!({"name": r.name, "allows_non_idempotent_retry": r.allows_non_idempotent_retry,
               "always_retry": r.always_retry})
    });
    let kv = retrypolicy::operation::KV_CATALOG.iter();
    #[cfg(feature = "mongodb")]
    let mongo: Vec<_> = retrypolicy::mongodb::operations::OPERATIONS
        .iter()
        .map(|(op, s)| json!({"name": op.name(), "support": s}))
        .collect();
    #[cfg(not(feature = "mongodb"))]
    let mongo: Vec<serde_json::Value> = Vec::new();
    let features = retrypolicy::FEATURES.iter().filter(|f| f.built).map(|f| f.name);
    let unbuilt = retrypolicy_wire::api::FUNCTIONS
        .iter()
        .filter(|f| retrypolicy_wire::api::unbuilt_feature(f).is_some());
    json!({
        "reasons": reasons.collect::<Vec<_>>(),
        "kv_operations": kv.map(|r| json!({"name": r.name, "idempotent": r.idempotent})).collect::<Vec<_>>(),
        "mongo_operations": mongo,
        "error_codes": retrypolicy::Error::ALL_CODES,
        "features": features.collect::<Vec<_>>(),
        "unbuilt": unbuilt.collect::<Vec<_>>(),
        "unbuilt_members": unbuilt_members(),
    })
    .to_string()
}

/// A core value as a plain JavaScript value, as its JSON form reads (snake_case keys, null for
/// none, milliseconds past 2^53 − 1 as decimal strings).
pub(crate) fn to_js<T: Serialize>(value: &T) -> JsValue {
    let plain = serde_wasm_bindgen::Serializer::json_compatible();
    value
        .serialize(&plain)
        .expect("core values convert to JavaScript")
}

/// A core value as JSON text, its keys in the order the core declares them (as the Node addon
/// writes them; through a `serde_json::Value` they would come sorted).
#[cfg(any(feature = "grpc", feature = "aws"))]
pub(crate) fn json_text<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// Does nothing: the benchmark's baseline for one call across the boundary (feature `testing`).
#[cfg(feature = "testing")]
#[wasm_bindgen]
pub fn noop() {}
