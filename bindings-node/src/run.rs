//! The core's retry run machine held by JavaScript: `RunHandle` converts each event (the clock, a
//! draw, an attempt's outcome as JSON text in the wire form, read by the wire crate's
//! `outcome_from_json` as the wasm module reads it) into the core's types, lends the budget and breaker handles
//! the JavaScript layer passes with each call (budget first, then breaker) and hands back the step
//! as a plain object (camelCase keys, no JSON text per event): built by the caller's `make` when it
//! passes one, else here through N-API. `RunConfigHandle` is a configuration checked once, from
//! which the runners start each run in one call.

use std::cell::RefCell;
use std::ffi::CString;
use std::ptr;

use napi::bindgen_prelude::{Env, JavaScriptClassExt, JsValue, Null, Unknown, ValueType};
use napi::{check_status, sys};
use napi_derive::napi;
use retrypolicy::run::{Clock, Outcome, Run, RunAction, RunConfig, RunDecision, RunStep};
use retrypolicy::serde_form::ms::MAX_SAFE;
use retrypolicy::{
    BreakerVerdict, BudgetVerdict, BudgetedDecision, Error as CoreError, FailFast, Request, RetryReason,
    RetryStrategy, StrategyKind, StrategyVerdict,
};
use serde::Serialize;
use serde_json::Value;

use crate::callback::{arg, call, name_arg};
use crate::convert::{self, millis_out, Js};
use crate::decision;
use crate::errors::{run, Fail, Res};
use crate::objects::{lend, ObjectHandle};
use crate::policy::{or_default, PolicyHandle};
use crate::strategy;

/// One retry run: the core's machine, fed one event per call.
#[napi]
pub struct RunHandle {
    run: Run,
}

#[napi]
impl RunHandle {
    /// A run of `config` (JSON text in the wire form, snake_case), checked by the core.
    #[napi(constructor, catch_unwind)]
    pub fn new(env: Env, config_text: Unknown) -> napi::Result<Self> {
        run(&env, || {
            Ok(RunHandle {
                run: parsed(config_text)?,
            })
        })
    }

