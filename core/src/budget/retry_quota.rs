//! The AWS SDKs' standard-mode retry quota (AWS SDKs and Tools Reference Guide, "Retry behavior";
//! aws/aws-sdk-go-v2 `aws/retry/standard.go`: `DefaultRetryRateTokens` 500, `DefaultRetryCost` 5,
//! `DefaultRetryTimeoutCost` 10, `DefaultNoRetryIncrement` 1). A retry takes its cost (the timeout
//! cost when it repeats a timeout) and is refused when fewer tokens remain; a retry that succeeds
//! gives its cost back; a request that succeeds without a retry adds the increment; the pool never
//! exceeds its capacity.
//!
//! Two cost tables (`costs` in the document): `classic`, the default, the costs above (a throttling
//! error costs what any error costs); and `2026`, the SDKs' updated standard mode (the
//! `AWS_NEW_RETRIES_2026` behaviour, default in the SDKs from November 2026: aws/aws-sdk-go-v2 PR
//! 3400, aws/aws-cli PR 10342): a retry costs 14, a retry of a throttling error 5, a timeout is no
//! longer different (14). The refund is the cost the retry took. Classic stays the default so a
//! document written before keeps its meaning; `{"costs": "2026"}` opts in.

/// The error codes the AWS SDKs treat as throttling (botocore `retries/standard.py`
/// `_THROTTLED_ERROR_CODES`; aws-sdk-go-v2 `aws/retry/throttle_error.go`), with HTTP 429.
pub const AWS_THROTTLING_ERROR_CODES: [&str; 14] = [
    "Throttling",
    "ThrottlingException",
    "ThrottledException",
    "RequestThrottledException",
    "TooManyRequestsException",
    "ProvisionedThroughputExceededException",
    "TransactionInProgressException",
    "RequestLimitExceeded",
    "BandwidthLimitExceeded",
    "LimitExceededException",
    "RequestThrottled",
    "SlowDown",
    "PriorRequestNotComplete",
    "EC2ThrottledException",
];

/// Whether an AWS error (its code, and the HTTP status it came with) is a throttling error: a code
/// of [`AWS_THROTTLING_ERROR_CODES`] (compared exactly, as the SDKs do) or status 429.
pub fn is_aws_throttling_error(code: Option<&str>, status: Option<u16>) -> bool {
    status == Some(429) || code.is_some_and(|c| AWS_THROTTLING_ERROR_CODES.contains(&c))
}

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
    /// Tokens a retry of a throttling error takes.
    pub throttling_cost: u64,
    /// Tokens a success without a retry adds.
    pub no_retry_increment: u64,
}

impl RetryQuotaConfig {
    /// What a retry for `cause` costs.
    pub fn cost(&self, cause: RetryCause) -> u64 {
        match cause {
            RetryCause::Error => self.retry_cost,
            RetryCause::Timeout => self.timeout_cost,
            RetryCause::Throttling => self.throttling_cost,
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

    /// Up to `n` retries for `cause` taken at once, each while the pool holds its cost: how many.
    pub(crate) fn withdraw(&mut self, config: &RetryQuotaConfig, cause: RetryCause, n: u32) -> u32 {
        let cost = config.cost(cause);
        if cost == 0 {
            return n;
        }
        let k = (self.tokens / cost).min(u64::from(n));
        self.tokens -= k * cost;
        // k ≤ n, a u32.
        k as u32
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
