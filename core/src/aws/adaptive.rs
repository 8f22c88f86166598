//! Adaptive mode's client-side rate limiter as pure state on the caller's clock: botocore's
//! `ClientRateLimiter` (`botocore/retries/adaptive.py`) over its `TokenBucket` (`bucket.py`: a
//! minimum fill rate of 0.5/s, a capacity of at least one token), `CubicCalculator`
//! (`throttling.py`: `BETA` 0.7, `SCALE_CONSTANT` 0.4) and `RateClocker` (`adaptive.py`: the
//! measured send rate, smoothing 0.8, half-second buckets); aws-sdk-go-v2's
//! `aws/retry/adaptive_ratelimit.go` is the same machine, and its test vectors are the SDKs'.
//!
//! The limiter is off until the first throttling response. Before each attempt the host asks
//! [`AdaptiveRateLimiter::acquire`]: go, or wait `wait_ms` and ask again (the SDKs block there;
//! here the host is told how long). After each response it tells [`AdaptiveRateLimiter::record`]
//! whether the response was a throttling error: a success lets the CUBIC curve raise the rate, a
//! throttle cuts it to `BETA` × the rate it was sending at. Times are the caller's milliseconds;
//! rates are requests per second.
//!
//! Two readings of the sources: the starting bucket is botocore's (fill rate 1/s, capacity 1,
//! empty, refilled from construction; aws-sdk-go-v2 starts it at 0 and refills from the first
//! update), which differs only before the first response; and a clock reading earlier than a time
//! the state holds moves that time back to the reading (the project's rule for every clock: no
//! negative refill, rate or elapsed time), where botocore would subtract tokens.

use serde::{Deserialize, Serialize};

use crate::error::{join_field as join, Error};
use crate::serde_form::ms::MAX_SAFE;

/// The source of the limiter's rules.
pub const ADAPTIVE_SECTION: &str = "botocore retries/adaptive.py ClientRateLimiter, RateClocker; \
     retries/bucket.py TokenBucket; retries/throttling.py CubicCalculator; \
     aws-sdk-go-v2 aws/retry/adaptive_ratelimit.go";

/// The rate limiter document and snapshot version this release reads and writes.
pub const RATE_LIMITER_VERSION: u64 = 1;

/// The measured rate's time buckets (botocore `RateClocker._TIME_BUCKET_RANGE`, 0.5 s).
const BUCKET_MS: u64 = 500;
/// How far the new rate may exceed the measured rate (botocore `_MAX_RATE_ADJUST_SCALE`).
const MAX_RATE_ADJUST_SCALE: f64 = 2.0;

/// The limiter's parameters as JSON holds them: `{"version": 1, "min_fill_rate": 0.5, "beta":
/// 0.7, "scale_constant": 0.4, "smoothing": 0.8}`; every field may be left out (or null).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateLimiterDocument {
    /// Document version; only 1 is read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    /// The slowest fill rate, requests per second (botocore `TokenBucket._MIN_RATE`, 0.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_fill_rate: Option<f64>,
    /// The share of the rate kept after a throttle (botocore `CubicCalculator._BETA`, 0.7).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beta: Option<f64>,
    /// The CUBIC curve's scale (botocore `CubicCalculator._SCALE_CONSTANT`, 0.4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_constant: Option<f64>,
    /// The weight of the newest bucket in the measured rate (botocore `_DEFAULT_SMOOTHING`, 0.8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smoothing: Option<f64>,
}

/// A checked rate limiter configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateLimiterConfig {
    /// The slowest fill rate, requests per second, in (0, 1000000].
    pub min_fill_rate: f64,
    /// The share of the rate kept after a throttle, in (0, 1).
    pub beta: f64,
    /// The CUBIC curve's scale, in (0, 1000].
    pub scale_constant: f64,
    /// The newest bucket's weight in the measured rate, in (0, 1].
    pub smoothing: f64,
}

