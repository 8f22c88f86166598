//! The JSON forms of a budget: the versioned document that configures it ([`BudgetDocument`],
//! checked into a [`BudgetConfig`]) and the snapshot of its state ([`BudgetSnapshot`]). Every
//! refusal is a typed error naming the field.

use serde::{Deserialize, Serialize};

use super::percentage::{PercentageConfig, PercentageState};
use super::retry_quota::{RetryQuotaConfig, RetryQuotaState};
use super::token_bucket::{TokenBucketConfig, TokenBucketState, MILLI};
use super::{BudgetKind, Kind, RetryBudget};
use crate::error::{join_field as join, Error};
use crate::serde_form::ms::MAX_SAFE;

/// The budget document version this release reads and writes.
pub const BUDGET_VERSION: u64 = 1;

/// A budget document as JSON holds it: `{"version": 1, "kind": "token_bucket", "max_tokens": 10,
/// "token_ratio": 0.1}`, `{"version": 1, "kind": "retry_quota", "capacity": 500, "retry_cost": 5,
/// "timeout_cost": 10, "no_retry_increment": 1}`, `{"version": 1, "kind": "percentage",
/// "percent": 20, "ttl_ms": 10000, "min_retries_per_sec": 10}`. Every field but `kind` may be
/// left out (or null) and takes its source's default; `version` left out means 1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetDocument {
    /// Document version; only 1 is read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    /// Which budget.
    pub kind: BudgetKind,
    /// Token bucket: `maxTokens`, required as gRPC requires it, in (0, 1000] (grpc-go's range),
    /// read to the thousandth (further digits dropped, as grpc-java and grpc core do).
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "number")]
    pub max_tokens: Option<f64>,
    /// Token bucket: `tokenRatio`, required, greater than 0 (at most 1000 here), read to the
    /// thousandth (gRFC A6: "Up to 3 decimal places are supported"; further digits dropped).
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "number")]
    pub token_ratio: Option<f64>,
    /// Token bucket: fill a missing `max_tokens` / `token_ratio` with gRFC A6's example values
    /// (10, 0.1) instead of refusing the document as gRPC refuses such a service config.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lenient: Option<bool>,
    /// Retry quota: the pool's size (AWS: 500).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<u64>,
    /// Retry quota: tokens per retry (AWS: 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_cost: Option<u64>,
    /// Retry quota: tokens per retry of a timeout (AWS: 10; 14 with the 2026 costs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_cost: Option<u64>,
    /// Retry quota: tokens per retry of a throttling error (AWS: 5, classic and 2026).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttling_cost: Option<u64>,
    /// Retry quota: the cost table the fields left out take, `classic` (default: 5, 10 after a
    /// timeout, 5 after throttling) or `2026` (the SDKs' updated standard mode: 14, 14, 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub costs: Option<RetryQuotaCosts>,
    /// Retry quota: tokens a success without a retry adds (AWS: 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_retry_increment: Option<u64>,
    /// Percentage: retries per 100 requests of the window, in [0, 100000] (Finagle: 20).
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "number")]
    pub percent: Option<f64>,
    /// Percentage: the window, whole seconds from 1000 to 60000 ms (Finagle: 10000).
    #[serde(
        default,
        with = "crate::serde_form::ms::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub ttl_ms: Option<u64>,
    /// Percentage: the floor, retries per second (Finagle: 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_retries_per_sec: Option<u64>,
}

/// A retry quota's cost table: which defaults its cost fields take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RetryQuotaCosts {
    /// aws-sdk-go-v2 `aws/retry/standard.go`: retry 5, timeout 10 (throttling as any error, 5).
    #[serde(rename = "classic")]
    Classic,
    /// The SDKs' standard mode from November 2026 (`AWS_NEW_RETRIES_2026`: aws-sdk-go-v2 PR 3400,
    /// aws-cli PR 10342): retry 14, throttling 5, a timeout as any error (14).
    #[serde(rename = "2026")]
    Standard2026,
}

