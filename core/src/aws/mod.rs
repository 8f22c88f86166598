//! The AWS SDKs' retry modes, pure: `standard` (and `adaptive`, whose retry decisions are
//! standard's), botocore's `legacy`, and `adaptive`'s client-side rate limiter
//! ([`AdaptiveRateLimiter`]). Sources: the AWS SDKs and Tools Reference Guide, "Retry behavior";
//! boto/botocore `botocore/retries/standard.py`, `special.py`, `adaptive.py`, `bucket.py`,
//! `throttling.py`, `botocore/retryhandler.py` and `botocore/data/_retry.json`; aws/aws-sdk-go-v2
//! `aws/retry/standard.go`, `retryable_error.go`, `jitter_backoff.go`, `adaptive_ratelimit.go`.
//!
//! One call per failed attempt ([`aws_decide`]): the host names what the attempt produced
//! ([`AwsError`]: the AWS error code, the HTTP status, a connection error or timeout, the modeled
//! error shape's retryable trait, the `x-amz-retry-after` header), how many attempts were made,
//! and its random draw; the answer is retry (after `delay_ms`) or not, with the rule and its
//! source. The retry quota is the core's [`crate::RetryBudget`] (`retry_quota`): the decision
//! names the cause a retry is charged for (`cause`), the host asks the quota
//! ([`crate::RetryBudget::try_retry`]) and passes its verdict back, as [`crate::http_next_with_budget`]
//! takes one; a refused retry becomes a no-retry with the quota's rule.
//!
//! Two behaviours of standard mode (`behavior`): `classic`, the default, and `2026`, the SDKs'
//! updated standard mode (`AWS_NEW_RETRIES_2026`; the SDKs' default from November 2026: botocore
//! `NEW_RETRIES_ENABLED`, aws-sdk-go-v2 `retries2026`). Classic stays the default, as the retry
//! quota's `classic` cost table does (`budget::retry_quota`), so a document keeps its meaning:
//! - classic: `floor(r × min(1 s × 2^i, MAX_BACKOFF))`, `i` the failed attempt's number from 0,
//!   `MAX_BACKOFF` 20 s (botocore `ExponentialBackoff`: `rand * min(2 ** (attempt - 1), 20)`);
//! - 2026: the base is 1 s after a throttling error, 25 ms for `dynamodb` and `dynamodb-streams`,
//!   50 ms otherwise; `MAX_BACKOFF` applies before the jitter; a valid `x-amz-retry-after`
//!   (milliseconds) replaces the delay, clamped to `[t, t + 5 s]` around the jittered backoff `t`;
//!   `dynamodb` and `dynamodb-streams` default to 4 attempts; a long-polling operation whose
//!   retry the quota refuses still waits the backoff before it returns.
//!
//! ```
//! use retrypolicy::aws::{aws_decide, AwsError, AwsRetryConfig};
//!
//! let error = AwsError { status: Some(503), ..AwsError::default() };
//! let d = aws_decide(&AwsRetryConfig::default(), 1, &error, Some(0.5), None).unwrap();
//! // The first retry: at most 1 s in classic standard mode, half of it with the draw 0.5.
//! assert_eq!((d.rule, d.ceiling_ms, d.delay_ms), ("transient_status", Some(1_000), Some(500)));
//! ```

mod adaptive;
mod legacy;
mod standard;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use crate::backoff::check_draw;
use crate::budget::{is_aws_throttling_error, BudgetVerdict, RetryCause};
use crate::error::{join_field as join, Error};

pub use adaptive::{
    AcquireVerdict, AdaptiveRateLimiter, RateLimiterConfig, RateLimiterDocument, RateLimiterSnapshot,
    RateUpdate, ADAPTIVE_SECTION, RATE_LIMITER_VERSION,
};
pub use legacy::{LegacyPolicy, LEGACY_SECTION, LEGACY_SERVICE_RULES};
pub use standard::{
    parse_amz_retry_after, MAX_ATTEMPTS_SECTION, STANDARD_SECTION, TRANSIENT_ERROR_CODES,
    TRANSIENT_STATUS_CODES,
};

/// The AWS retry document version this release reads and writes.
pub const AWS_RETRY_VERSION: u64 = 1;