impl Default for RateLimiterConfig {
    /// botocore's and aws-sdk-go-v2's constants: 0.5, 0.7, 0.4, 0.8.
    fn default() -> Self {
        RateLimiterConfig {
            min_fill_rate: 0.5,
            beta: 0.7,
            scale_constant: 0.4,
            smoothing: 0.8,
        }
    }
}

fn out_of_range(field: String, value: f64, expected: &str) -> Error {
    Error::OutOfRange {
        field,
        value: crate::units::number_text(value),
        expected: expected.to_owned(),
    }
}

impl RateLimiterConfig {
    /// Checks `doc` (found at `field`, e.g. `limiter`) and fills in the defaults.
    pub fn from_document(doc: &RateLimiterDocument, field: &str) -> Result<RateLimiterConfig, Error> {
        match doc.version {
            None | Some(RATE_LIMITER_VERSION) => {}
            Some(v) => return Err(Error::UnsupportedVersion { value: v.to_string() }),
        }
        let d = RateLimiterConfig::default();
        let check = |name: &str, v: Option<f64>, default: f64, ok: fn(f64) -> bool, expected: &str| {
            let v = v.unwrap_or(default);
            if v.is_finite() && ok(v) {
                Ok(v)
            } else {
                Err(out_of_range(join(field, name), v, expected))
            }
        };
        Ok(RateLimiterConfig {
            min_fill_rate: check(
                "min_fill_rate",
                doc.min_fill_rate,
                d.min_fill_rate,
                |v| v > 0.0 && v <= 1e6,
                "a number in (0, 1000000]",
            )?,
            beta: check(
                "beta",
                doc.beta,
                d.beta,
                |v| v > 0.0 && v < 1.0,
                "a number in (0, 1)",
            )?,
            scale_constant: check(
                "scale_constant",
                doc.scale_constant,
                d.scale_constant,
                |v| v > 0.0 && v <= 1000.0,
                "a number in (0, 1000]",
            )?,
            smoothing: check(
                "smoothing",
                doc.smoothing,
                d.smoothing,
                |v| v > 0.0 && v <= 1.0,
                "a number in (0, 1]",
            )?,
        })
    }

    /// The normalized document: version 1, every field set.
    pub fn to_document(&self) -> RateLimiterDocument {
        RateLimiterDocument {
            version: Some(RATE_LIMITER_VERSION),
            min_fill_rate: Some(self.min_fill_rate),
            beta: Some(self.beta),
            scale_constant: Some(self.scale_constant),
            smoothing: Some(self.smoothing),
        }
    }
}

/// The limiter's state as JSON holds it (every field required but `version`): whether the bucket
/// is on, the token bucket (`fill_rate`, `max_capacity`, `capacity` tokens, `last_refill_ms`), the
/// CUBIC curve (`last_max_rate`: the rate at the last throttle, `last_throttle_ms`) and the
/// measured send rate (`measured_rate`, the current bucket's start `last_bucket_ms` and the
/// responses counted in it, `request_count`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateLimiterSnapshot {
    /// Snapshot version; only 1 is read.
    #[serde(
        default = "crate::serde_form::one",
        deserialize_with = "crate::serde_form::version_or_one"
    )]
    pub version: u64,
    /// Whether a throttle has turned the token bucket on.
    pub enabled: bool,
    /// Tokens per second the bucket gains.
    pub fill_rate: f64,
    /// The most tokens the bucket holds.
    pub max_capacity: f64,
    /// Tokens in the bucket.
    pub capacity: f64,
    /// When the bucket was last refilled.
    #[serde(with = "crate::serde_form::ms")]
    pub last_refill_ms: u64,
    /// The rate the client sent at when last throttled (CUBIC's `w_max`).
    pub last_max_rate: f64,
    /// When the client was last throttled.
    #[serde(with = "crate::serde_form::ms")]
    pub last_throttle_ms: u64,
    /// The smoothed send rate, responses per second.
    pub measured_rate: f64,
    /// The start of the half-second bucket being counted (a multiple of 500).
    #[serde(with = "crate::serde_form::ms")]
    pub last_bucket_ms: u64,
    /// Responses counted since that bucket began.
    pub request_count: u64,
}

