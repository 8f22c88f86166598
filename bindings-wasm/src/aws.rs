//! The AWS SDKs' retry modes as JavaScript objects: the retry configuration validated once;
//! `awsDecide`, the core's decision after one failed attempt (the retry quota's verdict passed back
//! in as JSON text, as the host got it from its `RetryBudget`); adaptive mode's rate limiter, the
//! core's state machine on the caller's clock. Documents, snapshots and the attempt's error cross as
//! JSON text in the wire form; answers go out as JSON text.

use retrypolicy::aws::{
    self as core, AdaptiveRateLimiter, AwsError, AwsRetryConfig, AwsRetryDocument, RateLimiterConfig,
    RateLimiterDocument, RateLimiterSnapshot,
};
use retrypolicy::Error;
use wasm_bindgen::prelude::*;

use crate::budget::parsed;
use crate::errors::Fallible;
use crate::json_text;
use crate::read::{count, flag, millis, number, optional};

/// A validated AWS retry configuration (mode, behaviour, attempts, service, backoff cap, long polling).
#[wasm_bindgen]
pub struct AwsRetryConfigHandle(AwsRetryConfig);

#[wasm_bindgen]
impl AwsRetryConfigHandle {
    /// A configuration from its document (JSON text; undefined: standard mode's defaults); errors
    /// name `config.<field>`.
    #[wasm_bindgen(constructor)]
    pub fn new(document: Option<String>) -> Fallible<AwsRetryConfigHandle> {
        let doc: AwsRetryDocument = document
            .map(|d| parsed(&d, "config"))
            .transpose()?
            .unwrap_or_default();
        Ok(AwsRetryConfigHandle(AwsRetryConfig::from_document(
            &doc, "config",
        )?))
    }

    /// Standard mode's defaults, for `awsDecide` without a configuration.
    pub fn standard() -> AwsRetryConfigHandle {
        AwsRetryConfigHandle(AwsRetryConfig::default())
    }

    /// The normalized document as JSON text (every field of its mode set).
    #[wasm_bindgen(js_name = toJson)]
    pub fn to_json(&self) -> String {
        json_text(&self.0.to_document())
    }
}

/// The decision after a failed attempt as JSON text: `attempts` made (the failed one included),
/// `error` JSON text in the wire form, the caller's draw, and the retry quota's verdict on this
/// retry (JSON text, as `tryRetry` gave it), if asked.
#[wasm_bindgen(js_name = awsDecide)]
pub fn aws_decide(
    config: &AwsRetryConfigHandle,
    attempts: JsValue,
    error: &str,
    random: JsValue,
    verdict: Option<String>,
) -> Fallible<String> {
    let attempts = count(&attempts, "attempts", u32::MAX)?;
    let error: AwsError = parsed(error, "error")?;
    let random = optional(&random, "random", number)?;
    let verdict = match verdict {
        Some(text) => {
            let value: serde_json::Value = retrypolicy_wire::from_json_str(&text)?;
            Some(retrypolicy_wire::budget_verdict_from_value(&value)?)
        }
        None => None,
    };
    Ok(json_text(&core::aws_decide(
        &config.0,
        attempts,
        &error,
        random,
        verdict.as_ref(),
    )?))
}

/// Adaptive mode's client-side rate limiter (the SDKs' token bucket with its CUBIC rate).
#[wasm_bindgen]
pub struct RateLimiterHandle(AdaptiveRateLimiter);

/// The caller's clock reading, `nowMs`.
fn now(v: &JsValue) -> Result<u64, Error> {
    millis(v, "nowMs")
}

#[wasm_bindgen]
impl RateLimiterHandle {
    /// A limiter from its document (JSON text; undefined: the SDKs' constants), in the state `state`
    /// (a snapshot's JSON text) or new at `startMs` (undefined: 0); errors name `limiter.<field>`,
    /// `state.<field>`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        document: Option<String>,
        state: Option<String>,
        start_ms: JsValue,
    ) -> Fallible<RateLimiterHandle> {
        let doc: RateLimiterDocument = document
            .map(|d| parsed(&d, "limiter"))
            .transpose()?
            .unwrap_or_default();
        let config = RateLimiterConfig::from_document(&doc, "limiter")?;
        Ok(RateLimiterHandle(match state {
            Some(s) => {
                AdaptiveRateLimiter::restore(&config, &parsed::<RateLimiterSnapshot>(&s, "state")?, "state")?
            }
            None => AdaptiveRateLimiter::new(&config, optional(&start_ms, "startMs", millis)?.unwrap_or(0)),
        }))
    }

    /// Asks for a token before an attempt at `nowMs`: the verdict (acquired, or the wait) as JSON text.
    pub fn acquire(&mut self, now_ms: JsValue) -> Fallible<String> {
        Ok(json_text(&self.0.acquire(now(&now_ms)?)))
    }

    /// Tells the limiter a response arrived at `nowMs`, throttled or not: the rate update as JSON text.
    pub fn record(&mut self, now_ms: JsValue, throttled: JsValue) -> Fallible<String> {
        let now_ms = now(&now_ms)?;
        let throttled = optional(&throttled, "throttled", flag)?.ok_or_else(|| Error::MissingField {
            field: "throttled".to_owned(),
        })?;
        Ok(json_text(&self.0.record(now_ms, throttled)))
    }

    /// The state as JSON text (the constructor's `state` reads it back).
    pub fn snapshot(&self) -> String {
        json_text(&self.0.snapshot())
    }

    /// The normalized document as JSON text.
    #[wasm_bindgen(js_name = toJson)]
    pub fn to_json(&self) -> String {
        json_text(&self.0.config().to_document())
    }
}
