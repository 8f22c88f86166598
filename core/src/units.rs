//! Conversions from host-language duration types to the core's whole milliseconds.

use crate::error::Error;
use crate::json::ms::MAX_SAFE;

/// Seconds (a host's float) → whole milliseconds, rounded to nearest; negative, NaN, infinite
/// or past 2^53−1 ms is `invalid_duration` naming `field`.
pub fn millis_from_secs(field: &str, secs: f64) -> Result<u64, Error> {
    let ms = (secs * 1000.0).round();
    if secs.is_finite() && ms >= 0.0 && ms <= MAX_SAFE as f64 {
        Ok(ms as u64)
    } else {
        Err(Error::InvalidDuration {
            field: field.to_owned(),
            value: secs.to_string(),
        })
    }
}

/// Milliseconds given as a host's float (JavaScript numbers) → whole milliseconds; fractions,
/// negatives, NaN, infinities and values past 2^53−1 are `invalid_duration` naming `field`.
#[inline]
pub fn millis_from_f64(field: &str, ms: f64) -> Result<u64, Error> {
    // In 0..=2^53−1 a value is whole iff it survives the round trip through i64 (exact there);
    // this avoids `f64::fract`, a libm call on baseline x86-64, and the multi-instruction
    // unsigned conversions. NaN and infinities fail the range test. Bindings call this once per
    // duration per decision, so the check inlines and the error is built out of line.
    if (0.0..=MAX_SAFE as f64).contains(&ms) && (ms as i64) as f64 == ms {
        Ok(ms as i64 as u64)
    } else {
        Err(invalid_duration(field, ms))
    }
}

#[cold]
#[inline(never)]
fn invalid_duration(field: &str, ms: f64) -> Error {
    Error::InvalidDuration {
        field: field.to_owned(),
        value: ms.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_round_to_the_nearest_millisecond() {
        assert_eq!(millis_from_secs("t", 2.5).unwrap(), 2500);
        assert_eq!(millis_from_secs("t", 0.1).unwrap(), 100);
        assert_eq!(millis_from_secs("t", 0.0004).unwrap(), 0);
        assert_eq!(millis_from_secs("t", 0.0005).unwrap(), 1);
        for bad in [-0.001, f64::NAN, f64::INFINITY, 1e16] {
            let e = millis_from_secs("timeout", bad).unwrap_err();
            assert_eq!((e.code(), e.field()), ("invalid_duration", "timeout"));
        }
    }

    #[test]
    fn float_milliseconds_must_be_whole() {
        assert_eq!(millis_from_f64("t", 1500.0).unwrap(), 1500);
        for bad in [1.5, -1.0, f64::NAN, 9007199254740992.0] {
            assert_eq!(millis_from_f64("t", bad).unwrap_err().code(), "invalid_duration");
        }
    }
}
