//! `decide` with a retry budget's verdict: a retry the budget refuses becomes a no-retry with
//! cause `budget_exhausted`, citing the budget's rule and source. Without a verdict (or with a
//! permitting one) the decision is exactly [`decide`]'s.

use std::fmt;

use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

#[cfg(feature = "guards")]
use crate::budget::BudgetRule;
use crate::budget::BudgetVerdict;
use crate::decide::Decision;
#[cfg(feature = "guards")]
use crate::decide::{decide, Request};
#[cfg(feature = "guards")]
use crate::error::Error;
#[cfg(feature = "guards")]
use crate::explain::{describe_operation, explain};
#[cfg(feature = "guards")]
use crate::policy::Policy;
use crate::reason::RetryReason;

/// A retry that `decide` wanted and the budget refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetRefusal {
    /// The reason that is not retried.
    pub reason: RetryReason,
    /// Retries made before this failure.
    pub attempts: u32,
    /// Whether the request counted as idempotent.
    pub idempotent: bool,
    /// The delay `decide` asked for before the budget refused.
    pub refused_delay_ms: u64,
    /// The budget's verdict.
    pub verdict: BudgetVerdict,
}

impl Serialize for BudgetRefusal {
    /// The shape of a `no_retry` decision, plus `budget` (the verdict) and `refused_delay_ms`.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut o = s.serialize_struct("BudgetRefusal", 9)?;
        o.serialize_field("action", "no_retry")?;
        o.serialize_field("reason", &self.reason)?;
        o.serialize_field("cause", "budget_exhausted")?;
        o.serialize_field("rule", self.verdict.rule.name())?;
        o.serialize_field("section", self.verdict.source)?;
        o.serialize_field("attempts", &self.attempts)?;
        o.serialize_field("idempotent", &self.idempotent)?;
        o.serialize_field("refused_delay_ms", &Millis(self.refused_delay_ms))?;
        o.serialize_field("budget", &self.verdict)?;
        o.end()
    }
}

/// Milliseconds in the wire form (a string past 2^53 − 1).
struct Millis(u64);

impl Serialize for Millis {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        crate::serde_form::ms::serialize(&self.0, s)
    }
}

/// The outcome of [`decide_with_budget`]: `decide`'s decision, or the budget's refusal of its retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum BudgetedDecision {
    /// `decide`'s decision stands.
    Decided(Decision),
    /// `decide` said retry; the budget said no.
    Refused(BudgetRefusal),
}

impl BudgetedDecision {
    /// Whether the request is retried.
    pub fn is_retry(&self) -> bool {
        matches!(self, BudgetedDecision::Decided(d) if d.is_retry())
    }

    /// The delay before the retry, or `None` for no retry.
    pub fn delay_ms(&self) -> Option<u64> {
        match self {
            BudgetedDecision::Decided(d) => d.delay_ms(),
            BudgetedDecision::Refused(_) => None,
        }
    }

    /// The stable name of the rule that decided.
    pub fn rule_name(&self) -> &'static str {
        match self {
            BudgetedDecision::Decided(d) => d.rule().name(),
            BudgetedDecision::Refused(r) => r.verdict.rule.name(),
        }
    }

    /// The source text of that rule.
    pub fn section(&self) -> &'static str {
        match self {
            BudgetedDecision::Decided(d) => d.section(),
            BudgetedDecision::Refused(r) => r.verdict.source,
        }
    }

    /// The decision as a JSON object.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| unreachable!("a decision always serializes"))
    }
}

impl fmt::Display for BudgetedDecision {
    /// One log line, as for every decision.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BudgetedDecision::Decided(d) => d.fmt(f),
            BudgetedDecision::Refused(r) => write!(
                f,
                "no retry after {} retries: budget exhausted (reason {}, rule {}; {})",
                r.attempts,
                r.reason,
                r.verdict.rule.name(),
                r.verdict.source
            ),
        }
    }
}

/// Decides as [`decide`] does, then lets `verdict` (a budget's answer for this retry, from
/// [`crate::RetryBudget::permit`]) refuse a retry; `None` gives `decide`'s decision unchanged.
#[cfg(feature = "guards")]
pub fn decide_with_budget(
    request: &Request,
    reason: RetryReason,
    policy: &Policy,
    verdict: Option<&BudgetVerdict>,
) -> Result<BudgetedDecision, Error> {
    Ok(BudgetedDecision::apply(decide(request, reason, policy)?, verdict))
}

impl BudgetedDecision {
    /// `decision` (from any entry point: `decide`, `decide_with` and a host strategy, the two
    /// steps) with `verdict` applied: a retry the budget refuses becomes a [`BudgetRefusal`];
    /// anything else, or no verdict, stands.
    pub fn apply(decision: Decision, verdict: Option<&BudgetVerdict>) -> BudgetedDecision {
        match (decision, verdict) {
            (Decision::Retry(r), Some(v)) if !v.permitted => BudgetedDecision::Refused(BudgetRefusal {
                reason: r.reason,
                attempts: r.attempts,
                idempotent: r.idempotent,
                refused_delay_ms: r.delay_ms,
                verdict: *v,
            }),
            _ => BudgetedDecision::Decided(decision),
        }
    }
}

/// Why the budget refused, in words.
#[cfg(feature = "guards")]
fn budget_because(v: &BudgetVerdict) -> String {
    match v.rule {
        BudgetRule::TokenBucketAtOrBelowHalf => format!(
            "gRPC's retry throttling bucket holds {} tokens, at or below half its size",
            crate::units::number_text(v.balance as f64 / 1000.0)
        ),
        BudgetRule::RetryQuotaExhausted => format!(
            "the retry quota holds {} tokens, fewer than the retry costs",
            v.balance
        ),
        BudgetRule::PercentageBudgetSpent => {
            "the retries of the last window already reach its share of the requests plus the minimum"
                .to_owned()
        }
        // A permitting rule never refuses; named for completeness.
        other => format!("its rule {} refused", other.name()),
    }
}

/// The decision for `request` as one sentence naming the rule and its source, saying so when
/// the budget refused the retry.
#[cfg(feature = "guards")]
pub fn explain_with_budget(request: &Request, decision: &BudgetedDecision) -> String {
    match decision {
        BudgetedDecision::Decided(d) => explain(request, d),
        BudgetedDecision::Refused(r) => format!(
            "Do not retry the {}: the policy would retry {} after {} ms, but the retry budget refuses: {}. \
             [rule {}; {}]",
            describe_operation(&request.operation),
            r.reason,
            r.refused_delay_ms,
            budget_because(&r.verdict),
            r.verdict.rule.name(),
            r.verdict.source
        ),
    }
}
