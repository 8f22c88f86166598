//! Retry budgets and circuit breakers as JavaScript objects, each holding one of the core's state
//! machines, driven by the caller's clock. Documents and snapshots cross as JSON text in the shared
//! wire form; verdicts go out as JSON text (the facade converts them as it converts every answer).
//! Each state machine sits in a shared cell, so a retry run ([`crate::run`]) holds the same one.

use std::cell::{Ref, RefCell, RefMut};
use std::rc::Rc;

use retrypolicy::{
    BreakerConfig, BreakerDocument, BreakerOutcome, BreakerSnapshot, BudgetConfig, BudgetDocument,
    BudgetEvent, BudgetEventKind, BudgetSnapshot, CircuitBreaker, Error, RetryBudget, RetryCause,
};
use serde::de::DeserializeOwned;
use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::errors::Fallible;
use crate::read;
use crate::run::busy;

/// JSON text read into `T`, its errors naming fields under `prefix` (`budget.max_tokens`, `state.balance`).
pub(crate) fn parsed<T: DeserializeOwned>(text: &str, prefix: &str) -> Result<T, Error> {
    retrypolicy_wire::from_json_str(text).map_err(|e| match e.field() {
        "" | "version" => e,
        f => {
            let field = format!("{prefix}.{f}");
            e.with_field(&field)
        }
    })
}

/// A core value as JSON text.
fn json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// The caller's clock reading.
fn now(v: &JsValue) -> Result<u64, Error> {
    read::millis(v, "nowMs")
}

/// What a retry repeats; undefined or null is an error.
fn retry_cause(v: &JsValue, field: &str) -> Result<RetryCause, Error> {
    Ok(read::optional(v, field, read::name)?.unwrap_or_default())
}

/// `cell` borrowed for one call; a budget or breaker lent to a run's call (reached again from
/// that run's strategy) is refused by name, not a panic.
fn borrowed<'a, T>(cell: &'a RefCell<T>, field: &str) -> Result<RefMut<'a, T>, Error> {
    cell.try_borrow_mut().map_err(|_| busy(field))
}

/// `cell` read for one call, refused as [`borrowed`] is.
fn read<'a, T>(cell: &'a RefCell<T>, field: &str) -> Result<Ref<'a, T>, Error> {
    cell.try_borrow().map_err(|_| busy(field))
}

/// A retry budget (gRPC's token bucket, the AWS retry quota, or Finagle's percentage).
#[wasm_bindgen]
pub struct BudgetHandle(Rc<RefCell<RetryBudget>>);

impl BudgetHandle {
    /// The budget's shared cell, for a run that holds it.
    pub(crate) fn shared(&self) -> Rc<RefCell<RetryBudget>> {
        Rc::clone(&self.0)
    }
}

#[wasm_bindgen]
impl BudgetHandle {
    /// A budget from its document (JSON text), in the state `state` (a snapshot's JSON text) or its initial one.
    #[wasm_bindgen(constructor)]
    pub fn new(document: &str, state: Option<String>) -> Fallible<BudgetHandle> {
        let config = BudgetConfig::from_document(&parsed::<BudgetDocument>(document, "budget")?, "budget")?;
        Ok(BudgetHandle(Rc::new(RefCell::new(match state {
            Some(s) => RetryBudget::restore(&config, &parsed::<BudgetSnapshot>(&s, "state")?, "state")?,
            None => RetryBudget::new(&config),
        }))))
    }

    /// Whether a retry for `cause` may be sent at `nowMs` (changes nothing): the verdict as JSON text.
    pub fn permit(&self, now_ms: JsValue, cause: JsValue) -> Fallible<String> {
        let (now_ms, cause) = (now(&now_ms)?, retry_cause(&cause, "cause")?);
        Ok(json(&read(&self.0, "budget")?.permit(now_ms, cause)))
    }

    /// Asks for a retry and records it when permitted: the verdict as JSON text.
    #[wasm_bindgen(js_name = tryRetry)]
    pub fn try_retry(&self, now_ms: JsValue, cause: JsValue) -> Fallible<String> {
        let (now_ms, cause) = (now(&now_ms)?, retry_cause(&cause, "cause")?);
        Ok(json(&borrowed(&self.0, "budget")?.try_retry(now_ms, cause)))
    }

