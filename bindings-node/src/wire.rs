//! The rest of the core, in and out: reasons and error codes, the JSON API by function name,
//! simulation, and the core's sentences about a decision.

use napi::bindgen_prelude::{Env, Unknown};
use napi_derive::napi;
use retrypolicy::{Error as CoreError, Scenario};

use crate::convert::{self, Js};
use crate::decision;
use crate::errors::{run, Res};
use crate::policy::{or_default, PolicyHandle};
use crate::request;

/// The core's version.
#[napi(catch_unwind)]
pub fn version() -> &'static str {
    retrypolicy::VERSION
}

/// The stable error codes, shared by every language.
#[napi(catch_unwind)]
pub fn error_codes() -> Vec<&'static str> {
    CoreError::ALL_CODES.to_vec()
}

/// One row of the RFC 0049 RetryReason table.
#[napi(object, object_from_js = false)]
pub struct ReasonRow {
    /// The reason's name.
    pub name: &'static str,
    /// Whether a non-idempotent request may be retried for it.
    pub allows_non_idempotent_retry: bool,
    /// Whether it is retried regardless of the strategy.
    pub always_retry: bool,
}

/// The RFC 0049 RetryReason table, in the core's order.
#[napi(catch_unwind)]
pub fn reason_table() -> Vec<ReasonRow> {
    retrypolicy::reason::REASON_TABLE
        .iter()
        .map(|r| ReasonRow {
            name: r.name,
            allows_non_idempotent_retry: r.allows_non_idempotent_retry,
            always_retry: r.always_retry,
        })
        .collect()
}

/// The canonical name of a reason (aliases accepted).
#[napi(catch_unwind)]
pub fn parse_reason(env: Env, reason: Unknown) -> napi::Result<&'static str> {
    run(&env, || Ok(convert::reason(&Js(reason), "reason")?.name()))
}

/// The core's JSON API: `function` by its fixture name, JSON text in and out.
#[napi(catch_unwind)]
pub fn call_json(env: Env, function: Unknown, input: Unknown) -> napi::Result<String> {
    run(&env, || {
        let function = convert::with_str(&Js(function), "function", |s| Ok(s.to_owned()))?;
        let input: serde_json::Value =
            convert::with_str(&Js(input), "input", |s| Ok(retrypolicy_wire::from_json_str(s)?))?;
        Ok(retrypolicy_wire::api::call(&function, &input)?.to_string())
    })
}

/// Replays a retry schedule; the timeline as JSON text (wire form).
#[napi(catch_unwind)]
pub fn simulate(
    env: Env,
    request: Unknown,
    outcomes: Unknown,
    repeat_last: Unknown,
    latency_ms: Unknown,
    draws: Unknown,
    policy: Option<&PolicyHandle>,
) -> napi::Result<String> {
    run(&env, || {
        let request = request::from_object(request)?;
        let mut reasons = Vec::new();
        for (i, item) in convert::items(&Js(outcomes), "outcomes", "an array of reason names or null")?
            .iter()
            .enumerate()
        {
            let reason = match item.is_nullish()? {
                true => None,
                false => Some(convert::reason(item, &format!("outcomes[{i}]"))?),
            };
            reasons.push(reason);
        }
        let mut numbers = Vec::new();
        let draws = Js(draws);
        if !draws.is_nullish()? {
            for (i, item) in convert::items(&draws, "draws", "an array of numbers in [0, 1)")?
                .iter()
                .enumerate()
            {
                numbers.push(convert::number(
                    item,
                    &format!("draws[{i}]"),
                    "a number in [0, 1)",
                )?);
            }
        }
        let scenario = Scenario {
            request,
            outcomes: reasons,
            repeat_last: convert::opt_bool(&Js(repeat_last), "repeatLast")?.unwrap_or(false),
            latency_ms: convert::millis(&Js(latency_ms), "latencyMs")?,
            draws: numbers,
            policy: *or_default(policy),
            name: String::new(),
            description: String::new(),
        };
        let timeline = retrypolicy::simulate(&scenario)?;
        Ok(serde_json::to_string(&timeline).map_err(|e| napi::Error::from_reason(e.to_string()))?)
    })
}

/// The core's one-line log message for a decision.
#[napi(catch_unwind)]
pub fn format_decision(env: Env, decision: Unknown) -> napi::Result<String> {
    run(&env, || Ok(decision::from_object(decision)?.to_string()))
}

/// The core's one-sentence explanation of `decision` for `request`.
#[napi(catch_unwind)]
pub fn explain(env: Env, request: Unknown, decision: Unknown) -> napi::Result<String> {
    run(&env, || -> Res<String> {
        let request = request::from_object(request)?;
        Ok(retrypolicy::explain(&request, &decision::from_object(decision)?))
    })
}
