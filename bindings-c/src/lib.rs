//! libretrypolicy: the C face of the `retrypolicy` core (header `include/retrypolicy.h`, cbindgen).
//!
//! Conversion and error mapping only: every rule lives in the core. Conventions, as in rustls-ffi:
//! every fallible function returns an `rp_result` and writes its trailing out-parameters only on
//! RP_RESULT_OK; every pointer argument is checked for NULL; enums are `uint32_t` values checked
//! against their constants; every export runs inside `ffi_boundary!` so a panic becomes
//! RP_RESULT_PANIC. Pointer contract (the `# Safety` of every function): each non-NULL pointer
//! must be valid for the reads (const) or writes (out-parameters) its type implies for the
//! duration of the call; strings are NUL-terminated unless a length is given.
#![allow(non_camel_case_types)]

mod convert;
mod error;
mod panic;
mod types;

use std::ffi::{c_char, c_void, CStr, CString};

use retrypolicy::{Backoff, ErrorMap, Operation, Policy, StrategyVerdict};

use crate::convert::{borrow, borrow_opt, c_str, out_ptr, text, write, write_text};
pub use crate::error::*;
use crate::panic::ffi_boundary;
pub use crate::types::*;

/// This library's version, NUL-terminated (the same text as RP_VERSION and Cargo.toml).
const VERSION: &CStr = match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
    Ok(v) => v,
    Err(_) => panic!("the package version contains a NUL"),
};

// ---------------------------------------------------------------------------------------------
// Version and errors
// ---------------------------------------------------------------------------------------------

/// The library's version at run time, e.g. "0.1.0" (static, never freed; compare with RP_VERSION).
#[no_mangle]
pub extern "C" fn rp_version() -> *const c_char {
    ffi_boundary!(*const c_char, { VERSION.as_ptr() })
}

/// Copies the static message of `result` (e.g. "null_pointer: ...") into `buf`, NUL-terminated.
///
/// `*written` receives the message length without the NUL. If `len` is too small nothing is
/// copied, `*written` receives the length needed (without the NUL) and the result is
/// RP_RESULT_BUFFER_TOO_SMALL; `buf` may be NULL when `len` is 0 to ask for that length.
/// An unknown `result` number is RP_RESULT_INVALID_ENUM.
///
/// # Safety
/// `buf` must be valid for `len` bytes of writes; `written` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_result_message(
    result: rp_result,
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> rp_result {
    ffi_boundary!({
        let (_, _, message) = error::row(result).ok_or_else(|| Failure::quiet(RP_RESULT_INVALID_ENUM))?;
        // SAFETY: forwarded from this function's contract.
        unsafe { write_text(message.to_str().unwrap_or_default(), buf, len, written) }
    })
}

/// The stable code of `result` ("ok", "unknown_reason", "null_pointer", ...): the core's code for
/// 1..=99, shared with every language binding (static, never freed).
///
/// # Safety
/// `name_out` must be valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_result_code_name(result: rp_result, name_out: *mut *const c_char) -> rp_result {
    ffi_boundary!({
        let out = out_ptr(name_out, "name_out")?;
        let (_, name, _) =
            error::row(result).ok_or_else(|| Failure::invalid_enum("result", "rp_result", result.0))?;
        // SAFETY: checked non-NULL; valid for writes by contract.
        unsafe { write(out, name.as_ptr()) };
        Ok(())
    })
}

/// Copies the detail of this thread's most recent failed call (e.g. "timeout_ms: invalid
/// duration ...", naming the field) into `buf`, NUL-terminated; empty if none failed yet.
///
/// The detail is per thread and kept until the next failure on that thread (success does not
/// clear it). Buffer rules as for `rp_result_message`; reading never changes the detail.
///
/// # Safety
/// `buf` must be valid for `len` bytes of writes; `written` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_last_error_message(
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> rp_result {
    ffi_boundary!({
        // SAFETY: forwarded from this function's contract.
        error::with_last_error(|m| unsafe { write_text(m, buf, len, written) })
            .map_err(|f| Failure::quiet(f.result()))
    })
}

// ---------------------------------------------------------------------------------------------
// Names <-> constants (names are the stable snake_case / SCREAMING_SNAKE names of the JSON forms)
// ---------------------------------------------------------------------------------------------

/// Parses `name` with `parse` and writes the matching C constant to `out`.
///
/// # Safety
/// `name` must be NULL or NUL-terminated; `out` NULL or valid for a write.
unsafe fn constant_from_name<C: convert::CEnum>(
    name: *const c_char,
    out: *mut C,
    parse: impl FnOnce(&str) -> Result<C::Core, Failure>,
) -> Result<(), Failure> {
    let out = out_ptr(out, "out")?;
    // SAFETY: forwarded from this function's contract.
    let name = unsafe { c_str(name, "name") }?;
    let c = C::from_core(parse(name)?).ok_or_else(|| {
        Failure::new(
            RP_RESULT_UNKNOWN_NAME,
            format!("{name}: not supported by this version of the C library"),
        )
    })?;
    // SAFETY: checked non-NULL; valid for writes by contract.
    unsafe { write(out, c) };
    Ok(())
}

/// Writes the static name of C constant `c` to `name_out`.
///
/// # Safety
/// `name_out` must be NULL or valid for a write.
unsafe fn name_of_constant<C: convert::CEnum>(
    c: C,
    name_out: *mut *const c_char,
    name: impl FnOnce(C::Core) -> &'static CStr,
) -> Result<(), Failure> {
    let out = out_ptr(name_out, "name_out")?;
    let value = convert::from_c(c, C::TYPE_NAME)?;
    // SAFETY: checked non-NULL; valid for writes by contract.
    unsafe { write(out, name(value).as_ptr()) };
    Ok(())
}

/// Parses a retry reason name ("KV_LOCKED"; the alias "KV_SYNC_RE_COMMIT_IN_PROGRESS" too).
///
/// # Safety
/// `name` must be NUL-terminated; `reason_out` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_reason_from_name(name: *const c_char, reason_out: *mut rp_reason) -> rp_result {
    ffi_boundary!({
        // SAFETY: forwarded from this function's contract.
        unsafe {
            constant_from_name(name, reason_out, |n| {
                Ok(retrypolicy::RetryReason::parse("reason", n)?)
            })
        }
    })
}

