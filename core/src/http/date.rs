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

/// Day names in the obsolete RFC 850 form, in [`DAY_NAMES`]' order.
const LONG_DAY_NAMES: [&str; 7] = [
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
];

/// What a date field accepts.
const DATE_EXPECTED: &str =
    "delay-seconds or an HTTP-date (IMF-fixdate \"Sun, 06 Nov 1994 08:49:37 GMT\", RFC 850 or asctime)";

/// A calendar date and time of day, as read from the text.
#[derive(Clone, Copy)]
struct Stamp {
    year: i64,
    month: u32,
    day: u32,
    h: u32,
    m: u32,
    s: u32,
}

impl Stamp {
    /// Unix milliseconds; `None` for an impossible date or time (second 60, a leap second, is allowed).
    fn unix_ms(self) -> Option<i64> {
        let ok = self.day >= 1
            && self.day <= days_in_month(self.year, self.month)
            && self.h <= 23
            && self.m <= 59
            && self.s <= 60;
        ok.then(|| {
            let days = days_from_civil(self.year, self.month, self.day);
            (days * 86_400 + i64::from(self.h) * 3_600 + i64::from(self.m) * 60 + i64::from(self.s)) * 1_000
        })
    }

    /// Index of its weekday in [`DAY_NAMES`].
    fn weekday(self) -> usize {
        days_from_civil(self.year, self.month, self.day).rem_euclid(7) as usize
    }
}

/// The civil date (year, month, day) of a day count since 1970-01-01 (H. Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

fn month_of(name: &str) -> Option<u32> {
    MONTHS.iter().position(|m| *m == name).map(|i| i as u32 + 1)
}

/// `hh:mm:ss`.
fn time_of_day(text: &str) -> Option<(u32, u32, u32)> {
    let hms: Vec<&str> = text.split(':').collect();
    let [h, m, s] = hms[..] else { return None };
    Some((digits(h, 2)?, digits(m, 2)?, digits(s, 2)?))
}

/// `Sun, 06 Nov 1994 08:49:37 GMT`: the day name and the stamp.
fn imf_fixdate(text: &str) -> Option<(usize, Stamp)> {
    let (day_name, rest) = text.split_once(", ")?;
    let parts: Vec<&str> = rest.split(' ').collect();
    let [day, month, year, time, "GMT"] = parts[..] else {
        return None;
    };
    let (h, m, s) = time_of_day(time)?;
    let stamp = Stamp {
        year: i64::from(digits(year, 4)?),
        month: month_of(month)?,
        day: digits(day, 2)?,
        h,
        m,
        s,
    };
    Some((DAY_NAMES.iter().position(|d| *d == day_name)?, stamp))
}

/// `Sunday, 06-Nov-94 08:49:37 GMT`: the day name and the stamp with its two-digit year (RFC 850).
fn rfc850_date(text: &str) -> Option<(usize, Stamp)> {
    let (day_name, rest) = text.split_once(", ")?;
    let parts: Vec<&str> = rest.split(' ').collect();
    let [date, time, "GMT"] = parts[..] else {
        return None;
    };
    let dmy: Vec<&str> = date.split('-').collect();
    let [day, month, year] = dmy[..] else { return None };
    let (h, m, s) = time_of_day(time)?;
    let stamp = Stamp {
        year: i64::from(digits(year, 2)?),
        month: month_of(month)?,
        day: digits(day, 2)?,
        h,
        m,
        s,
    };
    Some((LONG_DAY_NAMES.iter().position(|d| *d == day_name)?, stamp))
}

/// `Sun Nov  6 08:49:37 1994` (or `Sun Nov 16 ...`): asctime, read as GMT.
fn asctime_date(text: &str) -> Option<(usize, Stamp)> {
    let (day_name, rest) = text.split_once(' ')?;
    let (month, rest) = rest.split_once(' ')?;
    // date3 = month SP ( 2DIGIT / ( SP DIGIT ) )
    let (day, rest) = match rest.strip_prefix(' ') {
        Some(r) => (digits(r.get(..1)?, 1)?, r.get(1..)?),
        None => (digits(rest.get(..2)?, 2)?, rest.get(2..)?),
    };
    let parts: Vec<&str> = rest.strip_prefix(' ')?.split(' ').collect();
    let [time, year] = parts[..] else { return None };
    let (h, m, s) = time_of_day(time)?;
    let stamp = Stamp {
        year: i64::from(digits(year, 4)?),
        month: month_of(month)?,
        day,
        h,
        m,
        s,
    };
    Some((DAY_NAMES.iter().position(|d| *d == day_name)?, stamp))
}

