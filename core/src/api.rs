//! The JSON API: every pure function by its spec-fixture name, JSON in and JSON out.
//!
//! This is the contract the fixtures pin down. Bindings expose idiomatic typed functions for the
//! hot paths and route the rest (MongoDB, HTTP, transactions) through [`call`], so no binding
//! re-implements the input and output shapes; the CLI and the browser explorer use it too.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::json::from_json_value;
use crate::*;

/// Every function [`call`] knows, in the order of the fixture table in spec-fixtures/README.md.
pub const FUNCTIONS: &[&str] = &[
    "reason_flags",
    "is_idempotent",
    "classify_kv",
    "classify_query",
    "classify_analytics",
    "classify_search",
    "classify_views",
    "classify_dispatch",
    "controlled_backoff",
    "backoff",
    "decide",
    "explain",
    "simulate",
    "parse_policy",
    "mongodb_classify_error",
    "mongodb_retryable_write_error",
    "mongodb_retryable_read_error",
    "mongodb_surfaced_error",
    "mongodb_eligibility",
    "mongodb_decide",
    "mongodb_overload_backoff",
    "mongodb_transaction_labels",
    "mongodb_transaction_backoff",
    "mongodb_with_transaction",
    "mongodb_transaction_step",
    "mongodb_idempotency",
    "mongodb_duplicate_key",
    "mongodb_pending_token_rewrite",
    "http_classify",
    "http_retry_after",
    "http_date",
    "http_next",
];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KvInput {
    operation: KvOperation,
    #[serde(with = "crate::json::status")]
    status: u16,
    #[serde(default)]
    error_map: Option<ErrorMap>,
    #[serde(default)]
    compat: Compat,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct QueryInput {
    code: u32,
    #[serde(default)]
    message: String,
    #[serde(default)]
    compat: Compat,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CodeInput {
    code: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HttpInput {
    http_status: u16,
    #[serde(default)]
    body: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DispatchInput {
    failure: DispatchFailure,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReasonInput {
    reason: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AttemptInput {
    attempt: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BackoffInput {
    backoff: Backoff,
    jitter: Jitter,
    attempt: u32,
    #[serde(default, deserialize_with = "crate::json::draw::deserialize")]
    random: Option<f64>,
    #[serde(default, with = "crate::json::ms::option")]
    previous_delay_ms: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DecideInput {
    request: Request,
    reason: RetryReason,
    #[serde(default)]
    policy: Policy,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyInput {
    json: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MongoErrorInput {
    error: MongoError,
}

fn yes() -> bool {
    true
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MongoWriteErrorInput {
    error: MongoError,
    #[serde(default)]
    server: ServerKind,
    #[serde(default = "yes")]
    retry_writes: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MongoSurfacedInput {
    kind: crate::mongodb::operations::CommandClass,
    errors: Vec<MongoError>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MongoEligibilityInput {
    operation: MongoOperation,
    #[serde(default = "yes")]
    retry_writes: bool,
    #[serde(default = "yes")]
    retry_reads: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MongoDecideInput {
    request: MongoRequest,
    error: MongoError,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MongoOverloadBackoffInput {
    attempt: u32,
    #[serde(default, with = "crate::json::ms::option")]
    base_backoff_ms: Option<u64>,
    random: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MongoTxnLabelsInput {
    command: TransactionCommand,
    error: MongoError,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MongoTxnBackoffInput {
    transaction_attempt: u32,
    random: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MongoWithTransactionInput {
    #[serde(default, with = "crate::json::ms::option")]
    timeout_ms: Option<u64>,
    events: Vec<TransactionEvent>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MongoTxnStepInput {
    state: TransactionState,
    event: TransactionEvent,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MongoDuplicateKeyInput {
    document_id: Value,
    error: crate::mongodb::idempotency::DuplicateKeyError,
}

fn default_pending_field() -> String {
    "pending".to_owned()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MongoRewriteInput {
    filter: Value,
    update: Value,
    #[serde(default)]
    upsert: bool,
    token: Value,
    #[serde(default = "default_pending_field")]
    pending_field: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HttpClassifyInput {
    #[serde(default)]
    status: Option<u16>,
    #[serde(default)]
    network_error: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HttpRetryAfterInput {
    value: String,
    #[serde(default, with = "crate::json::ms::option")]
    now_unix_ms: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HttpDateInput {
    value: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HttpNextInput {
    #[serde(rename = "loop")]
    retry_loop: RetryLoop,
    state: LoopState,
    attempt: HttpAttempt,
    #[serde(default, with = "crate::json::ms::option")]
    now_unix_ms: Option<u64>,
    #[serde(default, deserialize_with = "crate::json::draw::deserialize")]
    random: Option<f64>,
}

fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// Calls the function named `function` (a spec-fixture function name) on its JSON `input`.
pub fn call(function: &str, input: &Value) -> Result<Value, Error> {
    match function {
        "reason_flags" => from_json_value::<ReasonInput>(input).and_then(|i| {
            let r = RetryReason::parse("reason", &i.reason)?;
            Ok(json!({
                "name": r.name(),
                "allows_non_idempotent_retry": r.allows_non_idempotent_retry(),
                "always_retry": r.always_retry(),
            }))
        }),
        "is_idempotent" => {
            from_json_value::<Operation>(input).map(|op| json!({ "idempotent": op.is_idempotent() }))
        }
        "classify_kv" => from_json_value::<KvInput>(input).map(|i| {
            to_value(&classify_kv(
                i.operation,
                i.status,
                i.error_map.as_ref(),
                &i.compat,
            ))
        }),
        "classify_query" => from_json_value::<QueryInput>(input)
            .map(|i| to_value(&classify_query(i.code, &i.message, &i.compat))),
        "classify_analytics" => {
            from_json_value::<CodeInput>(input).map(|i| to_value(&classify_analytics(i.code)))
        }
        "classify_search" => {
            from_json_value::<HttpInput>(input).map(|i| to_value(&classify_search(i.http_status)))
        }
        "classify_views" => {
            from_json_value::<HttpInput>(input).map(|i| to_value(&classify_views(i.http_status, &i.body)))
        }
        "classify_dispatch" => {
            from_json_value::<DispatchInput>(input).map(|i| to_value(&classify_dispatch(i.failure)))
        }
        "controlled_backoff" => from_json_value::<AttemptInput>(input)
            .map(|i| json!({ "delay_ms": controlled_backoff(i.attempt) })),
        "backoff" => from_json_value::<BackoffInput>(input).and_then(|i| {
            i.backoff.validate("backoff")?;
            let d = backoff_delay(&i.backoff, i.jitter, i.attempt, i.random, i.previous_delay_ms)?;
            Ok(ms_json("delay_ms", d))
        }),
        "decide" => from_json_value::<DecideInput>(input).and_then(|i| {
            i.policy.validate()?;
            decide(&i.request, i.reason, &i.policy).map(|d| to_value(&d))
        }),
        "explain" => from_json_value::<DecideInput>(input).and_then(|i| {
            i.policy.validate()?;
            let d = decide(&i.request, i.reason, &i.policy)?;
            Ok(json!({ "decision": to_value(&d), "sentence": explain(&i.request, &d) }))
        }),
        "simulate" => from_json_value::<Scenario>(input).and_then(|s| simulate(&s).map(|t| to_value(&t))),
        "parse_policy" => from_json_value::<PolicyInput>(input)
            .and_then(|i| Policy::from_json(&i.json))
            .map(|p| json!({ "policy": to_value(&p) })),
        "mongodb_classify_error" => from_json_value::<MongoErrorInput>(input).map(|i| {
            let row = i.error.code.and_then(crate::mongodb::errors::code_row);
            json!({
                "class": to_value(&classify_error(&i.error)),
                "code_name": row.map(|r| r.name),
                "group": row.map(|r| to_value(&r.group)),
                "retryable_write_code": row.is_some_and(|r| r.writes),
                "retryable_read_code": row.is_some_and(|r| r.reads),
                "unsupported_deployment_message":
                    crate::mongodb::errors::unsupported_deployment_message(&i.error),
            })
        }),
        "mongodb_retryable_write_error" => from_json_value::<MongoWriteErrorInput>(input).map(|i| {
            let mut out = to_value(&is_retryable_write_error(&i.error, i.server, i.retry_writes));
            out["labels"] = to_value(&crate::mongodb::errors::retryable_write_labels(
                &i.error,
                i.server,
                i.retry_writes,
            ));
            out
        }),
        "mongodb_retryable_read_error" => {
            from_json_value::<MongoErrorInput>(input).map(|i| to_value(&is_retryable_read_error(&i.error)))
        }
        "mongodb_surfaced_error" => from_json_value::<MongoSurfacedInput>(input).and_then(|i| {
            use crate::mongodb::operations::CommandClass;
            let index = match i.kind {
                CommandClass::Read => surfaced_read_error(&i.errors)?,
                _ => surfaced_write_error(&i.errors)?,
            };
            Ok(json!({
                "index": index,
                "code": i.errors[index].code,
                "labels": i.errors[index].labels,
            }))
        }),
        "mongodb_eligibility" => from_json_value::<MongoEligibilityInput>(input)
            .map(|i| to_value(&eligibility(&i.operation, i.retry_writes, i.retry_reads))),
        "mongodb_decide" => from_json_value::<MongoDecideInput>(input)
            .and_then(|i| decide_mongo(&i.request, &i.error).map(|d| to_value(&d))),
        "mongodb_overload_backoff" => from_json_value::<MongoOverloadBackoffInput>(input).and_then(|i| {
            let d = overload_backoff_ms(i.attempt, i.base_backoff_ms, i.random)?;
            let c = crate::mongodb::backpressure::overload_backoff_ceiling_ms(i.attempt, i.base_backoff_ms);
            Ok(json!({ "delay_ms": d, "ceiling_ms": c }))
        }),
        "mongodb_transaction_labels" => from_json_value::<MongoTxnLabelsInput>(input)
            .map(|i| json!({ "labels": transaction_error_labels(i.command, &i.error) })),
        "mongodb_transaction_backoff" => from_json_value::<MongoTxnBackoffInput>(input).and_then(|i| {
            transaction_backoff_ms(i.transaction_attempt, i.random).map(|d| json!({ "backoff_ms": d }))
        }),
        "mongodb_with_transaction" => from_json_value::<MongoWithTransactionInput>(input).and_then(|i| {
            let (actions, state) = run_transaction(i.timeout_ms, &i.events)?;
            let backoffs: Vec<u64> = actions
                .iter()
                .filter_map(|a| match a {
                    TransactionAction::RetryTransaction { backoff_ms, .. } => Some(*backoff_ms),
                    _ => None,
                })
                .collect();
            Ok(json!({
                "actions": actions.iter().map(|a| a.name()).collect::<Vec<_>>(),
                "last": actions.last().map(to_value),
                "backoffs_ms": backoffs,
                "state": to_value(&state),
            }))
        }),
        "mongodb_transaction_step" => from_json_value::<MongoTxnStepInput>(input).and_then(|i| {
            let (state, action) = transaction_step(&i.state, &i.event)?;
            Ok(json!({ "state": to_value(&state), "action": to_value(&action) }))
        }),
        "mongodb_idempotency" => {
            from_json_value::<OperationDoc>(input).and_then(|d| analyze_idempotency(&d).map(|r| to_value(&r)))
        }
        "mongodb_duplicate_key" => from_json_value::<MongoDuplicateKeyInput>(input)
            .map(|i| to_value(&duplicate_key_on_retry(&i.document_id, &i.error))),
        "mongodb_pending_token_rewrite" => from_json_value::<MongoRewriteInput>(input).and_then(|i| {
            pending_token_rewrite(&i.filter, &i.update, i.upsert, &i.token, &i.pending_field)
                .map(|r| to_value(&r))
        }),
        "http_classify" => {
            from_json_value::<HttpClassifyInput>(input).and_then(|i| match (i.status, i.network_error) {
                (Some(s), false) => classify_http_status(s).map(|c| to_value(&c)),
                (None, true) => Ok(to_value(&classify_network_error())),
                (Some(_), true) => Err(Error::InvalidType {
                    field: "network_error".to_owned(),
                    message: "give either status or network_error: true, not both".to_owned(),
                }),
                (None, false) => Err(Error::MissingField {
                    field: "status or network_error".to_owned(),
                }),
            })
        }
        "http_retry_after" => from_json_value::<HttpRetryAfterInput>(input)
            .and_then(|i| parse_retry_after(&i.value, i.now_unix_ms).map(|d| ms_json("delay_ms", d))),
        "http_date" => from_json_value::<HttpDateInput>(input)
            .and_then(|i| parse_imf_fixdate(&i.value).map(|t| json!({ "unix_ms": t }))),
        "http_next" => from_json_value::<HttpNextInput>(input).and_then(|i| {
            http_next(&i.retry_loop, &i.state, &i.attempt, i.now_unix_ms, i.random).map(|d| to_value(&d))
        }),
        other => Err(Error::UnknownName {
            field: "function".to_owned(),
            value: other.to_owned(),
            expected: FUNCTIONS.join(", "),
        }),
    }
}

fn ms_json(key: &str, v: u64) -> Value {
    #[derive(serde::Serialize)]
    struct Ms(#[serde(with = "crate::json::ms")] u64);
    json!({ key: to_value(&Ms(v)) })
}
