//! Retry budgets: bounds on retries across requests, as pure state with no clock of its own.
//!
//! Three kinds, chosen by a versioned document ([`BudgetDocument`]):
//! - `token_bucket`: gRPC retry throttling, gRFC A6 "Throttling Retry Attempts and Hedged RPCs"
//!   (grpc/proposal `A6-client-retries.md`; grpc/grpc `src/core/client_channel/retry_throttle.cc`);
//! - `retry_quota`: the AWS SDKs' standard-mode retry quota (AWS SDKs and Tools Reference Guide,
//!   "Retry behavior"; aws/aws-sdk-go-v2 `aws/retry/standard.go`);
//! - `percentage`: Finagle's `RetryBudget` (twitter/finagle `finagle-core/.../service/RetryBudget.scala`):
//!   a percentage of recent requests plus a minimum rate. Envoy's retry budget
//!   (`envoy/config/cluster/v3/circuit_breaker.proto`, `budget_percent` 20%, `min_retry_concurrency`
//!   3) bounds *concurrent* retries against *active* requests, a gauge a per-event budget does not
//!   see (it needs "retry finished" events and in-flight counts); it is left out, and the percentage
//!   kind follows Finagle's rate over a window.
//!
//! The host tells the budget what happened ([`RetryBudget::record`]) and asks it before a retry
//! ([`RetryBudget::permit`], read-only, or [`RetryBudget::try_retry`], which records the retry when
//! permitted). Every call takes the caller's `now_ms`; the state is a value the host may keep
//! anywhere through [`BudgetSnapshot`].
//!
//! ```
//! use retrypolicy::{BudgetConfig, BudgetDocument, BudgetEvent, RetryBudget, RetryCause};
//!
//! // gRFC A6's example: maxTokens 10, tokenRatio 0.1.
//! let doc: BudgetDocument =
//!     serde_json::from_str(r#"{"kind": "token_bucket", "max_tokens": 10, "token_ratio": 0.1}"#).unwrap();
//! let mut budget = RetryBudget::new(&BudgetConfig::from_document(&doc, "budget").unwrap());
//! for now_ms in 0..5 {
//!     budget.record(now_ms, BudgetEvent::Failure);
//! }
//! // 5 tokens left: at the threshold, so no retry.
//! let verdict = budget.try_retry(5, RetryCause::Error);
//! assert!(!verdict.permitted);
//! assert_eq!(verdict.rule.name(), "token_bucket_at_or_below_half");
//! ```

// The budgets themselves are the `guards` feature's; their vocabulary (kinds, causes, events,
// rules, verdicts) is in every build, since a run's steps and statistics speak it.
#[cfg(feature = "guards")]
mod document;
#[cfg(feature = "guards")]
mod percentage;
#[cfg(feature = "guards")]
mod retry_quota;
#[cfg(feature = "guards")]
mod token_bucket;
#[cfg(not(feature = "guards"))]
mod unbuilt;

use serde::{Deserialize, Serialize};

use crate::error::Error;

#[cfg(feature = "guards")]
pub use document::{
    BucketSnapshot, BudgetConfig, BudgetDocument, BudgetSnapshot, RetryQuotaCosts, BUDGET_VERSION,
};
#[cfg(feature = "guards")]
pub use percentage::{PercentageConfig, PercentageState};
#[cfg(feature = "guards")]
pub use retry_quota::{
    is_aws_throttling_error, RetryQuotaConfig, RetryQuotaState, AWS_THROTTLING_ERROR_CODES,
};
#[cfg(feature = "guards")]
pub use token_bucket::{TokenBucketConfig, TokenBucketState};
#[cfg(not(feature = "guards"))]
pub use unbuilt::RetryBudget;

/// The kinds of retry budget, as named in JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetKind {
    /// gRPC's retry throttling token bucket (gRFC A6).
    TokenBucket,
    /// The AWS SDKs' standard-mode retry quota.
    RetryQuota,
    /// Finagle's percentage of recent requests plus a minimum rate.
    Percentage,
}