/// RFC 9110 §5.6.7: a two-digit year is the latest year with those digits whose moment is at
/// most 50 years after `now_unix_ms` ("more than 50 years in the future" means the past).
fn resolve_two_digit_year(stamp: Stamp, now_unix_ms: u64) -> Option<Stamp> {
    let now = i64::try_from(now_unix_ms).ok()?;
    let (year, month, day) = civil_from_days(now.div_euclid(86_400_000));
    let day = day.min(days_in_month(year + 50, month));
    let limit = Stamp {
        year: year + 50,
        month,
        day,
        h: 0,
        m: 0,
        s: 0,
    }
    .unix_ms()?
        + now.rem_euclid(86_400_000);
    let century = year - year.rem_euclid(100);
    [century + 100, century, century - 100]
        .into_iter()
        .map(|c| Stamp {
            year: c + stamp.year,
            ..stamp
        })
        .find(|s| s.unix_ms().is_some_and(|t| t <= limit))
}

/// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110 §5.6.7) into Unix
/// milliseconds (negative before 1970). The day name must match the date; second 60 (a leap
/// second) is accepted. Only this, the preferred form, is accepted (see [`parse_http_date`]).
pub fn parse_imf_fixdate(text: &str) -> Result<i64, Error> {
    parse_imf_fixdate_field("value", text)
}

/// [`parse_imf_fixdate`], naming `field` in the error.
pub fn parse_imf_fixdate_field(field: &str, text: &str) -> Result<i64, Error> {
    imf_fixdate(text)
        .filter(|(name, stamp)| stamp.weekday() == *name)
        .and_then(|(_, stamp)| stamp.unix_ms())
        .ok_or_else(|| bad_date(field, text))
}

fn bad_date(field: &str, text: &str) -> Error {
    Error::OutOfRange {
        field: field.to_owned(),
        value: crate::error::shorten(text),
        expected: DATE_EXPECTED.to_owned(),
    }
}

/// Parses an HTTP-date in any of RFC 9110 §5.6.7's three forms, which a recipient "MUST accept":
/// IMF-fixdate, the obsolete RFC 850 form (`Sunday, 06-Nov-94 08:49:37 GMT`; its two-digit year
/// needs `now_unix_ms`: a year more than 50 years ahead is read as the past) and asctime
/// (`Sun Nov  6 08:49:37 1994`, GMT). Names are case-sensitive, the day name must match the
/// date (checked after the year is resolved), second 60 is accepted.
pub fn parse_http_date(field: &str, text: &str, now_unix_ms: Option<u64>) -> Result<i64, Error> {
    if let Some((name, stamp)) = rfc850_date(text) {
        let now = now_unix_ms.ok_or_else(|| Error::MissingField {
            field: "now_unix_ms".to_owned(),
        })?;
        return resolve_two_digit_year(stamp, now)
            .filter(|s| s.weekday() == name)
            .and_then(Stamp::unix_ms)
            .ok_or_else(|| bad_date(field, text));
    }
    imf_fixdate(text)
        .or_else(|| asctime_date(text))
        .filter(|(name, stamp)| stamp.weekday() == *name)
        .and_then(|(_, stamp)| stamp.unix_ms())
        .ok_or_else(|| bad_date(field, text))
}

/// The delay a `Retry-After` value asks for, in ms (RFC 9110 §10.2.3): delay-seconds (digits
/// only) × 1000, or an HTTP-date ([`parse_http_date`]) minus `now_unix_ms` (0 when the date has
/// passed). `now_unix_ms` is required only for a date. At most 2^63 − 1 ms (it saturates there).
pub fn parse_retry_after(value: &str, now_unix_ms: Option<u64>) -> Result<u64, Error> {
    let v = value.trim_matches([' ', '\t']);
    if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
        // Past 2^63 - 1 ms the value saturates: the deadline clamps it anyway.
        let secs: u64 = v.parse().unwrap_or(u64::MAX);
        return Ok(secs
            .saturating_mul(1_000)
            .min(crate::serde_form::ms::MAX_HEADER_MS));
    }
    let at = parse_http_date("retry_after", v, now_unix_ms)?;
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
            "Sun Nov 06 1994 08:49:37 GMT",
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

    #[test]
    fn the_obsolete_forms_are_read_as_rfc_9110_asks() {
        let now = Some(784_111_747_000);
        let rfc = 784_111_777_000;
        for text in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
            "Sun Nov 06 08:49:37 1994",
        ] {
            assert_eq!(parse_http_date("d", text, now), Ok(rfc), "{text}");
        }
        for bad in [
            "Sun, 06-Nov-94 08:49:37 GMT",
            "Sunday, 06 Nov 1994 08:49:37 GMT",
            "Sun Nov 6 08:49:37 1994",
            "Sun Nov  6 08:49:37 1994 GMT",
            "sun Nov  6 08:49:37 1994",
            "Mon Nov  6 08:49:37 1994",
        ] {
            assert_eq!(
                parse_http_date("d", bad, now).unwrap_err().code(),
                "out_of_range",
                "{bad}"
            );
        }
        let e = parse_http_date("d", "Sunday, 06-Nov-94 08:49:37 GMT", None).unwrap_err();
        assert_eq!((e.code(), e.field()), ("missing_field", "now_unix_ms"));
    }

    #[test]
    fn civil_from_days_inverts_days_from_civil() {
        for days in [-800_000i64, -1, 0, 1, 59, 365, 10_957, 20_000, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days, "{days}");
        }
    }
}