/// The RFC table name of `reason`, e.g. "KV_LOCKED" (static, never freed).
///
/// # Safety
/// `name_out` must be valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_reason_name(reason: rp_reason, name_out: *mut *const c_char) -> rp_result {
    ffi_boundary!({
        // SAFETY: forwarded from this function's contract.
        unsafe { name_of_constant(reason, name_out, |r| convert::intern(r.name())) }
    })
}

/// RFC 0049 table column "Non-idempotent Retry": may a non-idempotent request be retried for `reason`?
///
/// # Safety
/// `allowed_out` must be valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_reason_allows_non_idempotent_retry(
    reason: rp_reason,
    allowed_out: *mut bool,
) -> rp_result {
    ffi_boundary!({
        let out = out_ptr(allowed_out, "allowed_out")?;
        let r = convert::reason(reason, "reason")?;
        // SAFETY: checked non-NULL; valid for writes by contract.
        unsafe { write(out, r.allows_non_idempotent_retry()) };
        Ok(())
    })
}

/// RFC 0049 table column "Always retry": is `reason` retried regardless of the strategy?
///
/// # Safety
/// `always_out` must be valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_reason_always_retry(reason: rp_reason, always_out: *mut bool) -> rp_result {
    ffi_boundary!({
        let out = out_ptr(always_out, "always_out")?;
        let r = convert::reason(reason, "reason")?;
        // SAFETY: checked non-NULL; valid for writes by contract.
        unsafe { write(out, r.always_retry()) };
        Ok(())
    })
}

/// Parses a service name ("kv", "query", "analytics", "search", "views", "cluster_manager", "management").
///
/// # Safety
/// `name` must be NUL-terminated; `service_out` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_service_from_name(
    name: *const c_char,
    service_out: *mut rp_service,
) -> rp_result {
    ffi_boundary!({
        // SAFETY: forwarded from this function's contract.
        unsafe { constant_from_name(name, service_out, |n| convert::parse_serde_name("service", n)) }
    })
}

/// The name of `service`, e.g. "cluster_manager" (static, never freed).
///
/// # Safety
/// `name_out` must be valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_service_name(service: rp_service, name_out: *mut *const c_char) -> rp_result {
    ffi_boundary!({
        // SAFETY: forwarded from this function's contract.
        unsafe { name_of_constant(service, name_out, |s| convert::serde_name(&s)) }
    })
}

/// Parses a KV operation name ("get", "upsert", "mutate_in", ...).
///
/// # Safety
/// `name` must be NUL-terminated; `operation_out` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_kv_operation_from_name(
    name: *const c_char,
    operation_out: *mut rp_kv_operation,
) -> rp_result {
    ffi_boundary!({
        // SAFETY: forwarded from this function's contract.
        unsafe {
            constant_from_name(name, operation_out, |n| {
                Ok(retrypolicy::KvOperation::parse("operation", n)?)
            })
        }
    })
}

/// The name of KV `operation`, e.g. "get_and_lock" (static, never freed).
///
/// # Safety
/// `name_out` must be valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_kv_operation_name(
    operation: rp_kv_operation,
    name_out: *mut *const c_char,
) -> rp_result {
    ffi_boundary!({
        // SAFETY: forwarded from this function's contract.
        unsafe { name_of_constant(operation, name_out, |k| convert::intern(k.name())) }
    })
}

/// Parses an HTTP method name ("GET", "POST", ...; upper case).
///
/// # Safety
/// `name` must be NUL-terminated; `method_out` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_http_method_from_name(
    name: *const c_char,
    method_out: *mut rp_http_method,
) -> rp_result {
    ffi_boundary!({
        // SAFETY: forwarded from this function's contract.
        unsafe { constant_from_name(name, method_out, |n| convert::parse_serde_name("method", n)) }
    })
}

/// The name of `method`, e.g. "DELETE" (static, never freed).
///
/// # Safety
/// `name_out` must be valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_http_method_name(
    method: rp_http_method,
    name_out: *mut *const c_char,
) -> rp_result {
    ffi_boundary!({
        // SAFETY: forwarded from this function's contract.
        unsafe { name_of_constant(method, name_out, |m| convert::serde_name(&m)) }
    })
}

/// Parses a strategy name ("best_effort", "fail_fast").
///
/// # Safety
/// `name` must be NUL-terminated; `strategy_out` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_strategy_from_name(
    name: *const c_char,
    strategy_out: *mut rp_strategy,
) -> rp_result {
    ffi_boundary!({
        // SAFETY: forwarded from this function's contract.
        unsafe { constant_from_name(name, strategy_out, |n| convert::parse_serde_name("strategy", n)) }
    })
}

/// The name of `strategy`, e.g. "fail_fast" (static, never freed).
///
/// # Safety
/// `name_out` must be valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_strategy_name(strategy: rp_strategy, name_out: *mut *const c_char) -> rp_result {
    ffi_boundary!({
        // SAFETY: forwarded from this function's contract.
        unsafe { name_of_constant(strategy, name_out, |s| convert::serde_name(&s)) }
    })
}

/// Parses a jitter name ("none", "full", "equal", "decorrelated").
///
/// # Safety
/// `name` must be NUL-terminated; `jitter_out` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_jitter_from_name(name: *const c_char, jitter_out: *mut rp_jitter) -> rp_result {
    ffi_boundary!({
        // SAFETY: forwarded from this function's contract.
        unsafe { constant_from_name(name, jitter_out, |n| convert::parse_serde_name("jitter", n)) }
    })
}

/// The name of `jitter`, e.g. "decorrelated" (static, never freed).
///
/// # Safety
/// `name_out` must be valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_jitter_name(jitter: rp_jitter, name_out: *mut *const c_char) -> rp_result {
    ffi_boundary!({
        // SAFETY: forwarded from this function's contract.
        unsafe { name_of_constant(jitter, name_out, |j| convert::serde_name(&j)) }
    })
}

/// Parses a backoff kind name ("exponential", "controlled", "fixed").
///
/// # Safety
/// `name` must be NUL-terminated; `kind_out` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_backoff_kind_from_name(
    name: *const c_char,
    kind_out: *mut rp_backoff_kind,
) -> rp_result {
    ffi_boundary!({
        // SAFETY: forwarded from this function's contract.
        unsafe { constant_from_name(name, kind_out, |n| convert::parse_serde_name("backoff.kind", n)) }
    })
}

