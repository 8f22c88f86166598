//! Classification: from a service's response (or a dispatch failure) to the retry reason to hand to
//! `rp_decide`, through the core's `classify_*` functions; `rp_compat` and KV error maps.

use std::ffi::c_char;

use retrypolicy::{Classification, Compat, ErrorMap};

use crate::enums::{from_c, to_c};
use crate::error::rp_result;
use crate::ffi::{borrow_opt, free_handle, intern, output, text, CBool};
use crate::*;

/// The outcome of classifying one failure: the reason to hand to `rp_decide`, or none, and why.
///
/// The three strings are static, owned by the library: never free them.
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

/// Opt-in deviations from RFC 0049 that major SDKs ship; all false follows the RFC.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct rp_compat {
    /// Java SDK: KV_COLLECTION_OUTDATED goes through the strategy instead of always retrying.
    pub collection_outdated_not_always_retry: CBool,
    /// Java and Go SDKs: KV status 0x85 (EBUSY) is retried as KV_TEMPORARY_FAILURE.
    pub retry_kv_busy: CBool,
    /// Go SDK: query codes 4040 to 4090 are prepared-statement failures.
    pub query_retry_4040_to_4090: CBool,
    /// RFC 0049's best-effort pseudo-code read literally: UNKNOWN is retried for idempotent requests.
    pub retry_unknown_if_idempotent: CBool,
}

/// A parsed KV error map (RFC 0013): immutable, shareable between threads; create with
/// `rp_error_map_from_json`, free with `rp_error_map_free`.
pub struct rp_error_map {
    inner: ErrorMap,
}

/// Compatibility options from C; NULL means all off.
fn compat(c: Option<&rp_compat>) -> Compat {
    let c = c.copied().unwrap_or_default();
    Compat {
        collection_outdated_not_always_retry: c.collection_outdated_not_always_retry.get(),
        retry_kv_busy: c.retry_kv_busy.get(),
        query_retry_4040_to_4090: c.query_retry_4040_to_4090.get(),
        retry_unknown_if_idempotent: c.retry_unknown_if_idempotent.get(),
    }
}

/// Compatibility options back to C.
pub(crate) fn compat_to_c(c: &Compat) -> rp_compat {
    rp_compat {
        collection_outdated_not_always_retry: c.collection_outdated_not_always_retry.into(),
        retry_kv_busy: c.retry_kv_busy.into(),
        query_retry_4040_to_4090: c.query_retry_4040_to_4090.into(),
        retry_unknown_if_idempotent: c.retry_unknown_if_idempotent.into(),
    }
}

/// A core classification as a C struct, its strings interned.
fn classification_to_c(c: Classification) -> rp_classification {
    rp_classification {
        has_reason: c.reason.is_some(),
        reason: c.reason.map_or(RP_REASON_UNKNOWN, to_c),
        rule: intern(c.rule).as_ptr(),
        section: intern(c.section).as_ptr(),
        surface_as: c.surface_as.map_or(std::ptr::null(), |s| intern(s).as_ptr()),
    }
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
        let inner = retrypolicy_wire::from_json_str(text(json, json_len, "json", false)?)?;
        Ok(Box::into_raw(Box::new(rp_error_map { inner })))
    })
}

/// Frees an error map from `rp_error_map_from_json`; NULL is a no-op. No thread may use it any more.
#[no_mangle]
pub unsafe extern "C" fn rp_error_map_free(map: *mut rp_error_map) {
    // SAFETY: the pointer contract (lib.rs).
    unsafe { free_handle(map) }
}

/// Classifies a KV response `status` for `operation`; unknown statuses consult `error_map`
/// (NULL: no map). `compat` may be NULL (all options off).
#[no_mangle]
pub unsafe extern "C" fn rp_classify_kv(
    operation: rp_kv_operation,
    status: u16,
    error_map: *const rp_error_map,
    compat: *const rp_compat,
    classification_out: *mut rp_classification,
) -> rp_result {
    output!(classification_out, {
        let (map, compat) = (
            borrow_opt(error_map).map(|m| &m.inner),
            self::compat(borrow_opt(compat)),
        );
        let op = from_c(operation, "operation")?;
        Ok(classification_to_c(retrypolicy::classify_kv(
            op, status, map, &compat,
        )))
    })
}

/// Classifies the first error of a query response: its `code` and `message` (UTF-8, `message_len`
/// bytes; NULL with length 0 is an empty message). `compat` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn rp_classify_query(
    code: u32,
    message: *const c_char,
    message_len: usize,
    compat: *const rp_compat,
    classification_out: *mut rp_classification,
) -> rp_result {
    output!(classification_out, {
        let message = text(message, message_len, "message", true)?;
        Ok(classification_to_c(retrypolicy::classify_query(
            code,
            message,
            &self::compat(borrow_opt(compat)),
        )))
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
        Ok(classification_to_c(retrypolicy::classify_analytics(code)))
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
        Ok(classification_to_c(retrypolicy::classify_search(http_status)))
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
        let body = text(body, body_len, "body", true)?;
        Ok(classification_to_c(retrypolicy::classify_views(
            http_status,
            body,
        )))
    })
}

/// Names the retry reason for a failure the SDK observed before or while sending.
#[no_mangle]
pub unsafe extern "C" fn rp_classify_dispatch(
    failure: rp_dispatch_failure,
    classification_out: *mut rp_classification,
) -> rp_result {
    output!(
        classification_out,
        Ok(classification_to_c(retrypolicy::classify_dispatch(from_c(
            failure, "failure"
        )?)))
    )
}
