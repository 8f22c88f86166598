//! The general (non-hot) exports: policies, error maps, the wire form, simulation, tables, and
//! the general path of `decide` and classification that converts any JS value with typed errors.

use std::ffi::c_void;

use napi::sys::{napi_env, napi_value, ValueType};
use retrypolicy::decide::RetryAfter;
use retrypolicy::{
    Classification, Decision, Error as CoreError, ErrorMap, FlatDecision, KvOperation, Policy, Request,
    RetryReason, Scenario, StrategyVerdict,
};

use crate::convert::{self, CODE_EXPECTED};
use crate::handle::{self, Handle};
use crate::hot::{self, bits, slot, EnvData};
use crate::js::{self, JsResult};
use crate::tables;

/// # Safety
/// As for `hot::state`: call only after every conversion that could run JavaScript.
unsafe fn state<'a>(data: *mut c_void) -> &'a mut EnvData {
    // SAFETY: per the contract above.
    unsafe { &mut *data.cast::<EnvData>() }
}

fn set(env: napi_env, obj: napi_value, name: &std::ffi::CStr, v: napi_value) -> JsResult<()> {
    js::set_prop(env, obj, name, v)
}

fn strings(env: napi_env, items: impl IntoIterator<Item = String>) -> JsResult {
    let v = items
        .into_iter()
        .map(|s| js::string(env, &s))
        .collect::<JsResult<Vec<_>>>()?;
    js::array(env, &v)
}

crate::export! {
    /// `tables()`: every code list the JavaScript layer needs, read from the core once at load.
    fn tables_export(env, info) {
        let _ = js::args::<0>(env, info)?;
        let out = js::object(env)?;
        let reasons = retrypolicy::reason::REASON_TABLE
            .iter()
            .map(|r| {
                let o = js::object(env)?;
                set(env, o, c"name", js::string(env, r.name)?)?;
                set(env, o, c"allowsNonIdempotentRetry", js::boolean(env, r.allows_non_idempotent_retry)?)?;
                set(env, o, c"alwaysRetry", js::boolean(env, r.always_retry)?)?;
                Ok(o)
            })
            .collect::<JsResult<Vec<_>>>()?;
        set(env, out, c"reasons", js::array(env, &reasons)?)?;
        let aliases = retrypolicy::reason::REASON_ALIASES
            .iter()
            .map(|(alias, r)| js::array(env, &[js::string(env, alias)?, js::number(env, *r as usize as f64)?]))
            .collect::<JsResult<Vec<_>>>()?;
        set(env, out, c"aliases", js::array(env, &aliases)?)?;
        let ops = tables::OPERATIONS
            .iter()
            .map(|op| {
                let w = retrypolicy::operation::OperationWire::from(*op);
                let o = js::object(env)?;
                set(env, o, c"service", js::string(env, &tables::wire_name(&w.service))?)?;
                if let Some(k) = w.operation {
                    set(env, o, c"operation", js::string(env, k.name())?)?;
                }
                if let Some(r) = w.readonly {
                    set(env, o, c"readonly", js::boolean(env, r)?)?;
                }
                if let Some(m) = w.method {
                    set(env, o, c"method", js::string(env, &tables::wire_name(&m))?)?;
                }
                set(env, o, c"idempotent", js::boolean(env, op.is_idempotent())?)?;
                Ok(o)
            })
            .collect::<JsResult<Vec<_>>>()?;
        set(env, out, c"operations", js::array(env, &ops)?)?;
        set(env, out, c"services", strings(env, tables::SERVICES.iter().map(tables::wire_name))?)?;
        set(env, out, c"methods", strings(env, tables::METHODS.iter().map(tables::wire_name))?)?;
        let rules = tables::RULES
            .iter()
            .map(|r| js::array(env, &[js::string(env, r.name())?, js::string(env, r.section())?]))
            .collect::<JsResult<Vec<_>>>()?;
        set(env, out, c"rules", js::array(env, &rules)?)?;
        set(env, out, c"causes", strings(env, tables::CAUSES.iter().map(tables::wire_name))?)?;
        set(env, out, c"strategies", strings(env, tables::STRATEGIES.iter().map(tables::wire_name))?)?;
        set(env, out, c"jitters", strings(env, ["none", "full", "equal", "decorrelated"].map(String::from))?)?;
        set(env, out, c"dispatchFailures", strings(env, tables::dispatch_failures().iter().map(tables::wire_name))?)?;
        set(env, out, c"errorCodes", strings(env, CoreError::ALL_CODES.iter().map(|c| c.to_string()))?)?;
        set(env, out, c"version", js::string(env, retrypolicy::VERSION)?)?;
        let layout = js::object(env)?;
        for (name, v) in [
            (c"OP", slot::OP), (c"ATTEMPTS", slot::ATTEMPTS), (c"ELAPSED", slot::ELAPSED),
            (c"TIMEOUT", slot::TIMEOUT), (c"IDEMPOTENT", slot::IDEMPOTENT), (c"STRATEGY", slot::STRATEGY),
            (c"HAS_RANDOM", slot::HAS_RANDOM), (c"RANDOM", slot::RANDOM), (c"HAS_PREVIOUS", slot::HAS_PREVIOUS),
            (c"PREVIOUS", slot::PREVIOUS), (c"REASON", slot::REASON), (c"HAS_VERDICT", slot::HAS_VERDICT),
            (c"VERDICT", slot::VERDICT), (c"STATUS", slot::STATUS), (c"CODE", slot::CODE),
            (c"PREVIOUS_COUNT", slot::PREVIOUS_COUNT), (c"PREVIOUS_REASONS", slot::PREVIOUS_REASONS),
            (c"MAX_PREVIOUS", slot::MAX_PREVIOUS), (c"OUT_KIND", slot::OUT_KIND), (c"OUT_CODE", slot::OUT_CODE),
            (c"OUT_DELAY", slot::OUT_DELAY), (c"OUT_BIG", slot::OUT_BIG), (c"OUT_CLASS", slot::OUT_CLASS),
            (c"OUT_ATTEMPTS", slot::OUT_ATTEMPTS), (c"LEN", slot::LEN),
            (c"BATCH_IN", hot::BATCH_IN), (c"BATCH_OUT", hot::BATCH_OUT),
            (c"RULE_SHIFT", bits::RULE as usize), (c"CAUSE_SHIFT", bits::CAUSE as usize),
            (c"CAPPED", bits::CAPPED as usize), (c"THEN_CANCEL", bits::THEN_CANCEL as usize),
            (c"IDEMPOTENT_BIT", bits::IDEMPOTENT as usize), (c"RETRY", bits::RETRY as usize),
            (c"NO_CAUSE", bits::NO_CAUSE as usize),
        ] {
            set(env, layout, name, js::number(env, v as f64)?)?;
        }
        set(env, out, c"layout", layout)?;
        Ok(out)
    }
}