/// The name of backoff `kind`, e.g. "exponential" (static, never freed).
///
/// # Safety
/// `name_out` must be valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_backoff_kind_name(
    kind: rp_backoff_kind,
    name_out: *mut *const c_char,
) -> rp_result {
    ffi_boundary!({
        // SAFETY: forwarded from this function's contract.
        unsafe { name_of_constant(kind, name_out, |k| convert::serde_name(&k)) }
    })
}

/// Parses a first-delay name ("min", "zero").
///
/// # Safety
/// `name` must be NUL-terminated; `first_out` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_first_delay_from_name(
    name: *const c_char,
    first_out: *mut rp_first_delay,
) -> rp_result {
    ffi_boundary!({
        // SAFETY: forwarded from this function's contract.
        unsafe { constant_from_name(name, first_out, |n| convert::parse_serde_name("backoff.first", n)) }
    })
}

/// The name of `first`, e.g. "zero" (static, never freed).
///
/// # Safety
/// `name_out` must be valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_first_delay_name(
    first: rp_first_delay,
    name_out: *mut *const c_char,
) -> rp_result {
    ffi_boundary!({
        // SAFETY: forwarded from this function's contract.
        unsafe { name_of_constant(first, name_out, |f| convert::serde_name(&f)) }
    })
}

/// Parses a dispatch failure name ("socket_not_available", "circuit_breaker_open", ...).
///
/// # Safety
/// `name` must be NUL-terminated; `failure_out` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_dispatch_failure_from_name(
    name: *const c_char,
    failure_out: *mut rp_dispatch_failure,
) -> rp_result {
    ffi_boundary!({
        // SAFETY: forwarded from this function's contract.
        unsafe { constant_from_name(name, failure_out, |n| convert::parse_serde_name("failure", n)) }
    })
}

/// The name of dispatch `failure`, e.g. "socket_closed_while_in_flight" (static, never freed).
///
/// # Safety
/// `name_out` must be valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_dispatch_failure_name(
    failure: rp_dispatch_failure,
    name_out: *mut *const c_char,
) -> rp_result {
    ffi_boundary!({
        // SAFETY: forwarded from this function's contract.
        unsafe { name_of_constant(failure, name_out, |f| convert::serde_name(&f)) }
    })
}

/// The stable name of `rule`, e.g. "best_effort_backoff" (static, never freed).
///
/// # Safety
/// `name_out` must be valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_rule_name(rule: rp_rule, name_out: *mut *const c_char) -> rp_result {
    ffi_boundary!({
        // SAFETY: forwarded from this function's contract.
        unsafe { name_of_constant(rule, name_out, |r| convert::intern(r.name())) }
    })
}

/// The spec section behind `rule`, e.g. "RFC 0049, Best Effort" (static, never freed).
///
/// # Safety
/// `section_out` must be valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_rule_section(rule: rp_rule, section_out: *mut *const c_char) -> rp_result {
    ffi_boundary!({
        // SAFETY: forwarded from this function's contract.
        unsafe { name_of_constant(rule, section_out, |r| convert::intern(r.section())) }
    })
}

/// The name of `cause`, e.g. "not_idempotent"; NULL for RP_NO_RETRY_CAUSE_NONE (static, never freed).
///
/// # Safety
/// `name_out` must be valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_no_retry_cause_name(
    cause: rp_no_retry_cause,
    name_out: *mut *const c_char,
) -> rp_result {
    ffi_boundary!({
        let out = out_ptr(name_out, "name_out")?;
        let cause = convert::from_c(cause, "cause")?;
        let name = cause.map_or(std::ptr::null(), |c| convert::serde_name(&c).as_ptr());
        // SAFETY: checked non-NULL; valid for writes by contract.
        unsafe { write(out, name) };
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------
// Durations and status codes in host forms
// ---------------------------------------------------------------------------------------------

/// Checks a signed millisecond count (a host's int64): negative is RP_RESULT_INVALID_DURATION.
///
/// # Safety
/// `ms_out` must be valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_duration_ms_from_int64(ms: i64, ms_out: *mut u64) -> rp_result {
    ffi_boundary!({
        let out = out_ptr(ms_out, "ms_out")?;
        let convert::Millis(v) = convert::through_core(serde_json::Value::from(ms), "duration")?;
        // SAFETY: checked non-NULL; valid for writes by contract.
        unsafe { write(out, v) };
        Ok(())
    })
}

/// Checks a millisecond count held in a double: fractional, negative, NaN, infinite or past
/// 2^53-1 is RP_RESULT_INVALID_DURATION.
///
/// # Safety
/// `ms_out` must be valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_duration_ms_from_double(ms: f64, ms_out: *mut u64) -> rp_result {
    ffi_boundary!({
        let out = out_ptr(ms_out, "ms_out")?;
        let v = retrypolicy::units::millis_from_f64("duration", ms)?;
        // SAFETY: checked non-NULL; valid for writes by contract.
        unsafe { write(out, v) };
        Ok(())
    })
}

/// Parses a decimal millisecond count ("18446744073709551615"): anything but digits, or a value
/// past 2^64-1, is RP_RESULT_INVALID_DURATION.
///
/// # Safety
/// `text` must be NUL-terminated; `ms_out` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_duration_ms_from_string(text: *const c_char, ms_out: *mut u64) -> rp_result {
    ffi_boundary!({
        let out = out_ptr(ms_out, "ms_out")?;
        // SAFETY: forwarded from this function's contract.
        let text = unsafe { c_str(text, "text") }?;
        let convert::Millis(v) = convert::through_core(serde_json::Value::from(text), "duration")?;
        // SAFETY: checked non-NULL; valid for writes by contract.
        unsafe { write(out, v) };
        Ok(())
    })
}

