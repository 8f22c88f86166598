//! `rp_decision` and the decision entry points: each converts its C inputs into the core's
//! `Request`, `RetryReason` and `Policy`, calls the core's function of the same name, and writes
//! the decision back. No rule lives here.

use std::ffi::c_char;

use retrypolicy::{Decision, NoRetry, Policy, Request, RetryAfter, RetryReason, Rule};

use crate::enums::{from_c, to_c};
use crate::error::{rp_result, Failure};
use crate::ffi::{borrow, non_null, output, write_text, CBool};
use crate::panic::ffi_boundary;
use crate::policy::policy_or_default;
use crate::request::request;
use crate::*;

/// The outcome of one decision: retry after `delay_ms`, or fail, with the rule that decided.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rp_decision {
    /// RP_ACTION_RETRY or RP_ACTION_NO_RETRY.
    pub action: rp_action,
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
        action: to_c(d.is_retry()),
        delay_ms,
        capped: capped.into(),
        then_cancel: then_cancel.into(),
        cause: to_c(cause),
        rule: to_c(d.rule()),
        reason: to_c(d.reason()),
        attempts,
        idempotent: idempotent.into(),
    }
}

/// A C decision back to the core's type (for its log line); a retry has cause NONE, a no-retry a cause.
fn decision(d: &rp_decision) -> Result<Decision, Failure> {
    let rule: Rule = from_c(d.rule, "decision.rule")?;
    let (reason, section) = (from_c(d.reason, "decision.reason")?, rule.section());
    let (attempts, idempotent) = (d.attempts, d.idempotent.get());
    match (
        from_c(d.action, "decision.action")?,
        from_c(d.cause, "decision.cause")?,
    ) {
        (true, None) => Ok(Decision::Retry(RetryAfter {
            delay_ms: d.delay_ms,
            reason,
            rule,
            section,
            capped: d.capped.get(),
            then_cancel: d.then_cancel.get(),
            attempts,
            idempotent,
        })),
        (false, Some(cause)) => Ok(Decision::NoRetry(NoRetry {
            reason,
            cause,
            rule,
            section,
            attempts,
            idempotent,
        })),
        _ => Err(Failure::invalid_enum(
            "decision.cause",
            "rp_no_retry_cause for this action",
            d.cause.0,
        )),
    }
}

/// The core's inputs of a decision: the request, the reason, and the policy (NULL: the RFC default).
/// Safety: `request` NULL or valid for reads (with its `previous_reasons`); `policy` NULL or a live handle.
#[inline]
pub(crate) unsafe fn inputs<'a>(
    request: *const rp_request,
    reason: rp_reason,
    policy: *const rp_policy,
) -> Result<(Request, RetryReason, &'a Policy), Failure> {
    // SAFETY: forwarded from this function's contract.
    let request = unsafe { self::request(borrow(request, "request")?) }?;
    let reason = from_c(reason, "reason")?;
    // SAFETY: forwarded from this function's contract.
    Ok((request, reason, unsafe { policy_or_default(policy) }))
}

/// Decides whether and when to retry `request` after `reason` under `policy` (NULL: the RFC default policy).
#[no_mangle]
pub unsafe extern "C" fn rp_decide(
    request: *const rp_request,
    reason: rp_reason,
    policy: *const rp_policy,
    decision_out: *mut rp_decision,
) -> rp_result {
    output!(decision_out, {
        let request = self::request(borrow(request, "request")?)?;
        let reason = from_c(reason, "reason")?;
        Ok(decision_to_c(&retrypolicy::decide(
            &request,
            reason,
            policy_or_default(policy),
        )?))
    })
}

/// RFC 0049 "Controlled Backoff for Always Retry": the delay after `attempt` retries (1, 10, 50,
/// 100, 500, then 1000 ms).
#[no_mangle]
pub unsafe extern "C" fn rp_controlled_backoff(attempt: u32, delay_ms_out: *mut u64) -> rp_result {
    output!(delay_ms_out, Ok(retrypolicy::controlled_backoff(attempt)))
}

/// Does nothing and returns RP_RESULT_OK: `rp_decide`'s signature, for benchmarks only (feature `bench`).
#[cfg(feature = "bench")]
#[no_mangle]
pub unsafe extern "C" fn rp_decide_noop(
    request: *const rp_request,
    reason: rp_reason,
    policy: *const rp_policy,
    decision_out: *mut rp_decision,
) -> rp_result {
    let _ = (request, reason, policy, decision_out);
    ffi_boundary(|| Ok(()))
}

/// The decision steps before a host strategy (deadline, UNKNOWN, always-retry, the request's own
/// built-in strategy), for hosts that run their strategy between this and `rp_decide_after_strategy`.
///
/// On success `*decided_out` says whether those steps decided; only then is `*decision_out` written.
#[no_mangle]
pub unsafe extern "C" fn rp_decide_before_strategy(
    request: *const rp_request,
    reason: rp_reason,
    policy: *const rp_policy,
    decided_out: *mut bool,
    decision_out: *mut rp_decision,
) -> rp_result {
    ffi_boundary(|| {
        non_null(decided_out, "decided_out")?;
        non_null(decision_out, "decision_out")?;
        // SAFETY (all): the pointer contract (lib.rs); both outputs are checked non-NULL.
        let (request, reason, policy) = unsafe { inputs(request, reason, policy) }?;
        let d = retrypolicy::decide_before_strategy(&request, reason, policy)?;
        unsafe { decided_out.write(d.is_some()) };
        if let Some(d) = d {
            unsafe { decision_out.write(decision_to_c(&d)) };
        }
        Ok(())
    })
}

/// Turns a host strategy's answer (`retry` after `delay_ms`, or not) into the decision, capping
/// the delay to the timeout; call it when `rp_decide_before_strategy` did not decide.
#[no_mangle]
pub unsafe extern "C" fn rp_decide_after_strategy(
    request: *const rp_request,
    reason: rp_reason,
    retry: CBool,
    delay_ms: u64,
    decision_out: *mut rp_decision,
) -> rp_result {
    output!(decision_out, {
        let (request, reason, _) = inputs(request, reason, std::ptr::null())?;
        let verdict = crate::strategy::verdict(retry, delay_ms);
        Ok(decision_to_c(&retrypolicy::decide_after_strategy(
            &request, reason, verdict,
        )))
    })
}

/// Copies the decision's one-line log text (RFC 0049 asks to log every retry and non-retry), e.g.
/// "retry 8 after 500 ms, capped to the timeout, then cancel (reason KV_NOT_MY_VBUCKET, ...)".
///
/// Buffer rules as for `rp_result_message`.
#[no_mangle]
pub unsafe extern "C" fn rp_decision_format(
    decision: *const rp_decision,
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> rp_result {
    ffi_boundary(|| {
        // SAFETY (both): the pointer contract (lib.rs).
        let d = self::decision(unsafe { borrow(decision, "decision") }?)?;
        unsafe { write_text(&d.to_string(), buf, len, written) }
    })
}
