//! HTTP and retriable sagas (seed 004, "Your application will fail - part 2"): status classes,
//! network errors, `Retry-After` (delay-seconds or an IMF-fixdate, parsed here), the outcome of
//! a saga step (final or transient), and a bounded retry loop the host drives with [`next`].

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::reason::RetryReason;

/// Seed 004: "any code from 200-499 usually indicates a final acceptance or rejection of the
/// input, while 5xx would indicate a transient failure".
pub const SEED_HTTP_SECTION: &str = "Seed 004, Retriable Sagas: synchronous API calls (HTTP classes)";
/// Seed 004: a retry mechanism `while attempts < maxAttempts { y = f(x); if isFinal(y) return y }`.
pub const SEED_RETRY_LOOP_SECTION: &str = "Seed 004, Retriable Sagas: the retry mechanism";
/// RFC 9110 §10.2.3 Retry-After.
pub const RETRY_AFTER_SECTION: &str = "RFC 9110 §10.2.3 Retry-After";
/// RFC 9110 §15.5.14 413 Content Too Large.
pub const CONTENT_TOO_LARGE_SECTION: &str = "RFC 9110 §15.5.14 413 Content Too Large";
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
/// the HTTP version: no retry will change that, so final; a project decision, README). 413:
/// RFC 9110 §15.5.14, final, but a `Retry-After` on it says the condition is temporary, so
/// [`next`] retries a 413 that carries a valid one (as urllib3, ky and got do).
pub const STATUS_TABLE: [StatusRule; 10] = [
    status_rule(
        408,
        408,
        HttpClass::Transient,
        true,
        "request_timeout",
        "RFC 9110 §15.5.9 408 Request Timeout",
    ),
    status_rule(
        413,
        413,
        HttpClass::Rejection,
        true,
        "content_too_large",
        CONTENT_TOO_LARGE_SECTION,
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
    /// The RFC 0049 reason a generic runner (`decide`) gives a transient result: a response code
    /// that indicated a retry, or a connection lost while the request was in flight; none for a
    /// final result. (`decide` then follows RFC 0049, which retries a non-idempotent request after
    /// a response code; an HTTP client applies RFC 9110's method rule through `next` instead.)
    pub retry_reason: Option<RetryReason>,
}

impl From<&StatusRule> for HttpClassification {
    fn from(r: &StatusRule) -> Self {
        HttpClassification {
            class: r.class,
            outcome: r.class.outcome(),
            retry_after: r.retry_after,
            rule: r.rule,
            section: r.section,
            retry_reason: (r.class.outcome() == StepOutcome::Transient)
                .then_some(RetryReason::ServiceResponseCodeIndicated),
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
        retry_reason: Some(RetryReason::SocketClosedWhileInFlight),
    }
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
    NetworkError {
        /// Whether the request may have reached the server: false only when the host knows it
        /// was not sent (a refused connection, a failed DNS lookup); absent reads as maybe sent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sent: Option<bool>,
    },
}

impl HttpAttempt {
    /// Whether the request may have reached the server: always for a response.
    pub fn maybe_sent(&self) -> bool {
        match self {
            HttpAttempt::Response { .. } => true,
            HttpAttempt::NetworkError { sent } => sent.unwrap_or(true),
        }
    }
}

/// The RFC 9110 source of the idempotent-method rule.
pub const IDEMPOTENT_METHODS_SECTION: &str = "RFC 9110 §9.2.2 Idempotent Methods";

/// Whether an HTTP method is idempotent (RFC 9110 §9.2.2: PUT, DELETE and the safe methods GET,
/// HEAD, OPTIONS and TRACE), its name compared without regard to case; any other method, POST and
/// PATCH among them, is not.
pub fn is_idempotent_method(method: &str) -> bool {
    ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"]
        .iter()
        .any(|m| m.eq_ignore_ascii_case(method))
}

/// Classifies an attempt's result.
pub fn classify_attempt(attempt: &HttpAttempt) -> Result<HttpClassification, Error> {
    match attempt {
        HttpAttempt::Response { status, .. } => classify_http_status(*status),
        HttpAttempt::NetworkError { .. } => Ok(classify_network_error()),
    }
}

mod attempt;
mod date;
#[cfg(feature = "http")]
mod retry_loop;

pub use attempt::DEADLINE_BEFORE_RETRY;
pub(crate) use attempt::{AttemptView, RetryAfterHeader};
pub use date::{parse_http_date, parse_imf_fixdate, parse_imf_fixdate_field, parse_retry_after};
#[cfg(feature = "http")]
pub(crate) use retry_loop::{default_loop_backoff, default_loop_backoff_if_null};
#[cfg(feature = "http")]
pub use retry_loop::{
    next, next_with_budget, LoopAction, LoopDecision, LoopState, RetryLoop, NOT_IDEMPOTENT_AFTER_SEND,
};
