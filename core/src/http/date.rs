//! HTTP dates and `Retry-After` (RFC 9110 §5.6.7, §10.2.3), parsed to milliseconds.

use crate::error::Error;

const DAY_NAMES: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn digits(s: &str, n: usize) -> Option<u32> {
    (s.len() == n && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110 §5.6.7) into Unix
/// milliseconds (negative before 1970). The day name must match the date; second 60 (a leap
/// second) is accepted. The obsolete RFC 850 and asctime forms are not accepted.
pub fn parse_imf_fixdate(text: &str) -> Result<i64, Error> {
    parse_imf_fixdate_field("value", text)
}

/// [`parse_imf_fixdate`], naming `field` in the error.
pub fn parse_imf_fixdate_field(field: &str, text: &str) -> Result<i64, Error> {
    let bad = || Error::OutOfRange {
        field: field.to_owned(),
        value: text.to_owned(),
        expected: "delay-seconds or an IMF-fixdate such as \"Sun, 06 Nov 1994 08:49:37 GMT\"".to_owned(),
    };
    let (day_name, rest) = text.split_once(", ").ok_or_else(bad)?;
    let parts: Vec<&str> = rest.split(' ').collect();
    let [day, month, year, time, "GMT"] = parts[..] else {
        return Err(bad());
    };
    let day = digits(day, 2).ok_or_else(bad)?;
    let month = MONTHS.iter().position(|m| *m == month).ok_or_else(bad)? as u32 + 1;
    let year = i64::from(digits(year, 4).ok_or_else(bad)?);
    let hms: Vec<&str> = time.split(':').collect();
    let [h, m, s] = hms[..] else {
        return Err(bad());
    };
    let (h, m, s) = (
        digits(h, 2).ok_or_else(bad)?,
        digits(m, 2).ok_or_else(bad)?,
        digits(s, 2).ok_or_else(bad)?,
    );
    if day == 0 || day > days_in_month(year, month) || h > 23 || m > 59 || s > 60 {
        return Err(bad());
    }
    let days = days_from_civil(year, month, day);
    if DAY_NAMES[days.rem_euclid(7) as usize] != day_name {
        return Err(bad());
    }
    let secs = days * 86_400 + i64::from(h) * 3_600 + i64::from(m) * 60 + i64::from(s);
    Ok(secs * 1_000)
}

/// The delay a `Retry-After` value asks for, in ms (RFC 9110 §10.2.3): delay-seconds (digits
/// only) × 1000, or an IMF-fixdate minus `now_unix_ms` (0 when the date has passed).
/// `now_unix_ms` is required only for a date.
pub fn parse_retry_after(value: &str, now_unix_ms: Option<u64>) -> Result<u64, Error> {
    let v = value.trim_matches([' ', '\t']);
    if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
        // Past u64 the value saturates: the deadline clamps it anyway.
        let secs: u64 = v.parse().unwrap_or(u64::MAX);
        return Ok(secs.saturating_mul(1_000));
    }
    let at = parse_imf_fixdate_field("retry_after", v)?;
    let now = now_unix_ms.ok_or_else(|| Error::MissingField {
        field: "now_unix_ms".to_owned(),
    })?;
    let now = i64::try_from(now).unwrap_or(i64::MAX);
    Ok(u64::try_from(at.saturating_sub(now)).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rfc_example_date_parses() {
        // RFC 9110 §5.6.7's example: Sun, 06 Nov 1994 08:49:37 GMT = 784111777 s.
        assert_eq!(
            parse_imf_fixdate("Sun, 06 Nov 1994 08:49:37 GMT").unwrap(),
            784_111_777_000
        );
        assert_eq!(parse_imf_fixdate("Thu, 01 Jan 1970 00:00:00 GMT").unwrap(), 0);
        assert_eq!(
            parse_imf_fixdate("Tue, 29 Feb 2000 12:00:00 GMT").unwrap(),
            951_825_600_000
        );
    }

    #[test]
    fn malformed_dates_are_rejected() {
        for bad in [
            "Mon, 06 Nov 1994 08:49:37 GMT",
            "Sun, 6 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 UTC",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
            "Thu, 29 Feb 2001 00:00:00 GMT",
            "Sun, 06 Nov 1994 24:00:00 GMT",
            "",
        ] {
            assert_eq!(
                parse_imf_fixdate(bad).unwrap_err().code(),
                "out_of_range",
                "{bad}"
            );
        }
    }
}