/// The SDKs' retry modes, as named in their `retry_mode` setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AwsMode {
    /// Standard mode: 3 attempts, the SDKs' error lists, a retry quota.
    #[default]
    Standard,
    /// Adaptive mode: standard's retry decisions plus a client-side rate limiter
    /// ([`AdaptiveRateLimiter`]), which the host asks before each attempt.
    Adaptive,
    /// botocore's legacy mode (`botocore/data/_retry.json`): 5 attempts, no quota.
    Legacy,
}

impl AwsMode {
    /// The stable snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            AwsMode::Standard => "standard",
            AwsMode::Adaptive => "adaptive",
            AwsMode::Legacy => "legacy",
        }
    }
}

/// Standard mode's behaviour: the classic timing or the SDKs' 2026 update.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum AwsBehavior {
    /// `rand × min(1 s × 2^i, 20 s)`, 3 attempts for every service.
    #[default]
    #[serde(rename = "classic")]
    Classic,
    /// `AWS_NEW_RETRIES_2026`: 50 ms base (1 s after throttling, 25 ms for DynamoDB),
    /// `x-amz-retry-after`, DynamoDB's 4 attempts, long-polling backoff.
    #[serde(rename = "2026")]
    Retries2026,
}

/// The retryable trait of a modeled error shape (Smithy `@retryable`, botocore's shape
/// `retryable` metadata).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RetryableTrait {
    /// `retryable: {}`: a retryable (transient) error.
    Transient,
    /// `retryable: {throttling: true}`: a retryable throttling error.
    Throttling,
}

/// An AWS retry document as JSON holds it: `{"version": 1, "mode": "standard", "behavior":
/// "classic", "max_attempts": 3, "service": "dynamodb", "max_backoff_ms": 20000, "long_polling":
/// false}`; every field may be left out (or null) and takes the SDKs' default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AwsRetryDocument {
    /// Document version; only 1 is read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    /// `standard` (default), `adaptive` or `legacy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<AwsMode>,
    /// Standard and adaptive: `classic` (default) or `2026`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behavior: Option<AwsBehavior>,
    /// Attempts in all, the first included (`total_max_attempts`); default 3 (4 for `dynamodb`
    /// and `dynamodb-streams` with `2026`), legacy 5 (10 for `dynamodb`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_attempts: Option<u64>,
    /// The service, as the SDK names it (standard: the service id, hyphenized, such as
    /// `dynamodb`, `sts`, `sqs`; legacy: the endpoint prefix such as `ec2`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    /// Standard and adaptive: the longest backoff (`MAX_BACKOFF`, default 20000 ms).
    #[serde(
        default,
        with = "crate::serde_form::ms::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_backoff_ms: Option<u64>,
    /// Standard and adaptive: the operation long-polls (SQS `ReceiveMessage`, Step Functions
    /// `GetActivityTask`, SWF `PollForActivityTask` and `PollForDecisionTask`): with `2026`, a
    /// retry the quota refuses still waits the backoff.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub long_polling: Option<bool>,
}

/// A checked AWS retry configuration, every parameter set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AwsRetryConfig {
    /// The mode.
    pub mode: AwsMode,
    /// Standard mode's behaviour (legacy: classic, unused).
    pub behavior: AwsBehavior,
    /// Attempts in all, the first included; at least 1.
    pub max_attempts: u32,
    /// The service, if named.
    pub service: Option<String>,
    /// The longest backoff before jitter (standard and adaptive).
    pub max_backoff_ms: u64,
    /// The operation long-polls (standard and adaptive).
    pub long_polling: bool,
}

/// botocore `DEFAULT_MAX_ATTEMPTS`, aws-sdk-go-v2 `DefaultMaxAttempts`.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;
/// botocore `_SERVICE_MAX_ATTEMPTS` (with `AWS_NEW_RETRIES_2026`): `dynamodb`, `dynamodb-streams`.
pub const DYNAMODB_MAX_ATTEMPTS_2026: u32 = 4;
/// botocore `ExponentialBackoff._MAX_BACKOFF`, aws-sdk-go-v2 `DefaultMaxBackoff`: 20 s.
pub const DEFAULT_MAX_BACKOFF_MS: u64 = 20_000;
/// botocore `data/_retry.json` `__default__.max_attempts`.
pub const LEGACY_MAX_ATTEMPTS: u32 = 5;
/// botocore `data/_retry.json` `dynamodb.__default__.max_attempts`.
pub const LEGACY_DYNAMODB_MAX_ATTEMPTS: u32 = 10;

