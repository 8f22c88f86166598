//! The core's retry run machine as a JavaScript object: the configuration is read once (JSON text
//! in the wire form, as the facade writes it), each event's outcome too (the wire crate's
//! `outcome_from_json`), and each answer goes out as a plain object in the step's JSON form. The run holds the budget and
//! breaker it shares with other runs and lends them to the machine for each call, budget first.

use std::cell::{RefCell, RefMut};
use std::rc::Rc;

use js_sys::Function;
use retrypolicy::run::{Clock, Guards, Outcome, Run, RunConfig, RunStep};
use retrypolicy::{
    BestEffort, Error, FailFast, Request, RetryReason, RetryStrategy, StrategyKind, StrategyVerdict,
};
use retrypolicy_wire::objects::{busy, Object};
use wasm_bindgen::prelude::*;

use crate::errors::Fallible;
use crate::objects::ObjectHandle;
use crate::policy::Policy;
use crate::read::{millis, name, number, optional, text};
use crate::to_js;

/// A step as a plain object in its JSON form, through `serde_json::Value`, whose conversions the
/// wire crate's `run` already puts in the module. With the MongoDB error read from JSON text (now
/// the whole outcome, `read_outcome`) this took the module from 294.8 to 289.3 KB gzipped, against
/// serde-wasm-bindgen conversions of the step's and the error's types (measured with `make size`'s gzip -9).
fn step_js(step: &RunStep) -> JsValue {
    to_js(&serde_json::to_value(step).unwrap_or_default())
}

/// An attempt's outcome from its JSON text in the wire form (`{kind, ...}`, the facade writes it);
/// errors name `outcome.<field>`; a kind of a feature this module was built without is the core's
/// not-built error.
fn read_outcome(v: &JsValue) -> Fallible<Outcome> {
    Ok(retrypolicy_wire::outcome_from_json(&text(v, "outcome")?)?)
}

/// The host's strategy for `decide` rules: none (the policy's), a JavaScript function, or a
/// built-in one by name.
enum Strategy {
    Policy,
    Host(Function),
    BestEffort(BestEffort),
    FailFast,
}

/// A JavaScript function as the core's [`RetryStrategy`] for one call: it gets the run's request in
/// its wire form (the facade camelCases it) and the reason's name; what it throws is kept, to
/// rethrow unchanged.
struct HostStrategy<'a> {
    function: &'a Function,
    thrown: RefCell<Option<JsValue>>,
}

impl RetryStrategy for HostStrategy<'_> {
    fn retry_after(&self, request: &Request, reason: RetryReason) -> Result<StrategyVerdict, Error> {
        let answer = self
            .function
            .call2(&JsValue::UNDEFINED, &to_js(request), &reason.name().into());
        match answer {
            Ok(ms) if ms.is_null_or_undefined() => Ok(StrategyVerdict::custom_no_retry()),
            Ok(ms) => millis(&ms, "retryAfter").map(StrategyVerdict::custom_retry),
            Err(thrown) => {
                self.thrown.replace(Some(thrown));
                // Never seen: `attempt_ended` rethrows what the function threw instead.
                Err(Error::InvalidType {
                    field: "strategy".to_owned(),
                    message: "threw".to_owned(),
                })
            }
        }
    }
}

/// A shared budget or breaker lent for one call.
fn lend<'a>(cell: &'a Option<Rc<RefCell<Object>>>, field: &str) -> Result<Option<RefMut<'a, Object>>, Error> {
    cell.as_ref()
        .map(|c| c.try_borrow_mut().map_err(|_| busy(field)))
        .transpose()
}

/// One retry run over the core's machine: send, wait or done for each event the host reports.
#[wasm_bindgen]
pub struct RunHandle {
    run: Run,
    budget: Option<Rc<RefCell<Object>>>,
    breaker: Option<Rc<RefCell<Object>>>,
    strategy: Strategy,
}

/// A host strategy from the facade: a function, or a built-in strategy's name (with
/// `strategyPolicy` for best effort's backoff and jitter), or none.
fn read_strategy(strategy: &JsValue, strategy_policy: &Policy) -> Result<Strategy, Error> {
    if strategy.is_null_or_undefined() {
        return Ok(Strategy::Policy);
    }
    if let Some(f) = strategy.dyn_ref::<Function>() {
        return Ok(Strategy::Host(f.clone()));
    }
    Ok(match name::<StrategyKind>(strategy, "strategy")? {
        StrategyKind::BestEffort => Strategy::BestEffort(strategy_policy.0.best_effort()),
        _ => Strategy::FailFast,
    })
}

#[wasm_bindgen]
impl RunHandle {
    /// A run of `config` (JSON text in the wire form) with a host `strategy` (a function, a
    /// built-in strategy's name, or none) for `decide` rules.
    #[wasm_bindgen(constructor)]
    pub fn new(config: &str, strategy: JsValue, strategy_policy: &Policy) -> Fallible<RunHandle> {
        let config: RunConfig = retrypolicy_wire::from_json_str(config)?;
        Ok(RunHandle {
            run: Run::new(config)?,
            budget: None,
            breaker: None,
            strategy: read_strategy(&strategy, strategy_policy)?,
        })
    }

