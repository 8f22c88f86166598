//! `decide`, with the policy's strategy or a host one (a JavaScript function, or a built-in
//! strategy by name): a JavaScript request in, the core's decision out as a plain object in its
//! JSON form (`{action, delay_ms, reason, rule, ...}`); and the controlled backoff.

use std::cell::RefCell;

use js_sys::Function;
use retrypolicy::{Error, FailFast, Request, RetryReason, RetryStrategy, StrategyKind, StrategyVerdict};
use wasm_bindgen::prelude::*;

use crate::errors::Fallible;
use crate::policy::Policy;
use crate::{read, request, to_js};

/// Decides whether and when to retry `request` after `reason` under `policy` (its strategy decides).
#[wasm_bindgen]
pub fn decide(request: &JsValue, reason: &JsValue, policy: &Policy) -> Fallible<JsValue> {
    let (r, reason) = (request::read(request)?, read::reason(reason, "reason")?);
    Ok(to_js(&retrypolicy::decide(&r, reason, &policy.0)?))
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
    let (r, reason, policy) = (
        request::read(request)?,
        read::reason(reason, "reason")?,
        &policy.0,
    );
    let decided = if let Some(function) = strategy.dyn_ref::<Function>() {
        let host = HostStrategy {
            function,
            request,
            thrown: RefCell::new(None),
        };
        let decided = retrypolicy::decide_with(&r, reason, policy, Some(&host));
        if let Some(thrown) = host.thrown.take() {
            return Err(thrown.into());
        }
        decided
    } else if read::name::<StrategyKind>(strategy, "strategy")? == StrategyKind::BestEffort {
        retrypolicy::decide_with(&r, reason, policy, Some(&strategy_policy.0.best_effort()))
    } else {
        retrypolicy::decide_with(&r, reason, policy, Some(&FailFast))
    };
    Ok(to_js(&decided?))
}

/// A JavaScript function as the core's [`RetryStrategy`], for one call: it gets the request as
/// JavaScript passed it and the reason's name; what it throws is kept, to rethrow unchanged.
struct HostStrategy<'a> {
    function: &'a Function,
    request: &'a JsValue,
    thrown: RefCell<Option<JsValue>>,
}

impl RetryStrategy for HostStrategy<'_> {
    fn retry_after(&self, _request: &Request, reason: RetryReason) -> Result<StrategyVerdict, Error> {
        let answer = self
            .function
            .call2(&JsValue::UNDEFINED, self.request, &reason.name().into());
        match answer {
            Ok(ms) if ms.is_null_or_undefined() => Ok(StrategyVerdict::custom_no_retry()),
            Ok(ms) => read::millis(&ms, "retryAfter").map(StrategyVerdict::custom_retry),
            Err(thrown) => {
                self.thrown.replace(Some(thrown));
                // Never seen: `decide_with` rethrows what the function threw instead.
                let message = "threw".to_owned();
                Err(Error::InvalidType {
                    field: "strategy".to_owned(),
                    message,
                })
            }
        }
    }
}