    /// Starts the run at `nowMs`: the first step (send, wait for the breaker, or done). `strategy`
    /// (and `strategyPolicy`) as `attemptEnded` takes them: asked if the breaker refuses.
    #[napi(catch_unwind)]
    #[allow(clippy::too_many_arguments)]
    pub fn start<'a>(
        &mut self,
        env: Env,
        budget: Option<&ObjectHandle>,
        breaker: Option<&ObjectHandle>,
        now_ms: Unknown<'a>,
        random: Unknown<'a>,
        strategy: Option<Unknown<'a>>,
        strategy_policy: Option<&PolicyHandle>,
        make: Option<Unknown<'a>>,
    ) -> napi::Result<Unknown<'a>> {
        run(&env, || {
            let clock = clock(now_ms, random, None)?;
            let mut lent = lend(budget, breaker)?;
            let guards = lent.guards();
            let step = with_strategy(strategy, strategy_policy, |s| {
                self.run.start_with_strategy(clock, guards, s)
            })?;
            step_out(&now_ms, make, &step)
        })
    }

    /// The attempt ended with `outcome` (JSON text in the wire form) at `nowMs`: wait, or done.
    /// `strategy` is the host strategy for `decide` rules (a function `(request, reason) => ms |
    /// null`, a built-in strategy's name with `strategyPolicy` for best effort, or none).
    #[napi(catch_unwind)]
    #[allow(clippy::too_many_arguments)]
    pub fn attempt_ended<'a>(
        &mut self,
        env: Env,
        budget: Option<&ObjectHandle>,
        breaker: Option<&ObjectHandle>,
        outcome: Unknown<'a>,
        now_ms: Unknown<'a>,
        random: Unknown<'a>,
        now_unix_ms: Unknown<'a>,
        strategy: Option<Unknown<'a>>,
        strategy_policy: Option<&PolicyHandle>,
        make: Option<Unknown<'a>>,
    ) -> napi::Result<Unknown<'a>> {
        run(&env, || {
            let outcome = read_outcome(outcome)?;
            let unix = convert::opt_millis(&Js(now_unix_ms), "nowUnixMs")?;
            let clock = clock(now_ms, random, unix)?;
            let mut lent = lend(budget, breaker)?;
            let guards = lent.guards();
            let step = with_strategy(strategy, strategy_policy, |s| {
                self.run.attempt_ended(&outcome, clock, guards, s)
            })?;
            step_out(&now_ms, make, &step)
        })
    }

    /// The wait is over at `nowMs`: send the next attempt (or wait for the breaker, or done).
    /// `strategy` (and `strategyPolicy`) as `attemptEnded` takes them: asked if the breaker refuses.
    #[napi(catch_unwind)]
    #[allow(clippy::too_many_arguments)]
    pub fn wait_ended<'a>(
        &mut self,
        env: Env,
        budget: Option<&ObjectHandle>,
        breaker: Option<&ObjectHandle>,
        now_ms: Unknown<'a>,
        random: Unknown<'a>,
        strategy: Option<Unknown<'a>>,
        strategy_policy: Option<&PolicyHandle>,
        make: Option<Unknown<'a>>,
    ) -> napi::Result<Unknown<'a>> {
        run(&env, || {
            let clock = clock(now_ms, random, None)?;
            let mut lent = lend(budget, breaker)?;
            let guards = lent.guards();
            let step = with_strategy(strategy, strategy_policy, |s| {
                self.run.wait_ended_with_strategy(clock, guards, s)
            })?;
            step_out(&now_ms, make, &step)
        })
    }

    /// The host cancelled the run at `nowMs`: done, cancelled (a canary out is released).
    #[napi(catch_unwind)]
    pub fn cancel<'a>(
        &mut self,
        env: Env,
        budget: Option<&ObjectHandle>,
        breaker: Option<&ObjectHandle>,
        now_ms: Unknown<'a>,
        make: Option<Unknown<'a>>,
    ) -> napi::Result<Unknown<'a>> {
        run(&env, || {
            let clock = clock_only(now_ms)?;
            let step = self.run.cancel(clock, lend(budget, breaker)?.guards())?;
            step_out(&now_ms, make, &step)
        })
    }

    /// The attempt of a `send` step succeeded at `nowMs`: the run is done (succeeded), and no step
    /// is built for it (the runners return the attempt's result without reading one). The step's
    /// breaker changes (a canary's success closing the circuit) as JSON text (a list), or null for none.
    #[napi(catch_unwind)]
    pub fn succeeded(
        &mut self,
        env: Env,
        budget: Option<&ObjectHandle>,
        breaker: Option<&ObjectHandle>,
        now_ms: Unknown,
    ) -> napi::Result<Option<String>> {
        run(&env, || {
            let clock = clock_only(now_ms)?;
            let step =
                self.run
                    .attempt_ended(&Outcome::Success, clock, lend(budget, breaker)?.guards(), None)?;
            if step.breaker_changes.is_empty() {
                Ok(None)
            } else {
                wire(&step.breaker_changes).map(|v| Some(v.to_string()))
            }
        })
    }

    /// Attempts sent so far.
    #[napi(getter, catch_unwind)]
    pub fn attempts_sent(&self) -> u32 {
        self.run.attempts_sent()
    }

    /// What the run did so far (the core's `RunStats`) as JSON text in the wire form.
    #[napi(catch_unwind)]
    pub fn stats_json(&self) -> String {
        self.run.stats().to_json()
    }
}

/// A run configuration (JSON text in the wire form), checked once; runs are started from it.
#[napi]
pub struct RunConfigHandle {
    /// A run of this configuration, checked and not started: each run started is a copy (the
    /// rules are shared, not copied). Parsing the text per run cost 6.6 µs of `retry`'s 60.
    ready: Run,
}