    /// Records an event by name; `afterRetry` belongs to a success, `cause` to a retry.
    pub fn record(
        &self,
        now_ms: JsValue,
        kind: JsValue,
        after_retry: JsValue,
        cause: JsValue,
    ) -> Fallible<()> {
        let now_ms = now(&now_ms)?;
        let kind: BudgetEventKind = read::name(&kind, "event.kind")?;
        let after_retry = read::optional(&after_retry, "event.after_retry", read::name)?;
        let cause = read::optional(&cause, "event.cause", read::name)?;
        let event = BudgetEvent::from_kind("event", kind, after_retry, cause)?;
        borrowed(&self.0, "budget")?.record(now_ms, event);
        Ok(())
    }

    /// The state as JSON text (the constructor's `state` reads it back).
    pub fn snapshot(&self) -> Fallible<String> {
        Ok(json(&read(&self.0, "budget")?.snapshot()))
    }

    /// The normalized document as JSON text.
    #[wasm_bindgen(js_name = toJson)]
    pub fn to_json(&self) -> Fallible<String> {
        Ok(json(&read(&self.0, "budget")?.config().to_document()))
    }
}

/// A circuit breaker with Couchbase's parameters.
#[wasm_bindgen]
pub struct BreakerHandle(Rc<RefCell<CircuitBreaker>>);

impl BreakerHandle {
    /// The breaker's shared cell, for a run that holds it.
    pub(crate) fn shared(&self) -> Rc<RefCell<CircuitBreaker>> {
        Rc::clone(&self.0)
    }
}

#[wasm_bindgen]
impl BreakerHandle {
    /// A breaker from its document (JSON text; `{}`: Couchbase's defaults), in the state `state` or closed.
    #[wasm_bindgen(constructor)]
    pub fn new(document: &str, state: Option<String>) -> Fallible<BreakerHandle> {
        let config =
            BreakerConfig::from_document(&parsed::<BreakerDocument>(document, "breaker")?, "breaker")?;
        Ok(BreakerHandle(Rc::new(RefCell::new(match state {
            Some(s) => CircuitBreaker::restore(&config, &parsed::<BreakerSnapshot>(&s, "state")?, "state")?,
            None => CircuitBreaker::new(&config),
        }))))
    }

    /// Whether a request may be sent at `nowMs` (it may become the canary): the verdict as JSON text.
    pub fn permit(&self, now_ms: JsValue) -> Fallible<String> {
        let now_ms = now(&now_ms)?;
        Ok(json(&borrowed(&self.0, "breaker")?.permit(now_ms)))
    }

    /// Records how a request ended: `success`, `failure` or `timeout`.
    pub fn record(&self, now_ms: JsValue, outcome: JsValue) -> Fallible<()> {
        let now_ms = now(&now_ms)?;
        let outcome: BreakerOutcome = read::name(&outcome, "outcome")?;
        borrowed(&self.0, "breaker")?.record(now_ms, outcome);
        Ok(())
    }

    /// The changes of state the last `permit` or `record` made (directly, or in a run's step), in
    /// order, as JSON text (`[{"from", "to", "rule"}, ...]`; `[]` when it made none).
    #[wasm_bindgen(js_name = lastChanges)]
    pub fn last_changes(&self) -> Fallible<String> {
        Ok(json(&read(&self.0, "breaker")?.last_changes()))
    }

    /// The circuit's state at `nowMs`; changes nothing.
    pub fn state(&self, now_ms: JsValue) -> Fallible<String> {
        let now_ms = now(&now_ms)?;
        Ok(read(&self.0, "breaker")?.state(now_ms).name().to_owned())
    }

    /// The state as JSON text.
    pub fn snapshot(&self) -> Fallible<String> {
        Ok(json(&read(&self.0, "breaker")?.snapshot()))
    }

    /// The normalized document as JSON text.
    #[wasm_bindgen(js_name = toJson)]
    pub fn to_json(&self) -> Fallible<String> {
        Ok(json(&read(&self.0, "breaker")?.config().to_document()))
    }
}
