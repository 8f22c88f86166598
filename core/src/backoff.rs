//! Backoff calculators (controlled, exponential, fixed) and jitter from a caller-supplied draw.

use serde::{Deserialize, Serialize};

use crate::error::Error;

/// RFC 0049 section that defines the controlled backoff.
pub const CONTROLLED_BACKOFF_SECTION: &str = "RFC 0049, Controlled Backoff for Always Retry";

/// RFC 0049 "Controlled Backoff for Always Retry": delays for retry attempts 0..=4, then the last forever.
pub const CONTROLLED_BACKOFF_MS: [u64; 6] = [1, 10, 50, 100, 500, 1000];

/// The controlled backoff delay, in milliseconds, for `attempt` retries already made.
#[inline]
pub fn controlled_backoff(attempt: u32) -> u64 {
    CONTROLLED_BACKOFF_MS[(attempt as usize).min(CONTROLLED_BACKOFF_MS.len() - 1)]
}

/// RFC 0049 "Best Effort": "Boundaries between 1ms and 500ms".
pub const BEST_EFFORT_MIN_MS: u64 = 1;
/// Upper bound of the best-effort exponential backoff.
pub const BEST_EFFORT_MAX_MS: u64 = 500;
/// Growth factor of the best-effort exponential backoff.
pub const BEST_EFFORT_FACTOR: f64 = 2.0;
/// The largest growth factor a policy may ask for.
pub const MAX_FACTOR: f64 = 1000.0;
/// What `min_ms` accepts.
pub const MIN_AT_MOST_MAX: &str = "at most max_ms";
/// What `factor` accepts.
pub const FACTOR_EXPECTED: &str = "a number in [1, 1000]";

/// Where the exponential sequence starts. SDKs disagree; the default follows the RFC's bounds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FirstDelay {
    /// 1, 2, 4, ... ms (Go SDK; the RFC's lower bound of 1 ms holds from the first retry).
    #[default]
    Min,
    /// 0, 1, 2, 4, ... ms (Java SDK's ExponentialDelay: the first retry is immediate).
    Zero,
}

/// A backoff calculator: attempts already made → delay before the next one, before jitter.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "BackoffWire", into = "BackoffWire")]
pub enum Backoff {
    /// `min_ms × factor^attempt`, clamped to `[min_ms, max_ms]`, rounded down to whole ms.
    Exponential {
        /// Lower bound (and first delay unless `first` is `zero`).
        min_ms: u64,
        /// Upper bound.
        max_ms: u64,
        /// Growth per attempt, in `[1, 1000]`.
        factor: f64,
        /// Where the sequence starts.
        first: FirstDelay,
    },
    /// RFC 0049's controlled backoff, the same table always-retry reasons use.
    Controlled,
    /// The same delay every time.
    Fixed {
        /// The delay.
        delay_ms: u64,
    },
}

/// The kinds of backoff calculator, as named in JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackoffKind {
    /// [`Backoff::Exponential`].
    Exponential,
    /// [`Backoff::Controlled`].
    Controlled,
    /// [`Backoff::Fixed`].
    Fixed,
}

/// The flat JSON form of a backoff: `{"kind": "exponential", "min_ms": 1, "max_ms": 500,
/// "factor": 2, "first": "min"}`, `{"kind": "controlled"}`, `{"kind": "fixed", "delay_ms": 250}`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackoffWire {
    kind: BackoffKind,
    #[serde(
        default,
        with = "crate::serde_form::ms::option",
        skip_serializing_if = "Option::is_none"
    )]
    min_ms: Option<u64>,
    #[serde(
        default,
        with = "crate::serde_form::ms::option",
        skip_serializing_if = "Option::is_none"
    )]
    max_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    factor: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    first: Option<FirstDelay>,
    #[serde(
        default,
        with = "crate::serde_form::ms::option",
        skip_serializing_if = "Option::is_none"
    )]
    delay_ms: Option<u64>,
}

