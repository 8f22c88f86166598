//! botocore's legacy retry mode (`retry_mode = legacy`, botocore's default unless
//! `AWS_NEW_RETRIES_2026` makes standard the default): the policies of `botocore/data/_retry.json`
//! as `botocore/retryhandler.py` applies them. Five attempts (DynamoDB ten), a delay of
//! `rand × 2^(attempts − 1)` seconds with no cap (DynamoDB `50 ms × 2^(attempts − 1)`, no jitter),
//! no retry quota. Other SDKs' "legacy" modes differ (the Java SDK v2's has its own delays) and
//! are not this one.

use super::*;
use crate::backoff::{apply_jitter, Jitter};

/// The source of every legacy rule.
pub const LEGACY_SECTION: &str = "botocore data/_retry.json and retryhandler.py (legacy mode: \
     max_attempts 5, delay rand × 2^(attempts − 1) s; dynamodb 10 attempts, 0.05 × 2^(attempts − 1) s)";

/// One legacy policy: what a response (or its absence) must show to be retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LegacyPolicy {
    /// A response with this status (`HTTPStatusCodeChecker`).
    Status(u16),
    /// A response with this status and this error code (`ServiceErrorCodeChecker`).
    Code(u16, &'static str),
    /// No response: a connection error or a read timeout (`GENERAL_CONNECTION_ERROR`).
    Socket,
    /// DynamoDB's `x-amz-crc32` did not match the body (`CRC32Checker`).
    Crc32,
}

/// `_retry.json`'s `__default__` policies, in its order.
const DEFAULT_POLICIES: [LegacyPolicy; 12] = [
    LegacyPolicy::Socket,
    LegacyPolicy::Status(500),
    LegacyPolicy::Status(502),
    LegacyPolicy::Status(503),
    LegacyPolicy::Status(504),
    LegacyPolicy::Status(509),
    LegacyPolicy::Code(400, "ThrottlingException"),
    LegacyPolicy::Code(400, "ThrottledException"),
    LegacyPolicy::Code(400, "RequestThrottledException"),
    LegacyPolicy::Code(400, "Throttling"),
    LegacyPolicy::Status(429),
    LegacyPolicy::Code(400, "ProvisionedThroughputExceededException"),
];

/// `_retry.json`'s per-service policies, added to the defaults (by endpoint prefix).
pub const LEGACY_SERVICE_RULES: [(&str, &[LegacyPolicy]); 10] = [
    (
        "organizations",
        &[LegacyPolicy::Code(400, "TooManyRequestsException")],
    ),
    (
        "dynamodb",
        &[
            LegacyPolicy::Code(409, "ReplicatedWriteConflictException"),
            LegacyPolicy::Code(400, "TransactionInProgressException"),
            LegacyPolicy::Crc32,
        ],
    ),
    (
        "ec2",
        &[
            LegacyPolicy::Code(503, "RequestLimitExceeded"),
            LegacyPolicy::Code(503, "EC2ThrottledException"),
        ],
    ),
    (
        "cloudsearch",
        &[LegacyPolicy::Code(509, "BandwidthLimitExceeded")],
    ),
    ("kinesis", &[LegacyPolicy::Code(400, "LimitExceededException")]),
    ("sqs", &[LegacyPolicy::Code(403, "RequestThrottled")]),
    (
        "s3",
        &[
            LegacyPolicy::Code(400, "RequestTimeout"),
            LegacyPolicy::Code(400, "BadDigest"),
        ],
    ),
    ("glacier", &[LegacyPolicy::Code(408, "RequestTimeoutException")]),
    (
        "route53",
        &[
            LegacyPolicy::Code(400, "Throttling"),
            LegacyPolicy::Code(400, "PriorRequestNotComplete"),
        ],
    ),
    ("sts", &[LegacyPolicy::Code(400, "IDPCommunicationError")]),
];

impl LegacyPolicy {
    /// Whether `error` meets this policy, and the rule's name.
    fn matches(self, error: &AwsError) -> Option<&'static str> {
        match self {
            LegacyPolicy::Socket => error.no_response().then_some("legacy_socket_error"),
            LegacyPolicy::Status(s) => (error.status == Some(s)).then_some("legacy_status"),
            LegacyPolicy::Code(s, c) => {
                (error.status == Some(s) && error.code.as_deref() == Some(c)).then_some("legacy_error_code")
            }
            LegacyPolicy::Crc32 => (error.crc32_mismatch == Some(true)).then_some("legacy_crc32_mismatch"),
        }
    }
}

pub(super) fn decide(f: &Failed) -> Result<AwsDecision, Error> {
    let (config, attempts, error) = (f.config, f.attempts, f.error);
    let service = config.service.as_deref();
    let service_policies = LEGACY_SERVICE_RULES
        .iter()
        .find(|(name, _)| Some(*name) == service)
        .map_or(&[][..], |(_, p)| *p);
    let rule = DEFAULT_POLICIES
        .iter()
        .chain(service_policies)
        .find_map(|p| p.matches(error));
    let base = f.not_retryable(rule.is_some(), LEGACY_SECTION);
    let Some(rule) = rule else {
        return Ok(base);
    };
    // retryhandler.py MaxAttemptsDecorator: `attempt_number >= max_attempts` stops.
    if attempts >= config.max_attempts {
        return Ok(base.stop("max_attempts_reached", LEGACY_SECTION));
    }
    // Legacy mode has no quota; a host that keeps a budget beside it may still pass its verdict.
    if let Some(v) = f.refused {
        return Ok(base.stop(v.rule.name(), v.source));
    }
    // delay_exponential(base, growth_factor 2, attempts): DynamoDB's base is 0.05 s, everyone
    // else's 'rand'; neither is capped.
    let (ceiling, delay) = if service == Some("dynamodb") {
        let d = exponential(50, attempts, u64::MAX);
        (d, d)
    } else {
        let c = exponential(1_000, attempts, u64::MAX);
        let r = draw(f.random)?;
        (c, apply_jitter(Jitter::Full, c, r, None, (0, c)))
    };
    Ok(AwsDecision {
        action: AwsAction::Retry,
        delay_ms: Some(delay),
        ceiling_ms: Some(ceiling),
        rule,
        section: LEGACY_SECTION,
        ..base
    })
}
