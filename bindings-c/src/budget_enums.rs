//! The C enums of retry budgets and circuit breakers (`RP_RETRY_CAUSE_*`, `RP_BUDGET_*`,
//! `RP_BREAKER_*`), numbered and mapped to the core's values as in `enums.rs`; their names are the
//! core's serde forms, as in the JSON API's `budget_run` and `breaker_run`.
#![allow(missing_docs)]

use retrypolicy::{
    BreakerChangeRule, BreakerOutcome, BreakerRule, BreakerState, BudgetEvent, BudgetEventKind, BudgetKind,
    BudgetRule, Error, RetryCause,
};

use crate::enums::{c_enum, CEnum};

/// What failed, for a retry a budget is asked about or told of (an `RP_RETRY_CAUSE_*` constant):
/// RP_RETRY_CAUSE_NONE where there is no retry (a first-attempt success); where a cause is needed,
/// NONE stands for the core's default, RP_RETRY_CAUSE_ERROR.
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_retry_cause(pub u32);

pub const RP_RETRY_CAUSE_NONE: rp_retry_cause = rp_retry_cause(0);
pub const RP_RETRY_CAUSE_ERROR: rp_retry_cause = rp_retry_cause(1);
pub const RP_RETRY_CAUSE_TIMEOUT: rp_retry_cause = rp_retry_cause(2);
/// A throttling error (an AWS throttling code, HTTP 429): the AWS quota's `throttling_cost`.
pub const RP_RETRY_CAUSE_THROTTLING: rp_retry_cause = rp_retry_cause(3);

/// Something a budget is told of with `rp_budget_record` (an `RP_BUDGET_EVENT_*` constant).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_budget_event(pub u32);

pub const RP_BUDGET_EVENT_REQUEST: rp_budget_event = rp_budget_event(0);
pub const RP_BUDGET_EVENT_SUCCESS: rp_budget_event = rp_budget_event(1);
pub const RP_BUDGET_EVENT_FAILURE: rp_budget_event = rp_budget_event(2);
pub const RP_BUDGET_EVENT_TIMEOUT: rp_budget_event = rp_budget_event(3);
pub const RP_BUDGET_EVENT_RETRY: rp_budget_event = rp_budget_event(4);
/// A failure that is not retried (a final error, as a 404): a success for gRPC's bucket, nothing for
/// the AWS quota and the percentage budget (the core's `BudgetEvent::Final`).
pub const RP_BUDGET_EVENT_FINAL: rp_budget_event = rp_budget_event(5);

/// The kind of a retry budget (an `RP_BUDGET_KIND_*` constant).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_budget_kind(pub u32);

pub const RP_BUDGET_KIND_TOKEN_BUCKET: rp_budget_kind = rp_budget_kind(0);
pub const RP_BUDGET_KIND_RETRY_QUOTA: rp_budget_kind = rp_budget_kind(1);
pub const RP_BUDGET_KIND_PERCENTAGE: rp_budget_kind = rp_budget_kind(2);

/// The rule behind a budget's verdict (an `RP_BUDGET_RULE_*` constant).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_budget_rule(pub u32);

pub const RP_BUDGET_RULE_TOKEN_BUCKET_ABOVE_HALF: rp_budget_rule = rp_budget_rule(0);
pub const RP_BUDGET_RULE_TOKEN_BUCKET_AT_OR_BELOW_HALF: rp_budget_rule = rp_budget_rule(1);
pub const RP_BUDGET_RULE_RETRY_QUOTA_AVAILABLE: rp_budget_rule = rp_budget_rule(2);
pub const RP_BUDGET_RULE_RETRY_QUOTA_EXHAUSTED: rp_budget_rule = rp_budget_rule(3);
pub const RP_BUDGET_RULE_PERCENTAGE_WITHIN_BUDGET: rp_budget_rule = rp_budget_rule(4);
pub const RP_BUDGET_RULE_PERCENTAGE_BUDGET_SPENT: rp_budget_rule = rp_budget_rule(5);

