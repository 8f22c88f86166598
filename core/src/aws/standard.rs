//! Standard (and adaptive) mode's retry decision: the SDKs' transient and throttling error lists,
//! modeled retryable errors, botocore's two special cases, the attempt limit, the capped
//! exponential backoff with full jitter (classic or 2026), `x-amz-retry-after`, the quota.

use super::*;
use crate::backoff::{apply_jitter, Jitter};

/// Standard mode as a whole (botocore `StandardRetryConditions`: "not max_attempts and
/// (transient or throttled or modeled_retry)").
pub const STANDARD_SECTION: &str = "AWS SDKs and Tools Reference Guide, Retry behavior: standard mode \
     (botocore retries/standard.py StandardRetryConditions; aws-sdk-go-v2 aws/retry/standard.go)";
/// The attempt limit.
pub const MAX_ATTEMPTS_SECTION: &str = "botocore retries/standard.py MaxAttemptsChecker \
     (DEFAULT_MAX_ATTEMPTS 3; _SERVICE_MAX_ATTEMPTS dynamodb, dynamodb-streams 4 with AWS_NEW_RETRIES_2026); \
     aws-sdk-go-v2 aws/retry/standard.go DefaultMaxAttempts";
const TRANSIENT_SECTION: &str = "botocore retries/standard.py TransientRetryableChecker; \
     aws-sdk-go-v2 aws/retry/standard.go DefaultRetryableErrorCodes, DefaultRetryableHTTPStatusCodes";
const CONNECTION_SECTION: &str = "botocore retries/standard.py TransientRetryableChecker \
     (ConnectionError, HTTPClientError); aws-sdk-go-v2 aws/retry/retryable_error.go RetryableConnectionError";
const THROTTLING_SECTION: &str = "botocore retries/standard.py ThrottledRetryableChecker; \
     aws-sdk-go-v2 aws/retry/standard.go DefaultThrottleErrorCodes";
const THROTTLING_STATUS_SECTION: &str =
    "smithy-typescript service-error-classification isThrottlingError (HTTP 429)";
const MODELED_SECTION: &str = "botocore retries/standard.py ModeledRetryableChecker \
     (the error shape's retryable trait); aws-sdk-go-v2 aws/retry/retryable_error.go RetryableError";
const STS_SECTION: &str = "botocore retries/special.py RetryIDPCommunicationError (sts)";
const CRC32_SECTION: &str = "botocore retries/special.py RetryDDBChecksumError (dynamodb x-amz-crc32)";

/// botocore `TransientRetryableChecker._TRANSIENT_ERROR_CODES` (aws-sdk-go-v2
/// `DefaultRetryableErrorCodes` has the first two; it lists `PriorRequestNotComplete` as
/// throttling, which makes it retryable too).
pub const TRANSIENT_ERROR_CODES: [&str; 3] = [
    "RequestTimeout",
    "RequestTimeoutException",
    "PriorRequestNotComplete",
];
/// botocore `_TRANSIENT_STATUS_CODES`, aws-sdk-go-v2 `DefaultRetryableHTTPStatusCodes`.
pub const TRANSIENT_STATUS_CODES: [u16; 4] = [500, 502, 503, 504];

/// The 2026 behaviour's clamp: a retry-after waits at most this much past the backoff
/// (botocore `_RETRY_AFTER_MAX_ADDITIONAL`, 5 s).
const RETRY_AFTER_MAX_ADDITIONAL_MS: u64 = 5_000;

/// Why `error` is retryable (its rule and source), botocore's checkers in their order, or none.
fn retryable_rule(config: &AwsRetryConfig, error: &AwsError) -> Option<(&'static str, &'static str)> {
    let code = error.code.as_deref();
    let service = config.service.as_deref();
    if code.is_some_and(|c| TRANSIENT_ERROR_CODES.contains(&c)) {
        Some(("transient_error_code", TRANSIENT_SECTION))
    } else if error.status.is_some_and(|s| TRANSIENT_STATUS_CODES.contains(&s)) {
        Some(("transient_status", TRANSIENT_SECTION))
    } else if error.no_response() {
        Some(("connection_error", CONNECTION_SECTION))
    } else if is_aws_throttling_error(code, None) {
        Some(("throttling_error_code", THROTTLING_SECTION))
    } else if error.status == Some(429) {
        Some(("throttling_status", THROTTLING_STATUS_SECTION))
    } else if error.retryable_trait.is_some() {
        Some(("modeled_retryable", MODELED_SECTION))
    } else if service == Some("sts") && code == Some("IDPCommunicationError") {
        Some(("sts_idp_communication_error", STS_SECTION))
    } else if service == Some("dynamodb") && error.crc32_mismatch == Some(true) {
        Some(("dynamodb_crc32_mismatch", CRC32_SECTION))
    } else {
        None
    }
}