/// The answer to "may an attempt be sent now?".
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct AcquireVerdict {
    /// Whether the attempt may be sent now (a token was taken, or the limiter is off).
    pub acquired: bool,
    /// When not: how long to wait before asking again (then there is a token), in ms.
    #[serde(with = "crate::serde_form::ms::option")]
    pub wait_ms: Option<u64>,
    /// `limiter_off` (no throttle yet: no token needed), `token_taken` or `wait_for_token`.
    pub rule: &'static str,
    /// The source.
    pub section: &'static str,
    /// Tokens left in the bucket.
    pub capacity: f64,
}

/// What a response did to the limiter.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RateUpdate {
    /// Whether the response was recorded as a throttle.
    pub throttled: bool,
    /// The measured send rate after it.
    pub measured_rate: f64,
    /// The rate CUBIC asks for (a throttle: `BETA` × the rate in use; a success: the curve at
    /// this time), before the cap of twice the measured rate.
    pub calculated_rate: f64,
    /// The bucket's fill rate now: `max(min(calculated, 2 × measured), min_fill_rate)`.
    pub fill_rate: f64,
    /// The bucket's capacity now (at least 1).
    pub max_capacity: f64,
    /// Whether the token bucket is on.
    pub enabled: bool,
    /// The term that gave `calculated_rate`: `throttle_beta` (a throttle: `BETA` × the rate in
    /// use) or `cubic_curve` (a success: the CUBIC curve at this time).
    pub rule: &'static str,
    /// What set the fill rate instead of `calculated_rate`, if anything: `capped_at_twice_measured`
    /// (2 × the measured rate, lower) or `raised_to_min_fill_rate` (`min_fill_rate`, higher than
    /// the rate after that cap; named also when the cap applied first); None: the fill rate is
    /// `calculated_rate`.
    pub bound: Option<&'static str>,
}

/// Adaptive mode's rate limiter: configuration and state, no clock of its own. Not shared by
/// itself: a host that calls it from several threads wraps it in its own lock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdaptiveRateLimiter {
    config: RateLimiterConfig,
    s: RateLimiterSnapshot,
}

fn secs(ms: u64) -> f64 {
    ms as f64 / 1000.0
}

/// A reading as the state keeps it: past 2^53 − 1 reads as 2^53 − 1.
fn reading(now_ms: u64) -> u64 {
    now_ms.min(MAX_SAFE)
}

impl AdaptiveRateLimiter {
    /// A limiter created at `now_ms`, as botocore's `register_retry_handler` builds it: off, a
    /// bucket of rate 1 and capacity 1 holding no token, no rate measured, CUBIC at 0.
    pub fn new(config: &RateLimiterConfig, now_ms: u64) -> AdaptiveRateLimiter {
        let now = reading(now_ms);
        AdaptiveRateLimiter {
            config: *config,
            s: RateLimiterSnapshot {
                version: RATE_LIMITER_VERSION,
                enabled: false,
                fill_rate: 1.0_f64.max(config.min_fill_rate),
                max_capacity: 1.0,
                capacity: 0.0,
                last_refill_ms: now,
                last_max_rate: 0.0,
                last_throttle_ms: now,
                measured_rate: 0.0,
                // botocore RateClocker: `math.floor(self._clock.current_time())`, whole seconds.
                last_bucket_ms: now - now % 1_000,
                request_count: 0,
            },
        }
    }

