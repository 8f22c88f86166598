//! A host strategy written in JavaScript: a function `(request, reason) => ms | null | undefined`,
//! asked by the core when no earlier rule decides.

use std::cell::RefCell;

use js_sys::Function;
use retrypolicy::{Error, Request, RetryReason, RetryStrategy, StrategyVerdict};
use wasm_bindgen::prelude::*;

use crate::read;

/// A JavaScript function as the core's [`RetryStrategy`], for one call.
pub struct HostStrategy<'a> {
    /// The strategy function.
    pub function: &'a Function,
    /// The request as JavaScript passed it, handed to the function as it is.
    pub request: &'a JsValue,
    /// What the function threw, to rethrow unchanged once the core returns.
    pub thrown: RefCell<Option<JsValue>>,
}

impl<'a> HostStrategy<'a> {
    /// `function` as the strategy for `request`.
    pub fn new(function: &'a Function, request: &'a JsValue) -> Self {
        HostStrategy {
            function,
            request,
            thrown: RefCell::new(None),
        }
    }
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
                // Never seen: the caller rethrows what the function threw instead.
                Err(Error::InvalidType {
                    field: "strategy".to_owned(),
                    message: "threw".to_owned(),
                })
            }
        }
    }
}