/// Writes a whole number as an integer (`10`, not `10.0`), as every language's JSON does.
fn number<S: serde::Serializer>(x: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match *x {
        Some(v) if v.fract() == 0.0 && v.abs() <= MAX_SAFE as f64 => s.serialize_i64(v as i64),
        Some(v) => s.serialize_f64(v),
        None => s.serialize_none(),
    }
}

/// A checked budget configuration, one kind with every parameter set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BudgetConfig {
    /// gRPC's token bucket.
    TokenBucket(TokenBucketConfig),
    /// The AWS retry quota.
    RetryQuota(RetryQuotaConfig),
    /// Finagle's percentage.
    Percentage(PercentageConfig),
}

/// gRFC A6's example (gRPC itself has no default: throttling is off unless configured).
pub const DEFAULT_MAX_TOKENS: f64 = 10.0;
/// gRFC A6's example ratio.
pub const DEFAULT_TOKEN_RATIO: f64 = 0.1;
/// aws-sdk-go-v2 `DefaultRetryRateTokens`.
pub const DEFAULT_CAPACITY: u64 = 500;
/// aws-sdk-go-v2 `DefaultRetryCost`.
pub const DEFAULT_RETRY_COST: u64 = 5;
/// aws-sdk-go-v2 `DefaultRetryTimeoutCost`.
pub const DEFAULT_TIMEOUT_COST: u64 = 10;
/// The 2026 standard mode's retry cost (aws-sdk-go-v2 PR 3400: "increases from 5 to 14 tokens").
pub const RETRY_COST_2026: u64 = 14;
/// The 2026 standard mode's cost of a retry of a throttling error ("a discounted cost of 5").
pub const THROTTLING_COST_2026: u64 = 5;
/// aws-sdk-go-v2 `DefaultNoRetryIncrement`.
pub const DEFAULT_NO_RETRY_INCREMENT: u64 = 1;
/// Finagle `RetryBudget()`: percentCanRetry 0.2.
pub const DEFAULT_PERCENT: f64 = 20.0;
/// Finagle `RetryBudget()`: ttl 10 seconds.
pub const DEFAULT_TTL_MS: u64 = 10_000;
/// Finagle `RetryBudget()`: minRetriesPerSec 10.
pub const DEFAULT_MIN_RETRIES_PER_SEC: u64 = 10;

const TOKENS_EXPECTED: &str =
    "a number of at least 0.001 and at most 1000 (read to the thousandth, further digits dropped)";
const COUNT_EXPECTED: &str = "0..=9007199254740991";
const PERCENT_EXPECTED: &str = "a number from 0 to 100000";
const TTL_EXPECTED: &str = "whole seconds from 1000 to 60000 ms";
const MIN_RETRIES_EXPECTED: &str = "0..=4294967295";

fn out_of_range(field: String, value: impl ToString, expected: &str) -> Error {
    Error::OutOfRange {
        field,
        value: value.to_string(),
        expected: expected.to_owned(),
    }
}

fn check_version(version: Option<u64>) -> Result<(), Error> {
    match version {
        None | Some(BUDGET_VERSION) => Ok(()),
        Some(v) => Err(Error::UnsupportedVersion { value: v.to_string() }),
    }
}

/// Thousandths of `x` for a token field, digits past the third dropped as grpc core drops them
/// (it reads the decimal text) and grpc-java truncates; a value within 10^-6 of a whole number of
/// thousandths is that number (0.29 is 290 thousandths, though 0.29 × 1000 is 289.99... in binary);
/// or the error naming it.
fn milli(prefix: &str, name: &str, x: f64) -> Result<u64, Error> {
    let scaled = x * MILLI as f64;
    let m = if (scaled - scaled.round()).abs() < 1e-6 {
        scaled.round()
    } else {
        scaled.floor()
    };
    if x.is_finite() && x > 0.0 && x <= 1000.0 && m >= 1.0 {
        Ok(m as u64)
    } else {
        Err(out_of_range(
            join(prefix, name),
            crate::units::number_text(x),
            TOKENS_EXPECTED,
        ))
    }
}