impl BudgetKind {
    /// The stable snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            BudgetKind::TokenBucket => "token_bucket",
            BudgetKind::RetryQuota => "retry_quota",
            BudgetKind::Percentage => "percentage",
        }
    }
}

/// What failed, for the retry being asked about: the AWS quota charges a timeout (classic costs) and
/// a throttling error (2026 costs) differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RetryCause {
    /// Any retryable error other than a timeout.
    #[default]
    Error,
    /// The attempt timed out.
    Timeout,
    /// The server throttled the request (an AWS throttling error code, HTTP 429).
    Throttling,
}

/// Something that happened, told to a budget with [`RetryBudget::record`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BudgetEvent {
    /// A new request (its first attempt) was sent: Finagle's deposit.
    Request,
    /// An attempt succeeded; `after_retry` names what the retry that succeeded was for, or `None`
    /// when the first attempt succeeded (AWS refunds that retry's cost, else adds its increment).
    Success {
        /// The cause of the retry that succeeded, `None` for a first-attempt success.
        after_retry: Option<RetryCause>,
    },
    /// An attempt failed with a retryable error (gRPC takes one token). Only failures the host
    /// would retry count, as gRFC A6 says: a malformed request is not a server failure.
    Failure,
    /// An attempt timed out (a failure for gRPC's bucket).
    Timeout,
    /// An attempt ended with a failure that is not retried (the server's final answer, as a 404
    /// or a non-retryable status): a success for gRPC's bucket (gRFC A6 counts as failures only
    /// retryable statuses and pushback), nothing for the AWS quota (it refunds only a success)
    /// and for the percentage budget.
    Final,
    /// A retry was sent for `cause` (Finagle's withdrawal; the AWS quota takes its cost).
    Retry {
        /// What the retry repeats.
        cause: RetryCause,
    },
}

/// The kinds of [`BudgetEvent`], by name (`request`, `success`, `failure`, `timeout`, `final`, `retry`), for
/// hosts that read events from text or their own enums.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetEventKind {
    /// [`BudgetEvent::Request`].
    Request,
    /// [`BudgetEvent::Success`].
    Success,
    /// [`BudgetEvent::Failure`].
    Failure,
    /// [`BudgetEvent::Timeout`].
    Timeout,
    /// [`BudgetEvent::Final`].
    Final,
    /// [`BudgetEvent::Retry`].
    Retry,
}

impl BudgetEvent {
    /// The event of `kind`, with `after_retry` (only a success takes it) and `cause` (only a
    /// retry takes it; default `error`); either given to another kind is `unknown_field` naming
    /// `field.after_retry` or `field.cause`.
    pub fn from_kind(
        field: &str,
        kind: BudgetEventKind,
        after_retry: Option<RetryCause>,
        cause: Option<RetryCause>,
    ) -> Result<BudgetEvent, Error> {
        let misplaced = |name: &str| Error::UnknownField {
            field: if field.is_empty() {
                name.to_owned()
            } else {
                format!("{field}.{name}")
            },
        };
        if after_retry.is_some() && kind != BudgetEventKind::Success {
            return Err(misplaced("after_retry"));
        }
        if cause.is_some() && kind != BudgetEventKind::Retry {
            return Err(misplaced("cause"));
        }
        Ok(match kind {
            BudgetEventKind::Request => BudgetEvent::Request,
            BudgetEventKind::Success => BudgetEvent::Success { after_retry },
            BudgetEventKind::Failure => BudgetEvent::Failure,
            BudgetEventKind::Timeout => BudgetEvent::Timeout,
            BudgetEventKind::Final => BudgetEvent::Final,
            BudgetEventKind::Retry => BudgetEvent::Retry {
                cause: cause.unwrap_or_default(),
            },
        })
    }
}

