//! `decide` and its companions: a JavaScript request in, the core's decision out as a plain
//! object in its JSON form (`{action, delay_ms, reason, rule, section, ...}`).

use js_sys::{Array, Function};
use retrypolicy::{Decision, Error, FailFast, RetryStrategy, StrategyKind, StrategyVerdict};
use wasm_bindgen::prelude::*;

use crate::errors::{Failure, Fallible};
use crate::policy::Policy;
use crate::strategy::HostStrategy;
use crate::{ms_to_js, read, to_js};

fn decision(request: &JsValue, reason: &JsValue, policy: &Policy) -> Fallible<Decision> {
    let (r, reason) = (read::request(request)?, read::reason(reason, "reason")?);
    Ok(retrypolicy::decide(&r, reason, &policy.0)?)
}

/// Decides whether and when to retry `request` after `reason` under `policy` (its strategy decides).
#[wasm_bindgen]
pub fn decide(request: &JsValue, reason: &JsValue, policy: &Policy) -> Fallible<JsValue> {
    Ok(to_js(&decision(request, reason, policy)?))
}

/// `decide` with a host strategy: a function `(request, reason) => ms | null`, or a built-in one
/// by name (`strategy_policy` sets best effort's backoff and jitter).
#[wasm_bindgen(js_name = decideWith)]
pub fn decide_with(
    request: &JsValue,
    reason: &JsValue,
    policy: &Policy,
    strategy: &JsValue,
    strategy_policy: &Policy,
) -> Fallible<JsValue> {
    let (r, reason) = (read::request(request)?, read::reason(reason, "reason")?);
    let decided = if let Some(function) = strategy.dyn_ref::<Function>() {
        let host = HostStrategy::new(function, request);
        let decided = retrypolicy::decide_with(&r, reason, &policy.0, Some(&host));
        if let Some(thrown) = host.thrown.take() {
            return Err(Failure::Thrown(thrown));
        }
        decided
    } else {
        let best_effort = strategy_policy.0.best_effort();
        let builtin: &dyn RetryStrategy = match read::name(strategy, "strategy")? {
            StrategyKind::BestEffort => &best_effort,
            StrategyKind::FailFast => &FailFast,
        };
        retrypolicy::decide_with(&r, reason, &policy.0, Some(builtin))
    };
    Ok(to_js(&decided?))
}

/// `decide` for each of `requests`, with one reason for all or an array of one per request;
/// an error names the request (`requests[1].elapsedMs`) or the reason (`reasons[1]`).
#[wasm_bindgen(js_name = decideMany)]
pub fn decide_many(requests: &JsValue, reasons: &JsValue, policy: &Policy) -> Fallible<Array> {
    let all = requests.dyn_ref::<Array>();
    let all = all.ok_or_else(|| read::invalid_type("requests", "an array of requests", requests))?;
    let each = reasons.dyn_ref::<Array>();
    if let Some(n) = each.map(Array::length).filter(|&n| n != all.length()) {
        let expected = format!("one reason per request ({})", all.length());
        return Err(Error::OutOfRange {
            field: "reasons".into(),
            value: n.to_string(),
            expected,
        }
        .into());
    }
    let decide_one = |(i, request): (usize, JsValue)| {
        let reason = each.map_or_else(|| reasons.clone(), |r| r.get(i as u32));
        match decision(&request, &reason, policy) {
            Ok(d) => Ok(to_js(&d)),
            Err(Failure::Core(e)) => {
                let field = match (e.field(), each) {
                    ("reason", Some(_)) => format!("reasons[{i}]"),
                    ("reason", None) => "reasons".to_owned(),
                    (field, _) => format!("requests[{i}].{field}"),
                };
                Err(Failure::Core(e.with_field(&field)))
            }
            Err(thrown) => Err(thrown),
        }
    };
    all.iter().enumerate().map(decide_one).collect()
}

/// The orchestrator's steps before a host strategy is asked (the deadline, UNKNOWN, always-retry
/// reasons, a per-request built-in strategy): the decision, or null when the host must be asked.
#[wasm_bindgen(js_name = decideBeforeStrategy)]
pub fn decide_before_strategy(request: &JsValue, reason: &JsValue, policy: &Policy) -> Fallible<JsValue> {
    let (r, reason) = (read::request(request)?, read::reason(reason, "reason")?);
    Ok(to_js(&retrypolicy::decide_before_strategy(
        &r, reason, &policy.0,
    )?))
}

/// A host strategy's answer (ms, or null for "do not retry") as the decision, capped to the timeout.
#[wasm_bindgen(js_name = decideAfterStrategy)]
pub fn decide_after_strategy(
    request: &JsValue,
    reason: &JsValue,
    retry_after_ms: &JsValue,
) -> Fallible<JsValue> {
    let (r, reason) = (read::request(request)?, read::reason(reason, "reason")?);
    r.validate()?;
    let verdict = match read::optional(retry_after_ms, |v| read::millis(v, "retryAfterMs"))? {
        Some(ms) => StrategyVerdict::custom_retry(ms),
        None => StrategyVerdict::custom_no_retry(),
    };
    Ok(to_js(&retrypolicy::decide_after_strategy(&r, reason, verdict)))
}

/// Best effort's own answer for `request` and `reason` under `policy`: a delay in ms, or null
/// when it declines (what a host strategy defers to).
#[wasm_bindgen(js_name = bestEffortDelay)]
pub fn best_effort_delay(request: &JsValue, reason: &JsValue, policy: &Policy) -> Fallible<JsValue> {
    let (r, reason) = (read::request(request)?, read::reason(reason, "reason")?);
    r.validate()?;
    let verdict = policy.0.best_effort().retry_after(&r, reason)?;
    Ok(verdict.delay_ms.map_or(JsValue::NULL, ms_to_js))
}

/// RFC 0049's controlled backoff (always-retry reasons) in ms after `attempt` retries.
#[wasm_bindgen(js_name = controlledBackoffMs)]
pub fn controlled_backoff_ms(attempt: &JsValue) -> Fallible<JsValue> {
    let attempt = read::count(attempt, "attempt", u32::MAX)?;
    Ok(ms_to_js(retrypolicy::controlled_backoff(attempt)))
}

/// The policy's best-effort delay in ms after `attempt` retries; jitter needs a draw in [0, 1).
#[wasm_bindgen(js_name = backoffDelayMs)]
pub fn backoff_delay_ms(
    policy: &Policy,
    attempt: &JsValue,
    random: &JsValue,
    previous: &JsValue,
) -> Fallible<JsValue> {
    let (backoff, jitter) = (&policy.0.backoff, policy.0.jitter);
    let attempt = read::count(attempt, "attempt", u32::MAX)?;
    let random = read::optional(random, |v| read::number(v, "random"))?;
    let previous = read::optional(previous, |v| read::millis(v, "previousDelayMs"))?;
    Ok(ms_to_js(retrypolicy::backoff_delay(
        backoff, jitter, attempt, random, previous,
    )?))
}
