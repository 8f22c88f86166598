//! Names <-> constants of every C enum, in one pair of functions: the names are the core's own
//! (their serde form, as in the JSON API and the fixtures), read by the core's parser.

use std::ffi::c_char;

use crate::enums::{from_c, CEnum, Either};
use crate::error::{rp_result, Failure, RP_RESULT_UNKNOWN_NAME};
use crate::ffi::{intern, output, text};
use crate::*;

/// Which C enum `rp_enum_name` and `rp_enum_from_name` read or write (an `RP_ENUM_*` constant).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_enum(pub u32);

/// `rp_reason`: "KV_LOCKED" (the RFC table's names; the RFC's alias "KV_SYNC_RE_COMMIT_IN_PROGRESS" too).
pub const RP_ENUM_REASON: rp_enum = rp_enum(0);
/// `rp_service`: "kv", "query", "analytics", "search", "views", "cluster_manager", "management".
pub const RP_ENUM_SERVICE: rp_enum = rp_enum(1);
/// `rp_kv_operation`: "get", "get_and_lock", "upsert", "mutate_in", ...
pub const RP_ENUM_KV_OPERATION: rp_enum = rp_enum(2);
/// `rp_http_method`: "GET", "POST", ... (upper case).
pub const RP_ENUM_HTTP_METHOD: rp_enum = rp_enum(3);
/// `rp_strategy`: "best_effort", "fail_fast".
pub const RP_ENUM_STRATEGY: rp_enum = rp_enum(4);
/// `rp_no_retry_cause`: "not_idempotent", ..., "budget_exhausted"; RP_NO_RETRY_CAUSE_NONE has no name (NULL).
pub const RP_ENUM_NO_RETRY_CAUSE: rp_enum = rp_enum(5);
/// `rp_rule`: "best_effort_backoff", ..., "token_bucket_at_or_below_half" (`rp_rule_section` gives its source).
pub const RP_ENUM_RULE: rp_enum = rp_enum(6);
/// `rp_retry_cause`: "error", "timeout", "throttling"; RP_RETRY_CAUSE_NONE has no name (NULL).
pub const RP_ENUM_RETRY_CAUSE: rp_enum = rp_enum(7);
/// `rp_budget_event`: "request", "success", "failure", "timeout", "retry", "final".
pub const RP_ENUM_BUDGET_EVENT: rp_enum = rp_enum(8);
/// `rp_budget_kind`: "token_bucket", "retry_quota", "percentage".
pub const RP_ENUM_BUDGET_KIND: rp_enum = rp_enum(9);
/// `rp_budget_rule`: "token_bucket_above_half", "retry_quota_exhausted", ...
pub const RP_ENUM_BUDGET_RULE: rp_enum = rp_enum(10);
/// `rp_breaker_outcome`: "success", "failure", "timeout".
pub const RP_ENUM_BREAKER_OUTCOME: rp_enum = rp_enum(11);
/// `rp_breaker_state`: "closed", "open", "half_open".
pub const RP_ENUM_BREAKER_STATE: rp_enum = rp_enum(12);
/// `rp_breaker_rule`: "breaker_closed", "breaker_open", "breaker_canary", ...
pub const RP_ENUM_BREAKER_RULE: rp_enum = rp_enum(13);
/// `rp_run_action`: "send", "wait", "done".
pub const RP_ENUM_RUN_ACTION: rp_enum = rp_enum(14);
/// `rp_run_end`: "succeeded", "final", "gave_up", "timed_out", "cancelled"; RP_RUN_END_NONE has no name (NULL).
pub const RP_ENUM_RUN_END: rp_enum = rp_enum(15);
/// `rp_breaker_change_rule`: "breaker_tripped", "breaker_canary", "canary_succeeded", "canary_failed",
/// "canary_timed_out", "canary_released".
pub const RP_ENUM_BREAKER_CHANGE_RULE: rp_enum = rp_enum(16);
/// `rp_grpc_code`: "OK", "CANCELLED", ..., "UNAVAILABLE", "UNAUTHENTICATED" (read in any case, or the number).
pub const RP_ENUM_GRPC_CODE: rp_enum = rp_enum(17);
/// `rp_grpc_reach`: "processed", "never_sent", "unprocessed".
pub const RP_ENUM_GRPC_REACH: rp_enum = rp_enum(18);
/// `rp_grpc_jitter`: "full", "plus_minus_20_percent".
pub const RP_ENUM_GRPC_JITTER: rp_enum = rp_enum(19);
/// `rp_grpc_action`: "succeeded", "retry", "fail".
pub const RP_ENUM_GRPC_ACTION: rp_enum = rp_enum(20);
/// `rp_grpc_throttle`: "success", "failure"; RP_GRPC_THROTTLE_NONE has no name (NULL).
pub const RP_ENUM_GRPC_THROTTLE: rp_enum = rp_enum(21);
/// `rp_grpc_hedge_event`: "start", "hedge_due", "attempt_ended", "committed".
pub const RP_ENUM_GRPC_HEDGE_EVENT: rp_enum = rp_enum(22);
/// `rp_grpc_hedge_end`: "succeeded", "failed"; RP_GRPC_HEDGE_END_NONE has no name (NULL).
pub const RP_ENUM_GRPC_HEDGE_END: rp_enum = rp_enum(23);
/// `rp_grpc_match`: "exact", "service", "default"; RP_GRPC_MATCH_NONE has no name (NULL).
pub const RP_ENUM_GRPC_MATCH: rp_enum = rp_enum(24);
/// `rp_aws_mode`: "standard", "adaptive", "legacy".
pub const RP_ENUM_AWS_MODE: rp_enum = rp_enum(25);
/// `rp_aws_behavior`: "classic", "2026".
pub const RP_ENUM_AWS_BEHAVIOR: rp_enum = rp_enum(26);
/// `rp_aws_retryable_trait`: "transient", "throttling"; RP_AWS_RETRYABLE_NONE has no name (NULL).
pub const RP_ENUM_AWS_RETRYABLE_TRAIT: rp_enum = rp_enum(27);
/// `rp_aws_action`: "retry", "no_retry".
pub const RP_ENUM_AWS_ACTION: rp_enum = rp_enum(28);
/// `rp_run_signal`: "none", "retry", "give_up".
pub const RP_ENUM_RUN_SIGNAL: rp_enum = rp_enum(29);

