//! Conversions from host-language duration types to the core's whole milliseconds.

use crate::error::Error;
use crate::serde_form::ms::MAX_SAFE;

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

/// 2^52: below it, adding it to a non-negative float rounds to a whole number with ULP 1.
const TWO_52: f64 = 4_503_599_627_370_496.0;

/// `x` as a whole number, if it is one in `0..=max` (`max` at most 2^53 − 1); NaN and
/// infinities are not. Bindings call this for every number of a decision, so it avoids
/// float-to-integer conversions (and `f64::fract`, a libm call on baseline x86-64): below 2^52,
/// `x + 2^52` is whole and exact iff `x` is whole, and its bits hold `x` as an integer.
#[inline(always)]
pub fn whole_number(x: f64, max: f64) -> Option<u64> {
    if !(0.0..=max).contains(&x) {
        return None;
    }
    if x < TWO_52 {
        let y = x + TWO_52;
        return (y - TWO_52 == x).then(|| y.to_bits() - TWO_52.to_bits());
    }
    // [2^52, 2^53): every float there is whole.
    Some(x as u64)
}

/// Milliseconds given as a host's float (JavaScript numbers) → whole milliseconds; fractions,
/// negatives, NaN, infinities and values past 2^53−1 are `invalid_duration` naming `field`.
#[inline]
pub fn millis_from_f64(field: &str, ms: f64) -> Result<u64, Error> {
    match whole_number(ms, MAX_SAFE as f64) {
        Some(n) => Ok(n),
        None => Err(invalid_duration(field, ms)),
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
    fn whole_numbers_are_recognised_exactly() {
        let max = MAX_SAFE as f64;
        for (x, n) in [
            (0.0, 0),
            (-0.0, 0),
            (1.0, 1),
            (4_503_599_627_370_495.0, 4_503_599_627_370_495),
            (4_503_599_627_370_496.0, 4_503_599_627_370_496),
            (9_007_199_254_740_991.0, 9_007_199_254_740_991),
        ] {
            assert_eq!(whole_number(x, max), Some(n), "{x}");
        }
        for x in [
            0.5,
            1e-300,
            4_503_599_627_370_495.5,
            -1.0,
            9_007_199_254_740_992.0,
            f64::NAN,
            f64::INFINITY,
        ] {
            assert_eq!(whole_number(x, max), None, "{x}");
        }
        assert_eq!(whole_number(256.0, 255.0), None);
        assert_eq!(whole_number(255.0, 255.0), Some(255));
    }

    #[test]
    fn float_milliseconds_must_be_whole() {
        assert_eq!(millis_from_f64("t", 1500.0).unwrap(), 1500);
        for bad in [1.5, -1.0, f64::NAN, 9007199254740992.0] {
            assert_eq!(millis_from_f64("t", bad).unwrap_err().code(), "invalid_duration");
        }
    }
}
