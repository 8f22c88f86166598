//! The native addon behind the `retrypolicy` npm package: conversion and error mapping over the
//! pure core, nothing else. Every export is a raw N-API callback registered in
//! `#[napi(module_exports)]` (TOOLCHAIN.md: `#[napi]` adds ~100 ns per call); the hot calls take
//! their numbers through a per-environment scratch `Float64Array` (see `hot.rs`). The public,
//! idiomatic API is the JavaScript layer in `lib/retrypolicy.js`.

use std::ffi::c_void;
use std::ptr;

use napi::bindgen_prelude::{Env, Object};
use napi::sys::{self, napi_env, napi_value};
use napi::JsValue;
use napi_derive::napi;

mod api;
mod convert;
mod handle;
mod hot;
mod js;
mod tables;

use hot::{slot, EnvData};
use js::{check, register, JsResult};

unsafe extern "C" fn free_env_data(_env: napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` is the EnvData leaked in `install`, finalized once at environment teardown.
    drop(unsafe { Box::from_raw(data.cast::<EnvData>()) });
}

/// The scratch array as a `Float64Array` over the environment's `EnvData` (owned by Rust, so a
/// detached or transferred buffer can never leave Rust writing into freed memory).
fn scratch_array(env: napi_env, data: *mut EnvData) -> JsResult {
    let mut ab = ptr::null_mut();
    // SAFETY: `data` lives until the environment is torn down, after the last JS access.
    let scratch = unsafe { (*data).scratch.as_mut_ptr() };
    let bytes = slot::LEN * std::mem::size_of::<f64>();
    // SAFETY: the memory stays valid and is freed by `free_env_data`, not by the buffer.
    let s = unsafe {
        sys::napi_create_external_arraybuffer(env, scratch.cast(), bytes, None, ptr::null_mut(), &mut ab)
    };
    check(env, s, "napi_create_external_arraybuffer")?;
    let mut ta = ptr::null_mut();
    // SAFETY: `ab` holds exactly LEN f64 values.
    let s = unsafe {
        sys::napi_create_typedarray(env, sys::TypedarrayType::float64_array, slot::LEN, ab, 0, &mut ta)
    };
    check(env, s, "napi_create_typedarray")?;
    Ok(ta)
}

fn install(env: napi_env, exports: napi_value) -> JsResult<()> {
    let data = Box::into_raw(EnvData::new());
    // SAFETY: `data` is freed by `free_env_data` when the environment goes away.
    let s = unsafe { sys::napi_set_instance_data(env, data.cast(), Some(free_env_data), ptr::null_mut()) };
    if let Err(e) = check(env, s, "napi_set_instance_data") {
        // SAFETY: N-API did not take ownership.
        drop(unsafe { Box::from_raw(data) });
        return Err(e);
    }
    js::set_prop(env, exports, c"scratch", scratch_array(env, data)?)?;
    let d: *mut c_void = data.cast();
    type Cb = unsafe extern "C" fn(napi_env, sys::napi_callback_info) -> napi_value;
    let exported: [(&std::ffi::CStr, Cb); 28] = [
        (c"decide", hot::decide),
        (c"decideWithBuiltin", hot::decide_with_builtin),
        (c"decideBefore", hot::decide_before),
        (c"decideAfter", hot::decide_after),
        (c"bestEffort", hot::best_effort_delay),
        (c"noop", hot::noop),
        (c"classifyKv", hot::classify_kv_raw),
        (c"classifyQuery", hot::classify_query_raw),
        (c"classifyAnalytics", hot::classify_analytics_raw),
        (c"classifySearch", hot::classify_search_raw),
        (c"classifyViews", hot::classify_views_raw),
        (c"classifyDispatch", hot::classify_dispatch_raw),
        (c"decideMany", hot::decide_many),
        (c"tables", api::tables_export),
        (c"policyParse", api::policy_parse),
        (c"policyToJson", api::policy_to_json),
        (c"errorMapParse", api::error_map_parse),
        (c"isIdempotent", api::is_idempotent),
        (c"operationCode", api::operation_code),
        (c"parseReason", api::parse_reason),
        (c"requestFromJson", api::request_from_json),
        (c"requestToJson", api::request_to_json),
        (c"decideSlow", api::decide_slow),
        (c"bigDelay", api::big_delay),
        (c"classifySlow", api::classify_slow),
        (c"classificationAt", api::classification_at),
        (c"controlledBackoff", api::controlled_backoff),
        (c"backoffDelay", api::backoff_delay),
    ];
    for (name, cb) in exported {
        register(env, exports, name, cb, d)?;
    }
    register(env, exports, c"formatDecision", api::format_decision, d)?;
    register(env, exports, c"simulate", api::simulate, d)?;
    register(env, exports, c"explain", api::explain, d)?;
    register(env, exports, c"callJson", api::call_json, d)?;
    Ok(())
}

/// Registers every export on the module object, once per Node environment (main thread or worker).
#[napi(module_exports)]
pub fn init(exports: Object, env: Env) -> napi::Result<()> {
    let raw_env = env.raw();
    let raw_exports = exports.raw();
    install(raw_env, raw_exports).map_err(|fail| {
        js::throw(raw_env, fail);
        napi::Error::from_status(napi::Status::PendingException)
    })
}

/// A `#[napi]` no-op with `decide`'s native signature: the benchmark's measure of the per-call
/// overhead the raw route avoids.
#[napi(js_name = "napiNoop")]
pub fn napi_noop(_policy: napi::bindgen_prelude::Unknown<'_>) {}
