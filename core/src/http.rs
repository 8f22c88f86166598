//! HTTP and retriable sagas (seed 004, "Your application will fail - part 2"): status classes,
//! network errors, `Retry-After` (delay-seconds or an IMF-fixdate, parsed here), the outcome of
//! a saga step (final or transient), and a bounded retry loop the host drives with [`next`].

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::backoff::{backoff_delay, Backoff, FirstDelay, Jitter};
use crate::error::Error;

/// Seed 004: "any code from 200-499 usually indicates a final acceptance or rejection of the
/// input, while 5xx would indicate a transient failure".
pub const SEED_HTTP_SECTION: &str = "Seed 004, Retriable Sagas: synchronous API calls (HTTP classes)";
/// Seed 004: a retry mechanism `while attempts < maxAttempts { y = f(x); if isFinal(y) return y }`.
pub const SEED_RETRY_LOOP_SECTION: &str = "Seed 004, Retriable Sagas: the retry mechanism";
/// RFC 9110 §10.2.3 Retry-After.
pub const RETRY_AFTER_SECTION: &str = "RFC 9110 §10.2.3 Retry-After";
/// RFC 9110 §5.6.7 Date/Time Formats (IMF-fixdate).
pub const HTTP_DATE_SECTION: &str = "RFC 9110 §5.6.7 Date/Time Formats";

/// A saga step's outcome: it reached its final state, or it may be run again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepOutcome {
    /// Final: success or rejection; running the step again changes nothing, so stop.
    Final,
    /// Transient: an intermediate state; the step may (and should) be retried.
    Transient,
}

/// What an HTTP response or failure means to a caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HttpClass {
    /// 2xx: final acceptance.
    Success,
    /// 3xx: final; following a redirect is the HTTP client's job, not a retry.
    Redirect,
    /// 4xx (and 501, 505): final rejection of the input.
    Rejection,
    /// 5xx, 408, 429, network errors: try again.
    Transient,
}

impl HttpClass {
    /// The saga outcome of this class.
    pub fn outcome(self) -> StepOutcome {
        if self == HttpClass::Transient {
            StepOutcome::Transient
        } else {
            StepOutcome::Final
        }
    }
}

/// One row of the status table: a status range and its class, with the rule and source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StatusRule {
    /// First status of the range.
    pub from: u16,
    /// Last status of the range.
    pub to: u16,
    /// The class.
    pub class: HttpClass,
    /// Whether a `Retry-After` header on this status is honoured.
    pub retry_after: bool,
    /// The stable name of the rule.
    pub rule: &'static str,
    /// The source.
    pub section: &'static str,
}

const fn status_rule(
    from: u16,
    to: u16,
    class: HttpClass,
    retry_after: bool,
    rule: &'static str,
    section: &'static str,
) -> StatusRule {
    StatusRule {
        from,
        to,
        class,
        retry_after,
        rule,
        section,
    }
}

/// The status table, first match wins: the exceptions, then the classes of seed 004. 408:
/// RFC 9110 §15.5.9 (the server closed an idle request; the client may repeat it). 429: RFC 6585
/// §4 (Too Many Requests, may carry Retry-After). 503: RFC 9110 §15.6.4 (may carry Retry-After).
/// 501: RFC 9110 §15.6.2 and 505: RFC 9110 §15.6.6 (the server does not support the method or
/// the HTTP version: no retry will change that, so final; a project decision, README).
pub const STATUS_TABLE: [StatusRule; 9] = [
    status_rule(
        408,
        408,
        HttpClass::Transient,
        true,
        "request_timeout",
        "RFC 9110 §15.5.9 408 Request Timeout",
    ),
    status_rule(
        429,
        429,
        HttpClass::Transient,
        true,
        "too_many_requests",
        "RFC 6585 §4 429 Too Many Requests",
    ),
    status_rule(
        501,
        501,
        HttpClass::Rejection,
        false,
        "not_implemented",
        "RFC 9110 §15.6.2 501 Not Implemented",
    ),
    status_rule(
        503,
        503,
        HttpClass::Transient,
        true,
        "service_unavailable",
        "RFC 9110 §15.6.4 503 Service Unavailable",
    ),
    status_rule(
        505,
        505,
        HttpClass::Rejection,
        false,
        "http_version_not_supported",
        "RFC 9110 §15.6.6 505 HTTP Version Not Supported",
    ),
    status_rule(
        200,
        299,
        HttpClass::Success,
        false,
        "success_2xx",
        SEED_HTTP_SECTION,
    ),
    status_rule(
        300,
        399,
        HttpClass::Redirect,
        false,
        "redirect_3xx",
        SEED_HTTP_SECTION,
    ),
    status_rule(
        400,
        499,
        HttpClass::Rejection,
        false,
        "rejection_4xx",
        SEED_HTTP_SECTION,
    ),
    status_rule(
        500,
        599,
        HttpClass::Transient,
        true,
        "server_error_5xx",
        SEED_HTTP_SECTION,
    ),
];

