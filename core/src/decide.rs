//! Request, Decision and `decide`: the RFC 0049 retry orchestrator as a pure function.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::backoff::{check_draw, controlled_backoff};
use crate::error::Error;
use crate::operation::Operation;
use crate::policy::Policy;
use crate::reason::RetryReason;
use crate::strategy::{RetryStrategy, StrategyKind, StrategyVerdict};

/// The state of one request at the moment it failed: everything a decision depends on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    try_from = "crate::request_form::RequestWire",
    into = "crate::request_form::RequestWire"
)]
pub struct Request {
    /// What is being retried.
    pub operation: Operation,
    /// Overrides the idempotent-operation list when set.
    pub idempotent: Option<bool>,
    /// Retries already made (RFC 0049 `retryAttempts()`).
    pub attempts: u32,
    /// Time since the request started, in milliseconds.
    pub elapsed_ms: u64,
    /// The request's timeout, in milliseconds.
    pub timeout_ms: u64,
    /// Reasons of earlier retries (RFC 0049 `retryReasons()`), for strategies that look at them.
    pub previous_reasons: Vec<RetryReason>,
    /// A per-request strategy override (RFC 0049 "Request Annotation").
    pub strategy: Option<StrategyKind>,
    /// The caller's random draw in `[0, 1)`, required when the policy has jitter.
    pub random: Option<f64>,
    /// The previous retry's delay, for decorrelated jitter.
    pub previous_delay_ms: Option<u64>,
}

impl Request {
    /// A request with no retries yet, no override, and no draw.
    pub fn new(operation: Operation, elapsed_ms: u64, timeout_ms: u64) -> Request {
        Request {
            operation,
            idempotent: None,
            attempts: 0,
            elapsed_ms,
            timeout_ms,
            previous_reasons: Vec::new(),
            strategy: None,
            random: None,
            previous_delay_ms: None,
        }
    }

    /// Whether this request may be retried after it reached the network: the override, else the list.
    #[inline]
    pub fn is_idempotent(&self) -> bool {
        self.idempotent.unwrap_or_else(|| self.operation.is_idempotent())
    }

    /// Checks what the type system cannot: the random draw's range.
    #[inline]
    pub fn validate(&self) -> Result<(), Error> {
        check_random(self.random)
    }
}

/// The rule that produced a decision; its `section()` is the spec text behind it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// The request is at or past its timeout: never retried.
    DeadlinePassed,
    /// UNKNOWN is never retried.
    UnknownNeverRetried,
    /// An always-retry reason: controlled backoff, strategy skipped.
    AlwaysRetryControlledBackoff,
    /// Best effort retried with its backoff.
    BestEffortBackoff,
    /// Best effort declined: not idempotent and the reason does not allow it.
    BestEffortNotIdempotent,
    /// Fail fast declined.
    FailFast,
    /// A host-supplied strategy decided.
    CustomStrategy,
}

impl Rule {
    /// The spec section this rule implements.
    pub fn section(self) -> &'static str {
        match self {
            Rule::DeadlinePassed => "RFC 0049, Capping the Retry Duration",
            Rule::UnknownNeverRetried => "RFC 0049, RetryReason (UNKNOWN: must not be retried)",
            Rule::AlwaysRetryControlledBackoff => {
                "RFC 0049, Retry Orchestration; Controlled Backoff for Always Retry"
            }
            Rule::BestEffortBackoff | Rule::BestEffortNotIdempotent => "RFC 0049, Best Effort",
            Rule::FailFast => "RFC 0049, Fail Fast",
            Rule::CustomStrategy => "RFC 0049, Retry Strategies",
        }
    }

    /// The stable snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            Rule::DeadlinePassed => "deadline_passed",
            Rule::UnknownNeverRetried => "unknown_never_retried",
            Rule::AlwaysRetryControlledBackoff => "always_retry_controlled_backoff",
            Rule::BestEffortBackoff => "best_effort_backoff",
            Rule::BestEffortNotIdempotent => "best_effort_not_idempotent",
            Rule::FailFast => "fail_fast",
            Rule::CustomStrategy => "custom_strategy",
        }
    }
}

/// Why a request is not retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoRetryCause {
    /// The request is not idempotent and the reason does not allow non-idempotent retry.
    NotIdempotent,
    /// The strategy (fail fast or a host strategy) declined.
    StrategyDeclined,
    /// The request is at or past its timeout.
    DeadlinePassed,
    /// The reason is UNKNOWN.
    UnknownReason,
}

/// Retry after `delay_ms`: everything one log line needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RetryAfter {
    /// Milliseconds to wait before resending.
    #[serde(with = "crate::serde_form::ms")]
    pub delay_ms: u64,
    /// The reason being retried.
    pub reason: RetryReason,
    /// The rule that decided.
    pub rule: Rule,
    /// The spec section of that rule.
    pub section: &'static str,
    /// Whether the delay was cut to the time left before the timeout.
    pub capped: bool,
    /// Whether the request must be cancelled (timed out) when the delay ends instead of resent.
    pub then_cancel: bool,
    /// Retries made before this one.
    pub attempts: u32,
    /// Whether the request counted as idempotent.
    pub idempotent: bool,
}