/// Parses a KV status written as hex ("0xa2", "0X86"); anything else is RP_RESULT_OUT_OF_RANGE.
///
/// # Safety
/// `text` must be NUL-terminated; `status_out` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_kv_status_from_string(text: *const c_char, status_out: *mut u16) -> rp_result {
    ffi_boundary!({
        let out = out_ptr(status_out, "status_out")?;
        // SAFETY: forwarded from this function's contract.
        let text = unsafe { c_str(text, "text") }?;
        let convert::KvStatus(v) = convert::through_core(serde_json::Value::from(text), "status")?;
        // SAFETY: checked non-NULL; valid for writes by contract.
        unsafe { write(out, v) };
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------
// Idempotency
// ---------------------------------------------------------------------------------------------

/// Reads an operation from its JSON form (`{"service": "kv", "operation": "get"}`,
/// `{"service": "query", "readonly": true}`, `{"service": "management", "method": "GET"}`).
///
/// # Safety
/// `json` must be valid for `json_len` bytes of reads; `operation_out` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_operation_from_json(
    json: *const c_char,
    json_len: usize,
    operation_out: *mut rp_operation,
) -> rp_result {
    ffi_boundary!({
        let out = out_ptr(operation_out, "operation_out")?;
        // SAFETY: forwarded from this function's contract.
        let json = unsafe { text(json, json_len, "json", false) }?;
        let op: Operation = retrypolicy::json::from_json_str(json)?;
        let c = convert::operation_to_c(op)?;
        // SAFETY: checked non-NULL; valid for writes by contract.
        unsafe { write(out, c) };
        Ok(())
    })
}

/// Whether RFC 0049's idempotent-operation list calls `operation` idempotent.
///
/// # Safety
/// `operation` must be valid for reads; `idempotent_out` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_operation_is_idempotent(
    operation: *const rp_operation,
    idempotent_out: *mut bool,
) -> rp_result {
    ffi_boundary!({
        let out = out_ptr(idempotent_out, "idempotent_out")?;
        // SAFETY: forwarded from this function's contract.
        let op = convert::operation(unsafe { borrow(operation, "operation") }?)?;
        // SAFETY: checked non-NULL; valid for writes by contract.
        unsafe { write(out, op.is_idempotent()) };
        Ok(())
    })
}

/// Whether `request` counts as idempotent: its `idempotent` override when set, else the list.
///
/// # Safety
/// `request` (and its `previous_reasons` array) must be valid for reads; `idempotent_out` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_request_is_idempotent(
    request: *const rp_request,
    idempotent_out: *mut bool,
) -> rp_result {
    ffi_boundary!({
        let out = out_ptr(idempotent_out, "idempotent_out")?;
        // SAFETY: forwarded from this function's contract.
        let request = unsafe { convert::request(borrow(request, "request")?) }?;
        // SAFETY: checked non-NULL; valid for writes by contract.
        unsafe { write(out, request.is_idempotent()) };
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------
// Classification
// ---------------------------------------------------------------------------------------------

/// Parses a KV error map document (RFC 0013, as GET_ERROR_MAP returns it) into a new handle.
///
/// On success `*map_out` owns a handle the caller frees with `rp_error_map_free`. The handle is
/// immutable and may be shared between threads.
///
/// # Safety
/// `json` must be valid for `json_len` bytes of reads; `map_out` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_error_map_from_json(
    json: *const c_char,
    json_len: usize,
    map_out: *mut *mut rp_error_map,
) -> rp_result {
    ffi_boundary!({
        let out = out_ptr(map_out, "map_out")?;
        // SAFETY: forwarded from this function's contract.
        let json = unsafe { text(json, json_len, "json", false) }?;
        let inner: ErrorMap = retrypolicy::json::from_json_str(json)?;
        let handle = Box::into_raw(Box::new(rp_error_map { inner }));
        // SAFETY: checked non-NULL; valid for writes by contract.
        unsafe { write(out, handle) };
        Ok(())
    })
}

/// Frees an error map from `rp_error_map_from_json`; NULL is a no-op.
///
/// # Safety
/// `map` must be NULL or a handle from `rp_error_map_from_json` not freed before and no longer
/// used by any thread.
#[no_mangle]
pub unsafe extern "C" fn rp_error_map_free(map: *mut rp_error_map) {
    ffi_boundary!((), {
        if !map.is_null() {
            // SAFETY: the caller passes a live handle made by Box::into_raw, exactly once.
            drop(unsafe { Box::from_raw(map) });
        }
    })
}

/// Classifies a KV response `status` for `operation`; unknown statuses consult `error_map`.
///
/// `error_map` may be NULL (no map); `compat` may be NULL (all options off). The
/// classification's strings are static.
///
/// # Safety
/// Non-NULL pointers must be valid for reads; `classification_out` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_classify_kv(
    operation: rp_kv_operation,
    status: u16,
    error_map: *const rp_error_map,
    compat: *const rp_compat,
    classification_out: *mut rp_classification,
) -> rp_result {
    ffi_boundary!({
        let out = out_ptr(classification_out, "classification_out")?;
        let op = convert::from_c(operation, "operation")?;
        // SAFETY: forwarded from this function's contract.
        let (map, compat) = unsafe { (borrow_opt(error_map), borrow_opt(compat)) };
        let c = retrypolicy::classify_kv(op, status, map.map(|m| &m.inner), &convert::compat(compat));
        // SAFETY: checked non-NULL; valid for writes by contract.
        unsafe { write(out, convert::classification_to_c(&c)) };
        Ok(())
    })
}

/// Classifies the first error of a query response: its `code` and `message` (UTF-8, `message_len`
/// bytes; NULL with length 0 is an empty message). `compat` may be NULL.
///
/// # Safety
/// `message` must be valid for `message_len` bytes of reads; `compat` NULL or valid for reads;
/// `classification_out` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_classify_query(
    code: u32,
    message: *const c_char,
    message_len: usize,
    compat: *const rp_compat,
    classification_out: *mut rp_classification,
) -> rp_result {
    ffi_boundary!({
        let out = out_ptr(classification_out, "classification_out")?;
        // SAFETY: forwarded from this function's contract.
        let (message, compat) = unsafe { (text(message, message_len, "message", true)?, borrow_opt(compat)) };
        let c = retrypolicy::classify_query(code, message, &convert::compat(compat));
        // SAFETY: checked non-NULL; valid for writes by contract.
        unsafe { write(out, convert::classification_to_c(&c)) };
        Ok(())
    })
}

