//! Retry budgets and circuit breakers as JavaScript objects, each holding one of the core's state
//! machines, driven by the caller's clock. Documents and snapshots cross as JSON text in the shared
//! wire form; verdicts go out as JSON text (the facade converts them as it converts every answer).

use retrypolicy::{
    BreakerConfig, BreakerDocument, BreakerOutcome, BreakerSnapshot, BudgetConfig, BudgetDocument,
    BudgetEvent, BudgetEventKind, BudgetSnapshot, CircuitBreaker, Error, RetryBudget, RetryCause,
};
use serde::de::DeserializeOwned;
use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::errors::Fallible;
use crate::read;

/// JSON text read into `T`, its errors naming fields under `prefix` (`budget.max_tokens`, `state.balance`).
fn parsed<T: DeserializeOwned>(text: &str, prefix: &str) -> Result<T, Error> {
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

/// A retry budget (gRPC's token bucket, the AWS retry quota, or Finagle's percentage).
#[wasm_bindgen]
pub struct BudgetHandle(RetryBudget);

#[wasm_bindgen]
impl BudgetHandle {
    /// A budget from its document (JSON text), in the state `state` (a snapshot's JSON text) or its initial one.
    #[wasm_bindgen(constructor)]
    pub fn new(document: &str, state: Option<String>) -> Fallible<BudgetHandle> {
        let config = BudgetConfig::from_document(&parsed::<BudgetDocument>(document, "budget")?, "budget")?;
        Ok(BudgetHandle(match state {
            Some(s) => RetryBudget::restore(&config, &parsed::<BudgetSnapshot>(&s, "state")?, "state")?,
            None => RetryBudget::new(&config),
        }))
    }

    /// Whether a retry for `cause` may be sent at `nowMs` (changes nothing): the verdict as JSON text.
    pub fn permit(&self, now_ms: JsValue, cause: JsValue) -> Fallible<String> {
        Ok(json(&self.0.permit(now(&now_ms)?, retry_cause(&cause, "cause")?)))
    }

    /// Asks for a retry and records it when permitted: the verdict as JSON text.
    #[wasm_bindgen(js_name = tryRetry)]
    pub fn try_retry(&mut self, now_ms: JsValue, cause: JsValue) -> Fallible<String> {
        let (now_ms, cause) = (now(&now_ms)?, retry_cause(&cause, "cause")?);
        Ok(json(&self.0.try_retry(now_ms, cause)))
    }

    /// Records an event by name; `afterRetry` belongs to a success, `cause` to a retry.
    pub fn record(
        &mut self,
        now_ms: JsValue,
        kind: JsValue,
        after_retry: JsValue,
        cause: JsValue,
    ) -> Fallible<()> {
        let now_ms = now(&now_ms)?;
        let kind: BudgetEventKind = read::name(&kind, "event.kind")?;
        let after_retry = read::optional(&after_retry, "event.after_retry", read::name)?;
        let cause = read::optional(&cause, "event.cause", read::name)?;
        self.0
            .record(now_ms, BudgetEvent::from_kind("event", kind, after_retry, cause)?);
        Ok(())
    }

    /// The state as JSON text (the constructor's `state` reads it back).
    pub fn snapshot(&self) -> String {
        json(&self.0.snapshot())
    }

    /// The normalized document as JSON text.
    #[wasm_bindgen(js_name = toJson)]
    pub fn to_json(&self) -> String {
        json(&self.0.config().to_document())
    }
}

/// A circuit breaker with Couchbase's parameters.
#[wasm_bindgen]
pub struct BreakerHandle(CircuitBreaker);

#[wasm_bindgen]
impl BreakerHandle {
    /// A breaker from its document (JSON text; `{}`: Couchbase's defaults), in the state `state` or closed.
    #[wasm_bindgen(constructor)]
    pub fn new(document: &str, state: Option<String>) -> Fallible<BreakerHandle> {
        let config =
            BreakerConfig::from_document(&parsed::<BreakerDocument>(document, "breaker")?, "breaker")?;
        Ok(BreakerHandle(match state {
            Some(s) => CircuitBreaker::restore(&config, &parsed::<BreakerSnapshot>(&s, "state")?, "state")?,
            None => CircuitBreaker::new(&config),
        }))
    }

    /// Whether a request may be sent at `nowMs` (it may become the canary): the verdict as JSON text.
    pub fn permit(&mut self, now_ms: JsValue) -> Fallible<String> {
        Ok(json(&self.0.permit(now(&now_ms)?)))
    }

    /// Records how a request ended: `success`, `failure` or `timeout`.
    pub fn record(&mut self, now_ms: JsValue, outcome: JsValue) -> Fallible<()> {
        let now_ms = now(&now_ms)?;
        let outcome: BreakerOutcome = read::name(&outcome, "outcome")?;
        self.0.record(now_ms, outcome);
        Ok(())
    }

    /// The circuit's state at `nowMs`; changes nothing.
    pub fn state(&self, now_ms: JsValue) -> Fallible<String> {
        Ok(self.0.state(now(&now_ms)?).name().to_owned())
    }

    /// The state as JSON text.
    pub fn snapshot(&self) -> String {
        json(&self.0.snapshot())
    }

    /// The normalized document as JSON text.
    #[wasm_bindgen(js_name = toJson)]
    pub fn to_json(&self) -> String {
        json(&self.0.config().to_document())
    }
}