fn count(prefix: &str, name: &str, v: Option<u64>, default: u64) -> Result<u64, Error> {
    match v.unwrap_or(default) {
        n if n <= MAX_SAFE => Ok(n),
        n => Err(out_of_range(join(prefix, name), n, COUNT_EXPECTED)),
    }
}

impl BudgetDocument {
    /// The fields that belong to each kind, with whether this document sets them.
    fn fields(&self) -> [(&'static str, BudgetKind, bool); 12] {
        use BudgetKind::*;
        [
            ("max_tokens", TokenBucket, self.max_tokens.is_some()),
            ("token_ratio", TokenBucket, self.token_ratio.is_some()),
            ("lenient", TokenBucket, self.lenient.is_some()),
            ("capacity", RetryQuota, self.capacity.is_some()),
            ("retry_cost", RetryQuota, self.retry_cost.is_some()),
            ("timeout_cost", RetryQuota, self.timeout_cost.is_some()),
            ("throttling_cost", RetryQuota, self.throttling_cost.is_some()),
            ("costs", RetryQuota, self.costs.is_some()),
            (
                "no_retry_increment",
                RetryQuota,
                self.no_retry_increment.is_some(),
            ),
            ("percent", Percentage, self.percent.is_some()),
            ("ttl_ms", Percentage, self.ttl_ms.is_some()),
            (
                "min_retries_per_sec",
                Percentage,
                self.min_retries_per_sec.is_some(),
            ),
        ]
    }
}

impl BudgetConfig {
    /// Checks `doc` (found at `field`, e.g. `budget`) and fills in its kind's defaults; a field of
    /// another kind is `unknown_field`, a value out of its range `out_of_range`, both naming it.
    pub fn from_document(doc: &BudgetDocument, field: &str) -> Result<BudgetConfig, Error> {
        check_version(doc.version)?;
        if let Some((name, _, _)) = doc
            .fields()
            .iter()
            .find(|(_, kind, set)| *set && *kind != doc.kind)
        {
            return Err(Error::UnknownField {
                field: join(field, name),
            });
        }
        Ok(match doc.kind {
            BudgetKind::TokenBucket => {
                // gRPC refuses a retryThrottling without maxTokens or tokenRatio (grpc-go
                // service_config.go, grpc-java ServiceConfigUtil, grpc core
                // retry_service_config.cc); `lenient` fills gRFC A6's example values instead.
                let required = |name: &str, v: Option<f64>, example: f64| match v {
                    Some(v) => Ok(v),
                    None if doc.lenient == Some(true) => Ok(example),
                    None => Err(Error::MissingField {
                        field: join(field, name),
                    }),
                };
                BudgetConfig::TokenBucket(TokenBucketConfig {
                    max_milli_tokens: milli(
                        field,
                        "max_tokens",
                        required("max_tokens", doc.max_tokens, DEFAULT_MAX_TOKENS)?,
                    )?,
                    milli_token_ratio: milli(
                        field,
                        "token_ratio",
                        required("token_ratio", doc.token_ratio, DEFAULT_TOKEN_RATIO)?,
                    )?,
                })
            }
            BudgetKind::RetryQuota => {
                let (retry, timeout, throttling) = match doc.costs.unwrap_or(RetryQuotaCosts::Classic) {
                    RetryQuotaCosts::Classic => {
                        (DEFAULT_RETRY_COST, DEFAULT_TIMEOUT_COST, DEFAULT_RETRY_COST)
                    }
                    RetryQuotaCosts::Standard2026 => (RETRY_COST_2026, RETRY_COST_2026, THROTTLING_COST_2026),
                };
                BudgetConfig::RetryQuota(RetryQuotaConfig {
                    capacity: count(field, "capacity", doc.capacity, DEFAULT_CAPACITY)?,
                    retry_cost: count(field, "retry_cost", doc.retry_cost, retry)?,
                    timeout_cost: count(field, "timeout_cost", doc.timeout_cost, timeout)?,
                    throttling_cost: count(field, "throttling_cost", doc.throttling_cost, throttling)?,
                    no_retry_increment: count(
                        field,
                        "no_retry_increment",
                        doc.no_retry_increment,
                        DEFAULT_NO_RETRY_INCREMENT,
                    )?,
                })
            }
            BudgetKind::Percentage => {
                let percent = doc.percent.unwrap_or(DEFAULT_PERCENT);
                if !(percent.is_finite() && (0.0..=100_000.0).contains(&percent)) {
                    return Err(out_of_range(
                        join(field, "percent"),
                        crate::units::number_text(percent),
                        PERCENT_EXPECTED,
                    ));
                }
                let ttl_ms = doc.ttl_ms.unwrap_or(DEFAULT_TTL_MS);
                if !(1_000..=60_000).contains(&ttl_ms) || ttl_ms % 1_000 != 0 {
                    return Err(out_of_range(join(field, "ttl_ms"), ttl_ms, TTL_EXPECTED));
                }
                let min = doc.min_retries_per_sec.unwrap_or(DEFAULT_MIN_RETRIES_PER_SEC);
                if min > u64::from(u32::MAX) {
                    return Err(out_of_range(
                        join(field, "min_retries_per_sec"),
                        min,
                        MIN_RETRIES_EXPECTED,
                    ));
                }
                BudgetConfig::Percentage(PercentageConfig {
                    percent,
                    ttl_s: ttl_ms / 1_000,
                    min_retries_per_sec: min,
                })
            }
        })
    }