/// Do not retry: fail the request, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct NoRetry {
    /// The reason that was not retried.
    pub reason: RetryReason,
    /// Why not.
    pub cause: NoRetryCause,
    /// The rule that decided.
    pub rule: Rule,
    /// The spec section of that rule.
    pub section: &'static str,
    /// Retries made before this failure.
    pub attempts: u32,
    /// Whether the request counted as idempotent.
    pub idempotent: bool,
}

/// The outcome of one decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Decision {
    /// Wait, then resend (or cancel, when `then_cancel`).
    Retry(RetryAfter),
    /// Fail the request now.
    NoRetry(NoRetry),
}

impl Decision {
    /// Whether the decision is to retry.
    pub fn is_retry(&self) -> bool {
        matches!(self, Decision::Retry(_))
    }

    /// The delay before the retry, or `None` for no retry.
    pub fn delay_ms(&self) -> Option<u64> {
        match self {
            Decision::Retry(r) => Some(r.delay_ms),
            Decision::NoRetry(_) => None,
        }
    }

    /// The reason decided on.
    pub fn reason(&self) -> RetryReason {
        match self {
            Decision::Retry(r) => r.reason,
            Decision::NoRetry(n) => n.reason,
        }
    }

    /// The rule that decided.
    pub fn rule(&self) -> Rule {
        match self {
            Decision::Retry(r) => r.rule,
            Decision::NoRetry(n) => n.rule,
        }
    }

    /// The spec section behind the rule.
    pub fn section(&self) -> &'static str {
        self.rule().section()
    }

    /// The decision as a JSON object.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| unreachable!("a decision always serializes"))
    }
}

impl fmt::Display for Decision {
    /// One log line, as RFC 0049 asks for every retry and every non-retry.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Decision::Retry(r) => write!(
                f,
                "retry {} after {} ms{}{} (reason {}, rule {}; {})",
                r.attempts.saturating_add(1),
                r.delay_ms,
                if r.capped { ", capped to the timeout" } else { "" },
                if r.then_cancel { ", then cancel" } else { "" },
                r.reason,
                r.rule.name(),
                r.section
            ),
            Decision::NoRetry(n) => write!(
                f,
                "no retry after {} retries: {} (reason {}, rule {}; {})",
                n.attempts,
                match n.cause {
                    NoRetryCause::NotIdempotent => "not idempotent",
                    NoRetryCause::StrategyDeclined => "strategy declined",
                    NoRetryCause::DeadlinePassed => "deadline passed",
                    NoRetryCause::UnknownReason => "unknown reason",
                },
                n.reason,
                n.rule.name(),
                n.section
            ),
        }
    }
}

/// What the built-in strategies read from a request, resolved to plain values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Facts {
    /// Whether the request counts as idempotent (the override, else the operation list).
    pub idempotent: bool,
    /// Retries already made.
    pub attempts: u32,
    /// Time since the request started, in milliseconds.
    pub elapsed_ms: u64,
    /// The request's timeout, in milliseconds.
    pub timeout_ms: u64,
    /// A per-request built-in strategy override.
    pub strategy: Option<StrategyKind>,
    /// The caller's random draw in `[0, 1)`, required when the policy has jitter.
    pub random: Option<f64>,
    /// The previous retry's delay, for decorrelated jitter.
    pub previous_delay_ms: Option<u64>,
}

impl Request {
    /// The values the built-in strategies read from this request.
    pub(crate) fn facts(&self) -> Facts {
        Facts {
            idempotent: self.is_idempotent(),
            attempts: self.attempts,
            elapsed_ms: self.elapsed_ms,
            timeout_ms: self.timeout_ms,
            strategy: self.strategy,
            random: self.random,
            previous_delay_ms: self.previous_delay_ms,
        }
    }
}

/// Why a rule declines: each declining rule has exactly one cause.
fn cause_of(rule: Rule) -> NoRetryCause {
    match rule {
        Rule::DeadlinePassed => NoRetryCause::DeadlinePassed,
        Rule::UnknownNeverRetried => NoRetryCause::UnknownReason,
        Rule::BestEffortNotIdempotent => NoRetryCause::NotIdempotent,
        _ => NoRetryCause::StrategyDeclined,
    }
}