impl TryFrom<BackoffWire> for Backoff {
    type Error = serde::de::value::Error;
    fn try_from(w: BackoffWire) -> Result<Self, Self::Error> {
        let misplaced = |name: &str| {
            crate::serde_form::Rejection::from_error::<serde::de::value::Error>(&Error::UnknownField {
                field: name.to_owned(),
            })
        };
        let exponential_fields = [
            ("min_ms", w.min_ms.is_some()),
            ("max_ms", w.max_ms.is_some()),
            ("factor", w.factor.is_some()),
            ("first", w.first.is_some()),
        ];
        let b = match w.kind {
            BackoffKind::Exponential => {
                if w.delay_ms.is_some() {
                    return Err(misplaced("delay_ms"));
                }
                Backoff::Exponential {
                    min_ms: w.min_ms.unwrap_or(BEST_EFFORT_MIN_MS),
                    max_ms: w.max_ms.unwrap_or(BEST_EFFORT_MAX_MS),
                    factor: w.factor.unwrap_or(BEST_EFFORT_FACTOR),
                    first: w.first.unwrap_or_default(),
                }
            }
            BackoffKind::Controlled | BackoffKind::Fixed => {
                if let Some((name, _)) = exponential_fields.iter().find(|(_, set)| *set) {
                    return Err(misplaced(name));
                }
                if w.kind == BackoffKind::Controlled {
                    if w.delay_ms.is_some() {
                        return Err(misplaced("delay_ms"));
                    }
                    Backoff::Controlled
                } else {
                    Backoff::Fixed {
                        delay_ms: w.delay_ms.ok_or_else(|| {
                            crate::serde_form::Rejection::from_error::<serde::de::value::Error>(
                                &Error::MissingField {
                                    field: "delay_ms".to_owned(),
                                },
                            )
                        })?,
                    }
                }
            }
        };
        b.validate("")
            .map_err(|e| crate::serde_form::Rejection::from_error::<serde::de::value::Error>(&e))?;
        Ok(b)
    }
}

impl From<Backoff> for BackoffWire {
    fn from(b: Backoff) -> Self {
        let mut w = BackoffWire {
            kind: BackoffKind::Controlled,
            min_ms: None,
            max_ms: None,
            factor: None,
            first: None,
            delay_ms: None,
        };
        match b {
            Backoff::Exponential {
                min_ms,
                max_ms,
                factor,
                first,
            } => {
                w.kind = BackoffKind::Exponential;
                w.min_ms = Some(min_ms);
                w.max_ms = Some(max_ms);
                w.factor = Some(factor);
                w.first = Some(first);
            }
            Backoff::Controlled => {}
            Backoff::Fixed { delay_ms } => {
                w.kind = BackoffKind::Fixed;
                w.delay_ms = Some(delay_ms);
            }
        }
        w
    }
}

impl Default for Backoff {
    /// The best-effort default: exponential, 1 ms to 500 ms, factor 2, starting at 1 ms.
    fn default() -> Self {
        Backoff::Exponential {
            min_ms: BEST_EFFORT_MIN_MS,
            max_ms: BEST_EFFORT_MAX_MS,
            factor: BEST_EFFORT_FACTOR,
            first: FirstDelay::Min,
        }
    }
}

impl Backoff {
    /// A validated exponential backoff.
    pub fn exponential(min_ms: u64, max_ms: u64, factor: f64, first: FirstDelay) -> Result<Backoff, Error> {
        let b = Backoff::Exponential {
            min_ms,
            max_ms,
            factor,
            first,
        };
        b.validate("backoff")?;
        Ok(b)
    }

    /// Checks bounds and factor; `path` prefixes field names in errors.
    pub fn validate(&self, path: &str) -> Result<(), Error> {
        let field = |name: &str| {
            if path.is_empty() {
                name.to_owned()
            } else {
                format!("{path}.{name}")
            }
        };
        if let Backoff::Exponential {
            min_ms,
            max_ms,
            factor,
            ..
        } = *self
        {
            if min_ms > max_ms {
                return Err(Error::OutOfRange {
                    field: field("min_ms"),
                    value: min_ms.to_string(),
                    expected: MIN_AT_MOST_MAX.to_owned(),
                });
            }
            if !(factor.is_finite() && (1.0..=MAX_FACTOR).contains(&factor)) {
                return Err(Error::OutOfRange {
                    field: field("factor"),
                    value: factor.to_string(),
                    expected: FACTOR_EXPECTED.to_owned(),
                });
            }
        }
        Ok(())
    }

    /// The delay before jitter, in milliseconds, after `attempt` retries; never overflows.
    #[inline(always)]
    pub fn delay(&self, attempt: u32) -> u64 {
        match *self {
            Backoff::Controlled => controlled_backoff(attempt),
            Backoff::Fixed { delay_ms } => delay_ms,
            Backoff::Exponential {
                min_ms,
                max_ms,
                factor,
                first,
            } => {
                let n = match first {
                    FirstDelay::Min => attempt,
                    FirstDelay::Zero if attempt == 0 => return 0,
                    FirstDelay::Zero => attempt - 1,
                };
                if min_ms == 0 {
                    return 0;
                }
                // The default factor 2 stays in integers: min × 2^n, saturating.
                if factor == 2.0 {
                    return match min_ms.checked_shl(n) {
                        Some(d) if n < 64 && d >> n == min_ms => d.max(min_ms).min(max_ms),
                        _ => max_ms,
                    };
                }
                // powi saturates to +inf for large n; the clamp below turns that into max_ms.
                let exp = i32::try_from(n).unwrap_or(i32::MAX);
                let d = min_ms as f64 * factor.powi(exp);
                if d.is_nan() || d >= max_ms as f64 {
                    max_ms
                } else {
                    // d is positive, so truncation is the floor.
                    (d as u64).max(min_ms).min(max_ms)
                }
            }
        }
    }