    /// A limiter of `config` in the state `snapshot` (found at `field`, e.g. `state`), checked:
    /// rates and tokens finite and not negative, the fill rate at least the minimum, the capacity
    /// at least 1 and the tokens within it, times at most 2^53 − 1, the bucket on a half second.
    pub fn restore(
        config: &RateLimiterConfig,
        snapshot: &RateLimiterSnapshot,
        field: &str,
    ) -> Result<AdaptiveRateLimiter, Error> {
        let s = snapshot;
        if s.version != RATE_LIMITER_VERSION {
            return Err(Error::UnsupportedVersion {
                value: s.version.to_string(),
            });
        }
        let rates = [
            ("fill_rate", s.fill_rate, config.min_fill_rate),
            ("max_capacity", s.max_capacity, 1.0),
            ("capacity", s.capacity, 0.0),
            ("last_max_rate", s.last_max_rate, 0.0),
            ("measured_rate", s.measured_rate, 0.0),
        ];
        for (name, v, min) in rates {
            if !(v.is_finite() && v >= min) {
                let expected = format!("a finite number of at least {}", crate::units::number_text(min));
                return Err(out_of_range(join(field, name), v, &expected));
            }
        }
        if s.capacity > s.max_capacity {
            return Err(out_of_range(
                join(field, "capacity"),
                s.capacity,
                "at most max_capacity",
            ));
        }
        let times = [
            ("last_refill_ms", s.last_refill_ms),
            ("last_throttle_ms", s.last_throttle_ms),
            ("last_bucket_ms", s.last_bucket_ms),
            ("request_count", s.request_count),
        ];
        for (name, v) in times {
            if v > MAX_SAFE {
                return Err(Error::OutOfRange {
                    field: join(field, name),
                    value: v.to_string(),
                    expected: "0..=9007199254740991".to_owned(),
                });
            }
        }
        if s.last_bucket_ms % BUCKET_MS != 0 {
            return Err(Error::OutOfRange {
                field: join(field, "last_bucket_ms"),
                value: s.last_bucket_ms.to_string(),
                expected: "a multiple of 500".to_owned(),
            });
        }
        Ok(AdaptiveRateLimiter {
            config: *config,
            s: *snapshot,
        })
    }

    /// This limiter's configuration.
    pub fn config(&self) -> RateLimiterConfig {
        self.config
    }

    /// The state as a value that serialises to JSON and back ([`AdaptiveRateLimiter::restore`]).
    pub fn snapshot(&self) -> RateLimiterSnapshot {
        self.s
    }

    /// Asks for a token before an attempt at `now_ms`: off, go without one; else refill and take
    /// one, or say how long until there is one (botocore `TokenBucket._sleep_amount`, rounded up
    /// to the millisecond, so asking again then succeeds).
    pub fn acquire(&mut self, now_ms: u64) -> AcquireVerdict {
        let verdict = |acquired, wait_ms, rule, capacity| AcquireVerdict {
            acquired,
            wait_ms,
            rule,
            section: ADAPTIVE_SECTION,
            capacity,
        };
        if !self.s.enabled {
            return verdict(true, None, "limiter_off", self.s.capacity);
        }
        self.refill(reading(now_ms));
        if self.s.capacity >= 1.0 {
            self.s.capacity -= 1.0;
            return verdict(true, None, "token_taken", self.s.capacity);
        }
        let (capacity, rate) = (self.s.capacity, self.s.fill_rate);
        let mut wait = (((1.0 - capacity) / rate) * 1000.0)
            .ceil()
            .clamp(1.0, MAX_SAFE as f64) as u64;
        // The float refill over `wait` must reach the token: a rounding short of it waits 1 ms more.
        while wait < MAX_SAFE && capacity + secs(wait) * rate < 1.0 {
            wait += 1;
        }
        verdict(false, Some(wait), "wait_for_token", capacity)
    }