/// The rule behind a budget's verdict; `source()` is the text it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetRule {
    /// gRPC: tokens above `max_tokens / 2`, retries allowed.
    TokenBucketAboveHalf,
    /// gRPC: tokens at or below `max_tokens / 2`, retries throttled.
    TokenBucketAtOrBelowHalf,
    /// AWS: the quota holds the retry's cost.
    RetryQuotaAvailable,
    /// AWS: the quota holds less than the retry's cost.
    RetryQuotaExhausted,
    /// Finagle: the window's retries stay within the percentage plus the floor.
    PercentageWithinBudget,
    /// Finagle: the window's retries already reach the percentage plus the floor.
    PercentageBudgetSpent,
}

impl BudgetRule {
    /// The stable snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            BudgetRule::TokenBucketAboveHalf => "token_bucket_above_half",
            BudgetRule::TokenBucketAtOrBelowHalf => "token_bucket_at_or_below_half",
            BudgetRule::RetryQuotaAvailable => "retry_quota_available",
            BudgetRule::RetryQuotaExhausted => "retry_quota_exhausted",
            BudgetRule::PercentageWithinBudget => "percentage_within_budget",
            BudgetRule::PercentageBudgetSpent => "percentage_budget_spent",
        }
    }

    /// The source text of this rule.
    pub fn source(self) -> &'static str {
        self.kind_and_permitted().0.source()
    }

    /// Whether this rule permits the retry.
    pub fn permits(self) -> bool {
        self.kind_and_permitted().1
    }

    /// The budget kind this rule belongs to.
    pub fn kind(self) -> BudgetKind {
        self.kind_and_permitted().0
    }

    fn kind_and_permitted(self) -> (BudgetKind, bool) {
        match self {
            BudgetRule::TokenBucketAboveHalf => (BudgetKind::TokenBucket, true),
            BudgetRule::TokenBucketAtOrBelowHalf => (BudgetKind::TokenBucket, false),
            BudgetRule::RetryQuotaAvailable => (BudgetKind::RetryQuota, true),
            BudgetRule::RetryQuotaExhausted => (BudgetKind::RetryQuota, false),
            BudgetRule::PercentageWithinBudget => (BudgetKind::Percentage, true),
            BudgetRule::PercentageBudgetSpent => (BudgetKind::Percentage, false),
        }
    }
}

impl BudgetKind {
    /// The text each kind's rules come from, with its defaults.
    pub fn source(self) -> &'static str {
        match self {
            BudgetKind::TokenBucket => {
                "gRFC A6 Client Retries, Throttling Retry Attempts and Hedged RPCs \
                 (grpc/proposal A6-client-retries.md; grpc/grpc src/core/client_channel/retry_throttle.cc)"
            }
            BudgetKind::RetryQuota => {
                "AWS SDKs and Tools Reference Guide, Retry behavior: standard mode retry quota \
                 (aws/aws-sdk-go-v2 aws/retry/standard.go: 500 tokens, cost 5, timeout cost 10, increment 1)"
            }
            BudgetKind::Percentage => {
                "Finagle RetryBudget (twitter/finagle finagle-core/src/main/scala/com/twitter/finagle/\
                 service/RetryBudget.scala: ttl 10 s, minRetriesPerSec 10, percentCanRetry 0.2)"
            }
        }
    }
}

/// A budget's answer to "may a retry be sent now?", with the rule and source behind it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BudgetVerdict {
    /// Whether the retry may be sent.
    pub permitted: bool,
    /// `budget_exhausted` when refused, else null.
    pub cause: Option<BudgetCause>,
    /// The budget's kind.
    pub kind: BudgetKind,
    /// The rule that decided.
    pub rule: BudgetRule,
    /// The source text of that rule.
    pub source: &'static str,
    /// What the budget holds now: thousandths of a token (token bucket), tokens (retry quota),
    /// or retries still allowed in the window (percentage).
    pub balance: u64,
}

/// Why a budget refused a retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetCause {
    /// The budget holds too little for another retry now.
    BudgetExhausted,
}

impl BudgetVerdict {
    /// The verdict of `rule` with `balance`.
    pub fn of(rule: BudgetRule, balance: u64) -> BudgetVerdict {
        BudgetVerdict {
            permitted: rule.permits(),
            cause: (!rule.permits()).then_some(BudgetCause::BudgetExhausted),
            kind: rule.kind(),
            rule,
            source: rule.source(),
            balance,
        }
    }
}