    /// The kind of budget.
    pub fn kind(&self) -> BudgetKind {
        match self {
            BudgetConfig::TokenBucket(_) => BudgetKind::TokenBucket,
            BudgetConfig::RetryQuota(_) => BudgetKind::RetryQuota,
            BudgetConfig::Percentage(_) => BudgetKind::Percentage,
        }
    }

    /// The normalized document: version 1, every field of the kind set.
    pub fn to_document(&self) -> BudgetDocument {
        let mut doc = BudgetDocument {
            version: Some(BUDGET_VERSION),
            kind: self.kind(),
            max_tokens: None,
            token_ratio: None,
            capacity: None,
            retry_cost: None,
            timeout_cost: None,
            throttling_cost: None,
            costs: None,
            lenient: None,
            no_retry_increment: None,
            percent: None,
            ttl_ms: None,
            min_retries_per_sec: None,
        };
        match *self {
            BudgetConfig::TokenBucket(c) => {
                doc.max_tokens = Some(c.max_milli_tokens as f64 / MILLI as f64);
                doc.token_ratio = Some(c.milli_token_ratio as f64 / MILLI as f64);
            }
            BudgetConfig::RetryQuota(c) => {
                doc.capacity = Some(c.capacity);
                doc.retry_cost = Some(c.retry_cost);
                doc.timeout_cost = Some(c.timeout_cost);
                doc.throttling_cost = Some(c.throttling_cost);
                doc.no_retry_increment = Some(c.no_retry_increment);
            }
            BudgetConfig::Percentage(c) => {
                doc.percent = Some(c.percent);
                doc.ttl_ms = Some(c.window() * 1_000);
                doc.min_retries_per_sec = Some(c.min_retries_per_sec);
            }
        }
        doc
    }
}

/// A budget's state as JSON holds it: `{"version": 1, "kind": "token_bucket", "balance": 9100}`
/// (thousandths of a token), `{"version": 1, "kind": "retry_quota", "balance": 486}` (tokens),
/// `{"version": 1, "kind": "percentage", "buckets": [{"slice": 12, "requests": 5, "retries": 1}]}`
/// (slice `n` covers `[n × ttl/10, (n + 1) × ttl/10)` ms)
/// (the window's non-empty seconds, oldest first; a second is the caller's `now_ms / 1000`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetSnapshot {
    /// Snapshot version; only 1 is read.
    #[serde(
        default = "crate::serde_form::one",
        deserialize_with = "crate::serde_form::version_or_one"
    )]
    pub version: u64,
    /// The budget's kind, which must be the configuration's.
    pub kind: BudgetKind,
    /// Token bucket and retry quota: what the budget holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub balance: Option<u64>,
    /// Percentage: the window's slices (a tenth of the window each).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buckets: Option<Vec<BucketSnapshot>>,
}

