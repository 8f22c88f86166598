//! `rp_result`: one number per core error code plus the binding's own, and the per-thread detail.
//!
//! Numbers are explicit and never reused: a code that goes away leaves a gap. 1..=99 mirror the
//! core's stable error codes (`retrypolicy::Error::code()`); 100 and up belong to the C boundary.

use std::cell::RefCell;
use std::ffi::{c_char, CStr};

use crate::ffi::{output, write_text};
use crate::panic::ffi_boundary;

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
/// `buffer_too_small`: the caller's buffer cannot hold the text and its NUL.
pub const RP_RESULT_BUFFER_TOO_SMALL: rp_result = rp_result(104);
/// `other_error`: a core error code newer than this binding's table; the detail names it.
pub const RP_RESULT_OTHER_ERROR: rp_result = rp_result(105);

/// One row per result: the number, its stable code (the core's for 1..=99), and what it means.
#[rustfmt::skip]
pub(crate) const RESULTS: [(rp_result, &CStr, &str); 17] = [
    (RP_RESULT_OK, c"ok", "the call succeeded"),
    (RP_RESULT_UNKNOWN_REASON, c"unknown_reason", "a retry reason name not in the RFC 0049 table"),
    (RP_RESULT_UNKNOWN_NAME, c"unknown_name", "a name (service, strategy, ...) the core does not know"),
    (RP_RESULT_INVALID_DURATION, c"invalid_duration", "a duration is a whole number of milliseconds >= 0"),
    (RP_RESULT_INVALID_RANDOM, c"invalid_random", "a random draw must be in [0, 1)"),
    (RP_RESULT_OUT_OF_RANGE, c"out_of_range", "a number is outside the range its field accepts"),
    (RP_RESULT_INVALID_TYPE, c"invalid_type", "a JSON value has the wrong type"),
    (RP_RESULT_UNKNOWN_FIELD, c"unknown_field", "a JSON field the format does not have"),
    (RP_RESULT_MISSING_FIELD, c"missing_field", "a required field is absent"),
    (RP_RESULT_MALFORMED_JSON, c"malformed_json", "the text is not JSON"),
    (RP_RESULT_UNSUPPORTED_VERSION, c"unsupported_version", "this release reads policy version 1"),
    (RP_RESULT_NULL_POINTER, c"null_pointer", "a required pointer argument was NULL"),
    (RP_RESULT_INVALID_ENUM, c"invalid_enum", "an enum value names no constant"),
    (RP_RESULT_INVALID_UTF8, c"invalid_utf8", "text is not valid UTF-8"),
    (RP_RESULT_PANIC, c"panic", "an internal error was caught at the library boundary"),
    (RP_RESULT_BUFFER_TOO_SMALL, c"buffer_too_small", "the buffer cannot hold the text and its NUL"),
    (RP_RESULT_OTHER_ERROR, c"other_error", "a core error this version of the C library has no number for"),
];

/// The row of `result`, if it names one.
pub(crate) fn row(result: rp_result) -> Option<&'static (rp_result, &'static CStr, &'static str)> {
    RESULTS.iter().find(|(r, _, _)| *r == result)
}

