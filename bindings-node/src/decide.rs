//! `decide` and its steps: a request, a reason and a policy in, the core's decision out.

use napi::bindgen_prelude::{BigInt, Either, Env, Null, Unknown};
use napi_derive::napi;
use retrypolicy::{Decision, FailFast, Request, RetryReason, RetryStrategy, StrategyKind};

use crate::convert::{self, Js};
use crate::decision;
use crate::errors::{run, Res};
use crate::policy::{or_default, PolicyHandle};
use crate::request::{self, Fields};
use crate::strategy::{self, HostStrategy};

/// Decides with the built-in strategies: the body of the raw `decide` export (`raw.rs`). The
/// JavaScript layer passes the request's fields as arguments, because reading them from the
/// object through N-API costs about 65 ns each.
pub fn decide<'a>(
    fields: [Unknown<'a>; 12],
    reason: Unknown<'a>,
    policy: Option<&PolicyHandle>,
    make: Unknown<'a>,
) -> Res<Unknown<'a>> {
    let request = Fields::new(fields).request()?;
    let reason = convert::reason(&Js(reason), "reason")?;
    decision::build(&make, &retrypolicy::decide(&request, reason, or_default(policy))?)
}

/// The request and the reason every call but `decide` takes.
fn inputs(request: Unknown, reason: Unknown) -> Res<(Request, RetryReason)> {
    Ok((
        request::from_object(request)?,
        convert::reason(&Js(reason), "reason")?,
    ))
}

/// Decides with `host` asked when no earlier rule decides.
fn with_host(
    request: Unknown,
    reason: Unknown,
    policy: Option<&PolicyHandle>,
    host: &dyn RetryStrategy,
) -> Res<Decision> {
    let (r, why) = inputs(request, reason)?;
    Ok(retrypolicy::decide_with(&r, why, or_default(policy), Some(host))?)
}

/// Decides with a host strategy function, handed the caller's request object.
#[napi(catch_unwind)]
pub fn decide_with_function<'a>(
    env: Env,
    request: Unknown<'a>,
    reason: Unknown<'a>,
    policy: Option<&PolicyHandle>,
    strategy: Unknown<'a>,
    make: Unknown<'a>,
) -> napi::Result<Unknown<'a>> {
    run(&env, || {
        let host = HostStrategy::new(request, strategy);
        let d = host.outcome(with_host(request, reason, policy, &host))?;
        decision::build(&make, &d)
    })
}

/// Decides with a built-in strategy as the host's (`"best_effort"`, configured by
/// `strategy_policy`, or `"fail_fast"`): its own rule decides, not `custom_strategy`.
#[napi(catch_unwind)]
pub fn decide_with_built_in<'a>(
    env: Env,
    request: Unknown<'a>,
    reason: Unknown<'a>,
    policy: Option<&PolicyHandle>,
    strategy: Unknown<'a>,
    strategy_policy: Option<&PolicyHandle>,
    make: Unknown<'a>,
) -> napi::Result<Unknown<'a>> {
    run(&env, || {
        let best_effort = or_default(strategy_policy).best_effort();
        let host: &dyn RetryStrategy = match convert::name(&Js(strategy), "strategy")? {
            StrategyKind::BestEffort => &best_effort,
            StrategyKind::FailFast => &FailFast,
        };
        decision::build(&make, &with_host(request, reason, policy, host)?)
    })
}

/// The orchestrator's steps before a host strategy: the decision, or null when the host must be asked.
#[napi(catch_unwind)]
pub fn decide_before_strategy<'a>(
    env: Env,
    request: Unknown<'a>,
    reason: Unknown<'a>,
    policy: Option<&PolicyHandle>,
    make: Unknown<'a>,
) -> napi::Result<Either<Unknown<'a>, Null>> {
    run(&env, || {
        let (r, why) = inputs(request, reason)?;
        match retrypolicy::decide_before_strategy(&r, why, or_default(policy))? {
            Some(d) => Ok(Either::A(decision::build(&make, &d)?)),
            None => Ok(Either::B(Null)),
        }
    })
}

/// A host strategy's answer (milliseconds, or null to decline) as the decision, capped to the timeout.
#[napi(catch_unwind)]
pub fn decide_after_strategy<'a>(
    env: Env,
    request: Unknown<'a>,
    reason: Unknown<'a>,
    retry_after: Unknown<'a>,
    make: Unknown<'a>,
) -> napi::Result<Unknown<'a>> {
    run(&env, || {
        let (r, why) = inputs(request, reason)?;
        let verdict = strategy::verdict(retry_after, "retryAfterMs")?;
        decision::build(&make, &retrypolicy::decide_after_strategy(&r, why, verdict))
    })
}

/// Best effort's answer under `policy`: a delay in milliseconds, or null for "do not retry".
#[napi(catch_unwind)]
pub fn best_effort_delay(
    env: Env,
    request: Unknown,
    reason: Unknown,
    policy: Option<&PolicyHandle>,
) -> napi::Result<Option<Either<f64, BigInt>>> {
    run(&env, || {
        let (r, why) = inputs(request, reason)?;
        let verdict = or_default(policy).best_effort().retry_after(&r, why)?;
        Ok(verdict.delay_ms.map(convert::millis_out))
    })
}

/// RFC 0049's controlled backoff in milliseconds after `attempt` retries.
#[napi(catch_unwind)]
pub fn controlled_backoff(env: Env, attempt: Unknown) -> napi::Result<Either<f64, BigInt>> {
    run(&env, || {
        let attempt = convert::u32_or(&Js(attempt), "attempt", None)?;
        Ok(convert::millis_out(retrypolicy::controlled_backoff(attempt)))
    })
}

/// The policy's best-effort delay after `attempt` retries; jitter needs a draw in [0, 1).
#[napi(catch_unwind)]
pub fn backoff_delay(
    env: Env,
    policy: Option<&PolicyHandle>,
    attempt: Unknown,
    random: Unknown,
    previous_delay_ms: Unknown,
) -> napi::Result<Either<f64, BigInt>> {
    run(&env, || {
        let p = or_default(policy);
        let attempt = convert::u32_or(&Js(attempt), "attempt", None)?;
        let random = convert::opt_draw(&Js(random), "random")?;
        let previous = convert::opt_millis(&Js(previous_delay_ms), "previousDelayMs")?;
        let delay = retrypolicy::backoff_delay(&p.backoff, p.jitter, attempt, random, previous)?;
        Ok(convert::millis_out(delay))
    })
}
