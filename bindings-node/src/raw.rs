//! `decide`, the hot call, as the one raw N-API callback. Through `#[napi]` the public `decide`
//! measured 556 ns, over the 500 ns budget; napi-rs's per-call bookkeeping for a call with
//! arguments (a borrow scope: an allocation, thread-local pushes) is what this skips, about
//! 110 ns a call here (bench/decide.mjs; README, Speed). The body is the same conversion and
//! core call as every other export (`decide::decide`), inside the same panic boundary.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use napi::bindgen_prelude::{validate_type_tag, Env, JsObjectValue, JsValue, Object, TypeTag, Unknown};
use napi::{check_status, sys, JsError};
use napi_derive::napi;

use crate::errors::run;
use crate::policy::PolicyHandle;

/// The arguments: the request's twelve fields (see `request::Fields`), the reason, the policy
/// handle or undefined, and the decision constructor.
const ARGS: usize = 15;

/// The policy behind a handle, none for `undefined`/`null`; any other object is refused by its
/// missing class tag before the pointer is read.
unsafe fn policy<'a>(env: sys::napi_env, v: sys::napi_value) -> napi::Result<Option<&'a PolicyHandle>> {
    let mut kind = 0;
    // SAFETY (all three calls): `v` is a live handle of the current call.
    check_status!(unsafe { sys::napi_typeof(env, v, &mut kind) })?;
    if kind == sys::ValueType::napi_undefined || kind == sys::ValueType::napi_null {
        return Ok(None);
    }
    let mut wrapped = ptr::null_mut();
    check_status!(unsafe { sys::napi_unwrap(env, v, &mut wrapped) })?;
    unsafe { validate_type_tag(env, v, &PolicyHandle::type_tag(), "PolicyHandle") }?;
    // SAFETY: the tag says `wrapped` is a PolicyHandle, kept alive by `v` for this call.
    Ok(unsafe { wrapped.cast::<PolicyHandle>().as_ref() })
}

unsafe extern "C" fn decide(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let mut argv = [ptr::null_mut(); ARGS];
    let (mut argc, argp) = (ARGS, argv.as_mut_ptr());
    // SAFETY: `argv` has room for ARGS handles; N-API fills missing ones with `undefined`.
    let got = unsafe { sys::napi_get_cb_info(env, info, &mut argc, argp, ptr::null_mut(), ptr::null_mut()) };
    let body = AssertUnwindSafe(|| {
        check_status!(got)?;
        // SAFETY: every handle is live for this call.
        let policy = unsafe { policy(env, argv[13]) }?;
        let [fields @ .., reason, _, make] = argv.map(|v| unsafe { Unknown::from_raw_unchecked(env, v) });
        run(&Env::from_raw(env), || {
            crate::decide::decide(fields, reason, policy, make)
        })
        .map(|d| d.raw())
    });
    let fail = match catch_unwind(body) {
        Ok(Ok(decision)) => return decision,
        Ok(Err(e)) => e,
        Err(_) => napi::Error::from_reason("retrypolicy: a Rust panic (this is a bug in retrypolicy)"),
    };
    // SAFETY: `env` is live; an exception already pending is left as it is.
    unsafe { JsError::from(fail).throw_into(env) };
    ptr::null_mut()
}

/// Registers `decide` on the addon's exports.
#[napi(module_exports)]
pub fn register(mut exports: Object, env: Env) -> napi::Result<()> {
    let function = env.create_function::<Unknown, Unknown>("decide", decide)?;
    exports.set_named_property("decide", function)
}
