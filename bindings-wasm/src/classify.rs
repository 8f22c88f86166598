//! Classification: what happened (a KV status, a query or analytics code, an HTTP status, a
//! dispatch failure) into the reason to pass to `decide`, as `{reason, rule, section, surface_as}`.

use retrypolicy::{serde_form::status, Error, KvOperation};
use wasm_bindgen::prelude::*;

use crate::errors::Fallible;
use crate::policy::{ErrorMap, Policy};
use crate::read::{count, flag, name, optional, text};
use crate::to_js;

/// An HTTP status (or a KV status given as a number): a whole number up to 65535.
fn status_code(v: &JsValue, field: &str) -> Result<u16, Error> {
    count(v, field, u16::MAX.into()).map(|n| n as u16)
}

fn kv(operation: &JsValue, status: &JsValue, map: Option<&ErrorMap>, policy: &Policy) -> Fallible<JsValue> {
    let operation = KvOperation::parse("operation", &text(operation, "operation")?)?;
    let status = match status.as_string() {
        Some(hex) => status::parse_text("status", &hex)?,
        None => status_code(status, "status")?,
    };
    let map = map.map(|m| &m.0);
    Ok(to_js(&retrypolicy::classify_kv(
        operation,
        status,
        map,
        &policy.0.compat,
    )))
}

/// Classifies a KV status (a number, or a `"0x.."` string) for a KV operation, without an error
/// map; the policy's `compat` options apply.
#[wasm_bindgen(js_name = classifyKv)]
pub fn classify_kv(operation: &JsValue, status: &JsValue, policy: &Policy) -> Fallible<JsValue> {
    kv(operation, status, None, policy)
}

#[wasm_bindgen]
impl ErrorMap {
    /// `classifyKv` with this error map consulted for unknown statuses.
    #[wasm_bindgen(js_name = classifyKv)]
    pub fn classify_kv(&self, operation: &JsValue, status: &JsValue, policy: &Policy) -> Fallible<JsValue> {
        kv(operation, status, Some(self), policy)
    }
}

/// Classifies the first error of a query response: its code, message (may be absent) and
/// `"retry"` flag (absent is false); the policy's `compat` options apply.
#[wasm_bindgen(js_name = classifyQuery)]
pub fn classify_query(
    code: &JsValue,
    message: &JsValue,
    retry: &JsValue,
    policy: &Policy,
) -> Fallible<JsValue> {
    let code = count(code, "code", u32::MAX)?;
    let message = optional(message, "message", text)?.unwrap_or_default();
    let retry = optional(retry, "retry", flag)?.unwrap_or(false);
    Ok(to_js(&retrypolicy::classify_query(
        code,
        &message,
        retry,
        &policy.0.compat,
    )))
}

/// Classifies the first error of an analytics response.
#[wasm_bindgen(js_name = classifyAnalytics)]
pub fn classify_analytics(code: &JsValue) -> Fallible<JsValue> {
    let code = count(code, "code", u32::MAX)?;
    Ok(to_js(&retrypolicy::classify_analytics(code)))
}

/// Classifies a search response's HTTP status.
#[wasm_bindgen(js_name = classifySearch)]
pub fn classify_search(http_status: &JsValue) -> Fallible<JsValue> {
    let status = status_code(http_status, "httpStatus")?;
    Ok(to_js(&retrypolicy::classify_search(status)))
}

/// Classifies a views response from its HTTP status and body text (`body` may be absent).
#[wasm_bindgen(js_name = classifyViews)]
pub fn classify_views(http_status: &JsValue, body: &JsValue) -> Fallible<JsValue> {
    let status = status_code(http_status, "httpStatus")?;
    let body = optional(body, "body", text)?.unwrap_or_default();
    Ok(to_js(&retrypolicy::classify_views(status, &body)))
}

/// Names the reason for a failure the SDK observed itself (`"socket_closed_while_in_flight"`, ...).
#[wasm_bindgen(js_name = classifyDispatch)]
pub fn classify_dispatch(failure: &JsValue) -> Fallible<JsValue> {
    let failure = name(failure, "failure")?;
    Ok(to_js(&retrypolicy::classify_dispatch(failure)))
}
