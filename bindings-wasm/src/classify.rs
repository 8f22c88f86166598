//! Classification: what happened (a KV status, a query or analytics code, an HTTP status, a
//! dispatch failure) into the reason to pass to `decide`, as `{reason, rule, section, surface_as}`.

use retrypolicy::{serde_form::status, KvOperation};
use wasm_bindgen::prelude::*;

use crate::errors::Fallible;
use crate::policy::{ErrorMap, Policy};
use crate::read::{count, invalid_type, name, optional, text};
use crate::to_js;

/// Classifies with the classifier named `kind`: `kv` (a KV operation name, then a status as a
/// number or a `"0x.."` string), `query` (an error code, then a message), `analytics` (an error
/// code), `search` (an HTTP status), `views` (an HTTP status, then the body text) or `dispatch`
/// (the name of a failure the SDK observed itself). The policy's `compat` options apply.
#[wasm_bindgen]
pub fn classify(kind: &str, a: &JsValue, b: &JsValue, policy: &Policy) -> Fallible<JsValue> {
    classify_with(kind, a, b, None, policy)
}

#[wasm_bindgen]
impl ErrorMap {
    /// `classify("kv", operation, status, policy)` with this error map consulted for unknown statuses.
    #[wasm_bindgen(js_name = classifyKv)]
    pub fn classify_kv(&self, operation: &JsValue, status: &JsValue, policy: &Policy) -> Fallible<JsValue> {
        classify_with("kv", operation, status, Some(self), policy)
    }
}

fn classify_with(
    kind: &str,
    a: &JsValue,
    b: &JsValue,
    map: Option<&ErrorMap>,
    policy: &Policy,
) -> Fallible<JsValue> {
    let compat = &policy.0.compat;
    let code = || count(a, "code", u32::MAX);
    let http_status = || count(a, "httpStatus", u16::MAX.into()).map(|s| s as u16);
    let text_or_empty = |field| optional(b, field, text).map(Option::unwrap_or_default);
    let c = match kind {
        "kv" => {
            let operation = KvOperation::parse("operation", &text(a, "operation")?)?;
            let status = match b.as_string() {
                Some(hex) => status::parse_text("status", &hex)?,
                None => count(b, "status", u16::MAX.into())? as u16,
            };
            retrypolicy::classify_kv(operation, status, map.map(|m| &m.0), compat)
        }
        "query" => retrypolicy::classify_query(code()?, &text_or_empty("message")?, compat),
        "analytics" => retrypolicy::classify_analytics(code()?),
        "search" => retrypolicy::classify_search(http_status()?),
        "views" => retrypolicy::classify_views(http_status()?, &text_or_empty("body")?),
        "dispatch" => retrypolicy::classify_dispatch(name(a, "failure")?),
        other => return Err(invalid_type("kind", "a classifier's name", &other.into()).into()),
    };
    Ok(to_js(&c))
}
