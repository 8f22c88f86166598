//! The core's JSON API by function name (the wire layer's `api::call`): how C reaches the rules
//! that have no typed C function (MongoDB, HTTP, backoff, transactions, explain, simulate, ...).

use std::ffi::c_char;

use crate::error::rp_result;
use crate::ffi::{output, owned_string, text};

/// Calls the JSON API: `function` names a spec-fixture function (e.g. "mongodb_decide",
/// "http_next"), `input` holds its inputs as a JSON object.
///
/// On success `*json_out` owns the result as NUL-terminated JSON, freed with `rp_string_free`;
/// on failure `rp_last_error_message` names the field.
#[no_mangle]
pub unsafe extern "C" fn rp_call_json(
    function: *const c_char,
    input: *const c_char,
    input_len: usize,
    json_out: *mut *mut c_char,
) -> rp_result {
    output!(json_out, {
        let function = text(function, None, "function")?;
        let input: serde_json::Value =
            retrypolicy_wire::from_json_str(text(input, Some(input_len), "input")?)?;
        owned_string(retrypolicy_wire::api::call(function, &input)?.to_string())
    })
}
