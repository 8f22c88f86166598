//! The input envelopes of the budget and breaker functions (`budget_run`, `breaker_run`,
//! `decide_with_budget`, `explain_with_budget`): derived serde, unknown fields rejected, and the
//! checks serde cannot make (a field that belongs to another event kind, a verdict that disagrees
//! with its rule) as typed errors naming the field.

use serde::Deserialize;

use retrypolicy::*;

/// `budget_run`: a budget document, an optional state snapshot (null: the initial state), events,
/// and `summary` (true: totals instead of one verdict per event, for long runs).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BudgetRunInput {
    pub(crate) budget: BudgetDocument,
    #[serde(default)]
    pub(crate) state: Option<BudgetSnapshot>,
    pub(crate) events: Vec<BudgetEventInput>,
    #[serde(default, deserialize_with = "retrypolicy::serde_form::or_default")]
    pub(crate) summary: bool,
}

/// One budget event: `{"at_ms": 0, "kind": "failure"}`; `success` may name `after_retry`
/// (`error`/`timeout`), `retry` its `cause` (`error`, the default, or `timeout`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BudgetEventInput {
    #[serde(with = "retrypolicy::serde_form::ms")]
    pub(crate) at_ms: u64,
    pub(crate) kind: BudgetEventKind,
    #[serde(default)]
    pub(crate) after_retry: Option<RetryCause>,
    #[serde(default)]
    pub(crate) cause: Option<RetryCause>,
}

impl BudgetEventInput {
    /// The core's event; a field that belongs to another kind is `unknown_field` at `events[i]`.
    pub(crate) fn event(&self, i: usize) -> Result<BudgetEvent, Error> {
        BudgetEvent::from_kind(&format!("events[{i}]"), self.kind, self.after_retry, self.cause)
    }
}

/// `breaker_run`: an optional breaker document (Couchbase's defaults), an optional state, events.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BreakerRunInput {
    #[serde(default, deserialize_with = "retrypolicy::serde_form::or_default")]
    pub(crate) breaker: BreakerDocument,
    #[serde(default)]
    pub(crate) state: Option<BreakerSnapshot>,
    pub(crate) events: Vec<BreakerEventInput>,
}

/// The kinds of breaker event: a request about to be sent, or how one ended.
#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(crate) enum BreakerEventKind {
    Request,
    Success,
    Failure,
    Timeout,
}

/// One breaker event: `{"at_ms": 0, "kind": "request"}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BreakerEventInput {
    #[serde(with = "retrypolicy::serde_form::ms")]
    pub(crate) at_ms: u64,
    pub(crate) kind: BreakerEventKind,
}

/// `decide_with_budget` and `explain_with_budget`: `decide`'s input plus an optional verdict.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DecideWithBudgetInput {
    pub(crate) request: Request,
    pub(crate) reason: RetryReason,
    #[serde(default, deserialize_with = "retrypolicy::serde_form::or_default")]
    pub(crate) policy: Policy,
    #[serde(default)]
    pub(crate) budget_verdict: Option<VerdictInput>,
}

/// A budget verdict as `budget_run` writes it; only `permitted` and `rule` are required, and
/// whatever else is given must agree with the rule.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct VerdictInput {
    pub(crate) permitted: bool,
    pub(crate) rule: BudgetRule,
    #[serde(default)]
    pub(crate) kind: Option<BudgetKind>,
    #[serde(default)]
    pub(crate) cause: Option<BudgetCause>,
    #[serde(default)]
    pub(crate) source: Option<String>,
    #[serde(default)]
    pub(crate) balance: Option<u64>,
}

impl VerdictInput {
    /// The core's verdict, after checking that the given fields agree with the rule.
    pub(crate) fn verdict(&self) -> Result<BudgetVerdict, Error> {
        let field = |name: &str| format!("budget_verdict.{name}");
        let expected = BudgetVerdict::of(self.rule, self.balance.unwrap_or(0));
        if self.permitted != expected.permitted {
            return Err(Error::OutOfRange {
                field: field("permitted"),
                value: self.permitted.to_string(),
                expected: format!("{} (rule {})", expected.permitted, self.rule.name()),
            });
        }
        if let Some(kind) = self.kind.filter(|k| *k != expected.kind) {
            return Err(Error::UnknownName {
                field: field("kind"),
                value: kind.name().to_owned(),
                expected: expected.kind.name().to_owned(),
            });
        }
        if self.cause.is_some() && self.cause != expected.cause {
            return Err(Error::OutOfRange {
                field: field("cause"),
                value: "budget_exhausted".to_owned(),
                expected: format!("null (rule {} permits)", self.rule.name()),
            });
        }
        if let Some(source) = self.source.as_deref().filter(|s| *s != expected.source) {
            return Err(Error::OutOfRange {
                field: field("source"),
                value: retrypolicy::error::shorten(source),
                expected: format!("the source of rule {}", self.rule.name()),
            });
        }
        Ok(expected)
    }
}
