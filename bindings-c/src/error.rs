//! `rp_result`: one number per core error code plus the boundary's own, and the per-thread detail.
//!
//! Numbers are explicit and never reused: a code that goes away leaves a gap (104 was
//! `buffer_too_small`). 1..=99 mirror the core's stable error codes (`retrypolicy::Error::code()`);
//! 100 and up belong to the C boundary.

use std::cell::RefCell;
use std::ffi::{c_char, CStr, CString};
use std::fmt::Display;

/// The result of every fallible function: RP_RESULT_OK (0) or why it failed; outputs are written only on OK.
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub struct rp_result(pub u32);

/// Success.
pub const RP_RESULT_OK: rp_result = rp_result(0);
/// `unknown_reason`: a retry reason name that is not in the RFC 0049 table.
pub const RP_RESULT_UNKNOWN_REASON: rp_result = rp_result(1);
/// `unknown_name`: a name (operation, service, strategy, jitter, ...) the core does not know.
pub const RP_RESULT_UNKNOWN_NAME: rp_result = rp_result(2);
/// `invalid_duration`: a negative, fractional, non-finite or too large duration.
pub const RP_RESULT_INVALID_DURATION: rp_result = rp_result(3);
/// `invalid_random`: a random draw outside [0, 1) (NaN included).
pub const RP_RESULT_INVALID_RANDOM: rp_result = rp_result(4);
/// `out_of_range`: a number outside the range its field accepts.
pub const RP_RESULT_OUT_OF_RANGE: rp_result = rp_result(5);
/// `invalid_type`: a JSON value of the wrong type.
pub const RP_RESULT_INVALID_TYPE: rp_result = rp_result(6);
/// `unknown_field`: a JSON field the format does not have.
pub const RP_RESULT_UNKNOWN_FIELD: rp_result = rp_result(7);
/// `missing_field`: a required field (or a random draw jitter needs) is absent.
pub const RP_RESULT_MISSING_FIELD: rp_result = rp_result(8);
/// `malformed_json`: text that is not JSON.
pub const RP_RESULT_MALFORMED_JSON: rp_result = rp_result(9);
/// `unsupported_version`: a policy document version this release cannot read.
pub const RP_RESULT_UNSUPPORTED_VERSION: rp_result = rp_result(10);
/// `null_pointer`: a required pointer argument was NULL.
pub const RP_RESULT_NULL_POINTER: rp_result = rp_result(100);
/// `invalid_enum`: an enum argument or field holds a number that names no constant.
pub const RP_RESULT_INVALID_ENUM: rp_result = rp_result(101);
/// `invalid_utf8`: a text argument is not valid UTF-8.
pub const RP_RESULT_INVALID_UTF8: rp_result = rp_result(102);
/// `panic`: the library caught a bug of its own (a Rust panic) at the boundary; outputs are untouched.
pub const RP_RESULT_PANIC: rp_result = rp_result(103);
/// `other_error`: a core error code newer than this binding's table; the detail names it.
pub const RP_RESULT_OTHER_ERROR: rp_result = rp_result(105);
/// `poisoned`: a call on this handle (`rp_budget`, `rp_breaker`) panicked while holding its lock,
/// so its state may be half-changed; the handle refuses every later call: free it and make a new one.
pub const RP_RESULT_POISONED: rp_result = rp_result(106);
/// `invalid_handle`: a handle argument is no live handle of its type: freed already (use after
/// free, double free), a handle of another type (an `rp_budget` passed as an `rp_breaker`), or a
/// pointer this library never returned; nothing was read through it.
pub const RP_RESULT_INVALID_HANDLE: rp_result = rp_result(107);

/// The stable code of every result: the core's own `code()` for 1..=99.
pub(crate) const CODES: [(rp_result, &CStr); 18] = [
    (RP_RESULT_OK, c"ok"),
    (RP_RESULT_UNKNOWN_REASON, c"unknown_reason"),
    (RP_RESULT_UNKNOWN_NAME, c"unknown_name"),
    (RP_RESULT_INVALID_DURATION, c"invalid_duration"),
    (RP_RESULT_INVALID_RANDOM, c"invalid_random"),
    (RP_RESULT_OUT_OF_RANGE, c"out_of_range"),
    (RP_RESULT_INVALID_TYPE, c"invalid_type"),
    (RP_RESULT_UNKNOWN_FIELD, c"unknown_field"),
    (RP_RESULT_MISSING_FIELD, c"missing_field"),
    (RP_RESULT_MALFORMED_JSON, c"malformed_json"),
    (RP_RESULT_UNSUPPORTED_VERSION, c"unsupported_version"),
    (RP_RESULT_NULL_POINTER, c"null_pointer"),
    (RP_RESULT_INVALID_ENUM, c"invalid_enum"),
    (RP_RESULT_INVALID_UTF8, c"invalid_utf8"),
    (RP_RESULT_PANIC, c"panic"),
    (RP_RESULT_OTHER_ERROR, c"other_error"),
    (RP_RESULT_POISONED, c"poisoned"),
    (RP_RESULT_INVALID_HANDLE, c"invalid_handle"),
];