const MAX_ATTEMPTS_EXPECTED: &str = "1..=4294967295";

impl Default for AwsRetryConfig {
    /// Standard mode, classic: 3 attempts, 20 s `MAX_BACKOFF`, no service.
    fn default() -> Self {
        AwsRetryConfig {
            mode: AwsMode::Standard,
            behavior: AwsBehavior::Classic,
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            service: None,
            max_backoff_ms: DEFAULT_MAX_BACKOFF_MS,
            long_polling: false,
        }
    }
}

/// Whether `service` is DynamoDB for the 2026 behaviour (botocore `_SERVICE_MAX_ATTEMPTS`,
/// `_SERVICE_BACKOFF_CONFIG`).
fn is_dynamodb_2026(service: Option<&str>) -> bool {
    matches!(service, Some("dynamodb" | "dynamodb-streams"))
}

impl AwsRetryConfig {
    /// Checks `doc` (found at `field`, e.g. `config`) and fills in its mode's defaults; a field
    /// legacy mode does not have is `unknown_field`, a value out of range `out_of_range`.
    pub fn from_document(doc: &AwsRetryDocument, field: &str) -> Result<AwsRetryConfig, Error> {
        match doc.version {
            None | Some(AWS_RETRY_VERSION) => {}
            Some(v) => return Err(Error::UnsupportedVersion { value: v.to_string() }),
        }
        let mode = doc.mode.unwrap_or_default();
        let service = doc.service.clone();
        if mode == AwsMode::Legacy {
            for (name, set) in [
                ("behavior", doc.behavior.is_some()),
                ("max_backoff_ms", doc.max_backoff_ms.is_some()),
                ("long_polling", doc.long_polling.is_some()),
            ] {
                if set {
                    return Err(Error::UnknownField {
                        field: join(field, name),
                    });
                }
            }
        }
        let behavior = doc.behavior.unwrap_or_default();
        let default_attempts = match mode {
            AwsMode::Legacy if service.as_deref() == Some("dynamodb") => LEGACY_DYNAMODB_MAX_ATTEMPTS,
            AwsMode::Legacy => LEGACY_MAX_ATTEMPTS,
            _ if behavior == AwsBehavior::Retries2026 && is_dynamodb_2026(service.as_deref()) => {
                DYNAMODB_MAX_ATTEMPTS_2026
            }
            _ => DEFAULT_MAX_ATTEMPTS,
        };
        let max_attempts = match doc.max_attempts {
            None => default_attempts,
            Some(n) => u32::try_from(n)
                .ok()
                .filter(|n| *n >= 1)
                .ok_or_else(|| Error::OutOfRange {
                    field: join(field, "max_attempts"),
                    value: n.to_string(),
                    expected: MAX_ATTEMPTS_EXPECTED.to_owned(),
                })?,
        };
        Ok(AwsRetryConfig {
            mode,
            behavior,
            max_attempts,
            service,
            max_backoff_ms: doc.max_backoff_ms.unwrap_or(DEFAULT_MAX_BACKOFF_MS),
            long_polling: doc.long_polling.unwrap_or(false),
        })
    }

    /// The normalized document: version 1, every field of the mode set (`service` when named).
    pub fn to_document(&self) -> AwsRetryDocument {
        let standard = self.mode != AwsMode::Legacy;
        AwsRetryDocument {
            version: Some(AWS_RETRY_VERSION),
            mode: Some(self.mode),
            behavior: standard.then_some(self.behavior),
            max_attempts: Some(u64::from(self.max_attempts)),
            service: self.service.clone(),
            max_backoff_ms: standard.then_some(self.max_backoff_ms),
            long_polling: standard.then_some(self.long_polling),
        }
    }
}

