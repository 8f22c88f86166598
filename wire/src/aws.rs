//! The JSON API's AWS functions: `aws_retry` (one decision), `aws_retry_run` (a request's
//! attempts replayed with the retry quota, as the SDKs' standard-mode tests replay them) and
//! `aws_rate_limiter_run` (adaptive mode's rate limiter fed a list of events).

use serde::Deserialize;
use serde_json::{json, Value};

use crate::input::VerdictInput;
use crate::json::from_json_value;
use retrypolicy::aws::*;
use retrypolicy::*;

fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// `aws_retry`: an optional retry document (standard mode's defaults), the attempts made, the
/// failed attempt's error, the draw, and an optional quota verdict.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RetryInput {
    #[serde(default)]
    config: Option<AwsRetryDocument>,
    attempts: u32,
    error: AwsError,
    #[serde(default, deserialize_with = "retrypolicy::serde_form::draw::deserialize")]
    random: Option<f64>,
    #[serde(default)]
    budget_verdict: Option<VerdictInput>,
}

/// `aws_retry_run`: a retry document, an optional quota (a budget document; standard and adaptive
/// default to the retry quota with the behaviour's cost table, legacy to none) and its state, and
/// the attempts in order.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RetryRunInput {
    #[serde(default)]
    config: Option<AwsRetryDocument>,
    #[serde(default)]
    quota: Option<BudgetDocument>,
    #[serde(default)]
    quota_state: Option<BudgetSnapshot>,
    events: Vec<RetryEventInput>,
}

/// One attempt's end: `{"error": {...}, "random": 0.5}`, or a success (`error` null or left out).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RetryEventInput {
    #[serde(default)]
    error: Option<AwsError>,
    #[serde(default, deserialize_with = "retrypolicy::serde_form::draw::deserialize")]
    random: Option<f64>,
}

/// `aws_rate_limiter_run`: an optional limiter document (the SDKs' constants), an optional state
/// (null: a new limiter created at `start_ms`, default 0), events.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LimiterRunInput {
    #[serde(default)]
    limiter: Option<RateLimiterDocument>,
    #[serde(default)]
    state: Option<RateLimiterSnapshot>,
    #[serde(default, with = "retrypolicy::serde_form::ms::option")]
    start_ms: Option<u64>,
    events: Vec<LimiterEventInput>,
}

/// The kinds of limiter event: an attempt about to be sent, or a response.
#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum LimiterEventKind {
    Acquire,
    Response,
}

/// One limiter event: `{"at_ms": 0, "kind": "acquire"}`, `{"at_ms": 5, "kind": "response",
/// "throttled": true}` (`throttled` only on a response; default false).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LimiterEventInput {
    #[serde(with = "retrypolicy::serde_form::ms")]
    at_ms: u64,
    kind: LimiterEventKind,
    #[serde(default)]
    throttled: Option<bool>,
}

/// `e` naming its field under `prefix` (`events[2].error.status`).
fn under(prefix: &str, e: Error) -> Error {
    let field = format!("{prefix}.{}", e.field());
    e.with_field(field.trim_end_matches('.'))
}

/// Calls the AWS function `function` on `input`; `None` when `function` is not one of them.
pub(crate) fn call(function: &str, input: &Value) -> Option<Result<Value, Error>> {
    Some(match function {
        "aws_retry" => from_json_value::<RetryInput>(input).and_then(|i| {
            let config = AwsRetryConfig::from_document(&i.config.unwrap_or_default(), "config")?;
            let verdict = i.budget_verdict.as_ref().map(VerdictInput::verdict).transpose()?;
            aws_decide(&config, i.attempts, &i.error, i.random, verdict.as_ref()).map(|d| to_value(&d))
        }),
        "aws_retry_run" => from_json_value::<RetryRunInput>(input).and_then(|i| retry_run(&i)),
        "aws_rate_limiter_run" => from_json_value::<LimiterRunInput>(input).and_then(|i| limiter_run(&i)),
        _ => return None,
    })
}