    /// The lower and upper bounds decorrelated jitter draws between.
    pub fn bounds(&self) -> (u64, u64) {
        match *self {
            Backoff::Exponential { min_ms, max_ms, .. } => (min_ms, max_ms),
            Backoff::Controlled => (CONTROLLED_BACKOFF_MS[0], CONTROLLED_BACKOFF_MS[5]),
            Backoff::Fixed { delay_ms } => (delay_ms, delay_ms),
        }
    }
}

/// How a random draw spreads the delay (AWS Architecture Blog, "Exponential Backoff And Jitter").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Jitter {
    /// The delay as calculated.
    #[default]
    None,
    /// `floor(delay × r)`.
    Full,
    /// `delay/2 + floor((delay − delay/2) × r)`, with `delay/2` rounded down.
    Equal,
    /// `lower + floor((min(upper, 3 × previous) − lower) × r)`, previous defaulting to lower.
    Decorrelated,
}

/// Applies `jitter` to `delay_ms` with the caller's draw `r` in `[0, 1)`.
pub fn apply_jitter(
    jitter: Jitter,
    delay_ms: u64,
    r: f64,
    previous_delay_ms: Option<u64>,
    bounds: (u64, u64),
) -> u64 {
    let scale = |span: u64| ((span as f64) * r).floor() as u64;
    match jitter {
        Jitter::None => delay_ms,
        Jitter::Full => scale(delay_ms).min(delay_ms),
        Jitter::Equal => {
            let half = delay_ms / 2;
            half + scale(delay_ms - half).min(delay_ms - half)
        }
        Jitter::Decorrelated => {
            let (lower, upper) = bounds;
            let prev = previous_delay_ms.unwrap_or(lower);
            let top = upper.min(prev.saturating_mul(3));
            if top <= lower {
                lower
            } else {
                lower + scale(top - lower).min(top - lower)
            }
        }
    }
}

/// Checks a random draw is in `[0, 1)`; `field` names it in the error.
#[inline]
pub fn check_draw(field: &str, r: f64) -> Result<f64, Error> {
    if (0.0..1.0).contains(&r) {
        Ok(r)
    } else {
        Err(invalid_draw(field, r))
    }
}

#[cold]
#[inline(never)]
fn invalid_draw(field: &str, r: f64) -> Error {
    Error::InvalidRandom {
        field: field.to_owned(),
        value: r.to_string(),
    }
}

#[cold]
#[inline(never)]
fn missing_draw() -> Error {
    Error::MissingField {
        field: "random".to_owned(),
    }
}

/// The delay for `attempt` retries under `backoff` and `jitter`; a draw is required unless jitter is none.
#[inline(always)]
pub fn backoff_delay(
    backoff: &Backoff,
    jitter: Jitter,
    attempt: u32,
    random: Option<f64>,
    previous_delay_ms: Option<u64>,
) -> Result<u64, Error> {
    let base = backoff.delay(attempt);
    if jitter == Jitter::None {
        return Ok(base);
    }
    jittered(backoff, jitter, base, random, previous_delay_ms)
}

/// [`backoff_delay`]'s jitter step, out of line: the common no-jitter path stays small.
#[inline(never)]
fn jittered(
    backoff: &Backoff,
    jitter: Jitter,
    base: u64,
    random: Option<f64>,
    previous_delay_ms: Option<u64>,
) -> Result<u64, Error> {
    let r = random.ok_or_else(missing_draw)?;
    let r = check_draw("random", r)?;
    Ok(apply_jitter(jitter, base, r, previous_delay_ms, backoff.bounds()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponential_never_panics_at_extreme_attempts() {
        for first in [FirstDelay::Min, FirstDelay::Zero] {
            let b = Backoff::exponential(1, 500, 2.0, first).unwrap();
            assert_eq!(b.delay(u32::MAX), 500);
            let b = Backoff::exponential(3, u64::MAX, 1000.0, first).unwrap();
            assert_eq!(b.delay(u32::MAX), u64::MAX);
        }
        assert_eq!(controlled_backoff(u32::MAX), 1000);
    }

    #[test]
    fn jitter_stays_within_its_range_at_the_edges() {
        let r = 0.999_999_999_999_999_9;
        assert_eq!(apply_jitter(Jitter::Full, 10, r, None, (1, 500)), 9);
        // Spans past 2^53 are scaled in f64: no overflow, and the result stays below the delay.
        assert_eq!(
            apply_jitter(Jitter::Full, u64::MAX, r, None, (1, u64::MAX)),
            u64::MAX - 2047
        );
        assert_eq!(apply_jitter(Jitter::Equal, 1, r, None, (1, 1)), 0);
        assert_eq!(
            apply_jitter(Jitter::Decorrelated, 5, r, Some(u64::MAX), (1, 500)),
            499
        );
    }
}