/// What a failed attempt produced, as the host read it: a response (`status`, and the AWS error
/// `code` its body named, if any) or no response (`connection_error`, `timeout`), never both.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AwsError {
    /// The AWS error code (`Error.Code`, `__type`), compared exactly as the SDKs compare it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The HTTP status, 100..=599.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// No response: the connection failed, was refused, reset or closed (botocore
    /// `ConnectionError`, `HTTPClientError`; aws-sdk-go-v2 `RetryableConnectionError`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection_error: Option<bool>,
    /// No response: the attempt timed out connecting or reading (botocore `ConnectTimeoutError`,
    /// `ReadTimeoutError`): retryable as a connection error; the classic quota charges it more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<bool>,
    /// The modeled error shape's retryable trait, when the operation models this error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retryable_trait: Option<RetryableTrait>,
    /// The `x-amz-retry-after` header (milliseconds), as received; read by the 2026 behaviour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<String>,
    /// DynamoDB: the body's CRC32 did not match `x-amz-crc32` (botocore `RetryDDBChecksumError`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crc32_mismatch: Option<bool>,
}

impl AwsError {
    /// Whether the attempt got no response (a connection error or a timeout).
    pub fn no_response(&self) -> bool {
        self.connection_error == Some(true) || self.timeout == Some(true)
    }

    /// Whether this is a throttling error: a code of [`crate::AWS_THROTTLING_ERROR_CODES`],
    /// status 429, or a modeled error whose retryable trait says throttling.
    pub fn is_throttling(&self) -> bool {
        is_aws_throttling_error(self.code.as_deref(), self.status)
            || self.retryable_trait == Some(RetryableTrait::Throttling)
    }

    /// What a retry of this error costs the quota for: a throttling error, a timeout, or any
    /// other error.
    pub fn cause(&self) -> RetryCause {
        if self.is_throttling() {
            RetryCause::Throttling
        } else if self.timeout == Some(true) {
            RetryCause::Timeout
        } else {
            RetryCause::Error
        }
    }

    /// Checks the status's range and that a response and a missing response are not both given.
    pub fn validate(&self, field: &str) -> Result<(), Error> {
        if let Some(s) = self.status.filter(|s| !(100..=599).contains(s)) {
            return Err(Error::OutOfRange {
                field: join(field, "status"),
                value: s.to_string(),
                expected: "an HTTP status in 100..=599".to_owned(),
            });
        }
        if self.no_response() {
            let response_fields = [
                ("code", self.code.is_some()),
                ("status", self.status.is_some()),
                ("retryable_trait", self.retryable_trait.is_some()),
                ("retry_after", self.retry_after.is_some()),
                ("crc32_mismatch", self.crc32_mismatch.is_some()),
            ];
            if let Some((name, _)) = response_fields.iter().find(|(_, set)| *set) {
                return Err(Error::InvalidType {
                    field: join(field, name),
                    message: "a response's field beside connection_error or timeout: give either \
                              the response or the failure to get one"
                        .to_owned(),
                });
            }
        }
        if self.retryable_trait.is_some() && self.code.is_none() {
            // botocore's ModeledRetryableChecker matches the shape by the error code.
            return Err(Error::MissingField {
                field: join(field, "code"),
            });
        }
        Ok(())
    }
}

/// Retry or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AwsAction {
    /// Send the request again after `delay_ms`.
    Retry,
    /// Return the error (after `wait_ms` when that is set).
    NoRetry,
}

