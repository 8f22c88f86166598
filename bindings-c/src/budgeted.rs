//! `rp_decide_with_budget`: the core's `decide_with_budget`, its refusal written as a C decision
//! with the C-only codes RP_NO_RETRY_CAUSE_BUDGET_EXHAUSTED and the budget's refusing rule.

use retrypolicy::{BudgetRefusal, BudgetRule, BudgetVerdict, BudgetedDecision};

use crate::budget::{rp_budget_verdict, verdict_from_c};
use crate::decision::decision_to_c;
use crate::enums::{to_c, Either};
use crate::error::{rp_result, Failure, RP_RESULT_OUT_OF_RANGE};
use crate::ffi::output;
use crate::strategy::inputs;
use crate::*;

/// A core budgeted decision as a C decision: a refusal is a no-retry whose cause is
/// RP_NO_RETRY_CAUSE_BUDGET_EXHAUSTED and whose rule is the budget's (`rp_rule_section`: its source).
pub(crate) fn budgeted_to_c(d: &BudgetedDecision) -> rp_decision {
    match d {
        BudgetedDecision::Decided(d) => decision_to_c(d),
        BudgetedDecision::Refused(r) => rp_decision {
            retry: false.into(),
            delay_ms: 0,
            capped: false.into(),
            then_cancel: false.into(),
            cause: to_c(Some(Either::Right(retrypolicy::BudgetCause::BudgetExhausted))),
            rule: to_c(Either::Right(r.verdict.rule)),
            reason: to_c(r.reason),
            attempts: r.attempts,
            idempotent: r.idempotent.into(),
        },
    }
}

/// The core's refusal a C decision with a budget rule stands for, for its log line (the delay
/// refused and the balance are not in the C decision: 0). A retrying decision is refused.
pub(crate) fn refusal_from_c(d: &rp_decision, rule: BudgetRule) -> Result<BudgetedDecision, Failure> {
    if d.retry.get() || rule.permits() {
        let detail = format!(
            "decision.rule: {} is a budget rule, for a refused retry only",
            rule.name()
        );
        return Err(Failure::named(RP_RESULT_OUT_OF_RANGE, "decision.rule", detail));
    }
    Ok(BudgetedDecision::Refused(BudgetRefusal {
        reason: crate::enums::from_c(d.reason, "decision.reason")?,
        attempts: d.attempts,
        idempotent: d.idempotent.get(),
        refused_delay_ms: 0,
        verdict: BudgetVerdict::of(rule, 0),
    }))
}

/// Decides as `rp_decide` does with the policy's own strategy (no host strategy), then lets a
/// budget's `budget_verdict` (from `rp_budget_try_retry` or `rp_budget_permit`; NULL: none) refuse the
/// retry: a refusal is a no-retry with cause RP_NO_RETRY_CAUSE_BUDGET_EXHAUSTED and the budget's
/// rule (RP_RULE_TOKEN_BUCKET_AT_OR_BELOW_HALF, ...). A verdict whose `permitted` or `kind`
/// disagrees with its rule is refused as the JSON API refuses it, naming "budget_verdict.permitted" / ".kind".
#[no_mangle]
pub unsafe extern "C" fn rp_decide_with_budget(
    request: *const rp_request,
    reason: rp_reason,
    policy: *const rp_policy,
    budget_verdict: *const rp_budget_verdict,
    decision_out: *mut rp_decision,
) -> rp_result {
    output!(decision_out, {
        let (request, reason, policy) = inputs(request, reason, policy)?;
        let verdict = budget_verdict.as_ref().map(verdict_from_c).transpose()?;
        let d = retrypolicy::decide_with_budget(&request, reason, &policy, verdict.as_ref())?;
        Ok(budgeted_to_c(&d))
    })
}
