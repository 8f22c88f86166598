//! Parsed policies and error maps live in Rust; JavaScript holds them as tagged externals.

use std::ffi::c_void;
use std::ptr;

use napi::sys::{self, napi_env, napi_value};
use retrypolicy::{DecisionTable, Error as CoreError, ErrorMap, Policy};

use crate::js::{self, check, JsResult};

/// What an external created by this addon points at.
// Every handle is boxed whole (`wrap`), so the size of the largest variant costs nothing.
#[allow(clippy::large_enum_variant)]
pub enum Handle {
    /// A validated policy, with its decisions precomputed.
    Policy(DecisionTable),
    /// A parsed KV error map.
    ErrorMap(ErrorMap),
}

unsafe extern "C" fn finalize(_env: napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` came from Box::into_raw in `wrap` and is finalized exactly once.
    drop(unsafe { Box::from_raw(data.cast::<Handle>()) });
}

/// Wraps a handle in a JS external that frees it when collected.
pub fn wrap(env: napi_env, h: Handle) -> JsResult {
    let raw = Box::into_raw(Box::new(h));
    let mut out = ptr::null_mut();
    // SAFETY: `raw` stays valid until `finalize` runs.
    let s = unsafe { sys::napi_create_external(env, raw.cast(), Some(finalize), ptr::null_mut(), &mut out) };
    if let Err(e) = check(env, s, "napi_create_external") {
        // SAFETY: N-API did not take ownership.
        drop(unsafe { Box::from_raw(raw) });
        return Err(e);
    }
    Ok(out)
}

/// The handle behind a JS value, if it is one of this addon's externals.
fn unwrap<'a>(env: napi_env, v: napi_value) -> JsResult<Option<&'a Handle>> {
    if js::type_of(env, v)? != sys::ValueType::napi_external {
        return Ok(None);
    }
    let mut data = ptr::null_mut();
    // SAFETY: `v` is an external; every external this addon hands out points at a Handle, and
    // JavaScript cannot create externals of its own.
    check(
        env,
        unsafe { sys::napi_get_value_external(env, v, &mut data) },
        "napi_get_value_external",
    )?;
    // SAFETY: see above; the external keeps the Handle alive while `v` is reachable.
    Ok(unsafe { data.cast::<Handle>().as_ref() })
}

/// The default policy, shared by every call that passes none.
pub static DEFAULT_POLICY: Policy = Policy::RFC;

/// The policy behind `v`, or the RFC default for `undefined`/`null`.
pub fn policy<'a>(env: napi_env, v: napi_value) -> JsResult<&'a Policy> {
    Ok(table(env, v)?.map_or(&DEFAULT_POLICY, DecisionTable::policy))
}

/// The decision table of the policy behind `v`, or `None` for `undefined`/`null` (the RFC default).
pub fn table<'a>(env: napi_env, v: napi_value) -> JsResult<Option<&'a DecisionTable>> {
    if js::is_nullish(env, v)? {
        return Ok(None);
    }
    match unwrap(env, v)? {
        Some(Handle::Policy(t)) => Ok(Some(t)),
        _ => Err(invalid("policy", "expected a Policy (new Policy(document))").into()),
    }
}

/// The error map behind `v`, or none for `undefined`/`null`.
pub fn error_map<'a>(env: napi_env, v: napi_value) -> JsResult<Option<&'a ErrorMap>> {
    if js::is_nullish(env, v)? {
        return Ok(None);
    }
    match unwrap(env, v)? {
        Some(Handle::ErrorMap(m)) => Ok(Some(m)),
        _ => Err(invalid("errorMap", "expected an ErrorMap (new ErrorMap(document))").into()),
    }
}

fn invalid(field: &str, message: &str) -> CoreError {
    CoreError::InvalidType {
        field: field.to_owned(),
        message: message.to_owned(),
    }
}
