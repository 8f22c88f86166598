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
///
/// Every panic of an instance is reported so, and the instance stays usable (README.md, "A Rust
/// panic"). With `panic = "abort"` nothing unwinds: the throw abandons the Rust frames, so before
/// throwing the hook undoes what they leave behind. It lowers std's panic count, as
/// `catch_unwind` does when it catches a panic (else std believes the hook still runs, and the
/// next panic aborts at once: `RuntimeError: unreachable`). And when the panicking call is the
/// only call into the module on the JavaScript stack, it rewinds the shadow stack pointer to the
/// stack's top (else each panic keeps its frames, about 160 bytes, and after some 6,500 panics
/// every call traps: `memory access out of bounds`).
#[wasm_bindgen(start)]
pub fn start() {
    std::panic::set_hook(Box::new(|info| {
        let error = error_object("internal", "", &format!("retrypolicy bug: {info}"));
        #[cfg(target_arch = "wasm32")]
        {
            std::rt::panic_count::decrease();
            if only_call_into_module() {
                // SAFETY: no frame below the stack's top is live (no other call into the module
                // is on the JavaScript stack); nothing but the throw runs after this.
                unsafe { rewind_shadow_stack() }
            }
        }
        wasm_bindgen::throw_val(error)
    }));
}

/// Whether the running call is the only call into this module on the JavaScript stack (no
/// JavaScript the module called has called back into it), read from a stack trace: its wasm
/// frames form one run. False whenever that cannot be known (an engine without
/// `Error.stackTraceLimit`, so the trace may be cut; an `Error.prepareStackTrace` that cannot be
/// set aside; a trace without wasm frames).
#[cfg(target_arch = "wasm32")]
fn only_call_into_module() -> bool {
    let Ok(error_class) = Reflect::get(&js_sys::global(), &"Error".into()) else {
        return false;
    };
    let limit_key = JsValue::from("stackTraceLimit");
    let Ok(limit) = Reflect::get(&error_class, &limit_key) else {
        return false;
    };
    if limit.as_f64().is_none() || Reflect::set(&error_class, &limit_key, &f64::INFINITY.into()) != Ok(true) {
        return false;
    }
    // V8's default format, whatever a library (source maps) put in `Error.prepareStackTrace`.
    let format_key = JsValue::from("prepareStackTrace");
    let format = Reflect::get(&error_class, &format_key).unwrap_or(JsValue::UNDEFINED);
    let own_format = format.is_undefined()
        || Reflect::delete_property(error_class.unchecked_ref::<js_sys::Object>(), &format_key) == Ok(true);
    let stack = Reflect::get(&js_sys::Error::new(""), &"stack".into());
    let _ = Reflect::set(&error_class, &limit_key, &limit);
    if !format.is_undefined() {
        let _ = Reflect::set(&error_class, &format_key, &format);
    }
    if !own_format {
        return false;
    }
    let Some(stack) = stack.ok().and_then(|s| s.as_string()) else {
        return false;
    };
    // V8, SpiderMonkey and JavaScriptCore all name a wasm frame `wasm-function[i]`.
    let mut runs = 0;
    let mut in_wasm = false;
    for line in stack.lines() {
        let wasm = line.contains("wasm-function[");
        if wasm && !in_wasm {
            runs += 1;
        }
        in_wasm = wasm;
    }
    runs == 1
}

/// Sets the shadow stack pointer (the `__stack_pointer` global) to the stack's top, where it
/// stands when no call into the module is running.
///
/// # Safety
/// No call into the module may be live below the current one, and no Rust code may run after it
/// but the throw that abandons the current frames.
#[cfg(target_arch = "wasm32")]
unsafe fn rewind_shadow_stack() {
    unsafe extern "C" {
        /// The stack's top, set by wasm-ld: the shadow stack pointer's starting value.
        static __stack_high: u8;
    }
    let top = core::ptr::addr_of!(__stack_high) as i32;
    // SAFETY: as the caller promises.
    unsafe {
        core::arch::asm!(
            ".globaltype __stack_pointer, i32",
            "local.get {}",
            "global.set __stack_pointer",
            in(local) top,
        )
    }
}

/// Panics on purpose, so tests can check that a panic surfaces as an `Error` with code `internal` (feature `testing`).
#[cfg(feature = "testing")]
#[wasm_bindgen(js_name = panicForTest)]
pub fn panic_for_test() {
    panic!("deliberate panic for the panic-path test");
}