#[napi]
impl RunConfigHandle {
    /// The configuration `config` (JSON text in the wire form, snake_case), checked by the core.
    #[napi(constructor, catch_unwind)]
    pub fn new(env: Env, config_text: Unknown) -> napi::Result<Self> {
        run(&env, || {
            Ok(RunConfigHandle {
                ready: parsed(config_text)?,
            })
        })
    }

    /// A run of this configuration started at `nowMs`, as `new RunHandle` then `start` in one
    /// call: what `make` returns, called as the run's events call it with the run as a 14th
    /// argument (no array built through N-API); without `make`, `[run, its first step]`.
    #[napi(catch_unwind)]
    #[allow(clippy::too_many_arguments)]
    pub fn start<'a>(
        &self,
        env: Env,
        budget: Option<&ObjectHandle>,
        breaker: Option<&ObjectHandle>,
        now_ms: Unknown<'a>,
        random: Unknown<'a>,
        strategy: Option<Unknown<'a>>,
        strategy_policy: Option<&PolicyHandle>,
        make: Option<Unknown<'a>>,
    ) -> napi::Result<Unknown<'a>> {
        run(&env, || {
            let mut ready = self.ready.clone();
            let clock = clock(now_ms, random, None)?;
            let mut lent = lend(budget, breaker)?;
            let guards = lent.guards();
            let step = with_strategy(strategy, strategy_policy, |s| {
                ready.start_with_strategy(clock, guards, s)
            })?;
            let handle = RunHandle { run: ready }.into_instance(&env)?;
            if let Some(make) = make.filter(|m| Js(*m).kind().ok() == Some(ValueType::Function)) {
                return step_built(&make, &step, Some(handle.value));
            }
            let step = step_object(&now_ms, &step)?;
            let raw_env = now_ms.value().env;
            let mut pair = ptr::null_mut();
            // SAFETY: `raw_env` is the live environment of the current call; both handles were made in it.
            unsafe {
                check_status!(sys::napi_create_array_with_length(raw_env, 2, &mut pair))?;
                check_status!(sys::napi_set_element(raw_env, pair, 0, handle.value))?;
                check_status!(sys::napi_set_element(raw_env, pair, 1, step.value().value))?;
                Ok(Unknown::from_raw_unchecked(raw_env, pair))
            }
        })
    }
}

/// A run of the configuration `config_text` (JSON text, wire form), checked by the core.
fn parsed(config_text: Unknown) -> Res<Run> {
    let config: RunConfig = convert::with_str(&Js(config_text), "run", |s| {
        Ok(retrypolicy_wire::from_json_str(s)?)
    })?;
    Ok(Run::new(config)?)
}

/// Calls the machine with the host strategy `strategy` names (a function, a built-in strategy's
/// name with `strategy_policy` for best effort, or none); what a strategy function threw is
/// rethrown unchanged.
fn with_strategy(
    strategy: Option<Unknown>,
    strategy_policy: Option<&PolicyHandle>,
    call: impl FnOnce(Option<&dyn RetryStrategy>) -> Result<RunStep, CoreError>,
) -> Res<RunStep> {
    let Some(strategy) = strategy else {
        return Ok(call(None)?);
    };
    let host = HostStrategy {
        callback: strategy,
        thrown: RefCell::new(None),
    };
    let best_effort;
    let chosen: Option<&dyn RetryStrategy> = match Js(strategy).kind()? {
        ValueType::Undefined | ValueType::Null => None,
        ValueType::Function => Some(&host),
        _ => match convert::name(&Js(strategy), "strategy")? {
            StrategyKind::BestEffort => {
                best_effort = or_default(strategy_policy).best_effort();
                Some(&best_effort)
            }
            StrategyKind::FailFast => Some(&FailFast),
        },
    };
    let step = call(chosen);
    if let Some(e) = host.thrown.borrow_mut().take() {
        return Err(Fail::Napi(e));
    }
    Ok(step?)
}

