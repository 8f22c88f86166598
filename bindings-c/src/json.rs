//! The core's JSON API by function name (the wire layer's `api::call`): how C reaches the rules
//! that have no typed C function (MongoDB, HTTP, backoff, transactions, explain, simulate, ...).

use std::ffi::c_char;

use crate::error::{result_for_code, rp_result, Failure, RP_RESULT_PANIC};
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

/// A state snapshot (`rp_budget_restore`, `rp_breaker_restore`) from JSON text, its errors naming
/// fields under `snapshot` ("snapshot.balance"), as the core's restore does.
pub(crate) fn snapshot_from_json<S: serde::de::DeserializeOwned>(text: &str) -> Result<S, Failure> {
    /// The snapshot at the key `snapshot`, so the wire layer's field paths start there.
    #[derive(serde::Deserialize)]
    struct At<S> {
        snapshot: S,
    }
    let value: serde_json::Value = retrypolicy_wire::from_json_str(text)
        .map_err(|e| Failure::named(result_for_code(e.code()), "snapshot", format!("snapshot: {e}")))?;
    let at: At<S> = retrypolicy_wire::from_json_value(&serde_json::json!({ "snapshot": value }))?;
    Ok(at.snapshot)
}

/// `value` as JSON text the caller frees with `rp_string_free`.
pub(crate) fn to_json<T: serde::Serialize>(value: &T) -> Result<*mut c_char, Failure> {
    let json = serde_json::to_string(value).map_err(|e| Failure::new(RP_RESULT_PANIC, e.to_string()))?;
    owned_string(json)
}
