//! Retry strategies: BestEffort (default), FailFast (internal), and the trait a host implements.

use serde::{Deserialize, Serialize};

use crate::backoff::{backoff_delay, Backoff, Jitter};
use crate::decide::{Facts, Request, Rule};
use crate::error::Error;
use crate::reason::RetryReason;

/// A built-in strategy, by name: the policy default or a per-request override.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StrategyKind {
    /// RFC 0049 "Best Effort": retry while safe, with backoff, until the timeout.
    #[default]
    BestEffort,
    /// RFC 0049 "Fail Fast": never retry (always-retry reasons still are). Internal, per the RFC.
    FailFast,
}

/// What a strategy answered: a delay, or none for "do not retry", and the rule that decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StrategyVerdict {
    /// Milliseconds to wait before the retry, or `None` to fail the request.
    pub delay_ms: Option<u64>,
    /// Which rule produced the answer (shown in the decision record).
    pub rule: Rule,
}

impl StrategyVerdict {
    /// A host strategy's "retry after `delay_ms`".
    pub fn custom_retry(delay_ms: u64) -> Self {
        StrategyVerdict {
            delay_ms: Some(delay_ms),
            rule: Rule::CustomStrategy,
        }
    }

    /// A host strategy's "do not retry".
    pub fn custom_no_retry() -> Self {
        StrategyVerdict {
            delay_ms: None,
            rule: Rule::CustomStrategy,
        }
    }
}

/// RFC 0049 "Retry Strategies": decides whether and when to retry a reason that is not always-retry.
pub trait RetryStrategy {
    /// The verdict for `request` failing with `reason`; the core still caps the delay.
    fn retry_after(&self, request: &Request, reason: RetryReason) -> Result<StrategyVerdict, Error>;
}

/// RFC 0049 "Best Effort": retry idempotent requests, or reasons that allow non-idempotent retry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct BestEffort {
    /// The backoff calculator (the RFC asks for it to be pluggable).
    pub backoff: Backoff,
    /// Jitter applied to the calculated delay.
    pub jitter: Jitter,
}

impl RetryStrategy for BestEffort {
    fn retry_after(&self, request: &Request, reason: RetryReason) -> Result<StrategyVerdict, Error> {
        best_effort_verdict(&self.backoff, self.jitter, &request.facts(), reason)
    }
}

/// RFC 0049 "Best Effort" with the given backoff and jitter, without building a strategy value.
#[inline(always)]
pub(crate) fn best_effort_verdict(
    backoff: &Backoff,
    jitter: Jitter,
    facts: &Facts,
    reason: RetryReason,
) -> Result<StrategyVerdict, Error> {
    if facts.idempotent || reason.allows_non_idempotent_retry() {
        let delay = backoff_delay(
            backoff,
            jitter,
            facts.attempts,
            facts.random,
            facts.previous_delay_ms,
        )?;
        Ok(StrategyVerdict {
            delay_ms: Some(delay),
            rule: Rule::BestEffortBackoff,
        })
    } else {
        Ok(StrategyVerdict {
            delay_ms: None,
            rule: Rule::BestEffortNotIdempotent,
        })
    }
}

/// RFC 0049 "Fail Fast": never retries. The RFC ships it only as an internal strategy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailFast;

impl RetryStrategy for FailFast {
    fn retry_after(&self, _request: &Request, _reason: RetryReason) -> Result<StrategyVerdict, Error> {
        Ok(StrategyVerdict {
            delay_ms: None,
            rule: Rule::FailFast,
        })
    }
}