/// How a request sent through a breaker ended (an `RP_BREAKER_OUTCOME_*` constant).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_breaker_outcome(pub u32);

pub const RP_BREAKER_OUTCOME_SUCCESS: rp_breaker_outcome = rp_breaker_outcome(0);
pub const RP_BREAKER_OUTCOME_FAILURE: rp_breaker_outcome = rp_breaker_outcome(1);
pub const RP_BREAKER_OUTCOME_TIMEOUT: rp_breaker_outcome = rp_breaker_outcome(2);

/// The state of a circuit (an `RP_BREAKER_STATE_*` constant).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_breaker_state(pub u32);

pub const RP_BREAKER_STATE_CLOSED: rp_breaker_state = rp_breaker_state(0);
pub const RP_BREAKER_STATE_OPEN: rp_breaker_state = rp_breaker_state(1);
pub const RP_BREAKER_STATE_HALF_OPEN: rp_breaker_state = rp_breaker_state(2);

/// The rule behind a breaker's verdict (an `RP_BREAKER_RULE_*` constant; names "breaker_open", ...).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_breaker_rule(pub u32);

pub const RP_BREAKER_RULE_DISABLED: rp_breaker_rule = rp_breaker_rule(0);
pub const RP_BREAKER_RULE_CLOSED: rp_breaker_rule = rp_breaker_rule(1);
pub const RP_BREAKER_RULE_CANARY: rp_breaker_rule = rp_breaker_rule(2);
pub const RP_BREAKER_RULE_OPEN: rp_breaker_rule = rp_breaker_rule(3);
pub const RP_BREAKER_RULE_CANARY_IN_FLIGHT: rp_breaker_rule = rp_breaker_rule(4);

/// What moved a circuit from one state to another (an `RP_BREAKER_CHANGE_*` constant; names
/// "breaker_tripped", "breaker_canary", "canary_succeeded", ...).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_breaker_change_rule(pub u32);

/// "breaker_tripped": the window's failures reached the threshold; closed to open.
pub const RP_BREAKER_CHANGE_TRIPPED: rp_breaker_change_rule = rp_breaker_change_rule(0);
/// "breaker_canary": open past the sleep window, a request went out as the canary; to half-open.
pub const RP_BREAKER_CHANGE_CANARY: rp_breaker_change_rule = rp_breaker_change_rule(1);
/// "canary_succeeded": the canary succeeded; half-open to closed, counts reset.
pub const RP_BREAKER_CHANGE_CANARY_SUCCEEDED: rp_breaker_change_rule = rp_breaker_change_rule(2);
/// "canary_failed": the canary failed; half-open to open for another sleep window.
pub const RP_BREAKER_CHANGE_CANARY_FAILED: rp_breaker_change_rule = rp_breaker_change_rule(3);
/// "canary_timed_out": the canary went unanswered past `canary_timeout_ms`; half-open to open.
pub const RP_BREAKER_CHANGE_CANARY_TIMED_OUT: rp_breaker_change_rule = rp_breaker_change_rule(4);
/// "canary_released": the host cancelled the canary (`rp_run_cancel`); open, its sleep window over.
pub const RP_BREAKER_CHANGE_CANARY_RELEASED: rp_breaker_change_rule = rp_breaker_change_rule(5);

/// The core's event of `kind` with C's one `cause` argument: a success's `after_retry`, a
/// retry's cause; the core refuses it for any other kind (`unknown_field` naming `cause`).
pub(crate) fn budget_event(kind: BudgetEventKind, cause: Option<RetryCause>) -> Result<BudgetEvent, Error> {
    let success = kind == BudgetEventKind::Success;
    BudgetEvent::from_kind("", kind, cause.filter(|_| success), cause.filter(|_| !success))
}

c_enum!(rp_retry_cause <=> Option<RetryCause>, [
    (RP_RETRY_CAUSE_NONE => None),
    (RP_RETRY_CAUSE_ERROR => Some(RetryCause::Error)),
    (RP_RETRY_CAUSE_TIMEOUT => Some(RetryCause::Timeout)),
    (RP_RETRY_CAUSE_THROTTLING => Some(RetryCause::Throttling)),
]);