/// The name of constant `value` of `C`: static, NULL for a constant without one.
fn name<C: CEnum>(value: u32) -> Result<*const c_char, Failure> {
    match serde_json::to_value(from_c(C::new(value), "value")?) {
        Ok(serde_json::Value::String(s)) => Ok(intern(&s).as_ptr()),
        _ => Ok(std::ptr::null()),
    }
}

/// The constant of `C` named `name`, read by the core's parser (whose error names the value).
fn from_name<C: CEnum>(name: &str) -> Result<u32, Failure> {
    let core = retrypolicy_wire::parse_name::<C::Core>("name", name)?;
    let detail = || {
        format!(
            "name: {} is not supported by this C library",
            retrypolicy::error::shorten(name)
        )
    };
    C::from_core(core)
        .map(C::raw)
        .ok_or_else(|| Failure::named(RP_RESULT_UNKNOWN_NAME, "name", detail()))
}

/// The name functions of one C enum: number -> name, name -> number.
type Names = (
    fn(u32) -> Result<*const c_char, Failure>,
    fn(&str) -> Result<u32, Failure>,
);

/// The name functions of the C enum `kind`.
fn names(kind: rp_enum) -> Result<Names, Failure> {
    fn of<C: CEnum>() -> Names {
        (name::<C>, from_name::<C>)
    }
    Ok(match kind {
        RP_ENUM_REASON => of::<rp_reason>(),
        RP_ENUM_SERVICE => of::<rp_service>(),
        RP_ENUM_KV_OPERATION => of::<rp_kv_operation>(),
        RP_ENUM_HTTP_METHOD => of::<rp_http_method>(),
        RP_ENUM_STRATEGY => of::<rp_strategy>(),
        RP_ENUM_NO_RETRY_CAUSE => of::<rp_no_retry_cause>(),
        RP_ENUM_RULE => of::<rp_rule>(),
        RP_ENUM_RETRY_CAUSE => of::<rp_retry_cause>(),
        RP_ENUM_BUDGET_EVENT => of::<rp_budget_event>(),
        RP_ENUM_BUDGET_KIND => of::<rp_budget_kind>(),
        RP_ENUM_BUDGET_RULE => of::<rp_budget_rule>(),
        RP_ENUM_BREAKER_OUTCOME => of::<rp_breaker_outcome>(),
        RP_ENUM_BREAKER_STATE => of::<rp_breaker_state>(),
        RP_ENUM_BREAKER_RULE => of::<rp_breaker_rule>(),
        RP_ENUM_RUN_ACTION => of::<rp_run_action>(),
        RP_ENUM_RUN_END => of::<rp_run_end>(),
        RP_ENUM_BREAKER_CHANGE_RULE => of::<rp_breaker_change_rule>(),
        RP_ENUM_GRPC_CODE => of::<rp_grpc_code>(),
        RP_ENUM_GRPC_REACH => of::<rp_grpc_reach>(),
        RP_ENUM_GRPC_JITTER => of::<rp_grpc_jitter>(),
        RP_ENUM_GRPC_ACTION => of::<rp_grpc_action>(),
        RP_ENUM_GRPC_THROTTLE => of::<rp_grpc_throttle>(),
        RP_ENUM_GRPC_HEDGE_EVENT => of::<rp_grpc_hedge_event>(),
        RP_ENUM_GRPC_HEDGE_END => of::<rp_grpc_hedge_end>(),
        RP_ENUM_GRPC_MATCH => of::<rp_grpc_match>(),
        RP_ENUM_AWS_MODE => of::<rp_aws_mode>(),
        RP_ENUM_AWS_BEHAVIOR => of::<rp_aws_behavior>(),
        RP_ENUM_AWS_RETRYABLE_TRAIT => of::<rp_aws_retryable_trait>(),
        RP_ENUM_AWS_ACTION => of::<rp_aws_action>(),
        RP_ENUM_RUN_SIGNAL => of::<rp_run_signal>(),
        _ => return Err(Failure::invalid_enum("kind", "rp_enum", kind.0)),
    })
}

