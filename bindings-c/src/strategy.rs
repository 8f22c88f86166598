//! Host strategies: a C function pointer and its `user_data`, seen by the core as a `RetryStrategy`
//! and reached through the core's `decide_with`.

use std::ffi::c_void;

use retrypolicy::{Request, RetryReason, RetryStrategy, StrategyVerdict};

use crate::decision::{decision_to_c, inputs};
use crate::enums::to_c;
use crate::error::{rp_result, Failure};
use crate::ffi::{output, CBool};
use crate::*;

/// A host retry strategy: return true and set `*delay_ms_out` to retry after that many
/// milliseconds, or return false not to retry (any non-zero byte is true). It is called
/// synchronously, on the calling thread, only from inside `rp_decide_with_strategy`, with the
/// caller's own request pointer; it must return normally (no longjmp).
pub type rp_strategy_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        request: *const rp_request,
        reason: rp_reason,
        delay_ms_out: *mut u64,
    ) -> CBool,
>;

/// A C strategy callback as the core's `RetryStrategy`.
struct CStrategy {
    /// The host's function.
    callback: unsafe extern "C" fn(*mut c_void, *const rp_request, rp_reason, *mut u64) -> CBool,
    /// Passed back to the host untouched.
    user_data: *mut c_void,
    /// The caller's own request, handed to the callback as it was given.
    request: *const rp_request,
}

impl RetryStrategy for CStrategy {
    fn retry_after(&self, _: &Request, reason: RetryReason) -> Result<StrategyVerdict, retrypolicy::Error> {
        let mut delay_ms = 0u64;
        // SAFETY: the callback, user_data and request come from the caller of
        // rp_decide_with_strategy, valid for that call, inside which this runs.
        let retry = unsafe { (self.callback)(self.user_data, self.request, to_c(reason), &mut delay_ms) };
        Ok(verdict(retry, delay_ms))
    }
}

/// A host's answer as the core's verdict: retry after `delay_ms` when `retry` is true, else not.
pub(crate) fn verdict(retry: CBool, delay_ms: u64) -> StrategyVerdict {
    match retry.get() {
        true => StrategyVerdict::custom_retry(delay_ms),
        false => StrategyVerdict::custom_no_retry(),
    }
}

/// Like `rp_decide`, with a host strategy asked when no earlier rule decides and the request has no
/// built-in strategy of its own.
///
/// The core first applies the deadline, UNKNOWN and always-retry rules and the request's own
/// strategy (the host is not called for those), then calls `strategy(user_data, request, reason,
/// &delay_ms)` once, on this thread, and caps its delay to the timeout. Neither pointer is kept.
#[no_mangle]
pub unsafe extern "C" fn rp_decide_with_strategy(
    request: *const rp_request,
    reason: rp_reason,
    policy: *const rp_policy,
    strategy: rp_strategy_fn,
    user_data: *mut c_void,
    decision_out: *mut rp_decision,
) -> rp_result {
    output!(decision_out, {
        let callback = strategy.ok_or_else(|| Failure::null("strategy"))?;
        let (core_request, reason, policy) = inputs(request, reason, policy)?;
        let host = CStrategy {
            callback,
            user_data,
            request,
        };
        Ok(decision_to_c(&retrypolicy::decide_with(
            &core_request,
            reason,
            policy,
            Some(&host),
        )?))
    })
}
