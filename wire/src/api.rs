//! The JSON API: every pure function by its spec-fixture name, JSON in and JSON out.
//!
//! This is the contract the fixtures pin down. Bindings expose idiomatic typed functions for the
//! hot paths and route the rest (MongoDB, HTTP, transactions) through [`call`], so no binding
//! re-implements the input and output shapes; the CLI and the browser explorer use it too.

use serde_json::{json, Value};

use crate::input::*;
use crate::json::from_json_value;
use retrypolicy::*;

/// Every function [`call`] knows: those of the fixture table in spec-fixtures/README.md, in its
/// order, then the steps and conversions a binding needs that reaches the core only through JSON
/// (the WebAssembly build's Node-compatible facade): `parse_request`, `decide_before_strategy`,
/// `decide_after_strategy`, `decide_with`, `best_effort_delay`, `format_decision`,
/// `explain_decision` (documented at [`call`]).
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
    "simulate_storm",
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
    "budget_run",
    "breaker_run",
    "run",
    "decide_with_budget",
    "explain_with_budget",
    "grpc_service_config",
    "grpc_retry",
    "grpc_hedge",
    "aws_retry",
    "aws_retry_run",
    "aws_rate_limiter_run",
    "parse_request",
    "decide_before_strategy",
    "decide_after_strategy",
    "decide_with",
    "best_effort_delay",
    "format_decision",
    "explain_decision",
];

/// The functions of [`FUNCTIONS`] that a cargo feature brings, each with that feature (the
/// core's, `retrypolicy::FEATURES`); every other function is in every build. [`call`] answers a
/// function of a feature this build leaves out with the core's `not_built` error (code
/// `unknown_name`, naming the function and the feature).
pub const FEATURED: &[(&str, &str)] = &[
    ("classify_kv", "couchbase"),
    ("classify_query", "couchbase"),
    ("classify_analytics", "couchbase"),
    ("classify_search", "couchbase"),
    ("classify_views", "couchbase"),
    ("simulate", "storms"),
    ("simulate_storm", "storms"),
    ("mongodb_classify_error", "mongodb"),
    ("mongodb_retryable_write_error", "mongodb"),
    ("mongodb_retryable_read_error", "mongodb"),
    ("mongodb_surfaced_error", "mongodb"),
    ("mongodb_eligibility", "mongodb"),
    ("mongodb_decide", "mongodb"),
    ("mongodb_overload_backoff", "mongodb"),
    ("mongodb_transaction_labels", "mongodb"),
    ("mongodb_transaction_backoff", "mongodb"),
    ("mongodb_with_transaction", "mongodb"),
    ("mongodb_transaction_step", "mongodb"),
    ("mongodb_idempotency", "mongodb"),
    ("mongodb_duplicate_key", "mongodb"),
    ("mongodb_pending_token_rewrite", "mongodb"),
    ("http_classify", "http"),
    ("http_retry_after", "http"),
    ("http_date", "http"),
    ("http_next", "http"),
    ("grpc_service_config", "grpc"),
    ("grpc_retry", "grpc"),
    ("grpc_hedge", "grpc"),
    ("aws_retry", "aws"),
    ("aws_retry_run", "aws"),
    ("aws_rate_limiter_run", "aws"),
    ("budget_run", "guards"),
    ("breaker_run", "guards"),
    ("decide_with_budget", "guards"),
    ("explain_with_budget", "guards"),
];

/// The feature `function` needs that this build leaves out, if it needs one.
pub fn unbuilt_feature(function: &str) -> Option<&'static str> {
    let (_, feature) = FEATURED.iter().find(|(f, _)| *f == function)?;
    let built = retrypolicy::features::feature(feature).is_some_and(|f| f.built);
    (!built).then_some(*feature)
}

/// Whether this build has `function` (one of [`FUNCTIONS`]).
pub fn is_built(function: &str) -> bool {
    FUNCTIONS.contains(&function) && unbuilt_feature(function).is_none()
}

fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// [`call`] with its input as JSON text: `budget_run` reads it straight into its typed input, so
/// a run of 10^6 events holds its events (tens of MB with `summary`) and never a document tree of
/// them (GBs); every other function parses the text first.
pub fn call_text(function: &str, text: &str) -> Result<Value, Error> {
    match function {
        #[cfg(feature = "guards")]
        "budget_run" => crate::json::from_json_str_streaming::<BudgetRunInput>(text)
            .and_then(|i| crate::runs::budget_run(&i)),
        _ => call(function, &crate::json::from_json_str::<Value>(text)?),
    }
}

/// Calls the function named `function` (a spec-fixture function name) on its JSON `input`.
///
/// Beyond the fixture functions, for bindings that reach the core only through JSON (requests,
/// reasons, policies and decisions in the shapes `decide` reads and writes):
/// - `parse_request` `{request}` → `{request, json}`: the request validated and normalized, as an
///   object and as compact text in the wire's field order.
/// - `decide_before_strategy` `{request, reason, policy?}` → `{decision}`: what
///   [`decide_with`] decides before it asks a host strategy ([`decide_before_strategy`]: deadline,
///   UNKNOWN, always-retry, a per-request built-in strategy). `decision` is null when the host
///   strategy must be asked.
/// - `decide_after_strategy` `{request, reason, retry_after_ms}` → the decision
///   ([`decide_after_strategy`]) for a host strategy's answer: milliseconds, or null for "do not
///   retry".
/// - `decide_with` `{request, reason, policy?, host?}` → the decision of [`decide_with`] with a
///   host strategy given as data: `{"retry_after_ms": N}` answers "retry after N ms", `null`
///   there answers "do not retry"; without `host`, the policy's strategy decides.
/// - `best_effort_delay` `{request, reason, policy?}` → `{delay_ms, rule}`: the policy's best-effort
///   strategy's own answer, uncapped (`delay_ms` null when it declines).
/// - `format_decision` `{decision}` → `{message}`: the decision's one-line log message.
/// - `explain_decision` `{request, decision}` → `{sentence}`: [`explain()`] for a given decision.
pub fn call(function: &str, input: &Value) -> Result<Value, Error> {
    if let Some(feature) = unbuilt_feature(function) {
        return Err(retrypolicy::features::not_built("function", function, feature));
    }
    #[cfg(feature = "grpc")]
    if let Some(answer) = crate::grpc::call(function, input) {
        return answer;
    }
    #[cfg(feature = "aws")]
    if let Some(answer) = crate::aws::call(function, input) {
        return answer;
    }
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
        #[cfg(feature = "couchbase")]
        "classify_kv" => from_json_value::<KvInput>(input).map(|i| {
            to_value(&classify_kv(
                i.operation,
                i.status,
                i.error_map.as_ref(),
                &i.compat,
            ))
        }),
        #[cfg(feature = "couchbase")]
        "classify_query" => from_json_value::<QueryInput>(input)
            .map(|i| to_value(&classify_query(i.code, &i.message, i.retry, &i.compat))),
        #[cfg(feature = "couchbase")]
        "classify_analytics" => {
            from_json_value::<CodeInput>(input).map(|i| to_value(&classify_analytics(i.code)))
        }
        #[cfg(feature = "couchbase")]
        "classify_search" => {
            from_json_value::<HttpInput>(input).map(|i| to_value(&classify_search(i.http_status)))
        }
        #[cfg(feature = "couchbase")]
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
        #[cfg(feature = "storms")]
        "simulate" => from_json_value::<Scenario>(input).and_then(|s| simulate(&s).map(|t| to_value(&t))),
        #[cfg(feature = "storms")]
        "simulate_storm" => {
            from_json_value::<StormScenario>(input).and_then(|s| simulate_storm(&s).map(|r| to_value(&r)))
        }
        "parse_policy" => from_json_value::<PolicyInput>(input)
            .and_then(|i| crate::parse_policy(&i.json))
            .map(|p| json!({ "policy": to_value(&p) })),
        #[cfg(feature = "mongodb")]
        "mongodb_classify_error" => from_json_value::<MongoErrorInput>(input).map(|i| {
            let row = i.error.code.and_then(retrypolicy::mongodb::errors::code_row);
            json!({
                "class": to_value(&classify_error(&i.error)),
                "code_name": row.map(|r| r.name),
                "group": row.map(|r| to_value(&r.group)),
                "retryable_write_code": row.is_some_and(|r| r.writes),
                "retryable_read_code": row.is_some_and(|r| r.reads),
                "unsupported_deployment_message":
                    retrypolicy::mongodb::errors::unsupported_deployment_message(&i.error),
            })
        }),
        #[cfg(feature = "mongodb")]
        "mongodb_retryable_write_error" => from_json_value::<MongoWriteErrorInput>(input).map(|i| {
            let mut out = to_value(&is_retryable_write_error(&i.error, i.server, i.retry_writes));
            out["labels"] = to_value(&retrypolicy::mongodb::errors::retryable_write_labels(
                &i.error,
                i.server,
                i.retry_writes,
            ));
            out
        }),
        #[cfg(feature = "mongodb")]
        "mongodb_retryable_read_error" => {
            from_json_value::<MongoErrorInput>(input).map(|i| to_value(&is_retryable_read_error(&i.error)))
        }
        #[cfg(feature = "mongodb")]
        "mongodb_surfaced_error" => from_json_value::<MongoSurfacedInput>(input).and_then(|i| {
            use retrypolicy::mongodb::operations::CommandClass;
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
        #[cfg(feature = "mongodb")]
        "mongodb_eligibility" => from_json_value::<MongoEligibilityInput>(input)
            .map(|i| to_value(&eligibility(&i.operation, i.retry_writes, i.retry_reads))),
        #[cfg(feature = "mongodb")]
        "mongodb_decide" => from_json_value::<MongoDecideInput>(input)
            .and_then(|i| decide_mongo(&i.request, &i.error).map(|d| to_value(&d))),
        #[cfg(feature = "mongodb")]
        "mongodb_overload_backoff" => from_json_value::<MongoOverloadBackoffInput>(input).and_then(|i| {
            let d = overload_backoff_ms(i.attempt, i.base_backoff_ms, i.random)?;
            let c =
                retrypolicy::mongodb::backpressure::overload_backoff_ceiling_ms(i.attempt, i.base_backoff_ms);
            Ok(json!({ "delay_ms": d, "ceiling_ms": c }))
        }),
        #[cfg(feature = "mongodb")]
        "mongodb_transaction_labels" => from_json_value::<MongoTxnLabelsInput>(input)
            .map(|i| json!({ "labels": transaction_error_labels(i.command, &i.error) })),
        #[cfg(feature = "mongodb")]
        "mongodb_transaction_backoff" => from_json_value::<MongoTxnBackoffInput>(input).and_then(|i| {
            transaction_backoff_ms(i.transaction_attempt, i.random).map(|d| json!({ "backoff_ms": d }))
        }),
        #[cfg(feature = "mongodb")]
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
        #[cfg(feature = "mongodb")]
        "mongodb_transaction_step" => from_json_value::<MongoTxnStepInput>(input).and_then(|i| {
            let (state, action) = transaction_step(&i.state, &i.event)?;
            Ok(json!({ "state": to_value(&state), "action": to_value(&action) }))
        }),
        #[cfg(feature = "mongodb")]
        "mongodb_idempotency" => {
            from_json_value::<OperationDoc>(input).and_then(|d| analyze_idempotency(&d).map(|r| to_value(&r)))
        }
        #[cfg(feature = "mongodb")]
        "mongodb_duplicate_key" => from_json_value::<MongoDuplicateKeyInput>(input)
            .map(|i| to_value(&duplicate_key_on_retry(&i.document_id, &i.error))),
        #[cfg(feature = "mongodb")]
        "mongodb_pending_token_rewrite" => from_json_value::<MongoRewriteInput>(input).and_then(|i| {
            pending_token_rewrite(&i.filter, &i.update, i.upsert, &i.token, &i.pending_field)
                .map(|r| to_value(&r))
        }),
        #[cfg(feature = "http")]
        "http_classify" => {
            from_json_value::<HttpClassifyInput>(input).and_then(|i| match (i.status, i.network_error) {
                // The user's field is `status` (the core's function calls it `http_status`).
                (Some(s), false) => classify_http_status(s)
                    .map(|c| to_value(&c))
                    .map_err(|e| e.with_field("status")),
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
        #[cfg(feature = "http")]
        "http_retry_after" => from_json_value::<HttpRetryAfterInput>(input)
            .and_then(|i| parse_retry_after(&i.value, i.now_unix_ms).map(|d| ms_json("delay_ms", d))),
        #[cfg(feature = "http")]
        "http_date" => from_json_value::<HttpDateInput>(input)
            .and_then(|i| parse_http_date("value", &i.value, i.now_unix_ms).map(|t| json!({ "unix_ms": t }))),
        #[cfg(feature = "http")]
        "http_next" => from_json_value::<HttpNextInput>(input).and_then(|i| {
            #[cfg(feature = "guards")]
            let verdict = i.budget_verdict.as_ref().map(VerdictInput::verdict).transpose()?;
            #[cfg(not(feature = "guards"))]
            let verdict: Option<BudgetVerdict> = None;
            http_next_with_budget(
                &i.retry_loop,
                &i.state,
                &i.attempt,
                i.now_unix_ms,
                i.random,
                verdict.as_ref(),
            )
            .map(|d| to_value(&d))
        }),
        "parse_request" => from_json_value::<RequestInput>(input).and_then(|i| {
            i.request.validate()?;
            let text = serde_json::to_string(&i.request).unwrap_or_default();
            Ok(json!({ "request": to_value(&i.request), "json": text }))
        }),
        "decide_before_strategy" => from_json_value::<DecideInput>(input).and_then(|i| {
            i.policy.validate()?;
            let decision = decide_before_strategy(&i.request, i.reason, &i.policy)?;
            Ok(json!({ "decision": decision.as_ref().map(to_value) }))
        }),
        "decide_after_strategy" => from_json_value::<AfterStrategyInput>(input).and_then(|i| {
            i.request.validate()?;
            let verdict = match i.retry_after_ms {
                Some(ms) => StrategyVerdict::custom_retry(ms),
                None => StrategyVerdict::custom_no_retry(),
            };
            Ok(to_value(&decide_after_strategy(&i.request, i.reason, verdict)))
        }),
        "decide_with" => from_json_value::<DecideWithInput>(input).and_then(|i| {
            i.policy.validate()?;
            let host = i.host.as_ref().map(|h| h as &dyn RetryStrategy);
            decide_with(&i.request, i.reason, &i.policy, host).map(|d| to_value(&d))
        }),
        "best_effort_delay" => from_json_value::<DecideInput>(input).and_then(|i| {
            i.policy.validate()?;
            i.request.validate()?;
            let verdict = i.policy.best_effort().retry_after(&i.request, i.reason)?;
            let mut out = match verdict.delay_ms {
                Some(d) => ms_json("delay_ms", d),
                None => json!({ "delay_ms": null }),
            };
            out["rule"] = to_value(&verdict.rule);
            Ok(out)
        }),
        "format_decision" => from_json_value::<FormatDecisionInput>(input)
            .and_then(|i| Ok(json!({ "message": i.decision.into_decision()?.to_string() }))),
        "explain_decision" => from_json_value::<ExplainDecisionInput>(input).and_then(|i| {
            let decision = i.decision.into_decision()?;
            Ok(json!({ "sentence": explain(&i.request, &decision) }))
        }),
        #[cfg(feature = "guards")]
        "budget_run" => from_json_value::<BudgetRunInput>(input).and_then(|i| crate::runs::budget_run(&i)),
        #[cfg(feature = "guards")]
        "breaker_run" => from_json_value::<BreakerRunInput>(input).and_then(|i| crate::runs::breaker_run(&i)),
        "run" => from_json_value::<RunInput>(input).and_then(|i| crate::runs::run(&i)),
        #[cfg(feature = "guards")]
        "decide_with_budget" => from_json_value::<DecideWithBudgetInput>(input)
            .and_then(|i| decide_budgeted(&i).map(|(_, d)| to_value(&d))),
        #[cfg(feature = "guards")]
        "explain_with_budget" => from_json_value::<DecideWithBudgetInput>(input).and_then(|i| {
            let (request, d) = decide_budgeted(&i)?;
            Ok(json!({ "decision": to_value(&d), "sentence": explain_with_budget(request, &d) }))
        }),
        other => Err(Error::UnknownName {
            field: "function".to_owned(),
            value: retrypolicy::error::shorten(other),
            expected: FUNCTIONS
                .iter()
                .copied()
                .filter(|f| is_built(f))
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// [`decide_with_budget`] on a `decide_with_budget` input, with the request it decided for.
#[cfg(feature = "guards")]
fn decide_budgeted(i: &DecideWithBudgetInput) -> Result<(&Request, BudgetedDecision), Error> {
    i.policy.validate()?;
    let verdict = i.budget_verdict.as_ref().map(VerdictInput::verdict).transpose()?;
    let d = decide_with_budget(&i.request, i.reason, &i.policy, verdict.as_ref())?;
    Ok((&i.request, d))
}

fn ms_json(key: &str, v: u64) -> Value {
    #[derive(serde::Serialize)]
    struct Ms(#[serde(with = "retrypolicy::serde_form::ms")] u64);
    json!({ key: to_value(&Ms(v)) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(function: &str, input: Value) -> Value {
        call(function, &input).unwrap_or_else(|e| panic!("{function}: {e}"))
    }

    #[test]
    fn every_featured_function_is_known_and_needs_a_feature_of_the_core() {
        for (function, feature) in FEATURED {
            assert!(FUNCTIONS.contains(function), "{function} is not in FUNCTIONS");
            let f = retrypolicy::features::feature(feature);
            assert!(f.is_some(), "{function}: no feature {feature:?} in the core");
            assert_eq!(is_built(function), f.is_some_and(|f| f.built), "{function}");
        }
        // What a build without a function's feature answers (make test-features runs the fixtures
        // so, each function of a left-out feature answering this).
        let e = retrypolicy::features::not_built("function", "http_next", "http");
        assert_eq!((e.code(), e.field()), ("unknown_name", "function"));
        let unknown = call("no_such_function", &json!({})).unwrap_err();
        assert_eq!((unknown.code(), unknown.field()), ("unknown_name", "function"));
        assert!(unknown.to_string().contains("decide"), "{unknown}");
    }

    #[test]
    fn the_strategy_steps_compose_to_decide() {
        let request =
            json!({"service": "kv", "operation": "get", "attempts": 2, "elapsed_ms": 10, "timeout_ms": 2500});
        for reason in [
            "KV_LOCKED",
            "KV_NOT_MY_VBUCKET",
            "UNKNOWN",
            "SOCKET_CLOSED_WHILE_IN_FLIGHT",
        ] {
            let input = json!({"request": request, "reason": reason});
            let decided = ok("decide", input.clone());
            let before = ok("decide_before_strategy", input.clone())["decision"].clone();
            let composed = if before.is_null() {
                // A host strategy answering like best effort decides like best effort, ruled custom.
                let delay = ok("best_effort_delay", input.clone())["delay_ms"].clone();
                let after = json!({"request": request, "reason": reason, "retry_after_ms": delay});
                let d = ok("decide_after_strategy", after);
                assert_eq!(d["rule"], "custom_strategy");
                d
            } else {
                before
            };
            assert_eq!(composed["action"], decided["action"], "{reason}");
            assert_eq!(composed["delay_ms"], decided["delay_ms"], "{reason}");
            let with = json!({"request": request, "reason": reason});
            assert_eq!(ok("decide_with", with), decided, "{reason}");
        }
    }

    #[test]
    fn a_per_request_strategy_decides_before_the_host_strategy() {
        let request = json!({"service": "kv", "operation": "get", "attempts": 0, "elapsed_ms": 0,
                             "timeout_ms": 100, "strategy": "fail_fast"});
        let before = ok(
            "decide_before_strategy",
            json!({"request": request, "reason": "KV_LOCKED"}),
        );
        assert_eq!(before["decision"]["rule"], "fail_fast");
        let late =
            json!({"service": "kv", "operation": "get", "attempts": 0, "elapsed_ms": 100, "timeout_ms": 100});
        let after = ok(
            "decide_after_strategy",
            json!({"request": late, "reason": "KV_LOCKED", "retry_after_ms": 5}),
        );
        assert_eq!(after["cause"], "deadline_passed");
        let with = json!({"request": late, "reason": "KV_LOCKED", "host": {"retry_after_ms": 5}});
        assert_eq!(ok("decide_with", with)["rule"], "deadline_passed");
    }

    #[test]
    fn decisions_read_back_for_the_log_line_and_the_explanation() {
        let input = json!({"request": {"service": "kv", "operation": "upsert", "attempts": 7, "elapsed_ms": 2000,
                                       "timeout_ms": 2500}, "reason": "KV_NOT_MY_VBUCKET"});
        let explained = ok("explain", input.clone());
        let decision = explained["decision"].clone();
        let message = ok("format_decision", json!({"decision": decision}))["message"].clone();
        assert!(
            message
                .as_str()
                .unwrap()
                .starts_with("retry 8 after 500 ms, capped"),
            "{message}"
        );
        let sentence = ok(
            "explain_decision",
            json!({"request": input["request"], "decision": decision}),
        );
        assert_eq!(sentence["sentence"], explained["sentence"]);
        let bad = call(
            "format_decision",
            &json!({"decision": {"action": "retry", "reason": "KV_LOCKED", "rule": "nope"}}),
        );
        assert_eq!(bad.unwrap_err().field(), "decision.rule");
        let no_cause = call(
            "format_decision",
            &json!({"decision": {"action": "no_retry", "reason": "KV_LOCKED", "rule": "fail_fast"}}),
        );
        assert_eq!(no_cause.unwrap_err().field(), "decision.cause");
    }

    #[test]
    fn requests_normalize_and_big_milliseconds_stay_exact() {
        let out = ok(
            "parse_request",
            json!({"request": {"service": "query", "attempts": 0, "elapsed_ms": 0,
                                                          "timeout_ms": "18446744073709551615",
                                                          "previous_reasons": ["KV_SYNC_RE_COMMIT_IN_PROGRESS"]}}),
        );
        assert_eq!(out["request"]["timeout_ms"], "18446744073709551615");
        assert_eq!(
            out["request"]["previous_reasons"][0],
            "KV_SYNC_WRITE_RE_COMMIT_IN_PROGRESS"
        );
        assert!(
            out["json"]
                .as_str()
                .unwrap()
                .starts_with("{\"service\":\"query\""),
            "{out}"
        );
        let bad = call(
            "parse_request",
            &json!({"request": {"service": "kv", "operation": "get", "attempts": 0,
                                                             "elapsed_ms": 0, "timeout_ms": 1, "random": 1.5}}),
        );
        assert_eq!(bad.unwrap_err().code(), "invalid_random");
        let declined = ok(
            "best_effort_delay",
            json!({"request": {"service": "kv", "operation": "upsert", "attempts": 0,
                                                                  "elapsed_ms": 0, "timeout_ms": 1},
                                                      "reason": "SOCKET_CLOSED_WHILE_IN_FLIGHT"}),
        );
        assert_eq!(
            declined,
            json!({"delay_ms": null, "rule": "best_effort_not_idempotent"})
        );
    }
}