/// The class of one attempt's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct HttpClassification {
    /// The class.
    pub class: HttpClass,
    /// Final or transient, for a saga step.
    pub outcome: StepOutcome,
    /// Whether a `Retry-After` header is honoured.
    pub retry_after: bool,
    /// The stable name of the rule that matched.
    pub rule: &'static str,
    /// The source.
    pub section: &'static str,
}

impl From<&StatusRule> for HttpClassification {
    fn from(r: &StatusRule) -> Self {
        HttpClassification {
            class: r.class,
            outcome: r.class.outcome(),
            retry_after: r.retry_after,
            rule: r.rule,
            section: r.section,
        }
    }
}

/// Classifies a final HTTP status (200..=599; 1xx are interim responses, not results).
pub fn classify_http_status(status: u16) -> Result<HttpClassification, Error> {
    STATUS_TABLE
        .iter()
        .find(|r| (r.from..=r.to).contains(&status))
        .map(HttpClassification::from)
        .ok_or_else(|| Error::OutOfRange {
            field: "http_status".to_owned(),
            value: status.to_string(),
            expected: "a final HTTP status in 200..=599".to_owned(),
        })
}

/// A network or connectivity failure (no response): transient (seed 004).
pub fn classify_network_error() -> HttpClassification {
    HttpClassification {
        class: HttpClass::Transient,
        outcome: StepOutcome::Transient,
        retry_after: false,
        rule: "network_error",
        section: SEED_HTTP_SECTION,
    }
}

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

/// What one attempt of an HTTP call produced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum HttpAttempt {
    /// A response.
    Response {
        /// Its status.
        status: u16,
        /// Its `Retry-After` header, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after: Option<String>,
    },
    /// No response: the connection failed or timed out.
    NetworkError,
}

/// Classifies an attempt's result.
pub fn classify_attempt(attempt: &HttpAttempt) -> Result<HttpClassification, Error> {
    match attempt {
        HttpAttempt::Response { status, .. } => classify_http_status(*status),
        HttpAttempt::NetworkError => Ok(classify_network_error()),
    }
}

fn default_loop_backoff() -> Backoff {
    Backoff::Exponential {
        min_ms: 100,
        max_ms: 10_000,
        factor: 2.0,
        first: FirstDelay::Min,
    }
}

/// A bounded retry loop: at most `max_attempts` attempts and/or no attempt starting after
/// `deadline_ms` (measured from the loop's start); at least one bound is required.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryLoop {
    /// Attempts in all, the first included (seed 004's `maxAttempts`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_attempts: Option<u32>,
    /// No attempt starts later than this many ms after the first one started.
    #[serde(
        default,
        with = "crate::serde_form::ms::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub deadline_ms: Option<u64>,
    /// The backoff between attempts when no Retry-After applies (default 100 ms × 2^n up to 10 s).
    #[serde(default = "default_loop_backoff")]
    pub backoff: Backoff,
    /// The jitter applied to that backoff (default none; a draw is then not needed).
    #[serde(default)]
    pub jitter: Jitter,
}

impl RetryLoop {
    /// Checks that the loop is bounded and its backoff valid.
    pub fn validate(&self) -> Result<(), Error> {
        if self.max_attempts.is_none() && self.deadline_ms.is_none() {
            return Err(Error::MissingField {
                field: "max_attempts or deadline_ms".to_owned(),
            });
        }
        if self.max_attempts == Some(0) {
            return Err(Error::OutOfRange {
                field: "max_attempts".to_owned(),
                value: "0".to_owned(),
                expected: "at least 1".to_owned(),
            });
        }
        self.backoff.validate("backoff")
    }
}

/// Where the loop is when an attempt's result arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoopState {
    /// Attempts made, the one that just finished included (1 after the first).
    pub attempts: u32,
    /// Time since the first attempt started, in ms.
    #[serde(with = "crate::serde_form::ms")]
    pub elapsed_ms: u64,
    /// The previous delay, for decorrelated jitter.
    #[serde(
        default,
        with = "crate::serde_form::ms::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub previous_delay_ms: Option<u64>,
}

/// Stop or retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoopAction {
    /// Send the request again after `delay_ms`.
    Retry,
    /// Stop: the step's outcome is `outcome`.
    Stop,
}

