//! The classes of a feature this module was built without (the HTTP module leaves out budgets,
//! breakers and KV error maps): each exists, so the facade finds every member of its backend,
//! and each constructor throws the core's not-built error (`unknown_name`, naming the class the
//! facade shows and the feature). The JSON API's functions answer likewise (the wire crate).

#[cfg(not(all(feature = "guards", feature = "couchbase")))]
use wasm_bindgen::prelude::*;

#[cfg(not(all(feature = "guards", feature = "couchbase")))]
use crate::errors::Fallible;

/// The error for the facade's class `class`, which needs `feature`.
#[cfg(not(all(feature = "guards", feature = "couchbase")))]
fn unbuilt<T>(class: &str, feature: &str) -> Fallible<T> {
    Err(retrypolicy::features::not_built("class", class, feature).into())
}

/// No retry budget in this module: its constructor throws (the facade's `RetryBudget`).
#[cfg(not(feature = "guards"))]
#[wasm_bindgen]
pub struct BudgetHandle;

#[cfg(not(feature = "guards"))]
#[wasm_bindgen]
impl BudgetHandle {
    /// Throws: this module has no budgets (the `guards` feature).
    #[wasm_bindgen(constructor)]
    pub fn new(_document: &str, _state: Option<String>) -> Fallible<BudgetHandle> {
        unbuilt("RetryBudget", "guards")
    }
}

/// No circuit breaker in this module: its constructor throws (the facade's `CircuitBreaker`).
#[cfg(not(feature = "guards"))]
#[wasm_bindgen]
pub struct BreakerHandle;

#[cfg(not(feature = "guards"))]
#[wasm_bindgen]
impl BreakerHandle {
    /// Throws: this module has no breakers (the `guards` feature).
    #[wasm_bindgen(constructor)]
    pub fn new(_document: &str, _state: Option<String>) -> Fallible<BreakerHandle> {
        unbuilt("CircuitBreaker", "guards")
    }
}

/// No KV error maps in this module: `parse` throws (the facade's `ErrorMap`).
#[cfg(not(feature = "couchbase"))]
#[wasm_bindgen]
pub struct ErrorMap;

#[cfg(not(feature = "couchbase"))]
#[wasm_bindgen]
impl ErrorMap {
    /// Throws: this module has no Couchbase classifiers (the `couchbase` feature).
    pub fn parse(_json: &str) -> Fallible<ErrorMap> {
        unbuilt("ErrorMap", "couchbase")
    }
}
