//! The native addon behind the `retrypolicy` npm package: conversion and error mapping over the
//! core, nothing else. Each export converts its arguments into the core's types, calls the core,
//! and throws core errors as `Error`s with `code` and `field`. The public API is the JavaScript
//! layer in `lib/`; this addon's exports (typed in the generated `index.d.ts`) are private to it.

// napi-derive registers the exports only outside `cargo test`, where they would all look unused.
#![cfg_attr(test, allow(dead_code))]

mod callback;
mod classify;
mod convert;
mod decide;
mod decision;
mod errors;
mod policy;
mod raw;
mod request;
mod strategy;
mod wire;

use napi::bindgen_prelude::Unknown;
use napi_derive::napi;

use crate::policy::PolicyHandle;

/// Bench only (bench/decide.mjs), not part of the package's API: a `#[napi]` no-op with
/// `decide`'s signature, the per-call floor of napi-rs that `decide` is measured against.
#[napi(js_name = "benchNoop")]
#[allow(clippy::too_many_arguments)]
pub fn bench_noop(
    _service: Unknown,
    _operation: Unknown,
    _readonly: Unknown,
    _method: Unknown,
    _timeout_ms: Unknown,
    _elapsed_ms: Unknown,
    _attempts: Unknown,
    _idempotent: Unknown,
    _strategy: Unknown,
    _random: Unknown,
    _previous_delay_ms: Unknown,
    _previous_reasons: Unknown,
    _reason: Unknown,
    _policy: Option<&PolicyHandle>,
    _make: Unknown,
) {
}

/// Bench only, not part of the package's API: a `#[napi]` no-op without arguments.
#[napi(js_name = "benchNoopEmpty")]
pub fn bench_noop_empty() {}