/// The state of one kind of budget. The percentage window's ten slices are inline (about 250
/// bytes): a budget is one per endpoint, shared, and holds no allocation.
#[cfg(feature = "guards")]
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::large_enum_variant)]
enum Kind {
    TokenBucket(TokenBucketConfig, TokenBucketState),
    RetryQuota(RetryQuotaConfig, RetryQuotaState),
    Percentage(PercentageConfig, PercentageState),
}

/// A retry budget: its configuration and its current state. Not shared by itself: a host that
/// calls it from several threads wraps it in its own lock (every call is short and allocation-free
/// except [`RetryBudget::snapshot`]).
#[cfg(feature = "guards")]
#[derive(Debug, Clone, PartialEq)]
pub struct RetryBudget {
    kind: Kind,
}

#[cfg(feature = "guards")]
impl RetryBudget {
    /// A budget of `config`, in its initial state (full bucket or quota, empty window).
    pub fn new(config: &BudgetConfig) -> RetryBudget {
        let kind = match *config {
            BudgetConfig::TokenBucket(c) => Kind::TokenBucket(c, TokenBucketState::new(&c)),
            BudgetConfig::RetryQuota(c) => Kind::RetryQuota(c, RetryQuotaState::new(&c)),
            BudgetConfig::Percentage(c) => Kind::Percentage(c, PercentageState::new(&c)),
        };
        RetryBudget { kind }
    }

    /// A budget of `config` in the state `snapshot`; errors name the field under `field`
    /// (e.g. `state.balance`).
    pub fn restore(
        config: &BudgetConfig,
        snapshot: &BudgetSnapshot,
        field: &str,
    ) -> Result<RetryBudget, Error> {
        document::restore(config, snapshot, field)
    }

    /// This budget's configuration.
    pub fn config(&self) -> BudgetConfig {
        match &self.kind {
            Kind::TokenBucket(c, _) => BudgetConfig::TokenBucket(*c),
            Kind::RetryQuota(c, _) => BudgetConfig::RetryQuota(*c),
            Kind::Percentage(c, _) => BudgetConfig::Percentage(*c),
        }
    }

    /// Whether a retry for `cause` may be sent at `now_ms`; changes nothing.
    pub fn permit(&self, now_ms: u64, cause: RetryCause) -> BudgetVerdict {
        match &self.kind {
            Kind::TokenBucket(c, s) => s.permit(c),
            Kind::RetryQuota(c, s) => s.permit(c, cause),
            Kind::Percentage(c, s) => s.permit(c, now_ms),
        }
    }

    /// Tells the budget that `event` happened at `now_ms`.
    pub fn record(&mut self, now_ms: u64, event: BudgetEvent) {
        match &mut self.kind {
            Kind::TokenBucket(c, s) => s.record(c, event),
            Kind::RetryQuota(c, s) => s.record(c, event),
            Kind::Percentage(c, s) => s.record(c, now_ms, event),
        }
    }

    /// [`permit`](Self::permit), then, when permitted, [`record`](Self::record) of the retry:
    /// the one call a host makes (under its lock) before sending a retry.
    pub fn try_retry(&mut self, now_ms: u64, cause: RetryCause) -> BudgetVerdict {
        let verdict = self.permit(now_ms, cause);
        if verdict.permitted {
            self.record(now_ms, BudgetEvent::Retry { cause });
            // The balance after the withdrawal, so a host sees what is left.
            return BudgetVerdict {
                balance: self.permit(now_ms, cause).balance,
                ..verdict
            };
        }
        verdict
    }