crate::export! {
    /// `policyParse(text)`: a validated policy handle; errors name the document's field.
    fn policy_parse(env, info) {
        let ([t], _) = js::args::<1>(env, info)?;
        let text = convert::string_value(env, t, "policy")?;
        handle::wrap(env, Handle::Policy(retrypolicy::DecisionTable::new(&Policy::from_json(&text)?)))
    }
}

crate::export! {
    /// `policyToJson(policy?)`: the normalized policy document.
    fn policy_to_json(env, info) {
        let ([p], _) = js::args::<1>(env, info)?;
        js::string(env, &handle::policy(env, p)?.to_json())
    }
}

crate::export! {
    /// `errorMapParse(text)`: a parsed KV error map handle.
    fn error_map_parse(env, info) {
        let ([t], _) = js::args::<1>(env, info)?;
        let text = convert::string_value(env, t, "errorMap")?;
        let map: ErrorMap = retrypolicy::json::from_json_str(&text)?;
        handle::wrap(env, Handle::ErrorMap(map))
    }
}

crate::export! {
    /// `isIdempotent(operation)`: RFC 0049's idempotent-operation list.
    fn is_idempotent(env, info) {
        let ([o], _) = js::args::<1>(env, info)?;
        js::boolean(env, convert::operation_value(env, o, "operation")?.is_idempotent())
    }
}

crate::export! {
    /// `operationCode(operation)`: the code of a valid operation object (throws the core's error otherwise).
    fn operation_code(env, info) {
        let ([o], _) = js::args::<1>(env, info)?;
        js::number(env, tables::operation_code(convert::operation_value(env, o, "operation")?) as f64)
    }
}

crate::export! {
    /// `parseReason(name)`: the reason's index (aliases accepted).
    fn parse_reason(env, info) {
        let ([r], _) = js::args::<1>(env, info)?;
        js::number(env, convert::reason_value(env, r, "reason")? as usize as f64)
    }
}