/// Builds the decision from a verdict. RFC 0049 "Capping the Retry Duration": a delay past the
/// timeout is cut to the time left and the request is cancelled when it ends; a delay that ends
/// exactly at the timeout is not cut, but the request is cancelled too (it will have timed out).
fn finish(facts: &Facts, reason: RetryReason, verdict: StrategyVerdict) -> Decision {
    let rule = verdict.rule;
    match verdict.delay_ms {
        Some(delay_ms) => {
            let remaining = facts.timeout_ms.saturating_sub(facts.elapsed_ms);
            Decision::Retry(RetryAfter {
                delay_ms: delay_ms.min(remaining),
                reason,
                rule,
                section: rule.section(),
                capped: delay_ms > remaining,
                then_cancel: delay_ms >= remaining,
                attempts: facts.attempts,
                idempotent: facts.idempotent,
            })
        }
        None => Decision::NoRetry(NoRetry {
            reason,
            cause: cause_of(rule),
            rule,
            section: rule.section(),
            attempts: facts.attempts,
            idempotent: facts.idempotent,
        }),
    }
}

const fn declined(rule: Rule) -> StrategyVerdict {
    StrategyVerdict { delay_ms: None, rule }
}

pub(crate) fn check_random(random: Option<f64>) -> Result<(), Error> {
    match random {
        Some(r) => check_draw("random", r).map(|_| ()),
        None => Ok(()),
    }
}

/// A built-in strategy's verdict.
fn builtin_verdict(
    kind: StrategyKind,
    policy: &Policy,
    facts: &Facts,
    reason: RetryReason,
) -> Result<StrategyVerdict, Error> {
    match kind {
        StrategyKind::BestEffort => {
            crate::strategy::best_effort_verdict(&policy.backoff, policy.jitter, facts, reason)
        }
        StrategyKind::FailFast => Ok(declined(Rule::FailFast)),
    }
}

/// The verdict of the rules before a host strategy: the deadline, UNKNOWN, always-retry reasons,
/// then a per-request built-in strategy, which wins over the host's (RFC 0049 "Request
/// Annotation"); `None` when the host strategy (or the policy's) must decide.
fn before_strategy(
    facts: &Facts,
    strategy: Option<StrategyKind>,
    reason: RetryReason,
    policy: &Policy,
) -> Result<Option<StrategyVerdict>, Error> {
    Ok(Some(if facts.elapsed_ms >= facts.timeout_ms {
        declined(Rule::DeadlinePassed)
    } else if reason == RetryReason::Unknown && !policy.compat.retry_unknown_if_idempotent {
        declined(Rule::UnknownNeverRetried)
    } else if policy.compat.always_retry(reason) {
        StrategyVerdict {
            delay_ms: Some(controlled_backoff(facts.attempts)),
            rule: Rule::AlwaysRetryControlledBackoff,
        }
    } else if let Some(kind) = strategy {
        builtin_verdict(kind, policy, facts, reason)?
    } else {
        return Ok(None);
    }))
}

/// The orchestrator's steps before a host strategy is asked: the deadline, UNKNOWN, always-retry
/// reasons, then a per-request built-in strategy, which wins over the host's (RFC 0049 "Request
/// Annotation"). Returns `None` when the host strategy must be asked (then call
/// [`decide_after_strategy`] with its answer).
pub fn decide_before_strategy(
    request: &Request,
    reason: RetryReason,
    policy: &Policy,
) -> Result<Option<Decision>, Error> {
    request.validate()?;
    let facts = request.facts();
    Ok(before_strategy(&facts, request.strategy, reason, policy)?.map(|v| finish(&facts, reason, v)))
}

/// Turns a strategy's verdict into the decision, capping its delay to the timeout; a request at
/// or past its timeout is refused whatever the verdict (hosts may call this step on its own).
pub fn decide_after_strategy(request: &Request, reason: RetryReason, verdict: StrategyVerdict) -> Decision {
    let facts = request.facts();
    if facts.elapsed_ms >= facts.timeout_ms {
        return finish(&facts, reason, declined(Rule::DeadlinePassed));
    }
    finish(&facts, reason, verdict)
}

/// Decides whether and when to retry `request` after `reason`, under `policy`, with the
/// built-in strategies only (the request's override, else the policy's).
pub fn decide(request: &Request, reason: RetryReason, policy: &Policy) -> Result<Decision, Error> {
    decide_with(request, reason, policy, None)
}

/// Like [`decide`], with a host strategy asked when no earlier rule decides and the request has
/// no built-in override; without one, the policy's strategy is used. The same decision as
/// [`decide_before_strategy`], then the strategy, then [`decide_after_strategy`].
pub fn decide_with(
    request: &Request,
    reason: RetryReason,
    policy: &Policy,
    host_strategy: Option<&dyn RetryStrategy>,
) -> Result<Decision, Error> {
    request.validate()?;
    let facts = request.facts();
    let verdict = match before_strategy(&facts, request.strategy, reason, policy)? {
        Some(verdict) => verdict,
        None => match host_strategy {
            Some(host) => host.retry_after(request, reason)?,
            None => builtin_verdict(policy.strategy, policy, &facts, reason)?,
        },
    };
    // Before the deadline here (before_strategy refused otherwise), so this is
    // decide_after_strategy's decision.
    Ok(finish(&facts, reason, verdict))
}
