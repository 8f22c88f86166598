//! Durations and status codes in the forms hosts hold them, checked by the core's own rules.

use std::ffi::c_char;

use retrypolicy::serde_form::{ms, status};
use serde::Deserialize;

use crate::error::{rp_result, Failure};
use crate::ffi::{c_str, output};

/// A millisecond value read by the core's `serde_form::ms` rules (a whole number, or a decimal string).
#[derive(Deserialize)]
struct Millis(#[serde(with = "ms")] u64);

/// `value` read as milliseconds, naming "duration" in the error.
fn millis(value: serde_json::Value) -> Result<u64, Failure> {
    let Millis(v) = retrypolicy_wire::from_json_value(&value).map_err(|e| e.with_field("duration"))?;
    Ok(v)
}

/// Checks a signed millisecond count (a host's int64): negative is RP_RESULT_INVALID_DURATION.
#[no_mangle]
pub unsafe extern "C" fn rp_duration_ms_from_int64(ms: i64, ms_out: *mut u64) -> rp_result {
    output!(ms_out, millis(ms.into()))
}

/// Checks a millisecond count held in a double: fractional, negative, NaN, infinite or past
/// 2^53-1 is RP_RESULT_INVALID_DURATION.
#[no_mangle]
pub unsafe extern "C" fn rp_duration_ms_from_double(ms: f64, ms_out: *mut u64) -> rp_result {
    output!(ms_out, Ok(retrypolicy::units::millis_from_f64("duration", ms)?))
}

/// Parses a decimal millisecond count ("18446744073709551615"): anything but digits, or a value
/// past 2^64-1, is RP_RESULT_INVALID_DURATION.
#[no_mangle]
pub unsafe extern "C" fn rp_duration_ms_from_string(text: *const c_char, ms_out: *mut u64) -> rp_result {
    output!(ms_out, millis(c_str(text, "text")?.into()))
}

/// Parses a KV status written as hex ("0xa2", "0X86"); anything else is RP_RESULT_OUT_OF_RANGE.
#[no_mangle]
pub unsafe extern "C" fn rp_kv_status_from_string(text: *const c_char, status_out: *mut u16) -> rp_result {
    output!(
        status_out,
        Ok(status::parse_text("status", c_str(text, "text")?)?)
    )
}