/// A request as its camelCase object, milliseconds past 2^53 − 1 as BigInt.
fn request_object(env: napi_env, r: &Request) -> JsResult {
    let w = retrypolicy::operation::OperationWire::from(r.operation);
    let o = js::object(env)?;
    set(
        env,
        o,
        c"service",
        js::string(env, &tables::wire_name(&w.service))?,
    )?;
    if let Some(k) = w.operation {
        set(env, o, c"operation", js::string(env, k.name())?)?;
    }
    if let Some(x) = w.readonly {
        set(env, o, c"readonly", js::boolean(env, x)?)?;
    }
    if let Some(m) = w.method {
        set(env, o, c"method", js::string(env, &tables::wire_name(&m))?)?;
    }
    set(env, o, c"attempts", js::number(env, f64::from(r.attempts))?)?;
    set(env, o, c"elapsedMs", js::millis(env, r.elapsed_ms)?)?;
    set(env, o, c"timeoutMs", js::millis(env, r.timeout_ms)?)?;
    if let Some(i) = r.idempotent {
        set(env, o, c"idempotent", js::boolean(env, i)?)?;
    }
    if let Some(s) = r.strategy {
        set(env, o, c"strategy", js::string(env, &tables::wire_name(&s))?)?;
    }
    if let Some(x) = r.random {
        set(env, o, c"random", js::number(env, x)?)?;
    }
    if let Some(ms) = r.previous_delay_ms {
        set(env, o, c"previousDelayMs", js::millis(env, ms)?)?;
    }
    if !r.previous_reasons.is_empty() {
        set(
            env,
            o,
            c"previousReasons",
            strings(env, r.previous_reasons.iter().map(|x| x.name().to_owned()))?,
        )?;
    }
    Ok(o)
}

crate::export! {
    /// `requestFromJson(text)`: a request from the wire form (snake_case, `*_ms`), as a camelCase object.
    fn request_from_json(env, info) {
        let ([t], _) = js::args::<1>(env, info)?;
        let text = convert::string_value(env, t, "request")?;
        let r: Request = retrypolicy::json::from_json_str(&text)?;
        r.validate()?;
        request_object(env, &r)
    }
}

crate::export! {
    /// `requestToJson(request)`: a camelCase request in the wire form.
    fn request_to_json(env, info) {
        let ([r], _) = js::args::<1>(env, info)?;
        let req = convert::request_value(env, r)?;
        js::string(env, &serde_json::to_string(&req).unwrap_or_default())
    }
}

crate::export! {
    /// `decideSlow(mode, request, reason, policy, a, b)`: the general path of decide (mode 0),
    /// decideBefore (1), decideAfter with verdict `a` (2), bestEffort (3), and a built-in host
    /// strategy of kind `a` configured by policy `b` (4). Writes the same scratch slots.
    fn decide_slow(env, info) {
        let ([m, r, reason, p, a, b], data) = js::args::<6>(env, info)?;
        let mode = convert::int_value(env, m, "mode", 4, "0..=4")?;
        let req = convert::request_value(env, r)?;
        let reason = convert::reason_value(env, reason, "reason")?;
        let policy = handle::policy(env, p)?;
        let verdict = if mode == 2 {
            match convert::opt_millis_value(env, a, "retryAfter")? {
                Some(ms) => StrategyVerdict::custom_retry(ms),
                None => StrategyVerdict::custom_no_retry(),
            }
        } else {
            StrategyVerdict::custom_no_retry()
        };
        let host = if mode == 4 {
            let kind = convert::int_value(env, a, "strategy", 1, "0 or 1")? as usize;
            Some(hot::builtin_strategy(tables::STRATEGIES[kind], handle::policy(env, b)?))
        } else {
            None
        };
        // Every conversion is done: no JavaScript runs from here on.
        // SAFETY: see above.
        let st = unsafe { state(data) };
        match mode {
            0 => hot::write_decision(st, &retrypolicy::decide(&req, reason, policy)?),
            1 => match hot::before(&req, reason, policy)? {
                Some(d) => hot::write_decision(st, &d),
                None => st.scratch[slot::OUT_KIND] = 1.0,
            },
            2 => hot::write_decision(st, &retrypolicy::decide_after_strategy(&req, reason, verdict)),
            3 => {
                let delay = hot::best_effort(&req, reason, &policy.best_effort())?;
                hot::write_decision(st, &placeholder(delay));
                st.scratch[slot::OUT_KIND] = if delay.is_some() { 1.0 } else { 0.0 };
            }
            _ => {
                let d = retrypolicy::decide_with(&req, reason, policy, host.as_deref())?;
                hot::write_decision(st, &d);
            }
        }
        js::undefined(env)
    }
}

/// A decision carrying only a delay, to reuse the delay slots for best effort's answer.
fn placeholder(delay: Option<u64>) -> Decision {
    Decision::Retry(RetryAfter {
        delay_ms: delay.unwrap_or(0),
        reason: RetryReason::Unknown,
        rule: retrypolicy::Rule::BestEffortBackoff,
        section: "",
        capped: false,
        then_cancel: false,
        attempts: 0,
        idempotent: false,
    })
}

