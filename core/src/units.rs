//! Conversions from host-language duration types to the core's whole milliseconds.

use crate::error::Error;
use crate::serde_form::ms::MAX_SAFE;

/// Seconds (a host's float) → whole milliseconds, rounded to nearest; negative (however small),
/// NaN, infinite or past 2^53−1 ms is `invalid_duration` naming `field`.
pub fn millis_from_secs(field: &str, secs: f64) -> Result<u64, Error> {
    let ms = (secs * 1000.0).round();
    if secs.is_finite() && secs >= 0.0 && ms <= MAX_SAFE as f64 {
        Ok(ms as u64)
    } else {
        Err(invalid_duration(field, secs))
    }
}

/// Microseconds (a host's exact integer duration, such as Python's `timedelta`) → whole
/// milliseconds, rounded to nearest, exactly; negative or past 2^64−1 ms is `invalid_duration`.
pub fn millis_from_micros(field: &str, micros: i128) -> Result<u64, Error> {
    u64::try_from((micros + 500).div_euclid(1000))
        .ok()
        .filter(|_| micros >= 0)
        .ok_or_else(|| Error::InvalidDuration {
            field: field.to_owned(),
            value: format!("{micros} µs"),
        })
}

/// `x` as a whole number, if it is one in `0..=max` (`max` at most 2^53 − 1); NaN and
/// infinities are not.
pub fn whole_number(x: f64, max: f64) -> Option<u64> {
    ((0.0..=max).contains(&x) && x.fract() == 0.0).then_some(x as u64)
}

/// Milliseconds given as a host's float (JavaScript numbers) → whole milliseconds; fractions,
/// negatives, NaN, infinities and values past 2^53−1 are `invalid_duration` naming `field`.
pub fn millis_from_f64(field: &str, ms: f64) -> Result<u64, Error> {
    whole_number(ms, MAX_SAFE as f64).ok_or_else(|| invalid_duration(field, ms))
}

fn invalid_duration(field: &str, value: f64) -> Error {
    Error::InvalidDuration {
        field: field.to_owned(),
        value: number_text(value),
    }
}

/// A float as an error message shows it: a whole number as its exact decimal digits (2^64 is
/// `18446744073709551616`, not `18446744073709552000` or `1.8446744073709552e19`), else as Rust
/// prints it.
pub fn number_text(x: f64) -> String {
    if x.is_finite() && x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        x.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_floats_show_their_exact_digits() {
        assert_eq!(number_text(18446744073709551616.0), "18446744073709551616");
        assert_eq!(number_text(9007199254740993.0), "9007199254740992");
        assert_eq!(number_text(-0.0), "-0");
        assert_eq!(number_text(1.5), "1.5");
        assert_eq!(number_text(f64::NAN), "NaN");
        let e = millis_from_f64("timeout_ms", 18446744073709551616.0).unwrap_err();
        assert!(e.to_string().contains("duration 18446744073709551616:"), "{e}");
    }

    #[test]
    fn seconds_round_to_the_nearest_millisecond() {
        assert_eq!(millis_from_secs("t", 2.5).unwrap(), 2500);
        assert_eq!(millis_from_secs("t", 0.1).unwrap(), 100);
        assert_eq!(millis_from_secs("t", 0.0004).unwrap(), 0);
        assert_eq!(millis_from_secs("t", 0.0005).unwrap(), 1);
        for bad in [-0.001, -0.0004, f64::NAN, f64::INFINITY, 1e16] {
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
    fn microseconds_convert_exactly() {
        let max_safe = i128::from(MAX_SAFE);
        assert_eq!(millis_from_micros("t", max_safe * 1000).unwrap(), MAX_SAFE);
        assert_eq!(
            millis_from_micros("t", i128::from(u64::MAX) * 1000).unwrap(),
            u64::MAX
        );
        assert_eq!(millis_from_micros("t", 1499).unwrap(), 1);
        assert_eq!(millis_from_micros("t", 1500).unwrap(), 2);
        assert_eq!(millis_from_micros("t", 0).unwrap(), 0);
        for bad in [-1, -400, (i128::from(u64::MAX) + 1) * 1000] {
            assert_eq!(
                millis_from_micros("t", bad).unwrap_err().code(),
                "invalid_duration",
                "{bad}"
            );
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