/// One second of a percentage budget's window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BucketSnapshot {
    /// The slice (`now_ms / (ttl_ms / 10)` of the caller's clock).
    pub slice: u64,
    /// Requests sent in that slice.
    pub requests: u64,
    /// Retries sent in that slice.
    pub retries: u64,
}

impl BudgetSnapshot {
    pub(crate) fn balance(kind: BudgetKind, balance: u64) -> BudgetSnapshot {
        BudgetSnapshot {
            version: BUDGET_VERSION,
            kind,
            balance: Some(balance),
            buckets: None,
        }
    }

    pub(crate) fn buckets(buckets: Vec<BucketSnapshot>) -> BudgetSnapshot {
        BudgetSnapshot {
            version: BUDGET_VERSION,
            kind: BudgetKind::Percentage,
            balance: None,
            buckets: Some(buckets),
        }
    }
}

/// The balance of a bucket or quota snapshot, at most `max`.
fn balance_of(snapshot: &BudgetSnapshot, field: &str, max: u64) -> Result<u64, Error> {
    if snapshot.buckets.is_some() {
        return Err(Error::UnknownField {
            field: join(field, "buckets"),
        });
    }
    match snapshot.balance {
        None => Err(Error::MissingField {
            field: join(field, "balance"),
        }),
        Some(b) if b <= max => Ok(b),
        Some(b) => Err(out_of_range(join(field, "balance"), b, &format!("0..={max}"))),
    }
}

/// The buckets of a percentage snapshot, checked: at most one window's slices, increasing.
fn buckets_of<'a>(
    snapshot: &'a BudgetSnapshot,
    field: &str,
    config: &PercentageConfig,
) -> Result<&'a [BucketSnapshot], Error> {
    if snapshot.balance.is_some() {
        return Err(Error::UnknownField {
            field: join(field, "balance"),
        });
    }
    let buckets = snapshot.buckets.as_deref().ok_or_else(|| Error::MissingField {
        field: join(field, "buckets"),
    })?;
    let first = buckets.first().map_or(0, |b| b.slice);
    for (i, b) in buckets.iter().enumerate() {
        let at = |name: &str| join(field, &format!("buckets[{i}].{name}"));
        for (name, v) in [
            ("slice", b.slice),
            ("requests", b.requests),
            ("retries", b.retries),
        ] {
            if v > MAX_SAFE {
                return Err(out_of_range(at(name), v, COUNT_EXPECTED));
            }
        }
        let after_previous = i == 0 || b.slice > buckets[i - 1].slice;
        if !after_previous || b.slice - first >= super::percentage::SLICES {
            let expected = format!(
                "slices increasing, within {} of the first bucket's (one window of {} ms)",
                super::percentage::SLICES,
                config.window() * 1_000
            );
            return Err(out_of_range(at("slice"), b.slice, &expected));
        }
    }
    Ok(buckets)
}

/// A budget of `config` in the state `snapshot` (found at `field`).
pub(crate) fn restore(
    config: &BudgetConfig,
    snapshot: &BudgetSnapshot,
    field: &str,
) -> Result<RetryBudget, Error> {
    if snapshot.version != BUDGET_VERSION {
        return Err(Error::UnsupportedVersion {
            value: snapshot.version.to_string(),
        });
    }
    if snapshot.kind != config.kind() {
        return Err(Error::UnknownName {
            field: join(field, "kind"),
            value: snapshot.kind.name().to_owned(),
            expected: config.kind().name().to_owned(),
        });
    }
    let kind = match *config {
        BudgetConfig::TokenBucket(c) => Kind::TokenBucket(
            c,
            TokenBucketState {
                milli_tokens: balance_of(snapshot, field, c.max_milli_tokens)?,
            },
        ),
        BudgetConfig::RetryQuota(c) => Kind::RetryQuota(
            c,
            RetryQuotaState {
                tokens: balance_of(snapshot, field, c.capacity)?,
            },
        ),
        BudgetConfig::Percentage(c) => Kind::Percentage(
            c,
            PercentageState::from_buckets(&c, buckets_of(snapshot, field, &c)?),
        ),
    };
    Ok(RetryBudget { kind })
}