    /// [`try_retry`](Self::try_retry) asked `n` times in a row at `now_ms` (retries that go
    /// together: hedges with no hedging delay), stopping at the first refusal, in one step
    /// whatever `n`: how many were permitted, and the answer to the last one asked (the refusal,
    /// or the last retry's with the balance after it).
    pub fn try_retries(&mut self, now_ms: u64, cause: RetryCause, n: u32) -> (u32, BudgetVerdict) {
        let first = self.permit(now_ms, cause);
        if !first.permitted || n == 0 {
            return (0, first);
        }
        let permitted = match &mut self.kind {
            // A retry takes nothing from gRPC's bucket: each is asked the same and permitted.
            Kind::TokenBucket(..) => n,
            Kind::RetryQuota(c, s) => s.withdraw(c, cause, n),
            Kind::Percentage(c, s) => s.withdraw(c, now_ms, n),
        };
        let after = self.permit(now_ms, cause);
        if permitted < n {
            (permitted, after)
        } else {
            (
                n,
                BudgetVerdict {
                    balance: after.balance,
                    ..first
                },
            )
        }
    }

    /// The state as a value that serialises to JSON and back ([`RetryBudget::restore`]).
    pub fn snapshot(&self) -> BudgetSnapshot {
        match &self.kind {
            Kind::TokenBucket(_, s) => BudgetSnapshot::balance(BudgetKind::TokenBucket, s.milli_tokens),
            Kind::RetryQuota(_, s) => BudgetSnapshot::balance(BudgetKind::RetryQuota, s.tokens),
            Kind::Percentage(c, s) => BudgetSnapshot::buckets(s.live_buckets(c)),
        }
    }
}

#[cfg(all(test, feature = "guards"))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn budget(doc: serde_json::Value) -> RetryBudget {
        let doc: BudgetDocument = serde_json::from_value(doc).unwrap();
        RetryBudget::new(&BudgetConfig::from_document(&doc, "budget").unwrap())
    }

    fn any_budget() -> impl Strategy<Value = RetryBudget> {
        prop_oneof![
            (1u32..=1000, 0u64..=1000).prop_map(|(max, tokens)| {
                let mut b = budget(serde_json::json!({"kind": "token_bucket", "max_tokens": max, "token_ratio": 0.5}));
                for _ in 0..tokens % (u64::from(max) + 1) {
                    b.record(0, BudgetEvent::Failure);
                }
                b
            }),
            (0u64..=60, 0u64..=6, 0u64..=6).prop_map(|(capacity, retry, timeout)| budget(
                serde_json::json!({"kind": "retry_quota", "capacity": capacity, "retry_cost": retry, "timeout_cost": timeout})
            )),
            (0u64..=50, 1u64..=3, 0u64..=40).prop_map(|(percent, min, requests)| {
                let mut b = budget(serde_json::json!({"kind": "percentage", "percent": percent, "ttl_ms": 1000, "min_retries_per_sec": min}));
                for _ in 0..requests {
                    b.record(500, BudgetEvent::Request);
                }
                b
            }),
        ]
    }

    proptest! {
        /// Asking for n retries at once answers as n asks in a row would, and leaves the same state.
        #[test]
        fn retries_asked_together_are_asked_one_by_one(
            b in any_budget(),
            n in prop_oneof![1u32..=12, 1u32..=120],
            now in prop_oneof![Just(0u64), Just(500), Just(1_500)],
            timeout in any::<bool>(),
        ) {
            let cause = if timeout { RetryCause::Timeout } else { RetryCause::Error };
            let mut one_by_one = b.clone();
            let mut last = None;
            let mut permitted = 0;
            for _ in 0..n {
                let v = one_by_one.try_retry(now, cause);
                last = Some(v);
                if !v.permitted {
                    break;
                }
                permitted += 1;
            }
            let mut together = b;
            prop_assert_eq!(together.try_retries(now, cause, n), (permitted, last.unwrap()));
            prop_assert_eq!(together, one_by_one);
        }
    }

    #[test]
    fn the_last_retry_that_empties_a_quota_is_still_permitted() {
        let mut b = budget(serde_json::json!({"kind": "retry_quota", "capacity": 10, "retry_cost": 5}));
        let (n, v) = b.try_retries(0, RetryCause::Error, 2);
        assert_eq!((n, v.permitted, v.balance), (2, true, 0));
        let (n, v) = b.try_retries(0, RetryCause::Error, 2);
        assert_eq!((n, v.permitted, v.balance), (0, false, 0));
    }
}
