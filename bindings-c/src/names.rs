//! Names <-> constants: the stable names of the JSON forms and the RFC table, through the core's
//! own parsers, and the RFC 0049 table columns of a reason.

use std::ffi::{c_char, CStr};

use retrypolicy::{KvOperation, RetryReason};
use retrypolicy_wire::parse_name;
use serde::Serialize;

use crate::enums::{from_c, CEnum};
use crate::error::{rp_result, Failure, RP_RESULT_UNKNOWN_NAME};
use crate::ffi::{c_str, intern, output};
use crate::*;

/// The name the core's serde form gives `value` (a service, strategy, ...), static.
pub(crate) fn serde_name<T: Serialize>(value: &T) -> &'static CStr {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => intern(&s),
        other => unreachable!("a unit enum serializes to a string, got {other:?}"),
    }
}

/// The C constant for the NUL-terminated `name`, parsed by the core's `parse`.
/// Safety: `name` must be NULL or a NUL-terminated string.
unsafe fn constant<C: CEnum>(
    name: *const c_char,
    parse: impl FnOnce(&str) -> Result<C::Core, retrypolicy::Error>,
) -> Result<C, Failure> {
    // SAFETY: forwarded from this function's contract.
    let name = unsafe { c_str(name, "name") }?;
    C::from_core(parse(name)?).ok_or_else(|| {
        Failure::new(
            RP_RESULT_UNKNOWN_NAME,
            format!("{name}: not supported by this version of the C library"),
        )
    })
}

/// Parses a retry reason name ("KV_LOCKED"; the RFC's alias "KV_SYNC_RE_COMMIT_IN_PROGRESS" too).
#[no_mangle]
pub unsafe extern "C" fn rp_reason_from_name(name: *const c_char, reason_out: *mut rp_reason) -> rp_result {
    output!(reason_out, constant(name, |n| RetryReason::parse("reason", n)))
}

/// The RFC table name of `reason`, e.g. "KV_LOCKED" (static, never freed).
#[no_mangle]
pub unsafe extern "C" fn rp_reason_name(reason: rp_reason, name_out: *mut *const c_char) -> rp_result {
    output!(name_out, Ok(intern(from_c(reason, "reason")?.name()).as_ptr()))
}

/// RFC 0049 table column "Non-idempotent Retry": may a non-idempotent request be retried for `reason`?
#[no_mangle]
pub unsafe extern "C" fn rp_reason_allows_non_idempotent_retry(
    reason: rp_reason,
    allowed_out: *mut bool,
) -> rp_result {
    output!(
        allowed_out,
        Ok(from_c(reason, "reason")?.allows_non_idempotent_retry())
    )
}

/// RFC 0049 table column "Always retry": is `reason` retried regardless of the strategy?
#[no_mangle]
pub unsafe extern "C" fn rp_reason_always_retry(reason: rp_reason, always_out: *mut bool) -> rp_result {
    output!(always_out, Ok(from_c(reason, "reason")?.always_retry()))
}

/// Parses a service name ("kv", "query", "analytics", "search", "views", "cluster_manager", "management").
#[no_mangle]
pub unsafe extern "C" fn rp_service_from_name(
    name: *const c_char,
    service_out: *mut rp_service,
) -> rp_result {
    output!(service_out, constant(name, |n| parse_name("service", n)))
}

/// The name of `service`, e.g. "cluster_manager" (static, never freed).
#[no_mangle]
pub unsafe extern "C" fn rp_service_name(service: rp_service, name_out: *mut *const c_char) -> rp_result {
    output!(name_out, Ok(serde_name(&from_c(service, "service")?).as_ptr()))
}

/// Parses a KV operation name ("get", "upsert", "mutate_in", ...).
#[no_mangle]
pub unsafe extern "C" fn rp_kv_operation_from_name(
    name: *const c_char,
    operation_out: *mut rp_kv_operation,
) -> rp_result {
    output!(
        operation_out,
        constant(name, |n| KvOperation::parse("operation", n))
    )
}

/// The name of KV `operation`, e.g. "get_and_lock" (static, never freed).
#[no_mangle]
pub unsafe extern "C" fn rp_kv_operation_name(
    operation: rp_kv_operation,
    name_out: *mut *const c_char,
) -> rp_result {
    output!(
        name_out,
        Ok(intern(from_c(operation, "operation")?.name()).as_ptr())
    )
}

/// Parses an HTTP method name ("GET", "POST", ...; upper case).
#[no_mangle]
pub unsafe extern "C" fn rp_http_method_from_name(
    name: *const c_char,
    method_out: *mut rp_http_method,
) -> rp_result {
    output!(method_out, constant(name, |n| parse_name("method", n)))
}

/// The name of `method`, e.g. "DELETE" (static, never freed).
#[no_mangle]
pub unsafe extern "C" fn rp_http_method_name(
    method: rp_http_method,
    name_out: *mut *const c_char,
) -> rp_result {
    output!(name_out, Ok(serde_name(&from_c(method, "method")?).as_ptr()))
}

/// Parses a strategy name ("best_effort", "fail_fast").
#[no_mangle]
pub unsafe extern "C" fn rp_strategy_from_name(
    name: *const c_char,
    strategy_out: *mut rp_strategy,
) -> rp_result {
    output!(strategy_out, constant(name, |n| parse_name("strategy", n)))
}

/// The name of `strategy`, e.g. "fail_fast" (static, never freed).
#[no_mangle]
pub unsafe extern "C" fn rp_strategy_name(strategy: rp_strategy, name_out: *mut *const c_char) -> rp_result {
    output!(name_out, Ok(serde_name(&from_c(strategy, "strategy")?).as_ptr()))
}

/// Parses a dispatch failure name ("socket_not_available", "circuit_breaker_open", ...).
#[no_mangle]
pub unsafe extern "C" fn rp_dispatch_failure_from_name(
    name: *const c_char,
    failure_out: *mut rp_dispatch_failure,
) -> rp_result {
    output!(failure_out, constant(name, |n| parse_name("failure", n)))
}

/// The name of dispatch `failure`, e.g. "socket_closed_while_in_flight" (static, never freed).
#[no_mangle]
pub unsafe extern "C" fn rp_dispatch_failure_name(
    failure: rp_dispatch_failure,
    name_out: *mut *const c_char,
) -> rp_result {
    output!(name_out, Ok(serde_name(&from_c(failure, "failure")?).as_ptr()))
}

/// The stable name of `rule`, e.g. "best_effort_backoff" (static, never freed).
#[no_mangle]
pub unsafe extern "C" fn rp_rule_name(rule: rp_rule, name_out: *mut *const c_char) -> rp_result {
    output!(name_out, Ok(intern(from_c(rule, "rule")?.name()).as_ptr()))
}

/// The spec section behind `rule`, e.g. "RFC 0049, Best Effort" (static, never freed).
#[no_mangle]
pub unsafe extern "C" fn rp_rule_section(rule: rp_rule, section_out: *mut *const c_char) -> rp_result {
    output!(section_out, Ok(intern(from_c(rule, "rule")?.section()).as_ptr()))
}

/// The name of `cause`, e.g. "not_idempotent"; NULL for RP_NO_RETRY_CAUSE_NONE (static, never freed).
#[no_mangle]
pub unsafe extern "C" fn rp_no_retry_cause_name(
    cause: rp_no_retry_cause,
    name_out: *mut *const c_char,
) -> rp_result {
    output!(
        name_out,
        Ok(from_c(cause, "cause")?.map_or(std::ptr::null(), |c| serde_name(&c).as_ptr()))
    )
}
