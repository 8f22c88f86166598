//! Requests, operations and reasons on their own: idempotency, the wire form, canonical names.

use retrypolicy::Request;
use wasm_bindgen::prelude::*;

use crate::errors::Fallible;
use crate::{read, to_js};

/// Whether RFC 0049's idempotent-operation list calls `{service, operation?, readonly?, method?}` idempotent.
#[wasm_bindgen(js_name = isIdempotent)]
pub fn is_idempotent(operation: &JsValue) -> Fallible<bool> {
    Ok(read::operation(operation, "operation")?.is_idempotent())
}

/// The canonical name of a retry reason (aliases accepted).
#[wasm_bindgen(js_name = parseReason)]
pub fn parse_reason(reason: &JsValue) -> Fallible<String> {
    Ok(read::reason(reason, "reason")?.name().to_owned())
}

/// A request (camelCase object) in the wire form, as JSON text.
#[wasm_bindgen(js_name = requestToJson)]
pub fn request_to_json(request: &JsValue) -> Fallible<String> {
    let r = read::request(request)?;
    r.validate()?;
    Ok(serde_json::to_string(&r).expect("a request serializes"))
}

/// A request from its wire form (JSON text), validated, as a plain object of the wire form.
#[wasm_bindgen(js_name = requestFromJson)]
pub fn request_from_json(json: &str) -> Fallible<JsValue> {
    let r: Request = retrypolicy_wire::from_json_str(json)?;
    r.validate()?;
    Ok(to_js(&r))
}
