//! The input envelopes of the JSON API by function name: one struct per function's input,
//! read with derived serde (unknown fields rejected, durations and draws through the core's
//! serde helpers).

use serde::Deserialize;
use serde_json::Value;

use retrypolicy::*;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct KvInput {
    pub(crate) operation: KvOperation,
    #[serde(with = "retrypolicy::serde_form::status")]
    pub(crate) status: u16,
    #[serde(default)]
    pub(crate) error_map: Option<ErrorMap>,
    #[serde(default)]
    pub(crate) compat: Compat,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct QueryInput {
    pub(crate) code: u32,
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) message: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) retry: bool,
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) compat: Compat,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CodeInput {
    pub(crate) code: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HttpInput {
    pub(crate) http_status: u16,
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) body: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DispatchInput {
    pub(crate) failure: DispatchFailure,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReasonInput {
    pub(crate) reason: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AttemptInput {
    pub(crate) attempt: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BackoffInput {
    pub(crate) backoff: Backoff,
    pub(crate) jitter: Jitter,
    pub(crate) attempt: u32,
    #[serde(default, deserialize_with = "retrypolicy::serde_form::draw::deserialize")]
    pub(crate) random: Option<f64>,
    #[serde(default, with = "retrypolicy::serde_form::ms::option")]
    pub(crate) previous_delay_ms: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DecideInput {
    pub(crate) request: Request,
    pub(crate) reason: RetryReason,
    #[serde(default)]
    pub(crate) policy: Policy,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PolicyInput {
    pub(crate) json: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MongoErrorInput {
    pub(crate) error: MongoError,
}

/// An optional field given `null` reads as not given (its default), as `None` or `undefined` does
/// in the host languages.
fn null_as_default<'de, D: serde::Deserializer<'de>, T: Deserialize<'de> + Default>(
    d: D,
) -> Result<T, D::Error> {
    Option::<T>::deserialize(d).map(Option::unwrap_or_default)
}

fn yes() -> bool {
    true
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MongoWriteErrorInput {
    pub(crate) error: MongoError,
    #[serde(default)]
    pub(crate) server: ServerKind,
    #[serde(default = "yes")]
    pub(crate) retry_writes: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MongoSurfacedInput {
    pub(crate) kind: retrypolicy::mongodb::operations::CommandClass,
    pub(crate) errors: Vec<MongoError>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MongoEligibilityInput {
    pub(crate) operation: MongoOperation,
    #[serde(default = "yes")]
    pub(crate) retry_writes: bool,
    #[serde(default = "yes")]
    pub(crate) retry_reads: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MongoDecideInput {
    pub(crate) request: MongoRequest,
    pub(crate) error: MongoError,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MongoOverloadBackoffInput {
    pub(crate) attempt: u32,
    #[serde(default, with = "retrypolicy::serde_form::ms::option")]
    pub(crate) base_backoff_ms: Option<u64>,
    pub(crate) random: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MongoTxnLabelsInput {
    pub(crate) command: TransactionCommand,
    pub(crate) error: MongoError,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MongoTxnBackoffInput {
    pub(crate) transaction_attempt: u32,
    pub(crate) random: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MongoWithTransactionInput {
    #[serde(default, with = "retrypolicy::serde_form::ms::option")]
    pub(crate) timeout_ms: Option<u64>,
    pub(crate) events: Vec<TransactionEvent>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MongoTxnStepInput {
    pub(crate) state: TransactionState,
    pub(crate) event: TransactionEvent,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MongoDuplicateKeyInput {
    pub(crate) document_id: Value,
    pub(crate) error: retrypolicy::mongodb::idempotency::DuplicateKeyError,
}

fn default_pending_field() -> String {
    "pending".to_owned()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MongoRewriteInput {
    pub(crate) filter: Value,
    pub(crate) update: Value,
    #[serde(default)]
    pub(crate) upsert: bool,
    pub(crate) token: Value,
    #[serde(default = "default_pending_field")]
    pub(crate) pending_field: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HttpClassifyInput {
    #[serde(default)]
    pub(crate) status: Option<u16>,
    #[serde(default)]
    pub(crate) network_error: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HttpRetryAfterInput {
    pub(crate) value: String,
    #[serde(default, with = "retrypolicy::serde_form::ms::option")]
    pub(crate) now_unix_ms: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HttpDateInput {
    pub(crate) value: String,
    #[serde(default, with = "retrypolicy::serde_form::ms::option")]
    pub(crate) now_unix_ms: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HttpNextInput {
    #[serde(rename = "loop")]
    pub(crate) retry_loop: RetryLoop,
    pub(crate) state: LoopState,
    pub(crate) attempt: HttpAttempt,
    #[serde(default, with = "retrypolicy::serde_form::ms::option")]
    pub(crate) now_unix_ms: Option<u64>,
    #[serde(default, deserialize_with = "retrypolicy::serde_form::draw::deserialize")]
    pub(crate) random: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RequestInput {
    pub(crate) request: Request,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AfterStrategyInput {
    pub(crate) request: Request,
    pub(crate) reason: RetryReason,
    #[serde(default, with = "retrypolicy::serde_form::ms::option")]
    pub(crate) retry_after_ms: Option<u64>,
}

/// A host strategy given as data: a fixed answer, "retry after `retry_after_ms`" or, when it is
/// null, "do not retry". Every fixture runner builds it as its language's host strategy.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HostStrategyInput {
    #[serde(with = "retrypolicy::serde_form::ms::option")]
    pub(crate) retry_after_ms: Option<u64>,
}

impl RetryStrategy for HostStrategyInput {
    fn retry_after(&self, _request: &Request, _reason: RetryReason) -> Result<StrategyVerdict, Error> {
        Ok(match self.retry_after_ms {
            Some(ms) => StrategyVerdict::custom_retry(ms),
            None => StrategyVerdict::custom_no_retry(),
        })
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DecideWithInput {
    pub(crate) request: Request,
    pub(crate) reason: RetryReason,
    #[serde(default)]
    pub(crate) policy: Policy,
    #[serde(default)]
    pub(crate) host: Option<HostStrategyInput>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Action {
    Retry,
    NoRetry,
}

/// A decision as `decide` writes it, read back; its `section` is always its rule's own.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DecisionInput {
    pub(crate) action: Action,
    #[serde(default, with = "retrypolicy::serde_form::ms")]
    pub(crate) delay_ms: u64,
    #[serde(default)]
    pub(crate) capped: bool,
    #[serde(default)]
    pub(crate) then_cancel: bool,
    pub(crate) reason: RetryReason,
    #[serde(default)]
    pub(crate) cause: Option<NoRetryCause>,
    pub(crate) rule: Rule,
    #[serde(default, rename = "section")]
    pub(crate) _section: Option<String>,
    #[serde(default)]
    pub(crate) attempts: u32,
    #[serde(default)]
    pub(crate) idempotent: bool,
}

impl DecisionInput {
    pub(crate) fn into_decision(self) -> Result<Decision, Error> {
        Ok(match self.action {
            Action::Retry => Decision::Retry(RetryAfter {
                delay_ms: self.delay_ms,
                reason: self.reason,
                rule: self.rule,
                section: self.rule.section(),
                capped: self.capped,
                then_cancel: self.then_cancel,
                attempts: self.attempts,
                idempotent: self.idempotent,
            }),
            Action::NoRetry => Decision::NoRetry(NoRetry {
                reason: self.reason,
                cause: self.cause.ok_or_else(|| Error::MissingField {
                    field: "decision.cause".to_owned(),
                })?,
                rule: self.rule,
                section: self.rule.section(),
                attempts: self.attempts,
                idempotent: self.idempotent,
            }),
        })
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FormatDecisionInput {
    pub(crate) decision: DecisionInput,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExplainDecisionInput {
    pub(crate) request: Request,
    pub(crate) decision: DecisionInput,
}

/// `budget_run`: a budget document, an optional state snapshot (null: the initial state), events.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BudgetRunInput {
    pub(crate) budget: BudgetDocument,
    #[serde(default)]
    pub(crate) state: Option<BudgetSnapshot>,
    pub(crate) events: Vec<BudgetEventInput>,
}

/// The kinds of budget event, as named in JSON.
#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(crate) enum BudgetEventKind {
    Request,
    Success,
    Failure,
    Timeout,
    Retry,
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
        let misplaced = |name: &str| Error::UnknownField {
            field: format!("events[{i}].{name}"),
        };
        if self.after_retry.is_some() && self.kind != BudgetEventKind::Success {
            return Err(misplaced("after_retry"));
        }
        if self.cause.is_some() && self.kind != BudgetEventKind::Retry {
            return Err(misplaced("cause"));
        }
        Ok(match self.kind {
            BudgetEventKind::Request => BudgetEvent::Request,
            BudgetEventKind::Success => BudgetEvent::Success {
                after_retry: self.after_retry,
            },
            BudgetEventKind::Failure => BudgetEvent::Failure,
            BudgetEventKind::Timeout => BudgetEvent::Timeout,
            BudgetEventKind::Retry => BudgetEvent::Retry {
                cause: self.cause.unwrap_or_default(),
            },
        })
    }
}

/// `breaker_run`: an optional breaker document (Couchbase's defaults), an optional state, events.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BreakerRunInput {
    #[serde(default, deserialize_with = "null_as_default")]
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
    #[serde(default)]
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
