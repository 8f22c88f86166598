//! Calling JavaScript from Rust. What the callee throws stays pending, untouched, so it reaches
//! the caller as thrown (napi-rs's `Function::call` would turn a thrown non-`Error` into an `Error`).

use std::ptr;

use napi::bindgen_prelude::{JsValue, ToNapiValue, Unknown};
use napi::{check_status, sys, Error, Status};

use crate::errors::Res;

/// A value's handle, converted for passing as an argument.
pub fn arg<T: ToNapiValue>(f: &Unknown, value: T) -> Res<sys::napi_value> {
    // SAFETY: `f`'s env is the live environment of the current call.
    Ok(unsafe { T::to_napi_value(f.value().env, value) }?)
}

/// A name from the core's tables (ASCII) as a string argument: read as Latin-1, which spares
/// V8 the UTF-8 decoding (about 25 ns a decision, for its three names, in bench/decide.mjs).
pub fn name_arg(f: &Unknown, name: &str) -> Res<sys::napi_value> {
    debug_assert!(name.is_ascii());
    let mut out = ptr::null_mut();
    let (env, text) = (f.value().env, name.as_ptr().cast());
    // SAFETY: `text` points at `name.len()` bytes.
    check_status!(unsafe { sys::napi_create_string_latin1(env, text, name.len() as isize, &mut out) })?;
    Ok(out)
}

/// Calls the function `f` with `args` and `this` undefined.
pub fn call<'a>(f: &Unknown<'a>, args: &[sys::napi_value]) -> Res<Unknown<'a>> {
    let raw = f.value();
    let mut this = ptr::null_mut();
    let mut out = ptr::null_mut();
    // SAFETY: `raw` is a live handle of the current call; `args` holds `args.len()` handles.
    unsafe {
        check_status!(sys::napi_get_undefined(raw.env, &mut this))?;
        match sys::napi_call_function(raw.env, this, raw.value, args.len(), args.as_ptr(), &mut out) {
            sys::Status::napi_ok => Ok(Unknown::from_raw_unchecked(raw.env, out)),
            sys::Status::napi_pending_exception => Err(Error::from_status(Status::PendingException).into()),
            status => Err(Error::new(Status::from(status), "calling a JavaScript function failed").into()),
        }
    }
}