    /// Shares `budget` with this run (the same budget the caller keeps using).
    #[wasm_bindgen(js_name = setBudget)]
    pub fn set_budget(&mut self, budget: &ObjectHandle) {
        self.budget = budget.shared();
    }

    /// Shares `breaker` with this run.
    #[wasm_bindgen(js_name = setBreaker)]
    pub fn set_breaker(&mut self, breaker: &ObjectHandle) {
        self.breaker = breaker.shared();
    }

    /// Starts the run at `nowMs`: the first step (send, or wait for the breaker, or done).
    pub fn start(&mut self, now_ms: JsValue, random: JsValue) -> Fallible<JsValue> {
        let clock = clock(&now_ms, &random, &JsValue::UNDEFINED)?;
        self.with_guards(|run, guards, strategy| run.start_with_strategy(clock, guards, strategy))
    }

    /// The attempt ended with `outcome`: the next step (wait, or done).
    #[wasm_bindgen(js_name = attemptEnded)]
    pub fn attempt_ended(
        &mut self,
        outcome: JsValue,
        now_ms: JsValue,
        random: JsValue,
        now_unix_ms: JsValue,
    ) -> Fallible<JsValue> {
        let outcome = read_outcome(&outcome)?;
        let clock = clock(&now_ms, &random, &now_unix_ms)?;
        self.with_guards(|run, guards, strategy| run.attempt_ended(&outcome, clock, guards, strategy))
    }

    /// The wait is over at `nowMs`: the next step (send, or wait for the breaker, or done).
    #[wasm_bindgen(js_name = waitEnded)]
    pub fn wait_ended(&mut self, now_ms: JsValue, random: JsValue) -> Fallible<JsValue> {
        let clock = clock(&now_ms, &random, &JsValue::UNDEFINED)?;
        self.with_guards(|run, guards, strategy| run.wait_ended_with_strategy(clock, guards, strategy))
    }

    /// The host cancelled the run at `nowMs`: done, cancelled.
    pub fn cancel(&mut self, now_ms: JsValue) -> Fallible<JsValue> {
        let clock = clock(&now_ms, &JsValue::UNDEFINED, &JsValue::UNDEFINED)?;
        self.with_guards(|run, guards, _| run.cancel(clock, guards))
    }

    /// Attempts sent so far.
    #[wasm_bindgen(getter, js_name = attemptsSent)]
    pub fn attempts_sent(&self) -> u32 {
        self.run.attempts_sent()
    }

    /// What the run did so far (the core's `RunStats`) as JSON text in the wire form.
    #[wasm_bindgen(js_name = statsJson)]
    pub fn stats_json(&self) -> String {
        self.run.stats().to_json()
    }
}

impl RunHandle {
    /// Calls the machine with the budget and breaker lent (budget first) and the run's strategy
    /// (asked on a failure, and on a breaker's refusal); the step as a plain object. What a host
    /// strategy function threw is rethrown unchanged.
    fn with_guards(
        &mut self,
        call: impl FnOnce(&mut Run, Guards<'_>, Option<&dyn RetryStrategy>) -> Result<RunStep, Error>,
    ) -> Fallible<JsValue> {
        let mut budget = lend(&self.budget, "budget")?;
        let mut breaker = lend(&self.breaker, "breaker")?;
        let guards = Guards {
            budget: budget.as_deref_mut().and_then(Object::budget_mut),
            breaker: breaker.as_deref_mut().and_then(Object::breaker_mut),
        };
        let step = match &self.strategy {
            Strategy::Policy => call(&mut self.run, guards, None),
            Strategy::BestEffort(s) => call(&mut self.run, guards, Some(s)),
            Strategy::FailFast => call(&mut self.run, guards, Some(&FailFast)),
            Strategy::Host(function) => {
                let host = HostStrategy {
                    function,
                    thrown: RefCell::new(None),
                };
                let step = call(&mut self.run, guards, Some(&host));
                if let Some(thrown) = host.thrown.take() {
                    return Err(thrown.into());
                }
                step
            }
        };
        Ok(step_js(&step?))
    }
}

/// The host's clock readings: `nowMs` (a number, fractions allowed), a draw, the wall clock.
fn clock(now_ms: &JsValue, random: &JsValue, now_unix_ms: &JsValue) -> Result<Clock, Error> {
    if now_ms.is_undefined() {
        return Err(Error::MissingField {
            field: "nowMs".to_owned(),
        });
    }
    Ok(Clock {
        now_ms: number(now_ms, "nowMs")?,
        random: optional(random, "random", number)?,
        now_unix_ms: optional(now_unix_ms, "nowUnixMs", millis)?,
    })
}