    /// Tells the limiter a response arrived at `now_ms`, a throttling error or not (botocore
    /// `ClientRateLimiter.on_receiving_response`): the measured rate counts it; a success takes the
    /// CUBIC curve's rate, a throttle `BETA` × the rate in use (the measured rate, or the fill
    /// rate when that is lower and the bucket is on) and turns the bucket on; the fill rate
    /// becomes that, at most twice the measured rate, at least the minimum. The update names the
    /// term (`rule`) and the bound that applied (`bound`).
    pub fn record(&mut self, now_ms: u64, throttled: bool) -> RateUpdate {
        let now = reading(now_ms);
        let measured = self.measure(now);
        let rule = if throttled { "throttle_beta" } else { "cubic_curve" };
        let calculated = if throttled {
            let in_use = if self.s.enabled {
                measured.min(self.s.fill_rate)
            } else {
                measured
            };
            self.s.enabled = true;
            self.s.last_max_rate = in_use;
            self.s.last_throttle_ms = now;
            in_use * self.config.beta
        } else {
            if now < self.s.last_throttle_ms {
                self.s.last_throttle_ms = now;
            }
            let dt = secs(now - self.s.last_throttle_ms) - self.zero_point();
            // dt³ as x * x * x, as aws-sdk-go-v2's math.Pow(x, 3) multiplies it out.
            self.config.scale_constant * (dt * dt * dt) + self.s.last_max_rate
        };
        let capped = calculated.min(MAX_RATE_ADJUST_SCALE * measured);
        let bound = if capped < self.config.min_fill_rate {
            Some("raised_to_min_fill_rate")
        } else if capped < calculated {
            Some("capped_at_twice_measured")
        } else {
            None
        };
        self.set_max_rate(capped, now);
        RateUpdate {
            throttled,
            measured_rate: measured,
            calculated_rate: calculated,
            fill_rate: self.s.fill_rate,
            max_capacity: self.s.max_capacity,
            enabled: self.s.enabled,
            rule,
            bound,
        }
    }

    /// CUBIC's `K`: the time the curve takes back to `last_max_rate`,
    /// `(last_max_rate × (1 − BETA) / SCALE_CONSTANT)^(1/3)`, botocore's `** (1 / 3)`. The power is
    /// the `libm` crate's, the same code on every target: `f64::powf` is the platform's, and
    /// glibc's and wasm's differ in the last bit (3.685015232938015 and 3.6850152329380146).
    fn zero_point(&self) -> f64 {
        let base = (self.s.last_max_rate * (1.0 - self.config.beta)) / self.config.scale_constant;
        libm::pow(base, 1.0 / 3.0)
    }

    /// botocore `RateClocker.record`: count the response; entering a later half-second bucket,
    /// fold the count's rate into the smoothed measure.
    fn measure(&mut self, now: u64) -> f64 {
        let bucket = now - now % BUCKET_MS;
        self.s.request_count = self.s.request_count.saturating_add(1);
        if bucket < self.s.last_bucket_ms {
            self.s.last_bucket_ms = bucket;
        } else if bucket > self.s.last_bucket_ms {
            let current = self.s.request_count as f64 / secs(bucket - self.s.last_bucket_ms);
            let smoothing = self.config.smoothing;
            self.s.measured_rate = current * smoothing + self.s.measured_rate * (1.0 - smoothing);
            self.s.request_count = 0;
            self.s.last_bucket_ms = bucket;
        }
        self.s.measured_rate
    }

    /// botocore `TokenBucket._refill`: the tokens earned since the last refill, up to capacity.
    fn refill(&mut self, now: u64) {
        if now > self.s.last_refill_ms {
            let earned = secs(now - self.s.last_refill_ms) * self.s.fill_rate;
            self.s.capacity = self.s.max_capacity.min(self.s.capacity + earned);
        }
        self.s.last_refill_ms = now;
    }

    /// botocore `TokenBucket.max_rate`'s setter: refill at the old rate, then the new rate (at
    /// least the minimum) and a capacity of the rate (at least 1), the tokens cut to it.
    fn set_max_rate(&mut self, rate: f64, now: u64) {
        self.refill(now);
        self.s.fill_rate = rate.max(self.config.min_fill_rate);
        self.s.max_capacity = if rate >= 1.0 { rate } else { 1.0 };
        self.s.capacity = self.s.capacity.min(self.s.max_capacity);
    }
}