/// The monotonic reading `nowMs` (a number, fractions allowed; the core checks its range).
fn now(v: Unknown) -> Res<f64> {
    let js = Js(v);
    match js.as_f64()? {
        Some(x) => Ok(x),
        None if js.is_undefined()? => Err(CoreError::MissingField {
            field: "nowMs".to_owned(),
        }
        .into()),
        None => Err(js.wrong_type("nowMs", "a number of milliseconds")),
    }
}

/// The clock of one event: `nowMs`, a draw in [0, 1) (optional), the Unix time (optional).
fn clock(now_ms: Unknown, random: Unknown, now_unix_ms: Option<u64>) -> Res<Clock> {
    Ok(Clock {
        now_ms: now(now_ms)?,
        random: convert::opt_draw(&Js(random), "random")?,
        now_unix_ms,
    })
}

/// The clock of a cancel: `nowMs` only.
fn clock_only(now_ms: Unknown) -> Res<Clock> {
    Ok(Clock::at(now(now_ms)?))
}

/// An attempt's outcome from its JSON text in the wire form (`{kind, ...}`, the facade writes it);
/// errors name `outcome.<field>`.
fn read_outcome(text: Unknown) -> Res<Outcome> {
    convert::with_str(&Js(text), "outcome", |s| {
        Ok(retrypolicy_wire::outcome_from_json(s)?)
    })
}

/// The caller's strategy function, handed the run's request (camelCase, as `requestFromJson`
/// returns one) and the reason's name; what it throws is kept and rethrown unchanged.
struct HostStrategy<'a> {
    callback: Unknown<'a>,
    thrown: RefCell<Option<napi::Error>>,
}

impl RetryStrategy for HostStrategy<'_> {
    fn retry_after(&self, request: &Request, reason: RetryReason) -> Result<StrategyVerdict, CoreError> {
        let answer = serde_json::to_value(request)
            .map_err(|e| Fail::Napi(napi::Error::from_reason(e.to_string())))
            .map(|mut r| {
                // Always an array, as `decide` hands the caller's request (the wire form leaves it out when empty).
                if let Some(doc) = r.as_object_mut() {
                    doc.entry("previous_reasons")
                        .or_insert_with(|| Value::Array(Vec::new()));
                }
                r
            })
            .and_then(|r| to_js(&self.callback, &r, ""))
            .and_then(|r| Ok((r, arg(&self.callback, reason.name())?)))
            .and_then(|(r, why)| call(&self.callback, &[r, why]))
            .and_then(|a| strategy::verdict(a, "retryAfter"));
        match answer {
            Ok(v) => Ok(v),
            Err(Fail::Core(e)) => Err(e),
            Err(Fail::Napi(e)) => {
                *self.thrown.borrow_mut() = Some(e);
                // Never seen by the caller: `attempt_ended` throws what the strategy threw instead.
                Err(CoreError::InvalidType {
                    field: "strategy".to_owned(),
                    message: "the strategy threw".to_owned(),
                })
            }
        }
    }
}

/// The step as `make` builds it, or without one as a plain object built here.
fn step_out<'a>(anchor: &Unknown<'a>, make: Option<Unknown<'a>>, step: &RunStep) -> Res<Unknown<'a>> {
    match make {
        Some(make) if Js(make).kind()? == ValueType::Function => step_built(&make, step, None),
        _ => step_object(anchor, step),
    }
}

