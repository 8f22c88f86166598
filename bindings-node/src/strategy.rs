//! A host strategy: the caller's JavaScript function, asked by the core's `decide_with` when no
//! earlier rule decides. Whatever it throws propagates unchanged.

use std::cell::RefCell;

use napi::bindgen_prelude::{JsValue, Unknown};
use retrypolicy::{Error as CoreError, Request, RetryReason, RetryStrategy, StrategyVerdict};

use crate::callback::{arg, call};
use crate::convert::{self, Js};
use crate::errors::{Fail, Res};

/// The caller's strategy, handed the caller's own request object.
pub struct HostStrategy<'a> {
    request: Unknown<'a>,
    /// `(request, reasonName) => delayMs | null | undefined`.
    callback: Unknown<'a>,
    /// What the callback threw, kept for the caller (the core's error type cannot carry it).
    thrown: RefCell<Option<napi::Error>>,
}

impl<'a> HostStrategy<'a> {
    /// A strategy that calls `callback(request, reason)`.
    pub fn new(request: Unknown<'a>, callback: Unknown<'a>) -> Self {
        HostStrategy {
            request,
            callback,
            thrown: RefCell::new(None),
        }
    }

    /// The core's result, or what the callback threw.
    pub fn outcome<T>(&self, result: Res<T>) -> Res<T> {
        match self.thrown.borrow_mut().take() {
            Some(e) => Err(Fail::Napi(e)),
            None => result,
        }
    }
}

/// A strategy's answer as a verdict: milliseconds (a number or a bigint), or none to decline.
pub fn verdict(answer: Unknown, field: &str) -> Res<StrategyVerdict> {
    Ok(match convert::opt_millis(&Js(answer), field)? {
        Some(ms) => StrategyVerdict::custom_retry(ms),
        None => StrategyVerdict::custom_no_retry(),
    })
}

impl RetryStrategy for HostStrategy<'_> {
    fn retry_after(&self, _request: &Request, reason: RetryReason) -> Result<StrategyVerdict, CoreError> {
        let answer = arg(&self.callback, reason.name())
            .and_then(|why| call(&self.callback, &[self.request.raw(), why]));
        match answer.and_then(|a| verdict(a, "retryAfter")) {
            Ok(v) => Ok(v),
            Err(Fail::Core(e)) => Err(e),
            Err(Fail::Napi(e)) => {
                *self.thrown.borrow_mut() = Some(e);
                // Never seen by the caller: `outcome` returns what was thrown instead.
                Err(CoreError::InvalidType {
                    field: "strategy".to_owned(),
                    message: "the strategy threw".to_owned(),
                })
            }
        }
    }
}
