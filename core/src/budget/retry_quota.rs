//! The AWS SDKs' standard-mode retry quota (AWS SDKs and Tools Reference Guide, "Retry behavior";
//! aws/aws-sdk-go-v2 `aws/retry/standard.go`: `DefaultRetryRateTokens` 500, `DefaultRetryCost` 5,
//! `DefaultRetryTimeoutCost` 10, `DefaultNoRetryIncrement` 1). A retry takes its cost (the timeout
//! cost when it repeats a timeout) and is refused when fewer tokens remain; a retry that succeeds
//! gives its cost back; a request that succeeds without a retry adds the increment; the pool never
//! exceeds its capacity.

use super::{BudgetEvent, BudgetRule, BudgetVerdict, RetryCause};

/// A retry quota's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryQuotaConfig {
    /// The pool's size and starting count.
    pub capacity: u64,
    /// Tokens a retry takes.
    pub retry_cost: u64,
    /// Tokens a retry of a timeout takes.
    pub timeout_cost: u64,
    /// Tokens a success without a retry adds.
    pub no_retry_increment: u64,
}

impl RetryQuotaConfig {
    /// What a retry for `cause` costs.
    pub fn cost(&self, cause: RetryCause) -> u64 {
        match cause {
            RetryCause::Error => self.retry_cost,
            RetryCause::Timeout => self.timeout_cost,
        }
    }
}

/// A retry quota's pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryQuotaState {
    /// Tokens in the pool.
    pub tokens: u64,
}

impl RetryQuotaState {
    /// A full pool.
    pub fn new(config: &RetryQuotaConfig) -> RetryQuotaState {
        RetryQuotaState {
            tokens: config.capacity,
        }
    }

    /// A retry is allowed when the pool holds its cost.
    pub(crate) fn permit(&self, config: &RetryQuotaConfig, cause: RetryCause) -> BudgetVerdict {
        let rule = if self.tokens >= config.cost(cause) {
            BudgetRule::RetryQuotaAvailable
        } else {
            BudgetRule::RetryQuotaExhausted
        };
        BudgetVerdict::of(rule, self.tokens)
    }

    /// Retries take their cost; successes refund a retry's cost or add the increment, capped.
    pub(crate) fn record(&mut self, config: &RetryQuotaConfig, event: BudgetEvent) {
        match event {
            BudgetEvent::Retry { cause } => self.tokens = self.tokens.saturating_sub(config.cost(cause)),
            BudgetEvent::Success { after_retry } => {
                let refund = match after_retry {
                    Some(cause) => config.cost(cause),
                    None => config.no_retry_increment,
                };
                self.tokens = self.tokens.saturating_add(refund).min(config.capacity);
            }
            BudgetEvent::Request | BudgetEvent::Failure | BudgetEvent::Timeout | BudgetEvent::Final => {}
        }
    }
}