/// `aws_retry_run`: each event ends an attempt of the current request. A success tells the quota
/// (a first attempt's success adds the increment, a retry's refunds what that retry cost) and ends
/// the request; an error is decided ([`aws_decide`]); a retry it asks for is asked of the quota
/// (`try_retry` with the decision's cause) and, when refused, decided again with that verdict; a
/// no-retry ends the request. The next event after an end is a new request's first attempt.
fn retry_run(input: &RetryRunInput) -> Result<Value, Error> {
    let config = AwsRetryConfig::from_document(&input.config.clone().unwrap_or_default(), "config")?;
    let quota_doc = match (&input.quota, config.mode) {
        (Some(doc), _) => Some(*doc),
        (None, AwsMode::Legacy) => None,
        (None, _) => {
            let costs = match config.behavior {
                AwsBehavior::Classic => "classic",
                AwsBehavior::Retries2026 => "2026",
            };
            Some(from_json_value::<BudgetDocument>(
                &json!({"kind": "retry_quota", "costs": costs}),
            )?)
        }
    };
    let mut quota = match (&quota_doc, &input.quota_state) {
        (Some(doc), state) => {
            let c = BudgetConfig::from_document(doc, "quota")?;
            Some(match state {
                Some(s) => RetryBudget::restore(&c, s, "quota_state")?,
                None => RetryBudget::new(&c),
            })
        }
        (None, Some(_)) => {
            return Err(Error::MissingField {
                field: "quota".to_owned(),
            })
        }
        (None, None) => None,
    };
    let balance = |q: &Option<RetryBudget>| q.as_ref().map(|q| q.permit(0, RetryCause::Error).balance);
    let (mut attempts, mut last_cause) = (0u32, None);
    let mut steps = Vec::with_capacity(input.events.len());
    for (i, e) in input.events.iter().enumerate() {
        attempts = attempts.saturating_add(1);
        let Some(error) = &e.error else {
            if let Some(q) = quota.as_mut() {
                q.record(
                    0,
                    BudgetEvent::Success {
                        after_retry: last_cause,
                    },
                );
            }
            steps.push(
                json!({"attempts": attempts, "action": "success", "decision": null,
                              "quota_balance": balance(&quota)}),
            );
            (attempts, last_cause) = (0, None);
            continue;
        };
        let at = |err: Error| under(&format!("events[{i}]"), err);
        let mut d = aws_decide(&config, attempts, error, e.random, None).map_err(at)?;
        if let (AwsAction::Retry, Some(q)) = (d.action, quota.as_mut()) {
            let verdict = q.try_retry(0, d.cause.unwrap_or_default());
            if !verdict.permitted {
                d = aws_decide(&config, attempts, error, e.random, Some(&verdict)).map_err(at)?;
            }
        }
        steps.push(
            json!({"attempts": attempts, "action": d.action, "decision": to_value(&d),
                          "quota_balance": balance(&quota)}),
        );
        if d.action == AwsAction::Retry {
            last_cause = d.cause;
        } else {
            (attempts, last_cause) = (0, None);
        }
    }
    let decided = |key: &str| -> Vec<Value> {
        steps
            .iter()
            .map(|s| s["decision"].get(key).cloned().unwrap_or(Value::Null))
            .collect()
    };
    Ok(json!({
        "config": to_value(&config.to_document()),
        "quota": quota.as_ref().map(|q| to_value(&q.config().to_document())),
        "actions": steps.iter().map(|s| s["action"].clone()).collect::<Vec<_>>(),
        "rules": decided("rule"),
        "delays_ms": decided("delay_ms"),
        "ceilings_ms": decided("ceiling_ms"),
        "waits_ms": decided("wait_ms"),
        "quota_balances": steps.iter().map(|s| s["quota_balance"].clone()).collect::<Vec<_>>(),
        "quota_state": quota.as_ref().map(|q| to_value(&q.snapshot())),
        "steps": steps,
    }))
}

/// A rate as the run's lists report it: to 12 decimal places, so a list compares with the SDKs'
/// test vectors (which allow 10^-15) without pinning the last bit of each float; `results` and
/// `state` keep every bit.
fn rounded(rate: f64) -> f64 {
    (rate * 1e12).round() / 1e12
}

/// `aws_rate_limiter_run`: each event asks the limiter (`acquire`) or tells it a response;
/// `results` holds each answer, the lists the state after each event.
fn limiter_run(input: &LimiterRunInput) -> Result<Value, Error> {
    let config = RateLimiterConfig::from_document(&input.limiter.unwrap_or_default(), "limiter")?;
    let mut limiter = match (&input.state, input.start_ms) {
        (Some(_), Some(_)) => {
            return Err(Error::InvalidType {
                field: "start_ms".to_owned(),
                message: "start_ms creates a new limiter; a restored state keeps its own times".to_owned(),
            })
        }
        (Some(s), None) => AdaptiveRateLimiter::restore(&config, s, "state")?,
        (None, start) => AdaptiveRateLimiter::new(&config, start.unwrap_or(0)),
    };
    let n = input.events.len();
    let (mut results, mut states) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for (i, e) in input.events.iter().enumerate() {
        let result = match (e.kind, e.throttled) {
            (LimiterEventKind::Acquire, Some(_)) => {
                return Err(Error::UnknownField {
                    field: format!("events[{i}].throttled"),
                })
            }
            (LimiterEventKind::Acquire, None) => to_value(&limiter.acquire(e.at_ms)),
            (LimiterEventKind::Response, t) => to_value(&limiter.record(e.at_ms, t.unwrap_or(false))),
        };
        results.push(result);
        states.push(limiter.snapshot());
    }
    let list = |f: fn(&RateLimiterSnapshot) -> f64| states.iter().map(|s| rounded(f(s))).collect::<Vec<_>>();
    let of = |key: &str| -> Vec<Value> {
        results
            .iter()
            .map(|r| r.get(key).cloned().unwrap_or(Value::Null))
            .collect()
    };
    Ok(json!({
        "limiter": to_value(&config.to_document()),
        "acquired": of("acquired"),
        "waits_ms": of("wait_ms"),
        "rules": of("rule"),
        "bounds": of("bound"),
        "calculated_rates": results.iter().map(|r| r.get("calculated_rate").and_then(Value::as_f64).map(rounded)).collect::<Vec<_>>(),
        "measured_rates": list(|s| s.measured_rate),
        "fill_rates": list(|s| s.fill_rate),
        "max_capacities": list(|s| s.max_capacity),
        "capacities": list(|s| s.capacity),
        "enabled": states.iter().map(|s| s.enabled).collect::<Vec<_>>(),
        "results": results,
        "state": to_value(&limiter.snapshot()),
    }))
}
