//! Classification: from a service's response to the retry reason to hand to `rp_decide`, through
//! the core's `classify_*` functions; KV error maps. (A failure before or while sending is its own
//! reason, RP_REASON_SOCKET_NOT_AVAILABLE and the like; `rp_call_json("classify_dispatch")` names its rule.)

use std::ffi::c_char;

use retrypolicy::{Classification, ErrorMap};

use crate::enums::{from_c, to_c};
use crate::error::rp_result;
use crate::ffi::{intern, output, text};
use crate::handle::{get_optional, register, release};
use crate::policy::policy_or_default;
use crate::*;

/// The outcome of classifying one failure: the reason to hand to `rp_decide`, or none, and why.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rp_classification {
    /// Whether `reason` is set; false means: fail the request without retry handling.
    pub has_reason: bool,
    /// The retry reason, read only when `has_reason`.
    pub reason: rp_reason,
    /// The stable name of the rule that matched (static, never freed).
    pub rule: *const c_char,
    /// The spec section the rule comes from (static, never freed).
    pub section: *const c_char,
    /// The error to surface instead (e.g. "cas_mismatch"), or NULL (static, never freed).
    pub surface_as: *const c_char,
}

/// A parsed KV error map (RFC 0013): immutable, shareable between threads; create with
/// `rp_error_map_from_json`, free with `rp_error_map_free`.
pub struct rp_error_map(ErrorMap);

/// A core classification as a C struct, its strings interned.
fn classified(c: Classification) -> Result<rp_classification, crate::error::Failure> {
    Ok(rp_classification {
        has_reason: c.reason.is_some(),
        reason: c.reason.map_or(RP_REASON_UNKNOWN, to_c),
        rule: intern(c.rule).as_ptr(),
        section: intern(c.section).as_ptr(),
        surface_as: c.surface_as.map_or(std::ptr::null(), |s| intern(s).as_ptr()),
    })
}

/// Parses a KV error map document (RFC 0013, as GET_ERROR_MAP returns it) into a new handle,
/// which the caller frees with `rp_error_map_free`.
#[no_mangle]
pub unsafe extern "C" fn rp_error_map_from_json(
    json: *const c_char,
    json_len: usize,
    map_out: *mut *mut rp_error_map,
) -> rp_result {
    output!(map_out, {
        let map = retrypolicy_wire::from_json_str(text(json, Some(json_len), "json")?)?;
        Ok(register(rp_error_map(map)))
    })
}

/// Frees an error map from `rp_error_map_from_json`; NULL is a no-op. A pointer that is no live
/// `rp_error_map` frees nothing and sets this thread's last error (RP_RESULT_INVALID_HANDLE).
#[no_mangle]
pub extern "C" fn rp_error_map_free(map: *mut rp_error_map) {
    release(map, "map")
}

/// Classifies a KV response `status` for `operation`; unknown statuses consult `error_map`
/// (NULL: no map). `policy`'s compat options apply (NULL: the RFC default policy, none).
#[no_mangle]
pub unsafe extern "C" fn rp_classify_kv(
    operation: rp_kv_operation,
    status: u16,
    error_map: *const rp_error_map,
    policy: *const rp_policy,
    classification_out: *mut rp_classification,
) -> rp_result {
    output!(classification_out, {
        let op = from_c(operation, "operation")?;
        let map = get_optional(error_map, "error_map")?;
        classified(retrypolicy::classify_kv(
            op,
            status,
            map.as_ref().map(|m| &m.0),
            &policy_or_default(policy)?.compat,
        ))
    })
}

/// Classifies the first error of a query response: its `code`, `message` (UTF-8, `message_len`
/// bytes; NULL with length 0 is an empty message) and the `"retry"` flag the server set on it,
/// under `policy`'s compat options (NULL: none).
#[no_mangle]
pub unsafe extern "C" fn rp_classify_query(
    code: u32,
    message: *const c_char,
    message_len: usize,
    retry: CBool,
    policy: *const rp_policy,
    classification_out: *mut rp_classification,
) -> rp_result {
    output!(classification_out, {
        let (message, policy) = (
            text(message, Some(message_len), "message")?,
            policy_or_default(policy)?,
        );
        classified(retrypolicy::classify_query(
            code,
            message,
            retry.get(),
            &policy.compat,
        ))
    })
}

/// Classifies the first error code of an analytics response.
#[no_mangle]
pub unsafe extern "C" fn rp_classify_analytics(
    code: u32,
    classification_out: *mut rp_classification,
) -> rp_result {
    output!(
        classification_out,
        classified(retrypolicy::classify_analytics(code))
    )
}

/// Classifies a search response's HTTP status.
#[no_mangle]
pub unsafe extern "C" fn rp_classify_search(
    http_status: u16,
    classification_out: *mut rp_classification,
) -> rp_result {
    output!(
        classification_out,
        classified(retrypolicy::classify_search(http_status))
    )
}

/// Classifies a views response from its HTTP status and body (UTF-8, `body_len` bytes, not
/// NUL-terminated; NULL with length 0 is an empty body).
#[no_mangle]
pub unsafe extern "C" fn rp_classify_views(
    http_status: u16,
    body: *const c_char,
    body_len: usize,
    classification_out: *mut rp_classification,
) -> rp_result {
    output!(classification_out, {
        classified(retrypolicy::classify_views(
            http_status,
            text(body, Some(body_len), "body")?,
        ))
    })
}
