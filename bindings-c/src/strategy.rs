//! Host strategies: a C function pointer and its `user_data` as the core's `RetryStrategy` (for
//! `rp_decide`), or the two decision steps around a strategy the host runs itself.

use std::ffi::c_void;

use retrypolicy::{Request, RetryReason, RetryStrategy, StrategyVerdict};

use crate::decision::decision_to_c;
use crate::enums::{from_c, to_c};
use crate::error::{rp_result, Failure};
use crate::ffi::{borrow, non_null, output, CBool};
use crate::panic::ffi_boundary;
use crate::policy::{policy_or_default, PolicyRef};
use crate::*;

/// A host retry strategy: return true and set `*delay_ms_out` to retry after that many ms, or false
/// not to retry (any non-zero byte is true). Called on the calling thread, only inside `rp_decide`,
/// with the caller's own request pointer; it must return normally (no longjmp).
pub type rp_strategy_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        request: *const rp_request,
        reason: rp_reason,
        delay_ms_out: *mut u64,
    ) -> CBool,
>;

/// A C strategy callback, its `user_data` and the caller's request, as the core's `RetryStrategy`.
pub(crate) struct CStrategy(
    pub(crate) unsafe extern "C" fn(*mut c_void, *const rp_request, rp_reason, *mut u64) -> CBool,
    pub(crate) *mut c_void,
    pub(crate) *const rp_request,
);

impl RetryStrategy for CStrategy {
    fn retry_after(&self, _: &Request, reason: RetryReason) -> Result<StrategyVerdict, retrypolicy::Error> {
        let mut delay_ms = 0u64;
        // SAFETY: the callback, user_data and request come from the caller of rp_decide, valid
        // for that call, inside which this runs.
        let retry = unsafe { (self.0)(self.1, self.2, to_c(reason), &mut delay_ms) };
        Ok(verdict(retry, delay_ms))
    }
}

/// A host's answer as the core's verdict: retry after `delay_ms` when `retry` is true, else not.
fn verdict(retry: CBool, delay_ms: u64) -> StrategyVerdict {
    match retry.get() {
        true => StrategyVerdict::custom_retry(delay_ms),
        false => StrategyVerdict::custom_no_retry(),
    }
}

/// The core's inputs of a decision: the request, the reason, and the policy (NULL: the RFC default).
/// Safety: `request` NULL or valid for reads (with its `previous_reasons`); `policy` is checked.
pub(crate) unsafe fn inputs(
    request: *const rp_request,
    reason: rp_reason,
    policy: *const rp_policy,
) -> Result<(Request, RetryReason, PolicyRef), Failure> {
    // SAFETY: forwarded from this function's contract.
    let request = unsafe { crate::request::request(borrow(request, "request")?) }?;
    let policy = policy_or_default(policy)?;
    Ok((request, from_c(reason, "reason")?, policy))
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
        let d = retrypolicy::decide_before_strategy(&request, reason, &policy)?;
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
        let d = retrypolicy::decide_after_strategy(&request, reason, verdict(retry, delay_ms));
        Ok(decision_to_c(&d))
    })
}
