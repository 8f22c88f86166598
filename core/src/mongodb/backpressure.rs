//! Client backpressure: overload errors, their exponential backoff with the caller's jitter
//! draw, and the cap on retries once the server said it is overloaded.

use super::errors::{has_label, RETRYABLE_ERROR, SYSTEM_OVERLOADED_ERROR};
use crate::backoff::check_draw;
use crate::error::Error;

/// `client-backpressure.md` "Overload retry policy" 3.3: `BASE_BACKOFF` is 100 ms.
pub const BASE_BACKOFF_MS: u64 = 100;
/// `client-backpressure.md` "Overload retry policy" 3.2: `MAX_BACKOFF` is 10000 ms.
pub const MAX_BACKOFF_MS: u64 = 10_000;
/// `client-backpressure.md` "Overload retry policy" 2.2: the default `MAX_RETRIES` (`maxAdaptiveRetries`).
pub const MAX_RETRIES: u32 = 2;

/// Whether `labels` make an overload error (`SystemOverloadedError`, "SystemOverloadedError label").
pub fn is_overload_error(labels: &[String]) -> bool {
    has_label(labels, SYSTEM_OVERLOADED_ERROR)
}

/// Whether `labels` make a retryable overload error (both `SystemOverloadedError` and
/// `RetryableError`, "Retryable Overload Error").
pub fn is_retryable_overload_error(labels: &[String]) -> bool {
    is_overload_error(labels) && has_label(labels, RETRYABLE_ERROR)
}

/// Backoff before overload retry number `attempt` (the first retry is 1):
/// `floor(random × min(MAX_BACKOFF, base × 2^attempt))` ms, where `base` is the error's positive
/// `baseBackoffMS` or 100 ms ("Overload retry policy" 3). `random` must be in `[0, 1)`.
pub fn overload_backoff_ms(attempt: u32, base_backoff_ms: Option<u64>, random: f64) -> Result<u64, Error> {
    let r = check_draw("random", random)?;
    let ceiling = overload_backoff_ceiling_ms(attempt, base_backoff_ms);
    Ok(((ceiling as f64) * r).floor() as u64)
}

/// The un-jittered backoff `min(MAX_BACKOFF, base × 2^attempt)` in ms: the largest delay a draw can give.
pub fn overload_backoff_ceiling_ms(attempt: u32, base_backoff_ms: Option<u64>) -> u64 {
    let base = base_backoff_ms.filter(|b| *b > 0).unwrap_or(BASE_BACKOFF_MS);
    let factor = 1u64.checked_shl(attempt).unwrap_or(u64::MAX);
    base.saturating_mul(factor).min(MAX_BACKOFF_MS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ceilings_double_from_200_ms_and_stop_at_10_s() {
        let got: Vec<u64> = (1..=8).map(|a| overload_backoff_ceiling_ms(a, None)).collect();
        assert_eq!(got, [200, 400, 800, 1600, 3200, 6400, 10_000, 10_000]);
        assert_eq!(overload_backoff_ceiling_ms(u32::MAX, None), 10_000);
        assert_eq!(overload_backoff_ceiling_ms(1, Some(50)), 100);
        assert_eq!(overload_backoff_ceiling_ms(1, Some(0)), 200);
    }

    #[test]
    fn a_draw_outside_0_1_is_rejected() {
        assert_eq!(
            overload_backoff_ms(1, None, 1.0).unwrap_err().code(),
            "invalid_random"
        );
        assert_eq!(overload_backoff_ms(1, None, 0.5).unwrap(), 100);
    }
}