thread_local! {
    /// The detail of the most recent failed call on this thread (errno-style; never cleared by success).
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

/// A failed call: its result, and the detail for `rp_last_error_message` (`None` leaves the last
/// one, so that reading a message never overwrites it). Boxed: `Result<_, Failure>` stays one
/// pointer wide on the path where nothing fails.
#[derive(Debug)]
pub(crate) struct Failure(Box<(rp_result, Option<String>)>);

impl Failure {
    /// A failure with a detail message.
    #[cold]
    pub(crate) fn new(result: rp_result, detail: impl Into<String>) -> Failure {
        Failure(Box::new((result, Some(detail.into()))))
    }

    /// A failure that leaves this thread's last-error detail alone.
    #[cold]
    pub(crate) fn quiet(result: rp_result) -> Failure {
        Failure(Box::new((result, None)))
    }

    /// The result code.
    pub(crate) fn result(&self) -> rp_result {
        self.0 .0
    }

    /// A NULL required pointer, naming the argument.
    pub(crate) fn null(argument: &str) -> Failure {
        Failure::new(RP_RESULT_NULL_POINTER, format!("{argument}: null pointer"))
    }

    /// An enum value outside its constants, naming the argument and the type.
    pub(crate) fn invalid_enum(argument: &str, type_name: &str, value: u32) -> Failure {
        Failure::new(
            RP_RESULT_INVALID_ENUM,
            format!("{argument}: {value} is not a valid {type_name}"),
        )
    }

    /// Text that is not UTF-8, naming the argument and the byte offset.
    pub(crate) fn invalid_utf8(argument: &str, e: std::str::Utf8Error) -> Failure {
        Failure::new(
            RP_RESULT_INVALID_UTF8,
            format!("{argument}: invalid UTF-8 at byte {}", e.valid_up_to()),
        )
    }

    /// The same failure with `prefix` put before its detail (a path, on the error path only).
    pub(crate) fn prefixed(mut self, prefix: &str) -> Failure {
        if let Some(d) = self.0 .1.as_mut() {
            d.insert_str(0, prefix);
        }
        self
    }

    /// Records the detail (if any) as this thread's last error and returns the code.
    pub(crate) fn record(self) -> rp_result {
        let (result, detail) = *self.0;
        if let Some(detail) = detail {
            // try_with: during thread teardown the slot may be gone; the code still goes back.
            let _ = LAST_ERROR.try_with(|l| *l.borrow_mut() = detail);
        }
        result
    }
}

/// The `rp_result` for a core error code.
pub(crate) fn result_for_code(code: &str) -> rp_result {
    RESULTS
        .iter()
        .take_while(|(r, _, _)| r.0 < 100)
        .find(|(r, name, _)| r.0 != 0 && name.to_bytes() == code.as_bytes())
        .map_or(RP_RESULT_OTHER_ERROR, |(r, _, _)| *r)
}

impl From<retrypolicy::Error> for Failure {
    fn from(e: retrypolicy::Error) -> Failure {
        Failure::new(result_for_code(e.code()), e.to_string())
    }
}

/// Runs `f` on this thread's last-error detail.
pub(crate) fn with_last_error<T>(f: impl FnOnce(&str) -> T) -> T {
    let detail = LAST_ERROR.try_with(|l| l.borrow().clone()).unwrap_or_default();
    f(&detail)
}

/// Copies the message of `result` (e.g. "null_pointer: a required pointer ...") into `buf`, NUL-terminated.
///
/// `*written` receives the message length without the NUL. If `len` is too small nothing is
/// copied, `*written` receives the length needed and the result is RP_RESULT_BUFFER_TOO_SMALL;
/// `buf` may be NULL when `len` is 0. An unknown `result` number is RP_RESULT_INVALID_ENUM.
#[no_mangle]
pub unsafe extern "C" fn rp_result_message(
    result: rp_result,
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> rp_result {
    ffi_boundary(|| {
        let (_, name, meaning) = row(result).ok_or_else(|| Failure::quiet(RP_RESULT_INVALID_ENUM))?;
        let message = format!("{}: {meaning}", name.to_str().unwrap_or_default());
        // SAFETY: the pointer contract (lib.rs).
        unsafe { write_text(&message, buf, len, written) }
    })
}

/// The stable code of `result` ("ok", "unknown_reason", "null_pointer", ...), shared with every
/// language binding for 1..=99 (static, never freed).
#[no_mangle]
pub unsafe extern "C" fn rp_result_code_name(result: rp_result, name_out: *mut *const c_char) -> rp_result {
    output!(name_out, {
        let (_, name, _) =
            row(result).ok_or_else(|| Failure::invalid_enum("result", "rp_result", result.0))?;
        Ok(name.as_ptr())
    })
}

/// Copies this thread's detail of its most recent failed call (naming the field, e.g.
/// "timeout_ms: invalid duration ...") into `buf`; empty if none failed yet.
///
/// The detail is kept until the next failure on the same thread (success does not clear it);
/// reading it never changes it. Buffer rules as for `rp_result_message`.
#[no_mangle]
pub unsafe extern "C" fn rp_last_error_message(
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> rp_result {
    ffi_boundary(|| {
        // SAFETY: the pointer contract (lib.rs).
        with_last_error(|m| unsafe { write_text(m, buf, len, written) })
            .map_err(|f| Failure::quiet(f.result()))
    })
}
