//! The WebAssembly face of the core: conversion and error mapping only, every rule in `retrypolicy`.
//!
//! Everything goes through the core's JSON API ([`retrypolicy::api`]) so that the browser
//! explorer, the Node-compatible facade (`index.mjs`) and the fixtures share one shape.
//! Errors are JS `Error`s with `code` and `field`; a panic is recorded by a hook
//! ([`last_panic`]) and then traps, which callers see as a `WebAssembly.RuntimeError`.

use std::cell::RefCell;

use retrypolicy::Error;
use wasm_bindgen::prelude::*;

thread_local! {
    /// The last panic message (wasm is single-threaded here; this is the binding's only state).
    static LAST_PANIC: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Installs the panic hook that records the message for [`last_panic`]; runs when the module starts.
#[wasm_bindgen(start)]
pub fn start() {
    std::panic::set_hook(Box::new(|info| {
        let msg = info.to_string();
        LAST_PANIC.with(|p| *p.borrow_mut() = msg);
    }));
}

/// The message of the last panic inside the module, or "" if none happened.
#[wasm_bindgen(js_name = lastPanic)]
pub fn last_panic() -> String {
    LAST_PANIC.with(|p| p.borrow().clone())
}

/// The engine's version (the workspace version).
#[wasm_bindgen]
pub fn version() -> String {
    retrypolicy::VERSION.to_owned()
}

/// The core error as a JS `Error` carrying `code` and `field`.
fn js_error(e: &Error) -> JsValue {
    let err = js_sys::Error::new(&e.to_string());
    let obj: &JsValue = err.as_ref();
    let _ = js_sys::Reflect::set(obj, &"code".into(), &e.code().into());
    let _ = js_sys::Reflect::set(obj, &"field".into(), &e.field().into());
    err.into()
}

/// Calls the core's JSON API: `function` by its spec-fixture name, `input` as JSON text; returns JSON text.
#[wasm_bindgen]
pub fn call(function: &str, input: &str) -> Result<String, JsValue> {
    let value: serde_json::Value = retrypolicy::json::from_json_str(input).map_err(|e| js_error(&e))?;
    retrypolicy::api::call(function, &value)
        .map(|v| v.to_string())
        .map_err(|e| js_error(&e))
}

/// Every function name [`call`] accepts, comma-separated.
#[wasm_bindgen]
pub fn functions() -> String {
    retrypolicy::api::FUNCTIONS.join(",")
}

/// The reason table as JSON: `[{"name", "allows_non_idempotent_retry", "always_retry"}, ...]`.
#[wasm_bindgen(js_name = reasonTable)]
pub fn reason_table() -> String {
    let rows: Vec<serde_json::Value> = retrypolicy::reason::REASON_TABLE
        .iter()
        .map(|r| {
            serde_json::json!({
                "name": r.name,
                "allows_non_idempotent_retry": r.allows_non_idempotent_retry,
                "always_retry": r.always_retry,
            })
        })
        .collect();
    serde_json::Value::Array(rows).to_string()
}

/// The KV operation catalog as JSON: `[{"name", "idempotent"}, ...]`.
#[wasm_bindgen(js_name = kvOperations)]
pub fn kv_operations() -> String {
    let rows: Vec<serde_json::Value> = retrypolicy::operation::KV_CATALOG
        .iter()
        .map(|r| serde_json::json!({ "name": r.name, "idempotent": r.idempotent }))
        .collect();
    serde_json::Value::Array(rows).to_string()
}

/// The MongoDB operation table as JSON: `[{"name", "support"}, ...]`.
#[wasm_bindgen(js_name = mongoOperations)]
pub fn mongo_operations() -> String {
    let rows: Vec<serde_json::Value> = retrypolicy::mongodb::operations::OPERATIONS
        .iter()
        .map(|(op, support)| serde_json::json!({ "name": op.name(), "support": support }))
        .collect();
    serde_json::Value::Array(rows).to_string()
}

/// The core's stable error codes as JSON: `["unknown_reason", ...]` (what `isRetryPolicyError` checks).
#[wasm_bindgen(js_name = errorCodes)]
pub fn error_codes() -> String {
    serde_json::json!(retrypolicy::Error::ALL_CODES).to_string()
}

/// Panics on purpose, so tests can check that a panic surfaces as an `Error` with code `panic`.
#[wasm_bindgen(js_name = panicForTest)]
pub fn panic_for_test() {
    panic!("deliberate panic for the panic-path test");
}
