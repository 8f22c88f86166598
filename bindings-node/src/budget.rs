//! Retry budgets and circuit breakers, held by JavaScript as `#[napi]` class instances (napi-rs
//! tags each instance with its class): the core's state machines, driven by the caller's clock.
//! Documents and snapshots cross as JSON text in the shared wire form; verdicts go out as JSON text.

use napi::bindgen_prelude::{Env, Unknown};
use napi_derive::napi;
use retrypolicy::{
    BreakerConfig, BreakerDocument, BreakerOutcome, BreakerSnapshot, BudgetConfig, BudgetDocument,
    BudgetEvent, BudgetEventKind, BudgetSnapshot, CircuitBreaker, Error as CoreError, RetryBudget,
    RetryCause,
};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::convert::{self, Js};
use crate::errors::{run, Res};

/// JSON text read into `T`, its errors naming fields under `prefix` (`budget.max_tokens`).
pub(crate) fn document<T: DeserializeOwned>(text: Unknown, prefix: &str) -> Res<T> {
    let under = |e: CoreError| match e.field() {
        "" | "version" => e,
        f => {
            let field = format!("{prefix}.{f}");
            e.with_field(&field)
        }
    };
    convert::with_str(&Js(text), prefix, |s| {
        Ok(retrypolicy_wire::from_json_str(s).map_err(under)?)
    })
}

/// An optional snapshot (`undefined`/`null`: none) as JSON text, its errors naming `state.*`.
fn snapshot<T: DeserializeOwned>(text: Unknown) -> Res<Option<T>> {
    Js(text).opt(|v| document(v.0, "state"))
}

/// A core value as JSON text.
fn json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// The caller's clock reading, `nowMs`.
fn now(v: Unknown) -> Res<u64> {
    convert::millis(&Js(v), "nowMs", None)
}

/// What a retry repeats (`undefined`: an error).
fn cause(v: Unknown, field: &str) -> Res<RetryCause> {
    Ok(convert::opt_name(&Js(v), field)?.unwrap_or_default())
}

/// A retry budget (gRPC's token bucket, the AWS retry quota, or Finagle's percentage).
#[napi]
pub struct BudgetHandle {
    pub(crate) budget: RetryBudget,
}

#[napi]
impl BudgetHandle {
    /// A budget from its document (JSON text), in the state `state` (a snapshot's JSON text) or its initial one.
    #[napi(constructor, catch_unwind)]
    pub fn new(env: Env, document_text: Unknown, state: Unknown) -> napi::Result<Self> {
        run(&env, || {
            let config =
                BudgetConfig::from_document(&document::<BudgetDocument>(document_text, "budget")?, "budget")?;
            let budget = match snapshot::<BudgetSnapshot>(state)? {
                Some(s) => RetryBudget::restore(&config, &s, "state")?,
                None => RetryBudget::new(&config),
            };
            Ok(BudgetHandle { budget })
        })
    }

    /// Whether a retry for `cause` may be sent at `nowMs` (changes nothing): the verdict as JSON text.
    #[napi(catch_unwind)]
    pub fn permit(&self, env: Env, now_ms: Unknown, retry_cause: Unknown) -> napi::Result<String> {
        run(&env, || {
            Ok(json(
                &self.budget.permit(now(now_ms)?, cause(retry_cause, "cause")?),
            ))
        })
    }

    /// Asks for a retry and records it when permitted: the verdict as JSON text.
    #[napi(catch_unwind)]
    pub fn try_retry(&mut self, env: Env, now_ms: Unknown, retry_cause: Unknown) -> napi::Result<String> {
        run(&env, || {
            let (now_ms, cause) = (now(now_ms)?, cause(retry_cause, "cause")?);
            Ok(json(&self.budget.try_retry(now_ms, cause)))
        })
    }

