//! The AWS SDKs' retry modes for JavaScript: the retry configuration held as a `#[napi]` class
//! instance, validated once; `awsDecide`, the core's decision after one failed attempt (the retry
//! quota's verdict passed back in as JSON text, as the host got it from its `RetryBudget`); and
//! adaptive mode's rate limiter, the core's state machine on the caller's clock. Documents,
//! snapshots and the attempt's error cross as JSON text in the wire form; answers go out as JSON text.

use napi::bindgen_prelude::{Env, Unknown};
use napi_derive::napi;
use retrypolicy::aws::{
    self as core, AdaptiveRateLimiter, AwsError, AwsRetryConfig, AwsRetryDocument, RateLimiterConfig,
    RateLimiterDocument, RateLimiterSnapshot,
};
use retrypolicy::Error as CoreError;
use serde::Serialize;
use serde_json::Value;

use crate::budget::document;
use crate::convert::{self, Js};
use crate::errors::{run, Res};

/// A core value as JSON text.
fn json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// A validated AWS retry configuration (mode, behaviour, attempts, service, backoff cap, long polling).
#[napi]
pub struct AwsRetryConfigHandle {
    config: AwsRetryConfig,
}

#[napi]
impl AwsRetryConfigHandle {
    /// A configuration from its document (JSON text; undefined: standard mode's defaults); errors
    /// name `config.<field>`.
    #[napi(constructor, catch_unwind)]
    pub fn new(env: Env, document_text: Unknown) -> napi::Result<Self> {
        run(&env, || {
            let doc: AwsRetryDocument = Js(document_text)
                .opt(|v| document(v.0, "config"))?
                .unwrap_or_default();
            Ok(AwsRetryConfigHandle {
                config: AwsRetryConfig::from_document(&doc, "config")?,
            })
        })
    }

    /// The normalized document as JSON text (every field of its mode set).
    #[napi(catch_unwind)]
    pub fn to_json(&self) -> String {
        json(&self.config.to_document())
    }
}

/// The decision after a failed attempt as JSON text: `config` none for standard mode's defaults,
/// `attempts` made (the failed one included), `error` JSON text in the wire form, the caller's draw,
/// and the retry quota's verdict on this retry (JSON text, as `tryRetry` gave it), if asked.
#[napi(catch_unwind)]
pub fn aws_decide(
    env: Env,
    config: Option<&AwsRetryConfigHandle>,
    attempts: Unknown,
    error: Unknown,
    random: Unknown,
    verdict: Unknown,
) -> napi::Result<String> {
    run(&env, || {
        let attempts = convert::u32_or(&Js(attempts), "attempts", None)?;
        let error: AwsError = document(error, "error")?;
        let random = convert::opt_draw(&Js(random), "random")?;
        let verdict = Js(verdict).opt(|v| {
            let value: Value =
                convert::with_str(v, "budgetVerdict", |s| Ok(retrypolicy_wire::from_json_str(s)?))?;
            Ok(retrypolicy_wire::budget_verdict_from_value(&value)?)
        })?;
        let standard;
        let config = match config {
            Some(h) => &h.config,
            None => {
                standard = AwsRetryConfig::default();
                &standard
            }
        };
        Ok(json(&core::aws_decide(
            config,
            attempts,
            &error,
            random,
            verdict.as_ref(),
        )?))
    })
}

/// Adaptive mode's client-side rate limiter (the SDKs' token bucket with its CUBIC rate).
#[napi]
pub struct RateLimiterHandle {
    limiter: AdaptiveRateLimiter,
}

/// The caller's clock reading, `nowMs`.
fn now(v: Unknown) -> Res<u64> {
    convert::millis(&Js(v), "nowMs", None)
}

#[napi]
impl RateLimiterHandle {
    /// A limiter from its document (JSON text; undefined: the SDKs' constants), in the state `state`
    /// (a snapshot's JSON text) or new at `startMs` (undefined: 0); errors name `limiter.<field>`,
    /// `state.<field>`.
    #[napi(constructor, catch_unwind)]
    pub fn new(env: Env, document_text: Unknown, state: Unknown, start_ms: Unknown) -> napi::Result<Self> {
        run(&env, || {
            let doc: RateLimiterDocument = Js(document_text)
                .opt(|v| document(v.0, "limiter"))?
                .unwrap_or_default();
            let config = RateLimiterConfig::from_document(&doc, "limiter")?;
            let limiter = match Js(state).opt(|v| document::<RateLimiterSnapshot>(v.0, "state"))? {
                Some(s) => AdaptiveRateLimiter::restore(&config, &s, "state")?,
                None => {
                    AdaptiveRateLimiter::new(&config, convert::millis(&Js(start_ms), "startMs", Some(0))?)
                }
            };
            Ok(RateLimiterHandle { limiter })
        })
    }

    /// Asks for a token before an attempt at `nowMs`: the verdict (acquired, or the wait) as JSON text.
    #[napi(catch_unwind)]
    pub fn acquire(&mut self, env: Env, now_ms: Unknown) -> napi::Result<String> {
        run(&env, || Ok(json(&self.limiter.acquire(now(now_ms)?))))
    }

    /// Tells the limiter a response arrived at `nowMs`, throttled or not: the rate update as JSON text.
    #[napi(catch_unwind)]
    pub fn record(&mut self, env: Env, now_ms: Unknown, throttled: Unknown) -> napi::Result<String> {
        run(&env, || {
            let now_ms = now(now_ms)?;
            let throttled =
                convert::opt_bool(&Js(throttled), "throttled")?.ok_or_else(|| CoreError::MissingField {
                    field: "throttled".to_owned(),
                })?;
            Ok(json(&self.limiter.record(now_ms, throttled)))
        })
    }

    /// The state as JSON text (the constructor's `state` reads it back).
    #[napi(catch_unwind)]
    pub fn snapshot(&self) -> String {
        json(&self.limiter.snapshot())
    }

    /// The normalized document as JSON text.
    #[napi(catch_unwind)]
    pub fn to_json(&self) -> String {
        json(&self.limiter.config().to_document())
    }
}