/// Classifies the first error code of an analytics response.
///
/// # Safety
/// `classification_out` must be valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_classify_analytics(
    code: u32,
    classification_out: *mut rp_classification,
) -> rp_result {
    ffi_boundary!({
        let out = out_ptr(classification_out, "classification_out")?;
        let c = retrypolicy::classify_analytics(code);
        // SAFETY: checked non-NULL; valid for writes by contract.
        unsafe { write(out, convert::classification_to_c(&c)) };
        Ok(())
    })
}

/// Classifies a search response's HTTP status.
///
/// # Safety
/// `classification_out` must be valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_classify_search(
    http_status: u16,
    classification_out: *mut rp_classification,
) -> rp_result {
    ffi_boundary!({
        let out = out_ptr(classification_out, "classification_out")?;
        let c = retrypolicy::classify_search(http_status);
        // SAFETY: checked non-NULL; valid for writes by contract.
        unsafe { write(out, convert::classification_to_c(&c)) };
        Ok(())
    })
}

/// Classifies a views response from its HTTP status and body (UTF-8, `body_len` bytes, not
/// NUL-terminated; NULL with length 0 is an empty body).
///
/// # Safety
/// `body` must be valid for `body_len` bytes of reads; `classification_out` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_classify_views(
    http_status: u16,
    body: *const c_char,
    body_len: usize,
    classification_out: *mut rp_classification,
) -> rp_result {
    ffi_boundary!({
        let out = out_ptr(classification_out, "classification_out")?;
        // SAFETY: forwarded from this function's contract.
        let body = unsafe { text(body, body_len, "body", true) }?;
        let c = retrypolicy::classify_views(http_status, body);
        // SAFETY: checked non-NULL; valid for writes by contract.
        unsafe { write(out, convert::classification_to_c(&c)) };
        Ok(())
    })
}

/// Names the retry reason for a failure the SDK observed before or while sending.
///
/// # Safety
/// `classification_out` must be valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_classify_dispatch(
    failure: rp_dispatch_failure,
    classification_out: *mut rp_classification,
) -> rp_result {
    ffi_boundary!({
        let out = out_ptr(classification_out, "classification_out")?;
        let f = convert::from_c(failure, "failure")?;
        let c = retrypolicy::classify_dispatch(f);
        // SAFETY: checked non-NULL; valid for writes by contract.
        unsafe { write(out, convert::classification_to_c(&c)) };
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------
// Backoff
// ---------------------------------------------------------------------------------------------

/// RFC 0049 "Controlled Backoff for Always Retry": the delay after `attempt` retries (1, 10, 50,
/// 100, 500, then 1000 ms).
///
/// # Safety
/// `delay_ms_out` must be valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_controlled_backoff(attempt: u32, delay_ms_out: *mut u64) -> rp_result {
    ffi_boundary!({
        let out = out_ptr(delay_ms_out, "delay_ms_out")?;
        // SAFETY: checked non-NULL; valid for writes by contract.
        unsafe { write(out, retrypolicy::controlled_backoff(attempt)) };
        Ok(())
    })
}

/// Fills `backoff_out` with the best-effort default: exponential, 1 to 500 ms, factor 2, from 1 ms.
///
/// # Safety
/// `backoff_out` must be valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_backoff_default(backoff_out: *mut rp_backoff) -> rp_result {
    ffi_boundary!({
        let out = out_ptr(backoff_out, "backoff_out")?;
        // SAFETY: checked non-NULL; valid for writes by contract.
        unsafe { write(out, convert::backoff_to_c(&Backoff::default())) };
        Ok(())
    })
}

/// Reads a backoff from its policy JSON form (`{"kind": "exponential", "min_ms": 1, ...}`,
/// `{"kind": "fixed", "delay_ms": 250}`), with the core's defaults and checks.
///
/// # Safety
/// `json` must be valid for `json_len` bytes of reads; `backoff_out` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_backoff_from_json(
    json: *const c_char,
    json_len: usize,
    backoff_out: *mut rp_backoff,
) -> rp_result {
    ffi_boundary!({
        let out = out_ptr(backoff_out, "backoff_out")?;
        // SAFETY: forwarded from this function's contract.
        let json = unsafe { text(json, json_len, "json", false) }?;
        let b: Backoff =
            retrypolicy::json::from_json_str(json).map_err(|e| Failure::from(e).prefixed("backoff."))?;
        // SAFETY: checked non-NULL; valid for writes by contract.
        unsafe { write(out, convert::backoff_to_c(&b)) };
        Ok(())
    })
}