/// The step built by the JavaScript layer's `make(action, attempt, timeoutMs, delayMs, end,
/// reason, rule, section, elapsedMs, retryAfterMs, decision, budget, breaker, breakerChanges, signal[, run])`:
/// the scalars as
/// arguments; `decide`'s decision (when the budget did not refuse it) by `make.decision`, with
/// `decide`'s arguments (crate::decision), and the budget's and breaker's verdicts by
/// `make.budget` and `make.breaker`, when `make` has them; the other decisions (rarer) still
/// built here. N-API sets properties slowly: the whole step built here
/// cost 5-10 µs a step in bench/runners.mjs, the decision alone about 2 µs of a failure's step.
fn step_built<'a>(make: &Unknown<'a>, step: &RunStep, run: Option<sys::napi_value>) -> Res<Unknown<'a>> {
    let ms = |v: Option<u64>| v.map(millis_out);
    let nested = |v: Option<Value>, key: &str| -> Res<sys::napi_value> {
        match v {
            Some(v) => to_js(make, &v, key),
            None => arg(make, Null),
        }
    };
    let args = [
        name_arg(make, action_name(step.action))?,
        arg(make, step.attempt)?,
        arg(make, ms(step.timeout_ms))?,
        arg(make, ms(step.delay_ms))?,
        match step.end {
            Some(e) => name_arg(make, e.name())?,
            None => arg(make, Null)?,
        },
        match step.reason {
            Some(r) => name_arg(make, r.name())?,
            None => arg(make, Null)?,
        },
        name_arg(make, step.rule)?,
        arg(make, step.section)?, // not always ASCII (`§`)
        arg(make, millis_out(step.elapsed_ms))?,
        arg(make, ms(step.retry_after_ms))?,
        match &step.decision {
            Some(RunDecision::Decide(BudgetedDecision::Decided(d))) => match decision_maker(make)? {
                Some(m) => decision::build(&m, d)?.value().value,
                None => to_js(make, &wire(d)?, "decision")?,
            },
            other => nested(other.as_ref().map(wire).transpose()?, "decision")?,
        },
        match &step.budget {
            Some(v) => budget_out(make, v)?,
            None => arg(make, Null)?,
        },
        match &step.breaker {
            Some(v) => breaker_out(make, v)?,
            None => arg(make, Null)?,
        },
        to_js(make, &wire(&step.breaker_changes)?, "breakerChanges")?,
        name_arg(make, step.signal.name())?,
    ];
    match run {
        Some(run) => {
            let mut with_run = [ptr::null_mut(); 16];
            with_run[..15].copy_from_slice(&args);
            with_run[15] = run;
            call(make, &with_run)
        }
        None => call(make, &args),
    }
}

/// `make.decision`, when it is a function.
fn decision_maker<'a>(make: &Unknown<'a>) -> Res<Option<Unknown<'a>>> {
    member(make, c"decision")
}

/// The budget's verdict by `make.budget(permitted, cause, kind, rule, source, balance)`, or
/// without one built here.
fn budget_out(make: &Unknown, v: &BudgetVerdict) -> Res<sys::napi_value> {
    let Some(m) = member(make, c"budget")? else {
        return to_js(make, &wire(v)?, "budget");
    };
    let args = [
        arg(&m, v.permitted)?,
        match v.cause {
            Some(c) => to_js(&m, &wire(&c)?, "cause")?,
            None => arg(&m, Null)?,
        },
        name_arg(&m, v.kind.name())?,
        name_arg(&m, v.rule.name())?,
        arg(&m, v.source)?,
        arg(&m, v.balance as f64)?,
    ];
    Ok(call(&m, &args)?.value().value)
}

/// The breaker's verdict by `make.breaker(permitted, canary, state, reason, rule, source)`, or
/// without one built here.
fn breaker_out(make: &Unknown, v: &BreakerVerdict) -> Res<sys::napi_value> {
    let Some(m) = member(make, c"breaker")? else {
        return to_js(make, &wire(v)?, "breaker");
    };
    let args = [
        arg(&m, v.permitted)?,
        arg(&m, v.canary)?,
        name_arg(&m, v.state.name())?,
        match v.reason {
            Some(r) => name_arg(&m, r.name())?,
            None => arg(&m, Null)?,
        },
        name_arg(&m, v.rule.name())?,
        arg(&m, v.source)?,
    ];
    Ok(call(&m, &args)?.value().value)
}

