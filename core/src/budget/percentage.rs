//! Finagle's `RetryBudget` (twitter/finagle `finagle-core/src/main/scala/com/twitter/finagle/service/
//! RetryBudget.scala`; defaults ttl 10 s, minRetriesPerSec 10, percentCanRetry 0.2): every request
//! deposits, every retry withdraws, deposits and withdrawals expire after `ttl`, and a reserve of
//! `minRetriesPerSec × ttl` retries is always there. The window slides in ten slices of `ttl / 10`
//! each, as Finagle's `WindowedAdder` (`RetryBudget` builds it with 10 slices) and tower's
//! `TpsBudget` (10 slots) do: an event is counted for at least `0.9 × ttl` and less than `ttl`
//! (whole calendar seconds forgot a request 801 ms old at second 4.004). Ten slices keep that
//! error within a tenth of the window with ten counters, the two designs' own choice. Counts are
//! whole numbers, so memory is bounded and every language computes the same integers.
//!
//! The guarantee: when a retry is permitted in slice `s`, the retries of slices `(s − 10, s]`,
//! that one included, are at most `⌊percent/100 × requests of those slices⌋ +
//! min_retries_per_sec × ttl_s`. Finagle keeps scaled integers (deposit 1000, withdrawal
//! `⌊1000 / percentCanRetry⌋`), so its count can differ from this exact ratio by rounding.

use super::document::BucketSnapshot;
use super::{BudgetEvent, BudgetRule, BudgetVerdict};

/// Slices per window (Finagle's `WindowedAdder` in `RetryBudget`, tower's `TpsBudget`: 10).
pub const SLICES: u64 = 10;

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

    /// The width of one slice of the window, in ms: a tenth of it (100 ms to 6 s).
    pub fn slice_ms(&self) -> u64 {
        self.window() * 1_000 / SLICES
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

/// The counts of one slice of the window (slice `n` covers `[n × slice_ms, (n + 1) × slice_ms)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Bucket {
    pub(crate) slice: u64,
    pub(crate) requests: u64,
    pub(crate) retries: u64,
}

/// A percentage budget's window: one bucket per slice, ten reused in a ring (a fixed array: a
/// budget holds no allocation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PercentageState {
    buckets: [Bucket; SLICES as usize],
}

impl PercentageState {
    /// An empty window.
    pub fn new(_config: &PercentageConfig) -> PercentageState {
        PercentageState {
            buckets: [Bucket::default(); SLICES as usize],
        }
    }

    /// The state holding `buckets` (already checked: seconds increasing, spread under the ttl).
    pub(crate) fn from_buckets(config: &PercentageConfig, buckets: &[BucketSnapshot]) -> PercentageState {
        let mut state = PercentageState::new(config);
        for b in buckets {
            let slot = (b.slice % SLICES) as usize;
            state.buckets[slot] = Bucket {
                slice: b.slice,
                requests: b.requests,
                retries: b.retries,
            };
        }
        state
    }

    /// The newest slice holding counts (0 when none does).
    fn newest(&self) -> u64 {
        self.buckets
            .iter()
            .filter(|b| b.requests > 0 || b.retries > 0)
            .map(|b| b.slice)
            .max()
            .unwrap_or(0)
    }

    /// The current slice: the caller's, or the newest bucket's if the clock went back (so a
    /// clock that steps back never frees counted retries). Readings past 2^53 − 1 ms are read as
    /// 2^53 − 1.
    fn slice(&self, config: &PercentageConfig, now_ms: u64) -> u64 {
        (now_ms.min(crate::serde_form::ms::MAX_SAFE) / config.slice_ms()).max(self.newest())
    }

    /// A clock that went back (or a snapshot from a clock that ran ahead): the window's slices move
    /// back with it, counts and their ages kept, so the window goes on sliding from the new
    /// reading instead of standing still until the clock catches up (an hour, after a wall clock
    /// stepped back an hour).
    fn rebase(&mut self, config: &PercentageConfig, now_ms: u64) {
        let now = now_ms.min(crate::serde_form::ms::MAX_SAFE) / config.slice_ms();
        let newest = self.newest();
        if now >= newest {
            return;
        }
        let shift = newest - now;
        let live: Vec<Bucket> = self
            .buckets
            .iter()
            .filter(|b| Self::live(b, newest))
            .copied()
            .collect();
        self.buckets = [Bucket::default(); SLICES as usize];
        for b in live {
            let slice = b.slice.saturating_sub(shift);
            self.buckets[(slice % SLICES) as usize] = Bucket { slice, ..b };
        }
    }

    fn live(b: &Bucket, slice: u64) -> bool {
        (b.requests > 0 || b.retries > 0) && b.slice <= slice && slice - b.slice < SLICES
    }

    /// Requests and retries of the window ending at `now_ms`.
    fn totals(&self, config: &PercentageConfig, now_ms: u64) -> (u64, u64) {
        let slice = self.slice(config, now_ms);
        self.buckets
            .iter()
            .filter(|b| Self::live(b, slice))
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

    /// Up to `n` retries taken at once at `now_ms`, each while the window allows one more: how many.
    pub(crate) fn withdraw(&mut self, config: &PercentageConfig, now_ms: u64, n: u32) -> u32 {
        let (requests, retries) = self.totals(config, now_ms);
        let k = config.allowed(requests).saturating_sub(retries).min(u64::from(n));
        if k > 0 {
            let slot = self.current(config, now_ms);
            slot.retries = slot.retries.saturating_add(k);
        }
        // k ≤ n, a u32.
        k as u32
    }

    /// The current slice's bucket at `now_ms`, emptied if it held an older slice.
    fn current(&mut self, config: &PercentageConfig, now_ms: u64) -> &mut Bucket {
        self.rebase(config, now_ms);
        let slice = self.slice(config, now_ms);
        let slot = &mut self.buckets[(slice % SLICES) as usize];
        if slot.slice != slice {
            *slot = Bucket {
                slice,
                requests: 0,
                retries: 0,
            };
        }
        slot
    }

    /// A request deposits, a retry withdraws, in the current slice's bucket.
    pub(crate) fn record(&mut self, config: &PercentageConfig, now_ms: u64, event: BudgetEvent) {
        let slot = self.current(config, now_ms);
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
        let slice = self.slice(config, 0);
        let mut out: Vec<BucketSnapshot> = self
            .buckets
            .iter()
            .filter(|b| Self::live(b, slice))
            .map(|b| BucketSnapshot {
                slice: b.slice,
                requests: b.requests,
                retries: b.retries,
            })
            .collect();
        out.sort_by_key(|b| b.slice);
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
        // At 10 s the requests of slice 0 (of 1 s) have expired, and so has nothing else.
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
        // A 1 s window of 100 ms slices: the request of slice 15 counts until slice 25 begins.
        s.record(&c, 1_500, BudgetEvent::Request);
        assert!(s.permit(&c, 2_499).permitted);
        assert!(!s.permit(&c, 2_500).permitted);
    }
}
