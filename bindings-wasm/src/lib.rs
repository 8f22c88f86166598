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

pub mod decide;
pub mod errors;
pub mod objects;
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

/// The core's tables as JSON: `{reasons: [{name, allows_non_idempotent_retry, always_retry}],
/// kv_operations: [{name, idempotent}], mongo_operations: [{name, support}] (empty without the
/// `mongodb` feature), error_codes: [...], features: [the features this module was built with],
/// unbuilt: [the JSON API's functions it was built without]}`.
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

/// Does nothing: the benchmark's baseline for one call across the boundary (feature `testing`).
#[cfg(feature = "testing")]
#[wasm_bindgen]
pub fn noop() {}