/// An `x-amz-retry-after` value in milliseconds, read as botocore reads it (`int(value)`:
/// surrounding whitespace and a sign allowed; past 2^63 − 1 it saturates there, which every host's
/// integer holds, and the clamp bounds it anyway);
/// negative or not a number is none (ignored).
pub fn parse_amz_retry_after(value: &str) -> Option<u64> {
    let v = value.trim_matches(|c: char| c.is_ascii_whitespace());
    let (negative, digits) = match v.as_bytes().first() {
        Some(b'-') => (true, &v[1..]),
        Some(b'+') => (false, &v[1..]),
        _ => (false, v),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let max = crate::serde_form::ms::MAX_HEADER_MS;
    let ms = digits.parse::<u64>().map_or(max, |ms| ms.min(max));
    // botocore: "Negative retry-after value" is ignored; "-0" is int 0.
    (!negative || ms == 0).then_some(ms)
}

/// The backoff's bound before jitter for the failed attempt `attempts` (from 1).
fn ceiling(config: &AwsRetryConfig, attempts: u32, throttling: bool) -> u64 {
    let base = match config.behavior {
        AwsBehavior::Classic => 1_000,
        AwsBehavior::Retries2026 if throttling => 1_000,
        AwsBehavior::Retries2026 if is_dynamodb_2026(config.service.as_deref()) => 25,
        AwsBehavior::Retries2026 => 50,
    };
    exponential(base, attempts, config.max_backoff_ms)
}

/// The jittered wait under `ceiling`, then the 2026 behaviour's `x-amz-retry-after`:
/// `max(t, min(retry_after, t + 5 s))`.
fn wait(ceiling: u64, r: f64, retry_after: Option<u64>) -> u64 {
    let t = apply_jitter(Jitter::Full, ceiling, r, None, (0, ceiling));
    match retry_after {
        Some(ra) => t.max(ra.min(t.saturating_add(RETRY_AFTER_MAX_ADDITIONAL_MS))),
        None => t,
    }
}

pub(super) fn decide(f: &Failed) -> Result<AwsDecision, Error> {
    let (config, attempts, error) = (f.config, f.attempts, f.error);
    let rule = retryable_rule(config, error);
    let base = f.not_retryable(rule.is_some(), STANDARD_SECTION);
    let Some((rule, section)) = rule else {
        return Ok(base);
    };
    if attempts >= config.max_attempts {
        return Ok(base.stop("max_attempts_reached", MAX_ATTEMPTS_SECTION));
    }
    let retry_after = match config.behavior {
        AwsBehavior::Retries2026 => error.retry_after.as_deref().and_then(parse_amz_retry_after),
        AwsBehavior::Classic => None,
    };
    if let Some(v) = f.refused {
        let refused = base.stop(v.rule.name(), v.source);
        if !(config.behavior == AwsBehavior::Retries2026 && config.long_polling) {
            return Ok(refused);
        }
        // The SEP's long-polling rule as aws-sdk-go-v2 tests it: the backoff with the
        // non-throttling base, even after a throttling error, and the retry-after clamp.
        let c = ceiling(config, attempts, false);
        return Ok(AwsDecision {
            wait_ms: Some(wait(c, draw(f.random)?, retry_after)),
            ceiling_ms: Some(c),
            retry_after_ms: retry_after,
            ..refused
        });
    }
    let c = ceiling(config, attempts, base.throttling);
    Ok(AwsDecision {
        action: AwsAction::Retry,
        delay_ms: Some(wait(c, draw(f.random)?, retry_after)),
        ceiling_ms: Some(c),
        retry_after_ms: retry_after,
        rule,
        section,
        ..base
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_as_python_int_reads_it() {
        // botocore: int(retry_after_ms) / 1000.0, a negative value or a ValueError is ignored.
        assert_eq!(parse_amz_retry_after("1500"), Some(1500));
        assert_eq!(parse_amz_retry_after(" +7\t"), Some(7));
        assert_eq!(parse_amz_retry_after("-0"), Some(0));
        assert_eq!(parse_amz_retry_after("-5"), None);
        assert_eq!(parse_amz_retry_after("invalid"), None);
        assert_eq!(parse_amz_retry_after("1.5"), None);
        assert_eq!(parse_amz_retry_after(""), None);
        assert_eq!(
            parse_amz_retry_after("99999999999999999999999"),
            Some(i64::MAX as u64)
        );
        assert_eq!(
            parse_amz_retry_after("9223372036854775808"),
            Some(i64::MAX as u64)
        );
        assert_eq!(
            parse_amz_retry_after("9223372036854775807"),
            Some(i64::MAX as u64)
        );
        assert_eq!(
            parse_amz_retry_after("9223372036854775806"),
            Some(i64::MAX as u64 - 1)
        );
    }

    #[test]
    fn the_wait_clamps_a_retry_after_around_the_backoff() {
        // aws-sdk-go-v2 retry2026_test.go with its draw of 1 (so t is the ceiling, 50 ms):
        // "1500" -> 1500 ms, "0" -> 50 ms, "10000" -> 5050 ms.
        let r = 0.999_999_999_999;
        assert_eq!(wait(50, r, Some(1500)), 1500);
        assert_eq!(wait(50, r, Some(0)), 49);
        assert_eq!(wait(50, r, Some(10_000)), 5049);
        assert_eq!(wait(50, 0.0, Some(10_000)), 5000);
        // No overflow at the edge: the retry-after only moves the wait later.
        assert!(wait(u64::MAX, r, Some(u64::MAX)) >= wait(u64::MAX, r, None));
    }
}
