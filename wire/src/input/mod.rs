//! The input envelopes of the JSON API by function name: one struct per function's input,
//! read with derived serde (unknown fields rejected, durations and draws through the core's
//! serde helpers).

use serde::Deserialize;
#[cfg(feature = "mongodb")]
use serde_json::Value;

use retrypolicy::*;

#[cfg(feature = "guards")]
mod budget;
mod run;
#[cfg(feature = "guards")]
pub(crate) use budget::*;
pub(crate) use run::*;

#[cfg(feature = "couchbase")]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct KvInput {
    pub(crate) operation: KvOperation,
    #[serde(with = "retrypolicy::serde_form::status")]
    pub(crate) status: u16,
    #[serde(default)]
    pub(crate) error_map: Option<ErrorMap>,
    #[serde(default, deserialize_with = "retrypolicy::serde_form::or_default")]
    pub(crate) compat: Compat,
}

#[cfg(feature = "couchbase")]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct QueryInput {
    pub(crate) code: u32,
    #[serde(default, deserialize_with = "retrypolicy::serde_form::or_default")]
    pub(crate) message: String,
    #[serde(default, deserialize_with = "retrypolicy::serde_form::or_default")]
    pub(crate) retry: bool,
    #[serde(default, deserialize_with = "retrypolicy::serde_form::or_default")]
    pub(crate) compat: Compat,
}

#[cfg(feature = "couchbase")]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CodeInput {
    pub(crate) code: u32,
}

#[cfg(feature = "couchbase")]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HttpInput {
    pub(crate) http_status: u16,
    #[serde(default, deserialize_with = "retrypolicy::serde_form::or_default")]
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
    #[serde(default, deserialize_with = "retrypolicy::serde_form::or_default")]
    pub(crate) policy: Policy,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PolicyInput {
    pub(crate) json: String,
}

#[cfg(feature = "mongodb")]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MongoErrorInput {
    pub(crate) error: MongoError,
}

#[cfg(feature = "mongodb")]
fn yes() -> bool {
    true
}

#[cfg(feature = "mongodb")]
/// `null` read as [`yes`]'s value, as the key left out is.
fn yes_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    retrypolicy::serde_form::or_else(d, yes)
}

#[cfg(feature = "mongodb")]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MongoWriteErrorInput {
    pub(crate) error: MongoError,
    #[serde(default, deserialize_with = "retrypolicy::serde_form::or_default")]
    pub(crate) server: ServerKind,
    #[serde(default = "yes", deserialize_with = "yes_if_null")]
    pub(crate) retry_writes: bool,
}

#[cfg(feature = "mongodb")]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MongoSurfacedInput {
    pub(crate) kind: retrypolicy::mongodb::operations::CommandClass,
    pub(crate) errors: Vec<MongoError>,
}

#[cfg(feature = "mongodb")]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MongoEligibilityInput {
    pub(crate) operation: MongoOperation,
    #[serde(default = "yes", deserialize_with = "yes_if_null")]
    pub(crate) retry_writes: bool,
    #[serde(default = "yes", deserialize_with = "yes_if_null")]
    pub(crate) retry_reads: bool,
}

#[cfg(feature = "mongodb")]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MongoDecideInput {
    pub(crate) request: MongoRequest,
    pub(crate) error: MongoError,
}

#[cfg(feature = "mongodb")]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MongoOverloadBackoffInput {
    pub(crate) attempt: u32,
    #[serde(default, with = "retrypolicy::serde_form::ms::option")]
    pub(crate) base_backoff_ms: Option<u64>,
    pub(crate) random: f64,
}

#[cfg(feature = "mongodb")]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MongoTxnLabelsInput {
    pub(crate) command: TransactionCommand,
    pub(crate) error: MongoError,
}

#[cfg(feature = "mongodb")]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MongoTxnBackoffInput {
    pub(crate) transaction_attempt: u32,
    pub(crate) random: f64,
}

#[cfg(feature = "mongodb")]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MongoWithTransactionInput {
    #[serde(default, with = "retrypolicy::serde_form::ms::option")]
    pub(crate) timeout_ms: Option<u64>,
    pub(crate) events: Vec<TransactionEvent>,
}

#[cfg(feature = "mongodb")]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MongoTxnStepInput {
    pub(crate) state: TransactionState,
    pub(crate) event: TransactionEvent,
}

#[cfg(feature = "mongodb")]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MongoDuplicateKeyInput {
    pub(crate) document_id: Value,
    pub(crate) error: retrypolicy::mongodb::idempotency::DuplicateKeyError,
}

#[cfg(feature = "mongodb")]
fn default_pending_field() -> String {
    "pending".to_owned()
}

#[cfg(feature = "mongodb")]
/// `null` read as [`default_pending_field`]'s value, as the key left out is.
fn default_pending_field_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    retrypolicy::serde_form::or_else(d, default_pending_field)
}

#[cfg(feature = "mongodb")]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MongoRewriteInput {
    pub(crate) filter: Value,
    pub(crate) update: Value,
    #[serde(default, deserialize_with = "retrypolicy::serde_form::or_default")]
    pub(crate) upsert: bool,
    pub(crate) token: Value,
    #[serde(
        default = "default_pending_field",
        deserialize_with = "default_pending_field_if_null"
    )]
    pub(crate) pending_field: String,
}

#[cfg(feature = "http")]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HttpClassifyInput {
    #[serde(default)]
    pub(crate) status: Option<u16>,
    #[serde(default, deserialize_with = "retrypolicy::serde_form::or_default")]
    pub(crate) network_error: bool,
}

#[cfg(feature = "http")]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HttpRetryAfterInput {
    pub(crate) value: String,
    #[serde(default, with = "retrypolicy::serde_form::ms::option")]
    pub(crate) now_unix_ms: Option<u64>,
}

#[cfg(feature = "http")]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HttpDateInput {
    pub(crate) value: String,
    #[serde(default, with = "retrypolicy::serde_form::ms::option")]
    pub(crate) now_unix_ms: Option<u64>,
}

#[cfg(feature = "http")]
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
    #[cfg(feature = "guards")]
    #[serde(default)]
    pub(crate) budget_verdict: Option<VerdictInput>,
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
    #[serde(default, deserialize_with = "retrypolicy::serde_form::or_default")]
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
    #[serde(default, with = "retrypolicy::serde_form::ms::or_zero")]
    pub(crate) delay_ms: u64,
    #[serde(default, deserialize_with = "retrypolicy::serde_form::or_default")]
    pub(crate) capped: bool,
    #[serde(default, deserialize_with = "retrypolicy::serde_form::or_default")]
    pub(crate) then_cancel: bool,
    pub(crate) reason: RetryReason,
    #[serde(default)]
    pub(crate) cause: Option<NoRetryCause>,
    pub(crate) rule: Rule,
    #[serde(default, rename = "section")]
    pub(crate) _section: Option<String>,
    #[serde(default, deserialize_with = "retrypolicy::serde_form::or_default")]
    pub(crate) attempts: u32,
    #[serde(default, deserialize_with = "retrypolicy::serde_form::or_default")]
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