thread_local! {
    /// The detail and the field of the most recent failed call on this thread (errno-style; never
    /// cleared by success).
    static LAST_ERROR: RefCell<(CString, CString)> = RefCell::default();
}

/// A failed call: its result, the field it names and the detail for `rp_last_error_message`.
/// Boxed: `Result<_, Failure>` stays one pointer wide where nothing fails.
#[derive(Debug)]
pub(crate) struct Failure(Box<(rp_result, String, String)>);

impl Failure {
    /// A failure with a detail message, naming no field.
    #[cold]
    pub(crate) fn new(result: rp_result, detail: impl Into<String>) -> Failure {
        Failure::named(result, String::new(), detail)
    }

    /// A failure naming `field`, with a detail message.
    #[cold]
    pub(crate) fn named(result: rp_result, field: impl Into<String>, detail: impl Into<String>) -> Failure {
        Failure(Box::new((result, field.into(), detail.into())))
    }

    /// A NULL required pointer, naming the argument.
    pub(crate) fn null(argument: &str) -> Failure {
        let detail = format!("{argument}: null pointer");
        Failure::named(RP_RESULT_NULL_POINTER, argument, detail)
    }

    /// An enum value outside its constants, naming the argument, the value and the type.
    pub(crate) fn invalid_enum(argument: impl Display, type_name: &str, value: u32) -> Failure {
        let detail = format!("{argument}: {value} is not a valid {type_name}");
        Failure::named(RP_RESULT_INVALID_ENUM, argument.to_string(), detail)
    }

    /// Records the detail and the field as this thread's last error and returns the code.
    pub(crate) fn record(self) -> rp_result {
        let (result, field, detail) = *self.0;
        let c = |s: String| CString::new(s.replace('\0', "\\0")).unwrap_or_default();
        // try_with: during thread teardown the slot may be gone; the code still goes back.
        let _ = LAST_ERROR.try_with(|l| *l.borrow_mut() = (c(detail), c(field)));
        result
    }
}

/// The `rp_result` for a core error code (RP_RESULT_OTHER_ERROR for one this table lacks).
pub(crate) fn result_for_code(code: &str) -> rp_result {
    CODES
        .iter()
        .find(|(r, name)| (1..100).contains(&r.0) && name.to_bytes() == code.as_bytes())
        .map_or(RP_RESULT_OTHER_ERROR, |(r, _)| *r)
}

impl From<retrypolicy::Error> for Failure {
    fn from(e: retrypolicy::Error) -> Failure {
        Failure::named(result_for_code(e.code()), e.field(), e.to_string())
    }
}

/// The stable code of `result`: "ok", "unknown_reason", "null_pointer", ... (static, never freed;
/// NULL for a number that names no result), the same text every language binding uses for 1..=99.
#[no_mangle]
pub extern "C" fn rp_result_code_name(result: rp_result) -> *const c_char {
    let row = CODES.iter().find(|(r, _)| *r == result);
    row.map_or(std::ptr::null(), |(_, name)| name.as_ptr())
}

/// This thread's detail of its most recent failed call, naming the field and the value (e.g.
/// "backoff.min_ms: 9 is out of range: ..."); "" if none failed yet. Never NULL.
///
/// The text stays valid, and unchanged, until the next failed call on the same thread (success
/// does not clear it); copy it to keep it longer. Owned by the library: never free it.
#[no_mangle]
pub extern "C" fn rp_last_error_message() -> *const c_char {
    last_error(|l| l.0.as_ptr())
}

/// The field this thread's most recent failed call names (e.g. "backoff.min_ms", "request"); ""
/// if it names none or none failed yet. Never NULL; valid as `rp_last_error_message`'s text is.
#[no_mangle]
pub extern "C" fn rp_last_error_field() -> *const c_char {
    last_error(|l| l.1.as_ptr())
}

/// A pointer into this thread's last error, or "" (nothing here can panic: try_with, try_borrow).
fn last_error(f: impl Fn(&(CString, CString)) -> *const c_char) -> *const c_char {
    let last = LAST_ERROR.try_with(|l| l.try_borrow().map(|s| f(&s)));
    last.ok().and_then(Result::ok).unwrap_or(c"".as_ptr())
}