crate::export! {
    /// `bigDelay()`: the last delay past 2^53 − 1, as a BigInt.
    fn big_delay(env, info) {
        let (_, data) = js::args::<0>(env, info)?;
        // SAFETY: no JavaScript runs while `st` is in use.
        let st = unsafe { state(data) };
        js::millis(env, st.big_delay)
    }
}

crate::export! {
    /// `classifySlow(kind, a, b, errorMap, policy)`: the general path of every classifier;
    /// returns the interned classification index.
    fn classify_slow(env, info) {
        let ([k, a, b, m, p], data) = js::args::<5>(env, info)?;
        let kind = convert::string_value(env, k, "kind")?;
        let compat = handle::policy(env, p)?.compat;
        let c: Classification = match kind.as_str() {
            "kv" => {
                let op = KvOperation::parse("operation", &convert::string_value(env, a, "operation")?)?;
                let status = convert::status_value(env, b, "status")?;
                retrypolicy::classify_kv(op, status, handle::error_map(env, m)?, &compat)
            }
            "query" => {
                let code = convert::int_value(env, a, "code", u64::from(u32::MAX), CODE_EXPECTED)? as u32;
                retrypolicy::classify_query(code, &convert::text_value(env, b, "message")?, &compat)
            }
            "analytics" => {
                let code = convert::int_value(env, a, "code", u64::from(u32::MAX), CODE_EXPECTED)? as u32;
                retrypolicy::classify_analytics(code)
            }
            "search" => {
                let s = convert::int_value(env, a, "httpStatus", u64::from(u16::MAX), "0..=65535")? as u16;
                retrypolicy::classify_search(s)
            }
            "views" => {
                let s = convert::int_value(env, a, "httpStatus", u64::from(u16::MAX), "0..=65535")? as u16;
                retrypolicy::classify_views(s, &convert::text_value(env, b, "body")?)
            }
            _ => retrypolicy::classify_dispatch(convert::name_value(env, a, "failure")?),
        };
        // SAFETY: every conversion is done.
        let st = unsafe { state(data) };
        js::number(env, st.intern(c) as f64)
    }
}

crate::export! {
    /// `classificationAt(i)`: `[reason | null, rule, section, surfaceAs | null]`.
    fn classification_at(env, info) {
        let ([i], data) = js::args::<1>(env, info)?;
        let i = convert::int_value(env, i, "index", u64::from(u32::MAX), CODE_EXPECTED)? as usize;
        // SAFETY: no JavaScript runs while `st` is in use.
        let st = unsafe { state(data) };
        let c = *st.classes.get(i).ok_or_else(|| CoreError::OutOfRange {
            field: "index".into(),
            value: i.to_string(),
            expected: "an interned classification".into(),
        })?;
        js::array(env, &[
            js::opt_string(env, c.reason.map(RetryReason::name))?,
            js::string(env, c.rule)?,
            js::string(env, c.section)?,
            js::opt_string(env, c.surface_as)?,
        ])
    }
}

crate::export! {
    /// `controlledBackoff(attempt)`: RFC 0049's controlled backoff in milliseconds.
    fn controlled_backoff(env, info) {
        let ([a], _) = js::args::<1>(env, info)?;
        let attempt = convert::int_value(env, a, "attempt", u64::from(u32::MAX), CODE_EXPECTED)? as u32;
        js::millis(env, retrypolicy::controlled_backoff(attempt))
    }
}

crate::export! {
    /// `backoffDelay(policy?, attempt, random?, previousDelayMs?)`: the policy's best-effort delay with jitter.
    fn backoff_delay(env, info) {
        let ([p, a, r, prev], _) = js::args::<4>(env, info)?;
        let policy = handle::policy(env, p)?;
        let attempt = convert::int_value(env, a, "attempt", u64::from(u32::MAX), CODE_EXPECTED)? as u32;
        let random = if js::is_nullish(env, r)? {
            None
        } else if js::type_of(env, r)? == ValueType::napi_number {
            Some(js::get_f64(env, r)?)
        } else {
            return Err(convert::wrong_type(env, r, "random", "a number in [0, 1)")?.into());
        };
        let previous = convert::opt_millis_value(env, prev, "previousDelayMs")?;
        let d = retrypolicy::backoff_delay(&policy.backoff, policy.jitter, attempt, random, previous)?;
        js::millis(env, d)
    }
}

