//! Errors as JavaScript sees them: an `Error` named `RetryPolicyError` with the core's message,
//! its stable `code` and its `field`; a value thrown by JavaScript code passes through unchanged.

use js_sys::Reflect;
use retrypolicy::Error;
use wasm_bindgen::prelude::*;

/// A failed call's exception: the core's error as a `RetryPolicyError`, or what JavaScript threw.
pub struct Failure(JsValue);

/// A result whose error reaches JavaScript as an exception.
pub type Fallible<T> = Result<T, Failure>;

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure(error_object(e.code(), e.field(), &e.to_string()))
    }
}

impl From<JsValue> for Failure {
    fn from(thrown: JsValue) -> Self {
        Failure(thrown)
    }
}

impl From<Failure> for JsValue {
    fn from(f: Failure) -> JsValue {
        f.0
    }
}

fn error_object(code: &str, field: &str, message: &str) -> JsValue {
    let e = js_sys::Error::new(message);
    e.set_name("RetryPolicyError");
    let _ = Reflect::set(&e, &"code".into(), &code.into());
    let _ = Reflect::set(&e, &"field".into(), &field.into());
    e.into()
}

/// Installs a panic hook that throws an `Error` with code `internal` and the panic message (a bug
/// in retrypolicy), instead of the bare trap; runs when the module starts.
#[wasm_bindgen(start)]
pub fn start() {
    std::panic::set_hook(Box::new(|info| {
        wasm_bindgen::throw_val(error_object("internal", "", &format!("retrypolicy bug: {info}")))
    }));
}

/// Panics on purpose, so tests can check that a panic surfaces as an `Error` with code `internal` (feature `testing`).
#[cfg(feature = "testing")]
#[wasm_bindgen(js_name = panicForTest)]
pub fn panic_for_test() {
    panic!("deliberate panic for the panic-path test");
}