/// The delay after `attempt` retries under `backoff` and `jitter`.
///
/// `random` points to the caller's draw in [0, 1), required unless `jitter` is RP_JITTER_NONE
/// (NULL then is RP_RESULT_MISSING_FIELD); `previous_delay_ms` (decorrelated jitter) may be NULL.
///
/// # Safety
/// Non-NULL pointers must be valid for reads; `delay_ms_out` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_backoff_delay(
    backoff: *const rp_backoff,
    jitter: rp_jitter,
    attempt: u32,
    random: *const f64,
    previous_delay_ms: *const u64,
    delay_ms_out: *mut u64,
) -> rp_result {
    ffi_boundary!({
        let out = out_ptr(delay_ms_out, "delay_ms_out")?;
        // SAFETY: forwarded from this function's contract.
        let b = convert::backoff(unsafe { borrow(backoff, "backoff") }?)?;
        let j = convert::from_c(jitter, "jitter")?;
        // SAFETY: forwarded from this function's contract.
        let (random, previous) = unsafe {
            (
                borrow_opt(random).copied(),
                borrow_opt(previous_delay_ms).copied(),
            )
        };
        let d = retrypolicy::backoff_delay(&b, j, attempt, random, previous)?;
        // SAFETY: checked non-NULL; valid for writes by contract.
        unsafe { write(out, d) };
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------
// Policy
// ---------------------------------------------------------------------------------------------

/// Creates a handle holding the RFC 0049 default policy (best effort, exponential 1-500 ms, no jitter).
///
/// On success `*policy_out` owns a handle the caller frees with `rp_policy_free`.
///
/// # Safety
/// `policy_out` must be valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_policy_new_default(policy_out: *mut *mut rp_policy) -> rp_result {
    ffi_boundary!({
        let out = out_ptr(policy_out, "policy_out")?;
        let handle = Box::into_raw(Box::new(rp_policy::new(&Policy::default())));
        // SAFETY: checked non-NULL; valid for writes by contract.
        unsafe { write(out, handle) };
        Ok(())
    })
}

/// Calls the core's JSON API: `function` names a spec-fixture function (e.g. "mongodb_decide",
/// "http_next"), `input` holds its inputs as a JSON object; the MongoDB, HTTP and transaction
/// rules are reached this way.
///
/// On success `*json_out` owns the result as NUL-terminated JSON, freed with `rp_string_free`;
/// on failure `rp_last_error_message` names the field.
///
/// # Safety
/// `function` must be a NUL-terminated string; `input` valid for `input_len` bytes of reads;
/// `json_out` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_call_json(
    function: *const c_char,
    input: *const c_char,
    input_len: usize,
    json_out: *mut *mut c_char,
) -> rp_result {
    ffi_boundary!({
        let out = out_ptr(json_out, "json_out")?;
        // SAFETY: forwarded from this function's contract.
        let function = unsafe { c_str(function, "function") }?;
        // SAFETY: forwarded from this function's contract.
        let input = unsafe { text(input, input_len, "input", false) }?;
        let value: serde_json::Value = retrypolicy::json::from_json_str(input)?;
        let result = retrypolicy::api::call(function, &value)?;
        let json = CString::new(result.to_string())
            .map_err(|_| Failure::new(RP_RESULT_PANIC, "result JSON contains a NUL"))?;
        // SAFETY: checked non-NULL; valid for writes by contract.
        unsafe { write(out, json.into_raw()) };
        Ok(())
    })
}

/// Parses and validates a policy document (`{"version": 1, "strategy": "best_effort", ...}`).
///
/// On success `*policy_out` owns a handle the caller frees with `rp_policy_free`; on failure
/// `rp_last_error_message` names the field, e.g. "backoff.min_ms: 9 is out of range: ...".
///
/// # Safety
/// `json` must be valid for `json_len` bytes of reads; `policy_out` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_policy_from_json(
    json: *const c_char,
    json_len: usize,
    policy_out: *mut *mut rp_policy,
) -> rp_result {
    ffi_boundary!({
        let out = out_ptr(policy_out, "policy_out")?;
        // SAFETY: forwarded from this function's contract.
        let json = unsafe { text(json, json_len, "json", false) }?;
        let inner = Policy::from_json(json)?;
        let handle = Box::into_raw(Box::new(rp_policy::new(&inner)));
        // SAFETY: checked non-NULL; valid for writes by contract.
        unsafe { write(out, handle) };
        Ok(())
    })
}

/// Writes `policy` as its normalized JSON document (every field present) to a new string.
///
/// On success `*json_out` owns a NUL-terminated string the caller frees with `rp_string_free`
/// (not `free`).
///
/// # Safety
/// `policy` must be a live handle; `json_out` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_policy_to_json(
    policy: *const rp_policy,
    json_out: *mut *mut c_char,
) -> rp_result {
    ffi_boundary!({
        let out = out_ptr(json_out, "json_out")?;
        // SAFETY: forwarded from this function's contract.
        let policy = unsafe { borrow(policy, "policy") }?;
        let json = CString::new(policy.inner().to_json())
            .map_err(|_| Failure::new(RP_RESULT_PANIC, "policy JSON contains a NUL"))?;
        // SAFETY: checked non-NULL; valid for writes by contract.
        unsafe { write(out, json.into_raw()) };
        Ok(())
    })
}

/// Copies the compatibility options of `policy` (for the classify functions).
///
/// # Safety
/// `policy` must be a live handle; `compat_out` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_policy_compat(policy: *const rp_policy, compat_out: *mut rp_compat) -> rp_result {
    ffi_boundary!({
        let out = out_ptr(compat_out, "compat_out")?;
        // SAFETY: forwarded from this function's contract.
        let policy = unsafe { borrow(policy, "policy") }?;
        // SAFETY: checked non-NULL; valid for writes by contract.
        unsafe { write(out, convert::compat_to_c(&policy.inner().compat)) };
        Ok(())
    })
}

/// Frees a policy handle; NULL is a no-op.
///
/// # Safety
/// `policy` must be NULL or a handle from `rp_policy_new_default`/`rp_policy_from_json` not freed
/// before and no longer used by any thread.
#[no_mangle]
pub unsafe extern "C" fn rp_policy_free(policy: *mut rp_policy) {
    ffi_boundary!((), {
        if !policy.is_null() {
            // SAFETY: the caller passes a live handle made by Box::into_raw, exactly once.
            drop(unsafe { Box::from_raw(policy) });
        }
    })
}

/// Frees a string returned by this library (`rp_policy_to_json`); NULL is a no-op.
///
/// # Safety
/// `s` must be NULL or a string from this library not freed before.
#[no_mangle]
pub unsafe extern "C" fn rp_string_free(s: *mut c_char) {
    ffi_boundary!((), {
        if !s.is_null() {
            // SAFETY: the caller passes a string made by CString::into_raw, exactly once.
            drop(unsafe { CString::from_raw(s) });
        }
    })
}

// ---------------------------------------------------------------------------------------------
// Decide
// ---------------------------------------------------------------------------------------------

/// Decides whether and when to retry `request` after `reason` under `policy` (NULL: the default policy).
///
/// # Safety
/// `request` (and its `previous_reasons` array) must be valid for reads; `policy` NULL or a live
/// handle; `decision_out` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_decide(
    request: *const rp_request,
    reason: rp_reason,
    policy: *const rp_policy,
    decision_out: *mut rp_decision,
) -> rp_result {
    ffi_boundary!(rp_result, {
        // SAFETY (both): forwarded from this function's contract.
        if unsafe { decide_fast(request, reason, policy, decision_out) } {
            RP_RESULT_OK
        } else {
            unsafe { decide_checked(request, reason, policy, decision_out) }
        }
    })
}