/// Rebuilds a decision from its packed code, delay and attempts.
fn unpack(code: u32, delay_ms: u64, attempts: u32) -> Result<Decision, CoreError> {
    let bad = || CoreError::InvalidType {
        field: "decision".into(),
        message: "not a decision returned by retrypolicy".into(),
    };
    let reason = *RetryReason::ALL.get((code & 31) as usize).ok_or_else(bad)?;
    let rule = *tables::RULES
        .get(((code >> bits::RULE) & 7) as usize)
        .ok_or_else(bad)?;
    let idempotent = code & bits::IDEMPOTENT != 0;
    let retry = code & bits::RETRY != 0;
    let cause = if retry {
        None
    } else {
        Some(
            *tables::CAUSES
                .get(((code >> bits::CAUSE) & 7) as usize)
                .ok_or_else(bad)?,
        )
    };
    let flat = FlatDecision {
        delay_ms,
        capped: code & bits::CAPPED != 0,
        then_cancel: code & bits::THEN_CANCEL != 0,
        cause,
        rule,
    };
    Ok(flat.complete(reason, attempts, idempotent))
}

crate::export! {
    /// `formatDecision(code, delayMs, attempts)`: the core's one-line log message for a decision.
    fn format_decision(env, info) {
        let ([c, d, a], _) = js::args::<3>(env, info)?;
        let code = convert::int_value(env, c, "code", u64::from(u32::MAX), CODE_EXPECTED)? as u32;
        let delay = convert::millis_value(env, d, "delayMs")?;
        let attempts = convert::count_value(env, a, "attempts")?;
        js::string(env, &unpack(code, delay, attempts)?.to_string())
    }
}

crate::export! {
    /// `callJson(function, text)`: the core's JSON API (MongoDB, HTTP, transactions, ...), JSON in and out.
    fn call_json(env, info) {
        let ([f, t], _) = js::args::<2>(env, info)?;
        let function = convert::string_value(env, f, "function")?;
        let text = convert::string_value(env, t, "input")?;
        let input: serde_json::Value = retrypolicy::json::from_json_str(&text)?;
        js::string(env, &retrypolicy::api::call(&function, &input)?.to_string())
    }
}

crate::export! {
    /// `explain(request, code, delayMs, attempts)`: the core's one-sentence explanation of a decision.
    fn explain(env, info) {
        let ([r, c, d, a], _) = js::args::<4>(env, info)?;
        let request = convert::request_value(env, r)?;
        let code = convert::int_value(env, c, "code", u64::from(u32::MAX), CODE_EXPECTED)? as u32;
        let delay = convert::millis_value(env, d, "delayMs")?;
        let attempts = convert::count_value(env, a, "attempts")?;
        js::string(env, &retrypolicy::explain(&request, &unpack(code, delay, attempts)?))
    }
}

crate::export! {
    /// `simulate(request, outcomes, repeatLast, latencyMs, draws, policy)`: the timeline as JSON text.
    fn simulate(env, info) {
        let ([r, o, rl, l, d, p], _) = js::args::<6>(env, info)?;
        let request = convert::request_value(env, r)?;
        if !js::is_array(env, o)? {
            return Err(convert::wrong_type(env, o, "outcomes", "an array of reason names or null")?.into());
        }
        let mut outcomes = Vec::new();
        for i in 0..js::array_len(env, o)? {
            let item = js::array_get(env, o, i)?;
            outcomes.push(if js::is_nullish(env, item)? {
                None
            } else {
                Some(convert::reason_value(env, item, &format!("outcomes[{i}]"))?)
            });
        }
        let repeat_last = convert::opt_bool_value(env, rl, "repeatLast")?.unwrap_or(false);
        let latency_ms = convert::millis_value(env, l, "latencyMs")?;
        let mut draws = Vec::new();
        if !js::is_nullish(env, d)? {
            if !js::is_array(env, d)? {
                return Err(convert::wrong_type(env, d, "draws", "an array of numbers in [0, 1)")?.into());
            }
            for i in 0..js::array_len(env, d)? {
                let item = js::array_get(env, d, i)?;
                let field = format!("draws[{i}]");
                if js::type_of(env, item)? != ValueType::napi_number {
                    return Err(convert::wrong_type(env, item, &field, "a number in [0, 1)")?.into());
                }
                draws.push(js::get_f64(env, item)?);
            }
        }
        let policy = *handle::policy(env, p)?;
        let scenario = Scenario {
            request,
            outcomes,
            repeat_last,
            latency_ms,
            draws,
            policy,
            name: String::new(),
            description: String::new(),
        };
        let timeline = retrypolicy::simulate(&scenario)?;
        js::string(env, &serde_json::to_string(&timeline).unwrap_or_default())
    }
}
