//! Errors as JavaScript sees them: an `Error` named `RetryPolicyError` with the core's message,
//! its stable `code` and its `field`; a value thrown by JavaScript code passes through unchanged.

use js_sys::Reflect;
use retrypolicy::Error;
use wasm_bindgen::prelude::*;

/// Why a call failed: the core rejected an input, or JavaScript code (a strategy, a getter) threw.
pub enum Failure {
    /// A core error, still typed so that a caller can re-target its field.
    Core(Error),
    /// A value JavaScript threw, handed back as it is.
    Thrown(JsValue),
}

/// A result whose error reaches JavaScript as an exception.
pub type Fallible<T> = Result<T, Failure>;

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Core(e)
    }
}

impl From<JsValue> for Failure {
    fn from(v: JsValue) -> Self {
        Failure::Thrown(v)
    }
}

impl From<Failure> for JsValue {
    fn from(f: Failure) -> JsValue {
        match f {
            Failure::Core(e) => error_object(e.code(), e.field(), &e.to_string()),
            Failure::Thrown(v) => v,
        }
    }
}

fn error_object(code: &str, field: &str, message: &str) -> JsValue {
    let e = js_sys::Error::new(message);
    e.set_name("RetryPolicyError");
    let _ = Reflect::set(&e, &"code".into(), &code.into());
    let _ = Reflect::set(&e, &"field".into(), &field.into());
    e.into()
}

/// The core's `invalid_type` error for `value` at `field`, which should have been `expected`.
#[wasm_bindgen(js_name = invalidType)]
pub fn invalid_type(field: &str, expected: &str, value: &JsValue) -> JsValue {
    Failure::Core(crate::read::invalid_type(field, expected, value)).into()
}

/// Installs a panic hook that throws an `Error` with code `internal` and the panic message (a bug
/// in retrypolicy), instead of the bare trap; runs when the module starts.
#[wasm_bindgen(start)]
pub fn start() {
    std::panic::set_hook(Box::new(|info| {
        wasm_bindgen::throw_val(error_object("internal", "", &format!("retrypolicy bug: {info}")))
    }));
}

/// Panics on purpose, so tests can check that a panic surfaces as an `Error` with code `internal`.
#[wasm_bindgen(js_name = panicForTest)]
pub fn panic_for_test() {
    panic!("deliberate panic for the panic-path test");
}