c_enum!(rp_budget_event <=> BudgetEventKind, [
    (RP_BUDGET_EVENT_REQUEST => BudgetEventKind::Request),
    (RP_BUDGET_EVENT_SUCCESS => BudgetEventKind::Success),
    (RP_BUDGET_EVENT_FAILURE => BudgetEventKind::Failure),
    (RP_BUDGET_EVENT_TIMEOUT => BudgetEventKind::Timeout),
    (RP_BUDGET_EVENT_RETRY => BudgetEventKind::Retry),
    (RP_BUDGET_EVENT_FINAL => BudgetEventKind::Final),
]);

c_enum!(rp_budget_kind <=> BudgetKind, [
    (RP_BUDGET_KIND_TOKEN_BUCKET => BudgetKind::TokenBucket),
    (RP_BUDGET_KIND_RETRY_QUOTA => BudgetKind::RetryQuota),
    (RP_BUDGET_KIND_PERCENTAGE => BudgetKind::Percentage),
]);

c_enum!(rp_budget_rule <=> BudgetRule, [
    (RP_BUDGET_RULE_TOKEN_BUCKET_ABOVE_HALF => BudgetRule::TokenBucketAboveHalf),
    (RP_BUDGET_RULE_TOKEN_BUCKET_AT_OR_BELOW_HALF => BudgetRule::TokenBucketAtOrBelowHalf),
    (RP_BUDGET_RULE_RETRY_QUOTA_AVAILABLE => BudgetRule::RetryQuotaAvailable),
    (RP_BUDGET_RULE_RETRY_QUOTA_EXHAUSTED => BudgetRule::RetryQuotaExhausted),
    (RP_BUDGET_RULE_PERCENTAGE_WITHIN_BUDGET => BudgetRule::PercentageWithinBudget),
    (RP_BUDGET_RULE_PERCENTAGE_BUDGET_SPENT => BudgetRule::PercentageBudgetSpent),
]);

c_enum!(rp_breaker_outcome <=> BreakerOutcome, [
    (RP_BREAKER_OUTCOME_SUCCESS => BreakerOutcome::Success),
    (RP_BREAKER_OUTCOME_FAILURE => BreakerOutcome::Failure),
    (RP_BREAKER_OUTCOME_TIMEOUT => BreakerOutcome::Timeout),
]);

c_enum!(rp_breaker_state <=> BreakerState, [
    (RP_BREAKER_STATE_CLOSED => BreakerState::Closed),
    (RP_BREAKER_STATE_OPEN => BreakerState::Open),
    (RP_BREAKER_STATE_HALF_OPEN => BreakerState::HalfOpen),
]);

c_enum!(rp_breaker_rule <=> BreakerRule, [
    (RP_BREAKER_RULE_DISABLED => BreakerRule::BreakerDisabled),
    (RP_BREAKER_RULE_CLOSED => BreakerRule::BreakerClosed),
    (RP_BREAKER_RULE_CANARY => BreakerRule::BreakerCanary),
    (RP_BREAKER_RULE_OPEN => BreakerRule::BreakerOpen),
    (RP_BREAKER_RULE_CANARY_IN_FLIGHT => BreakerRule::BreakerCanaryInFlight),
]);

c_enum!(rp_breaker_change_rule <=> BreakerChangeRule, [
    (RP_BREAKER_CHANGE_TRIPPED => BreakerChangeRule::BreakerTripped),
    (RP_BREAKER_CHANGE_CANARY => BreakerChangeRule::BreakerCanary),
    (RP_BREAKER_CHANGE_CANARY_SUCCEEDED => BreakerChangeRule::CanarySucceeded),
    (RP_BREAKER_CHANGE_CANARY_FAILED => BreakerChangeRule::CanaryFailed),
    (RP_BREAKER_CHANGE_CANARY_TIMED_OUT => BreakerChangeRule::CanaryTimedOut),
    (RP_BREAKER_CHANGE_CANARY_RELEASED => BreakerChangeRule::CanaryReleased),
]);
