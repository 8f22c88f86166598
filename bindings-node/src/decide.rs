//! `decide` and its host strategies: a request, a reason and a policy in, the core's decision out.

use napi::bindgen_prelude::{Env, Unknown, ValueType};
use napi_derive::napi;
use retrypolicy::{FailFast, RetryStrategy, StrategyKind};

use crate::convert::{self, Js};
use crate::decision;
use crate::errors::{run, Res};
use crate::policy::{or_default, PolicyHandle};
use crate::request::{self, Fields};
use crate::strategy::HostStrategy;

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

/// Decides with a host strategy, asked when no earlier rule decides: the caller's function (handed
/// the caller's request object), or a built-in one by name (`"best_effort"` configured by
/// `strategy_policy`, `"fail_fast"`), which then decides by its own rule, not `custom_strategy`.
#[napi(catch_unwind)]
pub fn decide_with<'a>(
    env: Env,
    request: Unknown<'a>,
    reason: Unknown<'a>,
    policy: Option<&PolicyHandle>,
    strategy: Unknown<'a>,
    strategy_policy: Option<&PolicyHandle>,
    make: Unknown<'a>,
) -> napi::Result<Unknown<'a>> {
    run(&env, || {
        let r = request::from_object(request)?;
        let why = convert::reason(&Js(reason), "reason")?;
        let function = HostStrategy::new(request, strategy);
        let best_effort = or_default(strategy_policy).best_effort();
        let host: &dyn RetryStrategy = match Js(strategy).kind()? {
            ValueType::Function => &function,
            _ => match convert::name(&Js(strategy), "strategy")? {
                StrategyKind::BestEffort => &best_effort,
                StrategyKind::FailFast => &FailFast,
            },
        };
        let d = retrypolicy::decide_with(&r, why, or_default(policy), Some(host));
        decision::build(&make, &function.outcome(d.map_err(Into::into))?)
    })
}
