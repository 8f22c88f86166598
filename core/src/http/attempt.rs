//! One HTTP attempt as every run reads it, whatever its rules: its class and what its
//! `Retry-After` asks for. Built in every build (a run with `decide` rules reads an HTTP outcome
//! too); the loop that decides on it ([`super::next`]) is the `http` feature's.

use super::*;
use crate::error::Error;

/// The rule that stops the loop when the wait before the next attempt would reach the deadline.
pub const DEADLINE_BEFORE_RETRY: &str = "deadline_before_retry";

/// What a `Retry-After` header on a response means to the loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RetryAfterHeader {
    /// No header, or a status that does not honour one.
    None,
    /// A header that does not parse: ignored for the backoff (the host cannot fix it).
    Malformed,
    /// The wait it asks for, in ms.
    Valid(u64),
}

/// One attempt's class (a 413 with a valid `Retry-After` transient) and what its `Retry-After`
/// asks for: the reading [`next`] and the run machine share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AttemptView {
    /// The class of the result.
    pub(crate) class: HttpClassification,
    /// Its `Retry-After`, when the status honours one.
    pub(crate) retry_after: RetryAfterHeader,
}

impl AttemptView {
    /// Reads `attempt`; a `Retry-After` date without the host's `now_unix_ms` is the host's
    /// mistake and an error (`missing_field`).
    pub(crate) fn of(attempt: &HttpAttempt, now_unix_ms: Option<u64>) -> Result<AttemptView, Error> {
        let c = classify_attempt(attempt)?;
        // RFC 9110 §15.5.14: "If the condition is temporary, the server SHOULD generate a
        // Retry-After header field": a 413 with a valid one is transient (urllib3, ky and got retry
        // it); without one, or with one that does not parse, it stays final.
        let class = match attempt {
            HttpAttempt::Response {
                status: 413,
                retry_after: Some(h),
            } => match parse_retry_after(h, now_unix_ms) {
                Ok(_) => HttpClassification {
                    class: HttpClass::Transient,
                    outcome: StepOutcome::Transient,
                    retry_after: true,
                    rule: "content_too_large_retry_after",
                    section: CONTENT_TOO_LARGE_SECTION,
                    retry_reason: Some(RetryReason::ServiceResponseCodeIndicated),
                },
                Err(e) if e.code() == "missing_field" => return Err(e),
                Err(_) => c,
            },
            _ => c,
        };
        let retry_after = match attempt {
            HttpAttempt::Response {
                retry_after: Some(h), ..
            } if class.retry_after && class.outcome == StepOutcome::Transient => {
                match parse_retry_after(h, now_unix_ms) {
                    Ok(d) => RetryAfterHeader::Valid(d),
                    Err(e) if e.code() == "missing_field" => return Err(e),
                    Err(_) => RetryAfterHeader::Malformed,
                }
            }
            _ => RetryAfterHeader::None,
        };
        Ok(AttemptView { class, retry_after })
    }
}
