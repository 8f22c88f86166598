//! `rp_decision` and `rp_decide`: the inputs converted into the core's types, the core's
//! `decide_with`, and the decision written back; its log line. No rule lives here.

use std::ffi::{c_char, c_void};

use retrypolicy::{Decision, RetryStrategy};
use serde_json::json;

use crate::budgeted::refusal_from_c;
use crate::enums::{from_c, to_c, Either};
use crate::error::{rp_result, Failure, RP_RESULT_OUT_OF_RANGE};
use crate::ffi::{borrow, output, owned_string, CBool};
use crate::strategy::{inputs, CStrategy};
use crate::*;

/// The outcome of one decision: retry after `delay_ms`, or fail, with the rule that decided.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rp_decision {
    /// Whether to retry: wait `delay_ms`, then resend (or cancel, when `then_cancel`); false: fail now.
    pub retry: CBool,
    /// Milliseconds to wait before resending (0 when not retrying).
    pub delay_ms: u64,
    /// Whether the delay was cut to the time left before the timeout.
    pub capped: CBool,
    /// Whether the request must be cancelled (timed out) when the delay ends instead of resent.
    pub then_cancel: CBool,
    /// Why not retried (RP_NO_RETRY_CAUSE_NONE when retrying).
    pub cause: rp_no_retry_cause,
    /// The rule that decided (`RP_RULE_*`; `rp_rule_section` gives the spec section).
    pub rule: rp_rule,
    /// The reason decided on.
    pub reason: rp_reason,
    /// Retries made before this decision.
    pub attempts: u32,
    /// Whether the request counted as idempotent.
    pub idempotent: CBool,
}

/// A core decision as a C struct.
pub(crate) fn decision_to_c(d: &Decision) -> rp_decision {
    let (delay_ms, capped, then_cancel, cause) = match d {
        Decision::Retry(r) => (r.delay_ms, r.capped, r.then_cancel, None),
        Decision::NoRetry(n) => (0, false, false, Some(n.cause)),
    };
    let (attempts, idempotent) = match d {
        Decision::Retry(r) => (r.attempts, r.idempotent),
        Decision::NoRetry(n) => (n.attempts, n.idempotent),
    };
    rp_decision {
        retry: d.is_retry().into(),
        delay_ms,
        capped: capped.into(),
        then_cancel: then_cancel.into(),
        cause: to_c(cause.map(Either::Left)),
        rule: to_c(Either::Left(d.rule())),
        reason: to_c(d.reason()),
        attempts,
        idempotent: idempotent.into(),
    }
}

/// Decides whether and when to retry `request` after `reason` under `policy` (NULL: the RFC default),
/// asking the host `strategy` (NULL: the policy's own) where a strategy decides.
///
/// The deadline, UNKNOWN and always-retry rules and the request's own strategy come first (the host
/// is not asked then); `strategy(user_data, request, reason, &delay_ms)` is called at most once, on
/// this thread, and its delay is capped to the timeout. Neither pointer is kept.
#[no_mangle]
pub unsafe extern "C" fn rp_decide(
    request: *const rp_request,
    reason: rp_reason,
    policy: *const rp_policy,
    strategy: rp_strategy_fn,
    user_data: *mut c_void,
    decision_out: *mut rp_decision,
) -> rp_result {
    output!(decision_out, {
        let host = strategy.map(|callback| CStrategy(callback, user_data, request));
        let (request, reason, policy) = inputs(request, reason, policy)?;
        let host = host.as_ref().map(|h| h as &dyn RetryStrategy);
        let d = retrypolicy::decide_with(&request, reason, &policy, host)?;
        Ok(decision_to_c(&d))
    })
}

/// Does nothing and returns RP_RESULT_OK: `rp_decide`'s signature, for benchmarks only (feature `bench`).
#[cfg(feature = "bench")]
#[no_mangle]
pub unsafe extern "C" fn rp_decide_noop(
    request: *const rp_request,
    reason: rp_reason,
    policy: *const rp_policy,
    strategy: rp_strategy_fn,
    user_data: *mut c_void,
    decision_out: *mut rp_decision,
) -> rp_result {
    let _ = (request, reason, policy, strategy, user_data, decision_out);
    crate::panic::ffi_boundary(|| Ok(()))
}

/// The decision's one-line log text (RFC 0049 asks to log every retry and non-retry), e.g. "retry
/// 8 after 500 ms, capped to the timeout, then cancel (reason KV_NOT_MY_VBUCKET, ...)", as a new
/// string the caller frees with `rp_string_free`.
#[no_mangle]
pub unsafe extern "C" fn rp_decision_format(
    decision: *const rp_decision,
    line_out: *mut *mut c_char,
) -> rp_result {
    output!(
        line_out,
        owned_string(decision_line(borrow(decision, "decision")?)?)
    )
}

/// The log line of a C decision: the wire layer reads a decision back (its `format_decision`), as
/// it does for every binding; a budget's refusal is the core's `BudgetRefusal`, whose line the core writes.
fn decision_line(d: &rp_decision) -> Result<String, Failure> {
    let (cause, rule) = (
        from_c(d.cause, "decision.cause")?,
        from_c(d.rule, "decision.rule")?,
    );
    let rule = match (rule, cause) {
        (Either::Right(rule), _) => return Ok(refusal_from_c(d, rule)?.to_string()),
        (Either::Left(rule), Some(Either::Right(_))) => {
            let detail = format!(
                "decision.cause: budget_exhausted goes with a budget rule, not {}",
                rule.name()
            );
            return Err(Failure::named(RP_RESULT_OUT_OF_RANGE, "decision.cause", detail));
        }
        (Either::Left(rule), _) => rule,
    };
    let decision = json!({
        "action": if d.retry.get() { "retry" } else { "no_retry" },
        "delay_ms": d.delay_ms,
        "capped": d.capped.get(),
        "then_cancel": d.then_cancel.get(),
        "cause": cause,
        "rule": rule,
        "reason": from_c(d.reason, "decision.reason")?,
        "attempts": d.attempts,
        "idempotent": d.idempotent.get(),
    });
    let line = retrypolicy_wire::api::call("format_decision", &json!({ "decision": decision }))?;
    Ok(line["message"].as_str().unwrap_or_default().to_owned())
}