/// The answer for one failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct AwsDecision {
    /// Retry or not.
    pub action: AwsAction,
    /// The wait before the retry; null when not retrying.
    #[serde(with = "crate::serde_form::ms::option")]
    pub delay_ms: Option<u64>,
    /// The wait before returning the error without a retry: a long-polling operation whose retry
    /// the quota refused (2026 behaviour); else null.
    #[serde(with = "crate::serde_form::ms::option")]
    pub wait_ms: Option<u64>,
    /// The bound the jitter drew `delay_ms` (or `wait_ms`) under: `min(base × 2^i, MAX_BACKOFF)`
    /// (legacy: `base × 2^i`, uncapped); null when no wait was computed.
    #[serde(with = "crate::serde_form::ms::option")]
    pub ceiling_ms: Option<u64>,
    /// A valid `x-amz-retry-after`, in ms, when the 2026 behaviour read one; else null.
    #[serde(with = "crate::serde_form::ms::option")]
    pub retry_after_ms: Option<u64>,
    /// Whether the error is retryable at all (attempts and quota aside).
    pub retryable: bool,
    /// Whether the error is a throttling error (an adaptive-mode limiter records it as one).
    pub throttling: bool,
    /// What a retry is charged for in the quota (`error`, `timeout`, `throttling`); null when the
    /// error is not retryable.
    pub cause: Option<RetryCause>,
    /// Attempts made, the failed one included.
    pub attempts: u32,
    /// The configuration's attempt limit.
    pub max_attempts: u32,
    /// The stable name of the rule that decided.
    pub rule: &'static str,
    /// Its source.
    pub section: &'static str,
}

impl AwsDecision {
    /// A no-retry of `rule`, nothing to wait.
    pub(crate) fn stop(self, rule: &'static str, section: &'static str) -> AwsDecision {
        AwsDecision {
            action: AwsAction::NoRetry,
            delay_ms: None,
            wait_ms: None,
            ceiling_ms: None,
            retry_after_ms: None,
            rule,
            section,
            ..self
        }
    }
}

/// The decision after a failed attempt: `attempts` made (the failed one included, at least 1),
/// `error` what it produced, `random` the caller's draw in `[0, 1)` (needed when a jittered wait
/// is computed), `verdict` the retry quota's answer for this retry (asked with the decision's
/// `cause` when it says retry; a refusal turns the retry into a no-retry with the quota's rule and
/// source, and, 2026 and long-polling, a `wait_ms`). Errors name the input's fields (`attempts`,
/// `error.status`, `random`).
pub fn aws_decide(
    config: &AwsRetryConfig,
    attempts: u32,
    error: &AwsError,
    random: Option<f64>,
    verdict: Option<&BudgetVerdict>,
) -> Result<AwsDecision, Error> {
    if attempts == 0 {
        return Err(Error::OutOfRange {
            field: "attempts".to_owned(),
            value: "0".to_owned(),
            expected: "at least 1: the attempt that just failed".to_owned(),
        });
    }
    error.validate("error")?;
    let random = random.map(|r| check_draw("random", r)).transpose()?;
    let failed = Failed {
        config,
        attempts,
        error,
        random,
        refused: verdict.filter(|v| !v.permitted),
    };
    match config.mode {
        AwsMode::Legacy => legacy::decide(&failed),
        AwsMode::Standard | AwsMode::Adaptive => standard::decide(&failed),
    }
}

/// One failed attempt as a mode decides it: `aws_decide`'s arguments, checked.
struct Failed<'a> {
    config: &'a AwsRetryConfig,
    attempts: u32,
    error: &'a AwsError,
    random: Option<f64>,
    /// The quota's verdict when it refused the retry.
    refused: Option<&'a BudgetVerdict>,
}

impl Failed<'_> {
    /// The no-retry of rule `not_retryable` (from `section`), saying what the error is; the
    /// modes build their other answers from it.
    fn not_retryable(&self, retryable: bool, section: &'static str) -> AwsDecision {
        AwsDecision {
            action: AwsAction::NoRetry,
            delay_ms: None,
            wait_ms: None,
            ceiling_ms: None,
            retry_after_ms: None,
            retryable,
            throttling: self.error.is_throttling(),
            cause: retryable.then(|| self.error.cause()),
            attempts: self.attempts,
            max_attempts: self.config.max_attempts,
            rule: "not_retryable",
            section,
        }
    }
}

/// `base × 2^(attempts − 1)` ms, saturating, at most `cap`.
fn exponential(base: u64, attempts: u32, cap: u64) -> u64 {
    let n = attempts - 1;
    match base.checked_shl(n) {
        Some(d) if n < 64 && d >> n == base => d.min(cap),
        _ => cap,
    }
}

/// The caller's draw, required for a jittered wait.
fn draw(random: Option<f64>) -> Result<f64, Error> {
    random.ok_or_else(|| Error::MissingField {
        field: "random".to_owned(),
    })
}
