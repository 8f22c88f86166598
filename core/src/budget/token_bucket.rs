//! gRPC retry throttling: gRFC A6, "Throttling Retry Attempts and Hedged RPCs" (grpc/proposal
//! `A6-client-retries.md`). The count starts at `maxTokens` and stays in `[0, maxTokens]`; every
//! failed RPC takes 1 token, every successful RPC adds `tokenRatio`; at or below `maxTokens / 2`,
//! RPCs are not retried. Kept in thousandths of a token, as grpc/grpc
//! `src/core/client_channel/retry_throttle.cc` does (`max_milli_tokens`, `milli_token_ratio`,
//! threshold `max_milli_tokens / 2`), so every language computes the same integers.

use super::{BudgetEvent, BudgetRule, BudgetVerdict};

/// Thousandths of a token per token.
pub(crate) const MILLI: u64 = 1000;

/// A token bucket's parameters, in thousandths of a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenBucketConfig {
    /// `maxTokens` × 1000: the bucket's size and starting count.
    pub max_milli_tokens: u64,
    /// `tokenRatio` × 1000: what each success adds.
    pub milli_token_ratio: u64,
}

impl TokenBucketConfig {
    /// At or below this count (half the bucket, rounded down), retries are throttled.
    pub fn threshold(&self) -> u64 {
        self.max_milli_tokens / 2
    }
}

/// A token bucket's count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenBucketState {
    /// Tokens in the bucket, in thousandths.
    pub milli_tokens: u64,
}

impl TokenBucketState {
    /// A full bucket.
    pub fn new(config: &TokenBucketConfig) -> TokenBucketState {
        TokenBucketState {
            milli_tokens: config.max_milli_tokens,
        }
    }

    /// Retries are allowed while the count is above the threshold.
    pub(crate) fn permit(&self, config: &TokenBucketConfig) -> BudgetVerdict {
        let rule = if self.milli_tokens > config.threshold() {
            BudgetRule::TokenBucketAboveHalf
        } else {
            BudgetRule::TokenBucketAtOrBelowHalf
        };
        BudgetVerdict::of(rule, self.milli_tokens)
    }

    /// A failure (or timeout) takes one token, clamped at 0; a success adds the ratio, capped, and
    /// so does a final (non-retryable) failure: gRFC A6 counts as failures only "the ones that fail
    /// with a status code that qualifies as a retryable or non-fatal status code".
    pub(crate) fn record(&mut self, config: &TokenBucketConfig, event: BudgetEvent) {
        match event {
            BudgetEvent::Failure | BudgetEvent::Timeout => {
                self.milli_tokens = self.milli_tokens.saturating_sub(MILLI);
            }
            BudgetEvent::Success { .. } | BudgetEvent::Final => {
                self.milli_tokens = self
                    .milli_tokens
                    .saturating_add(config.milli_token_ratio)
                    .min(config.max_milli_tokens);
            }
            BudgetEvent::Request | BudgetEvent::Retry { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_a6_example_throttles_at_half_after_five_failures() {
        // maxTokens 10, tokenRatio 0.1: 10 → 4.x after 6 failures, at or below 5 means throttled.
        let c = TokenBucketConfig {
            max_milli_tokens: 10_000,
            milli_token_ratio: 100,
        };
        let mut s = TokenBucketState::new(&c);
        for _ in 0..4 {
            s.record(&c, BudgetEvent::Failure);
        }
        assert!(s.permit(&c).permitted, "6 tokens > 5");
        s.record(&c, BudgetEvent::Failure);
        assert!(!s.permit(&c).permitted, "5 tokens is at the threshold");
        s.record(&c, BudgetEvent::Success { after_retry: None });
        assert_eq!(s.milli_tokens, 5_100);
        assert!(s.permit(&c).permitted);
    }
}
