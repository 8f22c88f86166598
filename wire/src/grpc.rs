//! The JSON API's gRPC functions (gRFC A6): `grpc_service_config` (a service config validated and
//! one method's policy looked up), `grpc_retry` (the decision after one attempt) and `grpc_hedge`
//! (a hedged call's events replayed through the step machine). The service config and its
//! policies are gRPC's own JSON (camelCase); the envelopes around them are snake_case like the
//! rest of the API. A throttling bucket is gRPC's `retryThrottling` with an optional state
//! snapshot (the budgets' form), and its state after the call is in the answer.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::json::from_json_value;
use retrypolicy::grpc::*;
use retrypolicy::{BudgetConfig, BudgetSnapshot, Error, RetryBudget};

fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// The client's cap on `maxAttempts`: 5 unless given.
fn options(cap: Option<u32>) -> Result<ClientOptions, Error> {
    cap.map_or(Ok(ClientOptions::default()), |c| {
        ClientOptions::with_cap(c, "max_attempts_cap")
    })
}

/// The throttling bucket of `retryThrottling`, restored from `state` when given.
fn bucket(
    throttling: Option<&RetryThrottlingDocument>,
    state: Option<&BudgetSnapshot>,
) -> Result<Option<RetryBudget>, Error> {
    match (throttling, state) {
        (None, None) => Ok(None),
        (None, Some(_)) => Err(Error::MissingField {
            field: "retry_throttling".to_owned(),
        }),
        (Some(t), state) => {
            let config: BudgetConfig = t.validate("retry_throttling")?;
            Ok(Some(match state {
                Some(s) => RetryBudget::restore(&config, s, "throttling_state")?,
                None => RetryBudget::new(&config),
            }))
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ServiceConfigInput {
    service_config: ServiceConfigDocument,
    #[serde(default, deserialize_with = "retrypolicy::serde_form::or_default")]
    service: String,
    #[serde(default, deserialize_with = "retrypolicy::serde_form::or_default")]
    method: String,
    #[serde(default)]
    max_attempts_cap: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RetryInput {
    #[serde(default)]
    retry_policy: Option<RetryPolicyDocument>,
    #[serde(default)]
    max_attempts_cap: Option<u32>,
    state: GrpcRetryState,
    attempt: GrpcAttempt,
    #[serde(default, deserialize_with = "retrypolicy::serde_form::draw::deserialize")]
    random: Option<f64>,
    #[serde(default, deserialize_with = "retrypolicy::serde_form::or_default")]
    jitter: GrpcJitter,
    #[serde(default)]
    retry_throttling: Option<RetryThrottlingDocument>,
    #[serde(default)]
    throttling_state: Option<BudgetSnapshot>,
    #[serde(default, with = "retrypolicy::serde_form::ms::or_zero")]
    now_ms: u64,
}

/// One event: `{"event": "attempt_ended", "at_ms": 120, "attempt": {"status": "UNAVAILABLE"}}`
/// (`at_ms`, the caller's clock for the throttling bucket, defaults to 0).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HedgeEventInput {
    event: HedgeEventKind,
    #[serde(default, with = "retrypolicy::serde_form::ms::or_zero")]
    at_ms: u64,
    #[serde(default)]
    attempt: Option<GrpcAttempt>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HedgeInput {
    hedging_policy: HedgingPolicyDocument,
    #[serde(default)]
    max_attempts_cap: Option<u32>,
    events: Vec<HedgeEventInput>,
    #[serde(default)]
    retry_throttling: Option<RetryThrottlingDocument>,
    #[serde(default)]
    throttling_state: Option<BudgetSnapshot>,
}

/// The gRPC function `function` on `input`; `None` when `function` is not one of them.
pub(crate) fn call(function: &str, input: &Value) -> Option<Result<Value, Error>> {
    Some(match function {
        "grpc_service_config" => from_json_value::<ServiceConfigInput>(input).and_then(|i| {
            let options = options(i.max_attempts_cap)?;
            let config = ServiceConfig::from_document(&i.service_config, &options)
                .map_err(|e| crate::runs::placed("service_config", e))?;
            let matched = config.matched(&i.service, &i.method);
            Ok(json!({
                "matched": matched.map(|(how, _)| how),
                "policy": to_value(&matched.map_or(MethodPolicy::None, |(_, p)| p)),
                "throttling": config.throttling().map(|c| to_value(&c.to_document())),
            }))
        }),
        "grpc_retry" => from_json_value::<RetryInput>(input).and_then(|i| {
            let options = options(i.max_attempts_cap)?;
            let policy = i
                .retry_policy
                .as_ref()
                .map(|p| p.validate("retry_policy", &options))
                .transpose()?;
            let mut bucket = bucket(i.retry_throttling.as_ref(), i.throttling_state.as_ref())?;
            let d = grpc_retry(
                policy.as_ref(),
                &i.state,
                &i.attempt,
                i.random,
                i.jitter,
                bucket.as_mut().map(|b| (b, i.now_ms)),
            )?;
            let mut answer = to_value(&d);
            answer["throttling_state"] = to_value(&bucket.as_ref().map(RetryBudget::snapshot));
            Ok(answer)
        }),
        "grpc_hedge" => from_json_value::<HedgeInput>(input).and_then(|i| {
            let options = options(i.max_attempts_cap)?;
            let policy = i.hedging_policy.validate("hedging_policy", &options)?;
            let mut bucket = bucket(i.retry_throttling.as_ref(), i.throttling_state.as_ref())?;
            let mut state = HedgeState::default();
            let mut steps = Vec::with_capacity(i.events.len());
            for (n, e) in i.events.iter().enumerate() {
                let event = HedgeEvent::new(e.event, e.attempt.clone())
                    .map_err(|err| crate::runs::placed(&format!("events[{n}]"), err))?;
                let step = grpc_hedge(&policy, &state, &event, bucket.as_mut().map(|b| (b, e.at_ms)))
                    .map_err(|err| crate::runs::placed(&format!("events[{n}]"), err))?;
                state = step.state;
                steps.push(step);
            }
            let last = steps.last();
            Ok(json!({
                "steps": to_value(&steps),
                "sends": steps.iter().map(|s| s.send).collect::<Vec<_>>(),
                "rules": steps.iter().map(|s| s.rule).collect::<Vec<_>>(),
                "end": last.and_then(|s| s.end),
                "status": last.and_then(|s| s.status),
                "throttling_state": to_value(&bucket.as_ref().map(RetryBudget::snapshot)),
            }))
        }),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn a_service_config_of_another_json_kind_is_invalid_type_naming_it() {
        for (input, field) in [
            (json!({"service_config": []}), "service_config"),
            (json!({"service_config": [[], {}]}), "service_config"),
            (
                json!({"service_config": {"methodConfig": [[]]}}),
                "service_config.methodConfig[0]",
            ),
            (
                json!({"service_config": {"retryThrottling": [10, 0.1]}}),
                "service_config.retryThrottling",
            ),
            (
                json!({"service_config": {"methodConfig": [{"name": [["s"]]}]}}),
                "service_config.methodConfig[0].name[0]",
            ),
            (
                json!({"service_config": {"methodConfig": [{"name": [{"service": "s"}], "retryPolicy": []}]}}),
                "service_config.methodConfig[0].retryPolicy",
            ),
        ] {
            let e = crate::api::call("grpc_service_config", &input).unwrap_err();
            assert_eq!((e.code(), e.field()), ("invalid_type", field), "{input}: {e}");
            assert!(e.to_string().contains("found an array"), "{e}");
        }
        for (function, input, field) in [
            (
                "grpc_retry",
                json!({"retry_policy": [], "state": {"attempts": 1}, "attempt": {"status": 14}}),
                "retry_policy",
            ),
            (
                "grpc_hedge",
                json!({"hedging_policy": [], "events": []}),
                "hedging_policy",
            ),
        ] {
            let e = crate::api::call(function, &input).unwrap_err();
            assert_eq!((e.code(), e.field()), ("invalid_type", field), "{input}: {e}");
        }
    }
}
