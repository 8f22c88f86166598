//! Classification: what happened (a KV status, a query or analytics code, an HTTP status, a
//! dispatch failure) into the reason to pass to `decide`, as `{reason, rule, section, surface_as}`.

use retrypolicy::{Classification, Compat, KvOperation};
use wasm_bindgen::prelude::*;

use crate::errors::Fallible;
use crate::policy::{ErrorMap, Policy};
use crate::{read, to_js};

fn compat(policy: &Policy) -> Compat {
    policy.0.compat
}

fn result(c: Classification) -> Fallible<JsValue> {
    Ok(to_js(&c))
}

fn kv(operation: &JsValue, status: &JsValue, map: Option<&ErrorMap>, policy: &Policy) -> Fallible<JsValue> {
    let operation = KvOperation::parse("operation", &read::text(operation, "operation")?)?;
    let status = match status.as_string() {
        Some(text) => retrypolicy::serde_form::status::parse_text("status", &text)?,
        None => read::count(status, "status", u16::MAX.into())? as u16,
    };
    result(retrypolicy::classify_kv(
        operation,
        status,
        map.map(|m| &m.0),
        &compat(policy),
    ))
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

/// Classifies the first error of a query response (`message` may be absent).
#[wasm_bindgen(js_name = classifyQuery)]
pub fn classify_query(code: &JsValue, message: &JsValue, policy: &Policy) -> Fallible<JsValue> {
    let code = read::count(code, "code", u32::MAX)?;
    let message = read::optional(message, |v| read::text(v, "message"))?.unwrap_or_default();
    result(retrypolicy::classify_query(code, &message, &compat(policy)))
}

/// Classifies the first error of an analytics response.
#[wasm_bindgen(js_name = classifyAnalytics)]
pub fn classify_analytics(code: &JsValue) -> Fallible<JsValue> {
    result(retrypolicy::classify_analytics(read::count(
        code,
        "code",
        u32::MAX,
    )?))
}

/// Classifies a search response's HTTP status.
#[wasm_bindgen(js_name = classifySearch)]
pub fn classify_search(http_status: &JsValue) -> Fallible<JsValue> {
    let status = read::count(http_status, "httpStatus", u16::MAX.into())? as u16;
    result(retrypolicy::classify_search(status))
}

/// Classifies a views response from its HTTP status and body text (`body` may be absent).
#[wasm_bindgen(js_name = classifyViews)]
pub fn classify_views(http_status: &JsValue, body: &JsValue) -> Fallible<JsValue> {
    let status = read::count(http_status, "httpStatus", u16::MAX.into())? as u16;
    let body = read::optional(body, |v| read::text(v, "body"))?.unwrap_or_default();
    result(retrypolicy::classify_views(status, &body))
}

/// Names the reason for a failure the SDK observed itself (`"socket_closed_while_in_flight"`, ...).
#[wasm_bindgen(js_name = classifyDispatch)]
pub fn classify_dispatch(failure: &JsValue) -> Fallible<JsValue> {
    result(retrypolicy::classify_dispatch(read::name(failure, "failure")?))
}