/// `rp_decide` for a request that passes every check and whose decision the table holds: writes
/// it and returns true; otherwise writes nothing and returns false. It calls nothing.
///
/// # Safety
/// As `rp_decide`.
#[inline(always)]
unsafe fn decide_fast(
    request: *const rp_request,
    reason: rp_reason,
    policy: *const rp_policy,
    decision_out: *mut rp_decision,
) -> bool {
    // Not built yet: the checked path builds it.
    let Some(hot) = types::hot_if_built() else {
        return false;
    };
    if decision_out.is_null() {
        return false;
    }
    // SAFETY: NULL or valid for reads, by contract.
    let Some(r) = (unsafe { request.as_ref() }) else {
        return false;
    };
    let Some(core_reason) = convert::CEnum::core(reason) else {
        return false;
    };
    // SAFETY: forwarded from this function's contract.
    let Some(facts) = (unsafe { convert::facts_fast(r, &hot.operations) }) else {
        return false;
    };
    // SAFETY: NULL or a live handle, by contract.
    let table = unsafe { borrow_opt(policy) }.map_or(&hot.rfc, |p| &p.table);
    let Some(flat) = table.lookup_flat(&facts, core_reason) else {
        return false;
    };
    // SAFETY: checked non-NULL; valid for writes by contract.
    unsafe { write(decision_out, convert::flat_decision_to_c(flat, &facts, reason)) };
    true
}

/// `rp_decide` for everything [`decide_fast`] leaves: checks each argument, reporting the first
/// failure, and works out decisions the table does not hold. `extern "C"` (so it never unwinds)
/// with its own panic boundary, so that `rp_decide`'s boundary needs no landing pad around the call.
///
/// # Safety
/// As `rp_decide`.
#[cold]
#[inline(never)]
unsafe extern "C" fn decide_checked(
    request: *const rp_request,
    reason: rp_reason,
    policy: *const rp_policy,
    decision_out: *mut rp_decision,
) -> rp_result {
    ffi_boundary!({
        // Built here on the first call, so that later ones can take the fast path.
        let hot = types::hot();
        let out = out_ptr(decision_out, "decision_out")?;
        // SAFETY: forwarded from this function's contract.
        let facts = unsafe { convert::facts(borrow(request, "request")?) }?;
        let reason = convert::reason(reason, "reason")?;
        // SAFETY: forwarded from this function's contract.
        let table = unsafe { borrow_opt(policy) }.map_or(&hot.rfc, |p| &p.table);
        let d = table.decide(&facts, reason)?;
        // SAFETY: checked non-NULL; valid for writes by contract.
        unsafe { write(out, convert::decision_to_c(&d)) };
        Ok(())
    })
}

/// Does nothing and returns RP_RESULT_OK: the same signature as `rp_decide`, so benchmarks can
/// measure the cost of crossing into this library against the cost of a decision.
///
/// # Safety
/// None of the pointers is read or written.
#[no_mangle]
pub unsafe extern "C" fn rp_decide_noop(
    request: *const rp_request,
    reason: rp_reason,
    policy: *const rp_policy,
    decision_out: *mut rp_decision,
) -> rp_result {
    let _ = (request, reason, policy, decision_out);
    ffi_boundary!({ Ok(()) })
}

/// Like `rp_decide`, with a host strategy consulted when the request has no built-in override.
///
/// The core first applies the deadline, UNKNOWN and always-retry rules (the strategy is not
/// called for those), then calls `strategy(user_data, request, reason, &delay_ms)` once, on this
/// thread, before returning, and caps its delay to the timeout. The library keeps neither
/// pointer after the call returns.
///
/// # Safety
/// As `rp_decide`; `strategy` must be a valid function pointer that returns normally.
#[no_mangle]
pub unsafe extern "C" fn rp_decide_with_strategy(
    request: *const rp_request,
    reason: rp_reason,
    policy: *const rp_policy,
    strategy: rp_strategy_fn,
    user_data: *mut c_void,
    decision_out: *mut rp_decision,
) -> rp_result {
    ffi_boundary!({
        let out = out_ptr(decision_out, "decision_out")?;
        let callback = strategy.ok_or_else(|| Failure::null("strategy"))?;
        // SAFETY: forwarded from this function's contract.
        let core_request = unsafe { convert::request(borrow(request, "request")?) }?;
        let reason = convert::reason(reason, "reason")?;
        // SAFETY: forwarded from this function's contract.
        let policy = unsafe { borrow_opt(policy) }.map_or(&Policy::RFC, |p| p.inner());
        let host = convert::CStrategy {
            callback,
            user_data,
            request,
        };
        let d = retrypolicy::decide_with(&core_request, reason, policy, Some(&host))?;
        // SAFETY: checked non-NULL; valid for writes by contract.
        unsafe { write(out, convert::decision_to_c(&d)) };
        Ok(())
    })
}

/// The decision steps before any strategy (deadline, UNKNOWN, always-retry), for hosts that run
/// their strategy themselves between this and `rp_decide_after_strategy`.
///
/// On success `*decided_out` says whether those steps decided; only then is `*decision_out` written.
///
/// # Safety
/// As `rp_decide`; `decided_out` must be valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_decide_before_strategy(
    request: *const rp_request,
    reason: rp_reason,
    policy: *const rp_policy,
    decided_out: *mut bool,
    decision_out: *mut rp_decision,
) -> rp_result {
    ffi_boundary!({
        let decided = out_ptr(decided_out, "decided_out")?;
        let out = out_ptr(decision_out, "decision_out")?;
        // SAFETY: forwarded from this function's contract.
        let request = unsafe { convert::request(borrow(request, "request")?) }?;
        let reason = convert::reason(reason, "reason")?;
        // SAFETY: forwarded from this function's contract.
        let policy = unsafe { borrow_opt(policy) }.map_or(&Policy::RFC, |p| p.inner());
        let d = retrypolicy::decide_before_strategy(&request, reason, policy)?;
        // SAFETY: both checked non-NULL; valid for writes by contract.
        unsafe {
            write(decided, d.is_some());
            if let Some(d) = d {
                write(out, convert::decision_to_c(&d));
            }
        }
        Ok(())
    })
}

