//! Finagle's `RetryBudget` (twitter/finagle `finagle-core/src/main/scala/com/twitter/finagle/service/
//! RetryBudget.scala`; defaults ttl 10 s, minRetriesPerSec 10, percentCanRetry 0.2): every request
//! deposits, every retry withdraws, deposits and withdrawals expire after `ttl`, and a reserve of
//! `minRetriesPerSec × ttl` retries is always there. Kept as whole counts in one bucket per second
//! (at most 60), so memory is bounded and every language computes the same integers.
//!
//! The guarantee: when a retry is permitted at second `s`, the retries of the window
//! `(s − ttl_s, s]`, that one included, are at most `⌊percent/100 × requests of that window⌋ +
//! min_retries_per_sec × ttl_s`. Finagle keeps scaled integers (deposit 1000, withdrawal
//! `⌊1000 / percentCanRetry⌋`), so its count can differ from this exact ratio by rounding.

use super::document::BucketSnapshot;
use super::{BudgetEvent, BudgetRule, BudgetVerdict};

/// Milliseconds per bucket.
const SECOND_MS: u64 = 1000;

/// A percentage budget's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PercentageConfig {
    /// Retries allowed per 100 requests of the window, in `[0, 100000]` (Finagle's
    /// `percentCanRetry` × 100).
    pub percent: f64,
    /// The window, in whole seconds, 1 to 60.
    pub ttl_s: u64,
    /// The floor: retries per second allowed whatever the requests (`minRetriesPerSec`).
    pub min_retries_per_sec: u64,
}

impl PercentageConfig {
    /// The window in seconds, 1 to 60 whatever `ttl_s` holds (a value built by hand is clamped).
    pub fn window(&self) -> u64 {
        self.ttl_s.clamp(1, 60)
    }

    /// Retries the floor allows in one window: `min_retries_per_sec × ttl_s`.
    pub fn reserve(&self) -> u64 {
        self.min_retries_per_sec.saturating_mul(self.window())
    }

    /// Retries a window with `requests` requests allows.
    pub fn allowed(&self, requests: u64) -> u64 {
        // f64 holds every count below 2^53 exactly; the product is floored, then saturated.
        let share = (self.percent * requests as f64 / 100.0).floor();
        let share = if share >= u64::MAX as f64 {
            u64::MAX
        } else {
            share as u64
        };
        share.saturating_add(self.reserve())
    }
}

/// The counts of one second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Bucket {
    pub(crate) second: u64,
    pub(crate) requests: u64,
    pub(crate) retries: u64,
}

/// A percentage budget's window: one bucket per second of the ttl, reused in a ring.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PercentageState {
    buckets: Vec<Bucket>,
}

impl PercentageState {
    /// An empty window.
    pub fn new(config: &PercentageConfig) -> PercentageState {
        PercentageState {
            buckets: vec![Bucket::default(); config.window() as usize],
        }
    }

    /// The state holding `buckets` (already checked: seconds increasing, spread under the ttl).
    pub(crate) fn from_buckets(config: &PercentageConfig, buckets: &[BucketSnapshot]) -> PercentageState {
        let mut state = PercentageState::new(config);
        for b in buckets {
            let slot = (b.second % config.window()) as usize;
            state.buckets[slot] = Bucket {
                second: b.second,
                requests: b.requests,
                retries: b.retries,
            };
        }
        state
    }

    /// The current second: the caller's, or the newest bucket's if the clock went back (so a
    /// clock that steps back never frees counted retries).
    fn second(&self, now_ms: u64) -> u64 {
        let newest = self
            .buckets
            .iter()
            .filter(|b| b.requests > 0 || b.retries > 0)
            .map(|b| b.second)
            .max()
            .unwrap_or(0);
        (now_ms / SECOND_MS).max(newest)
    }

    fn live(config: &PercentageConfig, b: &Bucket, second: u64) -> bool {
        (b.requests > 0 || b.retries > 0) && b.second <= second && second - b.second < config.window()
    }

    /// Requests and retries of the window ending at `now_ms`.
    fn totals(&self, config: &PercentageConfig, now_ms: u64) -> (u64, u64) {
        let second = self.second(now_ms);
        self.buckets
            .iter()
            .filter(|b| Self::live(config, b, second))
            .fold((0u64, 0u64), |(q, r), b| {
                (q.saturating_add(b.requests), r.saturating_add(b.retries))
            })
    }

    /// A retry is allowed while the window's retries are below what its requests allow.
    pub(crate) fn permit(&self, config: &PercentageConfig, now_ms: u64) -> BudgetVerdict {
        let (requests, retries) = self.totals(config, now_ms);
        let allowed = config.allowed(requests);
        let rule = if retries < allowed {
            BudgetRule::PercentageWithinBudget
        } else {
            BudgetRule::PercentageBudgetSpent
        };
        let left = allowed
            .saturating_sub(retries)
            .min(crate::serde_form::ms::MAX_SAFE);
        BudgetVerdict::of(rule, left)
    }

    /// A request deposits, a retry withdraws, in the current second's bucket.
    pub(crate) fn record(&mut self, config: &PercentageConfig, now_ms: u64, event: BudgetEvent) {
        let second = self.second(now_ms);
        let slot = &mut self.buckets[(second % config.window()) as usize];
        if slot.second != second {
            *slot = Bucket {
                second,
                requests: 0,
                retries: 0,
            };
        }
        match event {
            BudgetEvent::Request => slot.requests = slot.requests.saturating_add(1),
            BudgetEvent::Retry { .. } => slot.retries = slot.retries.saturating_add(1),
            BudgetEvent::Success { .. }
            | BudgetEvent::Failure
            | BudgetEvent::Timeout
            | BudgetEvent::Final => {}
        }
    }

    /// The non-empty buckets of the newest window, oldest first.
    pub(crate) fn live_buckets(&self, config: &PercentageConfig) -> Vec<BucketSnapshot> {
        let second = self.second(0);
        let mut out: Vec<BucketSnapshot> = self
            .buckets
            .iter()
            .filter(|b| Self::live(config, b, second))
            .map(|b| BucketSnapshot {
                second: b.second,
                requests: b.requests,
                retries: b.retries,
            })
            .collect();
        out.sort_by_key(|b| b.second);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::RetryCause;

    const FINAGLE: PercentageConfig = PercentageConfig {
        percent: 20.0,
        ttl_s: 10,
        min_retries_per_sec: 0,
    };

    #[test]
    fn five_requests_allow_one_retry_and_expire_after_the_ttl() {
        let mut s = PercentageState::new(&FINAGLE);
        for _ in 0..5 {
            s.record(&FINAGLE, 0, BudgetEvent::Request);
        }
        assert!(s.permit(&FINAGLE, 9_999).permitted);
        s.record(
            &FINAGLE,
            9_999,
            BudgetEvent::Retry {
                cause: RetryCause::Error,
            },
        );
        assert!(!s.permit(&FINAGLE, 9_999).permitted);
        // At 10 s the requests of second 0 have expired, and so has nothing else.
        assert_eq!(s.permit(&FINAGLE, 10_000).balance, 0);
    }

    #[test]
    fn a_hand_built_window_of_zero_seconds_is_read_as_one() {
        let c = PercentageConfig {
            percent: 100.0,
            ttl_s: 0,
            min_retries_per_sec: 0,
        };
        let mut s = PercentageState::new(&c);
        s.record(&c, 1_500, BudgetEvent::Request);
        assert!(s.permit(&c, 1_999).permitted);
        assert!(!s.permit(&c, 2_000).permitted);
    }
}