    /// Records an event (`request`, `success`, `failure`, `timeout`, `retry`); `afterRetry` belongs
    /// to a success (what the retry that succeeded repeated), `cause` to a retry.
    #[napi(catch_unwind)]
    pub fn record(
        &mut self,
        env: Env,
        now_ms: Unknown,
        kind: Unknown,
        after_retry: Unknown,
        retry_cause: Unknown,
    ) -> napi::Result<()> {
        run(&env, || {
            let now_ms = now(now_ms)?;
            let kind: BudgetEventKind = convert::name(&Js(kind), "event.kind")?;
            // null is none, as the declarations say (`afterRetry?: RetryCause | null`) and wasm reads it.
            let after_retry = Js(after_retry).opt(|v| convert::name(v, "event.after_retry"))?;
            let cause = Js(retry_cause).opt(|v| convert::name(v, "event.cause"))?;
            let event = BudgetEvent::from_kind("event", kind, after_retry, cause)?;
            self.budget.record(now_ms, event);
            Ok(())
        })
    }

    /// The state as JSON text (`restore` reads it back).
    #[napi(catch_unwind)]
    pub fn snapshot(&self) -> String {
        json(&self.budget.snapshot())
    }

    /// The normalized document as JSON text (every field of its kind set).
    #[napi(catch_unwind)]
    pub fn to_json(&self) -> String {
        json(&self.budget.config().to_document())
    }
}

/// A circuit breaker with Couchbase's parameters.
#[napi]
pub struct BreakerHandle {
    pub(crate) breaker: CircuitBreaker,
}

#[napi]
impl BreakerHandle {
    /// A breaker from its document (JSON text; `{}` is Couchbase's defaults), in the state `state` or closed.
    #[napi(constructor, catch_unwind)]
    pub fn new(env: Env, document_text: Unknown, state: Unknown) -> napi::Result<Self> {
        run(&env, || {
            let doc = document::<BreakerDocument>(document_text, "breaker")?;
            let config = BreakerConfig::from_document(&doc, "breaker")?;
            let breaker = match snapshot::<BreakerSnapshot>(state)? {
                Some(s) => CircuitBreaker::restore(&config, &s, "state")?,
                None => CircuitBreaker::new(&config),
            };
            Ok(BreakerHandle { breaker })
        })
    }

    /// Whether a request may be sent at `nowMs` (it may become the half-open canary): the verdict as JSON text.
    #[napi(catch_unwind)]
    pub fn permit(&mut self, env: Env, now_ms: Unknown) -> napi::Result<String> {
        run(&env, || Ok(json(&self.breaker.permit(now(now_ms)?))))
    }

    /// Records how a request ended: `success`, `failure` or `timeout`.
    #[napi(catch_unwind)]
    pub fn record(&mut self, env: Env, now_ms: Unknown, outcome: Unknown) -> napi::Result<()> {
        run(&env, || {
            let now_ms = now(now_ms)?;
            let outcome: BreakerOutcome = convert::name(&Js(outcome), "outcome")?;
            self.breaker.record(now_ms, outcome);
            Ok(())
        })
    }

    /// The changes of state the last `permit` or `record` made (directly, or in a run's step), in
    /// order, as JSON text (`[{"from", "to", "rule"}, ...]`; `[]` when it made none).
    #[napi(catch_unwind)]
    pub fn last_changes(&self) -> String {
        json(&self.breaker.last_changes())
    }

    /// The circuit's state at `nowMs` (`closed`, `open`, `half_open`); changes nothing.
    #[napi(catch_unwind)]
    pub fn state(&self, env: Env, now_ms: Unknown) -> napi::Result<&'static str> {
        run(&env, || Ok(self.breaker.state(now(now_ms)?).name()))
    }

    /// The state as JSON text (`restore` reads it back).
    #[napi(catch_unwind)]
    pub fn snapshot(&self) -> String {
        json(&self.breaker.snapshot())
    }

    /// The normalized document as JSON text.
    #[napi(catch_unwind)]
    pub fn to_json(&self) -> String {
        json(&self.breaker.config().to_document())
    }
}