/// Turns a host strategy's verdict (`retry` after `delay_ms`, or not) into the decision, capping
/// the delay to the timeout; call it when `rp_decide_before_strategy` did not decide.
///
/// # Safety
/// `request` must be valid for reads; `decision_out` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_decide_after_strategy(
    request: *const rp_request,
    reason: rp_reason,
    retry: bool,
    delay_ms: u64,
    decision_out: *mut rp_decision,
) -> rp_result {
    ffi_boundary!({
        let out = out_ptr(decision_out, "decision_out")?;
        // SAFETY: forwarded from this function's contract.
        let request = unsafe { convert::request(borrow(request, "request")?) }?;
        let reason = convert::reason(reason, "reason")?;
        let verdict = if retry {
            StrategyVerdict::custom_retry(delay_ms)
        } else {
            StrategyVerdict::custom_no_retry()
        };
        let d = retrypolicy::decide_after_strategy(&request, reason, verdict);
        // SAFETY: checked non-NULL; valid for writes by contract.
        unsafe { write(out, convert::decision_to_c(&d)) };
        Ok(())
    })
}

/// Copies the decision's one-line log text (RFC 0049 asks to log every retry and non-retry), e.g.
/// "retry 8 after 500 ms, capped to the timeout, then cancel (reason KV_NOT_MY_VBUCKET, ...)".
///
/// Buffer rules as for `rp_result_message`.
///
/// # Safety
/// `decision` must be valid for reads; `buf` valid for `len` bytes of writes; `written` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rp_decision_format(
    decision: *const rp_decision,
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> rp_result {
    ffi_boundary!({
        // SAFETY: forwarded from this function's contract.
        let d = convert::decision(unsafe { borrow(decision, "decision") }?)?;
        // SAFETY: forwarded from this function's contract.
        unsafe { write_text(&d.to_string(), buf, len, written) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtime_version_is_the_package_version() {
        // SAFETY: rp_version returns a static NUL-terminated string.
        let v = unsafe { CStr::from_ptr(rp_version()) };
        assert_eq!(v.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
        assert_eq!(v.to_str().unwrap(), retrypolicy::VERSION);
    }

    /// Wherever the fast path answers, the checked path gives the same decision; it answers the
    /// plain cases, and leaves every refusal and every decision the table does not hold alone.
    #[test]
    fn the_fast_path_decides_as_the_checked_path() {
        let _ = types::hot();
        let mut jitter = Policy::RFC;
        jitter.jitter = retrypolicy::Jitter::Full;
        let mut fail_fast = Policy::RFC;
        fail_fast.strategy = retrypolicy::StrategyKind::FailFast;
        let handles = [Policy::RFC, jitter, fail_fast].map(|p| rp_policy::new(&p));
        let policies = handles
            .iter()
            .map(|p| p as *const rp_policy)
            .chain([std::ptr::null()]);
        let reasons = [
            RP_REASON_UNKNOWN,
            RP_REASON_KV_LOCKED,
            RP_REASON_KV_NOT_MY_VBUCKET,
            RP_REASON_SOCKET_CLOSED_WHILE_IN_FLIGHT,
            rp_reason(99),
        ];
        let (mut fast, mut refused, mut total) = (0, 0, 0);
        for policy in policies {
            for reason in reasons {
                for kv in [RP_KV_OPERATION_GET, RP_KV_OPERATION_UPSERT, rp_kv_operation(99)] {
                    for random in [None, Some(0.5), Some(1.0), Some(f64::NAN), Some(-0.0)] {
                        for attempts in [0, 63, 64] {
                            for (elapsed_ms, timeout_ms) in [(100, 2500), (2499, 2500), (2500, 2500)] {
                                for strategy in [None, Some(RP_STRATEGY_FAIL_FAST), Some(rp_strategy(7))] {
                                    // SAFETY: all-zero is a valid rp_request (no pointers in use).
                                    let mut r: rp_request = unsafe { std::mem::zeroed() };
                                    r.operation.service = RP_SERVICE_KV;
                                    r.operation.kv_operation = kv;
                                    (r.attempts, r.elapsed_ms, r.timeout_ms) =
                                        (attempts, elapsed_ms, timeout_ms);
                                    (r.has_random, r.random) = (random.is_some(), random.unwrap_or(0.0));
                                    r.has_strategy = strategy.is_some();
                                    r.strategy = strategy.unwrap_or(RP_STRATEGY_BEST_EFFORT);
                                    let mut a = std::mem::MaybeUninit::<rp_decision>::zeroed();
                                    let mut b = std::mem::MaybeUninit::<rp_decision>::zeroed();
                                    // SAFETY: every pointer is valid or NULL as rp_decide allows.
                                    let (took, checked) = unsafe {
                                        (
                                            decide_fast(&r, reason, policy, a.as_mut_ptr()),
                                            decide_checked(&r, reason, policy, b.as_mut_ptr()),
                                        )
                                    };
                                    total += 1;
                                    if checked != RP_RESULT_OK {
                                        refused += 1;
                                        assert!(!took, "the fast path answered a refused request: {r:?}");
                                    }
                                    if took {
                                        fast += 1;
                                        // SAFETY: both were written (zeroed before in any case).
                                        let (a, b) = unsafe { (a.assume_init(), b.assume_init()) };
                                        assert_eq!(format!("{a:?}"), format!("{b:?}"), "{r:?}");
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        assert!(
            fast > 500 && refused > 500,
            "{fast} fast, {refused} refused of {total}"
        );
        // The plain case: a KV get far from its deadline, no draw, the default policy.
        // SAFETY: all-zero is a valid rp_request.
        let mut plain: rp_request = unsafe { std::mem::zeroed() };
        (plain.attempts, plain.elapsed_ms, plain.timeout_ms) = (3, 100, 2500);
        let mut d = std::mem::MaybeUninit::<rp_decision>::zeroed();
        // SAFETY: valid request and out pointer, NULL policy.
        assert!(unsafe { decide_fast(&plain, RP_REASON_KV_LOCKED, std::ptr::null(), d.as_mut_ptr()) });
    }

    #[test]
    fn outputs_are_untouched_on_failure() {
        let mut d = std::mem::MaybeUninit::<rp_decision>::zeroed();
        // SAFETY: NULL request is checked; the out pointer is valid.
        let r = unsafe {
            rp_decide(
                std::ptr::null(),
                RP_REASON_KV_LOCKED,
                std::ptr::null(),
                d.as_mut_ptr(),
            )
        };
        assert_eq!(r, RP_RESULT_NULL_POINTER);
        // SAFETY: zeroed is a valid rp_decision.
        assert_eq!(unsafe { d.assume_init() }.reason, rp_reason(0));
    }
}