/// `make[name]`, when it is a function.
fn member<'a>(make: &Unknown<'a>, name: &std::ffi::CStr) -> Res<Option<Unknown<'a>>> {
    let raw = make.value();
    let mut out = ptr::null_mut();
    // SAFETY: `make` is a live handle of the current call.
    check_status!(unsafe { sys::napi_get_named_property(raw.env, raw.value, name.as_ptr(), &mut out) })?;
    // SAFETY: `out` was just made in the same env.
    let found = unsafe { Unknown::from_raw_unchecked(raw.env, out) };
    Ok((Js(found).kind()? == ValueType::Function).then_some(found))
}

/// A value's wire form.
fn wire<T: Serialize>(v: &T) -> Res<Value> {
    serde_json::to_value(v).map_err(|e| napi::Error::from_reason(e.to_string()).into())
}

/// The stable name of a step's action.
fn action_name(a: RunAction) -> &'static str {
    match a {
        RunAction::Send => "send",
        RunAction::Wait => "wait",
        RunAction::Done => "done",
    }
}

/// The step as a plain object: the step's wire form with camelCase keys.
fn step_object<'a>(anchor: &Unknown<'a>, step: &RunStep) -> Res<Unknown<'a>> {
    let value = serde_json::to_value(step).map_err(|e| napi::Error::from_reason(e.to_string()))?;
    let raw = to_js(anchor, &value, "")?;
    // SAFETY: `raw` was just created in the anchor's env, in the current call's scope.
    Ok(unsafe { Unknown::from_raw_unchecked(anchor.value().env, raw) })
}

/// A snake_case key in camelCase (`retry_after_ms` → `retryAfterMs`).
fn camel(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for c in key.chars() {
        match c {
            '_' => upper = true,
            c if upper => {
                out.push(c.to_ascii_uppercase());
                upper = false;
            }
            c => out.push(c),
        }
    }
    out
}

/// A wire value as a JavaScript value: objects with camelCase keys, a `*_ms` value past 2^53 − 1
/// (a decimal string on the wire) as a bigint, as `fromWire` reads the JSON API's answers.
fn to_js(anchor: &Unknown, v: &Value, key: &str) -> Res<sys::napi_value> {
    let env = anchor.value().env;
    let mut out = ptr::null_mut();
    // SAFETY: `env` is the live environment of the current call; every handle made here is used in it.
    unsafe {
        match v {
            Value::Null => check_status!(sys::napi_get_null(env, &mut out))?,
            Value::Bool(b) => check_status!(sys::napi_get_boolean(env, *b, &mut out))?,
            Value::Number(n) => {
                let x = n.as_f64().unwrap_or(0.0);
                match n.as_u64() {
                    Some(u) if u > MAX_SAFE && key.ends_with("_ms") => {
                        check_status!(sys::napi_create_bigint_uint64(env, u, &mut out))?
                    }
                    _ => check_status!(sys::napi_create_double(env, x, &mut out))?,
                }
            }
            Value::String(s) => {
                let big = key.ends_with("_ms") && !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
                match s.parse::<u64>() {
                    Ok(u) if big => check_status!(sys::napi_create_bigint_uint64(env, u, &mut out))?,
                    _ => out = arg(anchor, s.as_str())?,
                }
            }
            Value::Array(items) => {
                check_status!(sys::napi_create_array_with_length(env, items.len(), &mut out))?;
                for (i, x) in items.iter().enumerate() {
                    let item = to_js(anchor, x, key)?;
                    check_status!(sys::napi_set_element(env, out, i as u32, item))?;
                }
            }
            Value::Object(map) => {
                check_status!(sys::napi_create_object(env, &mut out))?;
                for (k, x) in map {
                    let item = to_js(anchor, x, k)?;
                    let name = CString::new(camel(k)).map_err(|e| napi::Error::from_reason(e.to_string()))?;
                    check_status!(sys::napi_set_named_property(env, out, name.as_ptr(), item))?;
                }
            }
        }
    }
    Ok(out)
}