/// The loop's decision after one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LoopDecision {
    /// Retry or stop.
    pub action: LoopAction,
    /// The step's outcome when stopping: final, or transient when the loop ran out of attempts or time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<StepOutcome>,
    /// The class of the attempt's result.
    pub class: HttpClass,
    /// The delay before the retry (a decimal string past 2^53, like every duration).
    #[serde(with = "crate::serde_form::ms::option", skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u64>,
    /// Whether the delay (Retry-After or backoff) was cut so the retry starts by the deadline.
    pub capped: bool,
    /// Whether the delay came from `Retry-After`.
    pub from_retry_after: bool,
    /// Whether a `Retry-After` header was present but malformed, and so ignored for the backoff.
    pub retry_after_ignored: bool,
    /// The stable name of the rule that decided.
    pub rule: &'static str,
    /// The source.
    pub section: &'static str,
}

impl fmt::Display for LoopDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.action {
            LoopAction::Retry => write!(
                f,
                "retry after {} ms{} ({}, {})",
                self.delay_ms.unwrap_or(0),
                if self.capped { ", capped" } else { "" },
                self.rule,
                self.section
            ),
            LoopAction::Stop => write!(f, "stop ({}, {})", self.rule, self.section),
        }
    }
}

/// The loop's next move after an attempt (seed 004): a final result stops the loop with a final
/// outcome; a transient one is retried after the `Retry-After` delay (when the status honours it)
/// or the backoff, both cut so that no attempt starts after the deadline, unless the attempts or
/// the time are used up, which stops the loop with a transient outcome. `now_unix_ms` is needed
/// only for a `Retry-After` date; `random` only when the loop has jitter.
pub fn next(
    retry_loop: &RetryLoop,
    state: &LoopState,
    attempt: &HttpAttempt,
    now_unix_ms: Option<u64>,
    random: Option<f64>,
) -> Result<LoopDecision, Error> {
    retry_loop.validate()?;
    if state.attempts == 0 {
        return Err(Error::OutOfRange {
            field: "state.attempts".to_owned(),
            value: "0".to_owned(),
            expected: "at least 1: the attempt that just finished".to_owned(),
        });
    }
    let c = classify_attempt(attempt)?;
    let stop = |outcome: StepOutcome, rule: &'static str, section: &'static str| LoopDecision {
        action: LoopAction::Stop,
        outcome: Some(outcome),
        class: c.class,
        delay_ms: None,
        capped: false,
        from_retry_after: false,
        retry_after_ignored: false,
        rule,
        section,
    };
    if c.outcome == StepOutcome::Final {
        return Ok(stop(StepOutcome::Final, c.rule, c.section));
    }
    if retry_loop.max_attempts.is_some_and(|m| state.attempts >= m) {
        return Ok(stop(
            StepOutcome::Transient,
            "max_attempts_reached",
            SEED_RETRY_LOOP_SECTION,
        ));
    }
    let left = retry_loop.deadline_ms.map(|d| d.saturating_sub(state.elapsed_ms));
    if left == Some(0) {
        return Ok(stop(
            StepOutcome::Transient,
            "deadline_reached",
            SEED_RETRY_LOOP_SECTION,
        ));
    }
    let header = match attempt {
        HttpAttempt::Response {
            retry_after: Some(h), ..
        } if c.retry_after => Some(h.as_str()),
        _ => None,
    };
    let backoff = || {
        backoff_delay(
            &retry_loop.backoff,
            retry_loop.jitter,
            state.attempts - 1,
            random,
            state.previous_delay_ms,
        )
    };
    // A header the server got wrong is ignored for the backoff (the host cannot fix it); a date
    // without the host's `now_unix_ms` is the host's mistake and stays an error.
    let (wanted, from_retry_after, retry_after_ignored) =
        match header.map(|h| parse_retry_after(h, now_unix_ms)) {
            Some(Ok(d)) => (d, true, false),
            Some(Err(e)) if e.code() == "missing_field" => return Err(e),
            Some(Err(_)) => (backoff()?, false, true),
            None => (backoff()?, false, false),
        };
    let delay = left.map_or(wanted, |l| wanted.min(l));
    let (rule, section) = if from_retry_after {
        ("retry_after", RETRY_AFTER_SECTION)
    } else {
        (c.rule, c.section)
    };
    Ok(LoopDecision {
        action: LoopAction::Retry,
        outcome: None,
        class: c.class,
        delay_ms: Some(delay),
        capped: delay < wanted,
        from_retry_after,
        retry_after_ignored,
        rule,
        section,
    })
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
