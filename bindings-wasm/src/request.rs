//! Requests as JavaScript passes them (camelCase properties, read one by one) into the core's
//! `Request`, and the request's wire form (JSON) both ways.

use retrypolicy::operation::OperationWire;
use retrypolicy::Request;
use wasm_bindgen::prelude::*;

use crate::errors::Fallible;
use crate::read::{count, flag, invalid_type, millis, name, number, optional, reasons};
use crate::to_js;

// Typed getters rather than `Reflect::get(object, &key)`: the glue names the property in JS, so no
// key string crosses per read; with `Reflect::get` a decide took 5.8 µs instead of 2.7 µs.
#[wasm_bindgen]
extern "C" {
    /// A request as JavaScript passes it, read through its properties.
    pub type Fields;
    #[wasm_bindgen(method, getter, catch)]
    fn service(this: &Fields) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, catch)]
    fn operation(this: &Fields) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, catch)]
    fn readonly(this: &Fields) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, catch)]
    fn method(this: &Fields) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter = timeoutMs, catch)]
    fn timeout_ms(this: &Fields) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter = elapsedMs, catch)]
    fn elapsed_ms(this: &Fields) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, catch)]
    fn attempts(this: &Fields) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, catch)]
    fn idempotent(this: &Fields) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, catch)]
    fn strategy(this: &Fields) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, catch)]
    fn random(this: &Fields) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter = previousDelayMs, catch)]
    fn previous_delay_ms(this: &Fields) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter = previousReasons, catch)]
    fn previous_reasons(this: &Fields) -> Result<JsValue, JsValue>;
}

/// A request: `{service, operation?, readonly?, method?, timeoutMs, elapsedMs?, attempts?,
/// idempotent?, strategy?, random?, previousDelayMs?, previousReasons?}`; `elapsedMs` and
/// `attempts` default to 0.
pub fn read(v: &JsValue) -> Fallible<Request> {
    if !v.is_object() {
        return Err(invalid_type("request", "an object", v).into());
    }
    let r: &Fields = v.unchecked_ref();
    let operation = OperationWire {
        service: optional(&r.service()?, "service", name)?,
        operation: optional(&r.operation()?, "operation", name)?,
        readonly: optional(&r.readonly()?, "readonly", flag)?,
        method: optional(&r.method()?, "method", name)?,
    }
    .into_operation("")?;
    // Undefined is the default (0), as the Node build reads them; null is an error.
    let elapsed = r.elapsed_ms()?;
    let elapsed = if elapsed.is_undefined() {
        0
    } else {
        millis(&elapsed, "elapsedMs")?
    };
    let mut request = Request::new(operation, elapsed, millis(&r.timeout_ms()?, "timeoutMs")?);
    let attempts = r.attempts()?;
    if !attempts.is_undefined() {
        request.attempts = count(&attempts, "attempts", u32::MAX)?;
    }
    request.idempotent = optional(&r.idempotent()?, "idempotent", flag)?;
    request.strategy = optional(&r.strategy()?, "strategy", name)?;
    request.random = optional(&r.random()?, "random", number)?;
    request.previous_delay_ms = optional(&r.previous_delay_ms()?, "previousDelayMs", millis)?;
    request.previous_reasons =
        optional(&r.previous_reasons()?, "previousReasons", reasons)?.unwrap_or_default();
    Ok(request)
}

/// A request (camelCase object) in the wire form, as JSON text.
#[wasm_bindgen(js_name = requestToJson)]
pub fn request_to_json(request: &JsValue) -> Fallible<String> {
    let r = read(request)?;
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
