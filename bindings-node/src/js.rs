//! A thin layer over raw N-API: value access, the one failure type, throwing core errors with
//! `.code` and `.field`, and the panic boundary every exported callback runs inside.

use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use napi::sys::{self, napi_env, napi_value};
use retrypolicy::Error as CoreError;

/// Why an exported function did not return a value.
#[derive(Debug)]
pub enum Fail {
    /// A core error: thrown as `Error` with the core's `code` and `field`.
    Core(CoreError),
    /// A JavaScript exception is already pending (a getter or user callback threw): leave it be.
    Pending,
    /// An N-API call failed for another reason (a bug or an engine shutting down).
    Napi(&'static str),
}

impl From<CoreError> for Fail {
    fn from(e: CoreError) -> Self {
        Fail::Core(e)
    }
}

/// What exported functions return.
pub type JsResult<T = napi_value> = Result<T, Fail>;

/// Checks an N-API status: a pending exception stays pending, anything else becomes `Napi`.
pub fn check(env: napi_env, status: sys::napi_status, what: &'static str) -> JsResult<()> {
    if status == sys::Status::napi_ok {
        return Ok(());
    }
    let mut pending = false;
    // SAFETY: `env` is the live environment of the current callback.
    unsafe { sys::napi_is_exception_pending(env, &mut pending) };
    if pending {
        Err(Fail::Pending)
    } else {
        Err(Fail::Napi(what))
    }
}

/// The arguments of a callback (missing ones are `undefined`) and the `data` pointer it was registered with.
pub fn args<const N: usize>(
    env: napi_env,
    info: sys::napi_callback_info,
) -> JsResult<([napi_value; N], *mut c_void)> {
    let mut argv = [ptr::null_mut(); N];
    let mut argc = N;
    let mut data = ptr::null_mut();
    // SAFETY: argv has room for `argc` values; N-API fills missing ones with `undefined`.
    let s = unsafe {
        sys::napi_get_cb_info(
            env,
            info,
            &mut argc,
            argv.as_mut_ptr(),
            ptr::null_mut(),
            &mut data,
        )
    };
    check(env, s, "napi_get_cb_info")?;
    Ok((argv, data))
}

/// Like [`args`], also returning how many arguments the caller actually passed.
pub fn args_counted<const N: usize>(
    env: napi_env,
    info: sys::napi_callback_info,
) -> JsResult<([napi_value; N], usize, *mut c_void)> {
    let mut argv = [ptr::null_mut(); N];
    let mut argc = N;
    let mut data = ptr::null_mut();
    // SAFETY: as in `args`.
    let s = unsafe {
        sys::napi_get_cb_info(
            env,
            info,
            &mut argc,
            argv.as_mut_ptr(),
            ptr::null_mut(),
            &mut data,
        )
    };
    check(env, s, "napi_get_cb_info")?;
    Ok((argv, argc, data))
}

/// The JavaScript type of a value (`sys::ValueType::*`).
pub fn type_of(env: napi_env, v: napi_value) -> JsResult<i32> {
    let mut t = 0;
    // SAFETY: `v` is a live handle of this callback scope.
    check(env, unsafe { sys::napi_typeof(env, v, &mut t) }, "napi_typeof")?;
    Ok(t)
}

/// Whether the value is `undefined` or `null`.
pub fn is_nullish(env: napi_env, v: napi_value) -> JsResult<bool> {
    let t = type_of(env, v)?;
    Ok(t == sys::ValueType::napi_undefined || t == sys::ValueType::napi_null)
}

/// A number's value (the caller has checked the type).
pub fn get_f64(env: napi_env, v: napi_value) -> JsResult<f64> {
    let mut x = 0.0;
    // SAFETY: as above.
    check(
        env,
        unsafe { sys::napi_get_value_double(env, v, &mut x) },
        "napi_get_value_double",
    )?;
    Ok(x)
}

/// A boolean's value (the caller has checked the type).
pub fn get_bool(env: napi_env, v: napi_value) -> JsResult<bool> {
    let mut x = false;
    // SAFETY: as above.
    check(
        env,
        unsafe { sys::napi_get_value_bool(env, v, &mut x) },
        "napi_get_value_bool",
    )?;
    Ok(x)
}

/// A string's value as UTF-8 (the caller has checked the type).
pub fn get_string(env: napi_env, v: napi_value) -> JsResult<String> {
    let mut stack = [0u8; 256];
    let mut len = 0usize;
    // SAFETY: the buffer holds `stack.len()` bytes; N-API writes at most that many, NUL included.
    let s =
        unsafe { sys::napi_get_value_string_utf8(env, v, stack.as_mut_ptr().cast(), stack.len(), &mut len) };
    check(env, s, "napi_get_value_string_utf8")?;
    if len < stack.len() - 1 {
        return Ok(String::from_utf8_lossy(&stack[..len]).into_owned());
    }
    // Possibly truncated: ask for the length, then read it whole.
    // SAFETY: a null buffer asks N-API for the length only.
    let s = unsafe { sys::napi_get_value_string_utf8(env, v, ptr::null_mut(), 0, &mut len) };
    check(env, s, "napi_get_value_string_utf8")?;
    let mut heap = vec![0u8; len + 1];
    // SAFETY: `heap` holds len + 1 bytes.
    let s =
        unsafe { sys::napi_get_value_string_utf8(env, v, heap.as_mut_ptr().cast(), heap.len(), &mut len) };
    check(env, s, "napi_get_value_string_utf8")?;
    heap.truncate(len);
    Ok(String::from_utf8_lossy(&heap).into_owned())
}

/// A BigInt as (negative, fits in 64 bits, low 64 bits).
pub fn get_bigint(env: napi_env, v: napi_value) -> JsResult<(bool, bool, u64)> {
    let mut sign = 0;
    let mut count = 0usize;
    // SAFETY: null sign and words pointers ask for the word count only.
    let s = unsafe { sys::napi_get_value_bigint_words(env, v, ptr::null_mut(), &mut count, ptr::null_mut()) };
    check(env, s, "napi_get_value_bigint_words")?;
    let mut words = vec![0u64; count.max(1)];
    let mut n = words.len();
    // SAFETY: `words` holds `n` words.
    let s = unsafe { sys::napi_get_value_bigint_words(env, v, &mut sign, &mut n, words.as_mut_ptr()) };
    check(env, s, "napi_get_value_bigint_words")?;
    let fits = words[1..].iter().all(|w| *w == 0);
    let negative = sign != 0 && words.iter().any(|w| *w != 0);
    Ok((negative, fits, words[0]))
}

/// A named property of an object (getters run; a throwing getter leaves its exception pending).
pub fn get_prop(env: napi_env, obj: napi_value, name: &CStr) -> JsResult {
    let mut v = ptr::null_mut();
    // SAFETY: `name` is NUL-terminated; `obj` is a live handle.
    let s = unsafe { sys::napi_get_named_property(env, obj, name.as_ptr(), &mut v) };
    check(env, s, "napi_get_named_property")?;
    Ok(v)
}

/// Sets a named property.
pub fn set_prop(env: napi_env, obj: napi_value, name: &CStr, v: napi_value) -> JsResult<()> {
    // SAFETY: as above.
    let s = unsafe { sys::napi_set_named_property(env, obj, name.as_ptr(), v) };
    check(env, s, "napi_set_named_property")
}

/// Whether a value is an array.
pub fn is_array(env: napi_env, v: napi_value) -> JsResult<bool> {
    let mut yes = false;
    // SAFETY: as above.
    check(
        env,
        unsafe { sys::napi_is_array(env, v, &mut yes) },
        "napi_is_array",
    )?;
    Ok(yes)
}

/// An array's length.
pub fn array_len(env: napi_env, v: napi_value) -> JsResult<u32> {
    let mut n = 0;
    // SAFETY: as above.
    check(
        env,
        unsafe { sys::napi_get_array_length(env, v, &mut n) },
        "napi_get_array_length",
    )?;
    Ok(n)
}

/// An array element.
pub fn array_get(env: napi_env, v: napi_value, i: u32) -> JsResult {
    let mut out = ptr::null_mut();
    // SAFETY: as above.
    check(
        env,
        unsafe { sys::napi_get_element(env, v, i, &mut out) },
        "napi_get_element",
    )?;
    Ok(out)
}

/// A new empty object.
pub fn object(env: napi_env) -> JsResult {
    let mut out = ptr::null_mut();
    // SAFETY: `env` is live.
    check(
        env,
        unsafe { sys::napi_create_object(env, &mut out) },
        "napi_create_object",
    )?;
    Ok(out)
}

/// A new array holding `items`.
pub fn array(env: napi_env, items: &[napi_value]) -> JsResult {
    let mut out = ptr::null_mut();
    // SAFETY: `env` is live.
    let s = unsafe { sys::napi_create_array_with_length(env, items.len(), &mut out) };
    check(env, s, "napi_create_array_with_length")?;
    for (i, item) in items.iter().enumerate() {
        // SAFETY: `out` is the array just created.
        let s = unsafe { sys::napi_set_element(env, out, i as u32, *item) };
        check(env, s, "napi_set_element")?;
    }
    Ok(out)
}

/// A JS string.
pub fn string(env: napi_env, s: &str) -> JsResult {
    let mut out = ptr::null_mut();
    // SAFETY: the pointer and length describe `s`.
    let st =
        unsafe { sys::napi_create_string_utf8(env, s.as_ptr() as *const c_char, s.len() as isize, &mut out) };
    check(env, st, "napi_create_string_utf8")?;
    Ok(out)
}

/// A JS number.
pub fn number(env: napi_env, x: f64) -> JsResult {
    let mut out = ptr::null_mut();
    // SAFETY: `env` is live.
    check(
        env,
        unsafe { sys::napi_create_double(env, x, &mut out) },
        "napi_create_double",
    )?;
    Ok(out)
}

/// A JS boolean.
pub fn boolean(env: napi_env, b: bool) -> JsResult {
    let mut out = ptr::null_mut();
    // SAFETY: `env` is live.
    check(
        env,
        unsafe { sys::napi_get_boolean(env, b, &mut out) },
        "napi_get_boolean",
    )?;
    Ok(out)
}

/// `undefined`.
pub fn undefined(env: napi_env) -> JsResult {
    let mut out = ptr::null_mut();
    // SAFETY: `env` is live.
    check(
        env,
        unsafe { sys::napi_get_undefined(env, &mut out) },
        "napi_get_undefined",
    )?;
    Ok(out)
}

/// `null`.
pub fn null(env: napi_env) -> JsResult {
    let mut out = ptr::null_mut();
    // SAFETY: `env` is live.
    check(env, unsafe { sys::napi_get_null(env, &mut out) }, "napi_get_null")?;
    Ok(out)
}

/// Milliseconds out: a number up to 2^53 − 1, past that an exact BigInt.
pub fn millis(env: napi_env, ms: u64) -> JsResult {
    if ms <= retrypolicy::json::ms::MAX_SAFE {
        return number(env, ms as f64);
    }
    let mut out = ptr::null_mut();
    // SAFETY: `env` is live.
    check(
        env,
        unsafe { sys::napi_create_bigint_uint64(env, ms, &mut out) },
        "napi_create_bigint_uint64",
    )?;
    Ok(out)
}

/// A string or `null`.
pub fn opt_string(env: napi_env, s: Option<&str>) -> JsResult {
    match s {
        Some(s) => string(env, s),
        None => null(env),
    }
}

/// Throws a core error as a JS `Error` whose `code` is the stable code and `field` the input it names.
fn throw_core(env: napi_env, e: &CoreError) -> JsResult<()> {
    let code = string(env, e.code())?;
    let msg = string(env, &e.to_string())?;
    let mut err = ptr::null_mut();
    // SAFETY: `code` and `msg` are live strings; napi_create_error sets `.code` from `code`.
    check(
        env,
        unsafe { sys::napi_create_error(env, code, msg, &mut err) },
        "napi_create_error",
    )?;
    let field = string(env, e.field())?;
    set_prop(env, err, c"field", field)?;
    // SAFETY: `err` is the error just created.
    check(env, unsafe { sys::napi_throw(env, err) }, "napi_throw")
}

/// Turns a failure into a pending JS exception (unless one is pending already).
pub fn throw(env: napi_env, fail: Fail) {
    let message = match fail {
        Fail::Pending => return,
        Fail::Core(e) => match throw_core(env, &e) {
            Ok(()) => return,
            Err(_) => "could not build the error object",
        },
        Fail::Napi(what) => what,
    };
    let mut pending = false;
    // SAFETY: `env` is live.
    unsafe { sys::napi_is_exception_pending(env, &mut pending) };
    if !pending {
        let msg = format!("retrypolicy: internal N-API failure in {message}\0");
        // SAFETY: both strings are NUL-terminated.
        unsafe { sys::napi_throw_error(env, c"internal".as_ptr(), msg.as_ptr().cast()) };
    }
}

/// Runs an exported function's body inside the panic boundary and maps its failure to a JS throw.
pub fn boundary(env: napi_env, body: impl FnOnce() -> JsResult) -> napi_value {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(v)) => v,
        Ok(Err(fail)) => {
            throw(env, fail);
            ptr::null_mut()
        }
        Err(_) => {
            throw(env, Fail::Napi("a Rust panic (this is a bug in retrypolicy)"));
            ptr::null_mut()
        }
    }
}

/// Defines an exported raw N-API callback whose body runs inside [`boundary`].
#[macro_export]
macro_rules! export {
    ($(#[$doc:meta])* fn $name:ident($env:ident, $info:ident) $body:block) => {
        $(#[$doc])*
        pub unsafe extern "C" fn $name(
            $env: napi::sys::napi_env,
            $info: napi::sys::napi_callback_info,
        ) -> napi::sys::napi_value {
            $crate::js::boundary($env, || $body)
        }
    };
}

/// Registers `cb` on `exports` as `name`, handing it `data` on every call.
pub fn register(
    env: napi_env,
    exports: napi_value,
    name: &CStr,
    cb: unsafe extern "C" fn(napi_env, sys::napi_callback_info) -> napi_value,
    data: *mut c_void,
) -> JsResult<()> {
    let mut f = ptr::null_mut();
    let bytes = name.to_bytes();
    // SAFETY: the name pointer and length describe `name`; `cb` lives as long as the library.
    let s = unsafe {
        sys::napi_create_function(
            env,
            bytes.as_ptr().cast(),
            bytes.len() as isize,
            Some(cb),
            data,
            &mut f,
        )
    };
    check(env, s, "napi_create_function")?;
    set_prop(env, exports, name, f)
}