/// The name of constant `value` of the C enum `kind`, e.g. (RP_ENUM_REASON, RP_REASON_KV_LOCKED):
/// "KV_LOCKED" (static, never freed).
#[no_mangle]
pub unsafe extern "C" fn rp_enum_name(kind: rp_enum, value: u32, name_out: *mut *const c_char) -> rp_result {
    output!(name_out, names(kind)?.0(value))
}

/// The constant of the C enum `kind` named `name` (NUL-terminated), e.g. (RP_ENUM_KV_OPERATION,
/// "upsert"): RP_KV_OPERATION_UPSERT; an unknown name is RP_RESULT_UNKNOWN_NAME (UNKNOWN_REASON for
/// reasons, OUT_OF_RANGE for gRPC status codes, as the core refuses one in a service config).
#[no_mangle]
pub unsafe extern "C" fn rp_enum_from_name(
    kind: rp_enum,
    name: *const c_char,
    value_out: *mut u32,
) -> rp_result {
    output!(value_out, names(kind)?.1(text(name, None, "name")?))
}

/// The spec section behind `rule`, e.g. "RFC 0049, Best Effort", or for a budget's refusing rule
/// the budget's source (static, never freed).
#[no_mangle]
pub unsafe extern "C" fn rp_rule_section(rule: rp_rule, section_out: *mut *const c_char) -> rp_result {
    output!(section_out, {
        let section = match from_c(rule, "rule")? {
            Either::Left(rule) => rule.section(),
            Either::Right(rule) => rule.source(),
        };
        Ok(intern(section).as_ptr())
    })
}
