//! Policy: the whole serializable configuration, its version, and the compatibility options.

use serde::{Deserialize, Deserializer, Serialize};

use crate::backoff::{Backoff, FirstDelay, Jitter};
#[cfg(feature = "guards")]
use crate::breaker::{BreakerConfig, BreakerDocument};
#[cfg(feature = "guards")]
use crate::budget::{BudgetConfig, BudgetDocument};
use crate::error::Error;
use crate::reason::RetryReason;
use crate::strategy::{BestEffort, StrategyKind};

/// The policy document version this release reads and writes.
pub const POLICY_VERSION: u32 = 1;

/// Opt-in deviations from RFC 0049 that major SDKs ship. Every default follows the RFC.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Compat {
    /// Java SDK: KV_COLLECTION_OUTDATED goes through the strategy instead of always retrying.
    #[serde(deserialize_with = "crate::serde_form::or_default")]
    pub collection_outdated_not_always_retry: bool,
    /// Java, Go and .NET SDKs: KV status 0x85 (EBUSY) is retried as KV_TEMPORARY_FAILURE.
    #[serde(deserialize_with = "crate::serde_form::or_default")]
    pub retry_kv_busy: bool,
    /// Go SDK: query codes 4040, 4050, 4060, 4070, 4080, 4090 are prepared-statement failures.
    #[serde(deserialize_with = "crate::serde_form::or_default")]
    pub query_retry_4040_to_4090: bool,
    /// RFC 0049's best-effort pseudo-code read literally: UNKNOWN reaches the strategy, which
    /// retries it for idempotent requests. By default UNKNOWN is never retried, as its table row says.
    #[serde(deserialize_with = "crate::serde_form::or_default")]
    pub retry_unknown_if_idempotent: bool,
}

/// Each compatibility option's name and the source of the deviation, for docs and UIs.
pub const COMPAT_OPTIONS: [(&str, &str); 4] = [
    (
        "collection_outdated_not_always_retry",
        "Java SDK (core-io RetryReason.COLLECTION_OUTDATED alwaysRetry=false) vs RFC 0049 table",
    ),
    (
        "retry_kv_busy",
        "Java, Go and .NET SDKs map KV 0x85 EBUSY to KV_TEMPORARY_FAILURE; RFC 0049 does not list it",
    ),
    (
        "query_retry_4040_to_4090",
        "Go SDK retries query codes 4040..4090; RFC 0049 lists 4040, 4050, 4070",
    ),
    (
        "retry_unknown_if_idempotent",
        "RFC 0049 Best Effort pseudo-code retries any idempotent request; its RetryReason section forbids UNKNOWN",
    ),
];

impl Compat {
    /// Whether `reason` bypasses the strategy under these options.
    #[inline]
    pub fn always_retry(&self, reason: RetryReason) -> bool {
        if reason == RetryReason::KvCollectionOutdated && self.collection_outdated_not_always_retry {
            return false;
        }
        reason.always_retry()
    }
}

/// The whole retry configuration, as data. JSON: `{"version": 1, "strategy": "best_effort",
/// "backoff": {"kind": "exponential", ...}, "jitter": "none", "compat": {...}}`; every field but
/// `version` may be omitted and takes the RFC default; `version` omitted (or null) means 1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// Document version; only 1 is accepted.
    #[serde(default = "version_one", deserialize_with = "version")]
    pub version: u32,
    /// The default strategy for requests without an override.
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub strategy: StrategyKind,
    /// The best-effort backoff calculator.
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub backoff: Backoff,
    /// Jitter applied to the best-effort backoff (never to the controlled backoff).
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub jitter: Jitter,
    /// Deviations from the RFC, all off by default.
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub compat: Compat,
    /// The retry budget a host shares across this policy's requests (a budget document: its kind
    /// and settings; the host builds the `RetryBudget` and keeps its state); none by default.
    /// Only with the `guards` feature: a build without it refuses the field as unknown.
    #[cfg(feature = "guards")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<BudgetDocument>,
    /// The circuit breaker a host keeps per endpoint for this policy's requests (a breaker
    /// document); none by default. Only with the `guards` feature.
    #[cfg(feature = "guards")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub breaker: Option<BreakerDocument>,
}

fn version_one() -> u32 {
    POLICY_VERSION
}

fn version<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let v = serde_json::Value::deserialize(d)?;
    match v.as_u64() {
        None if v.is_null() => Ok(POLICY_VERSION),
        Some(n) if n == u64::from(POLICY_VERSION) => Ok(POLICY_VERSION),
        _ => Err(crate::serde_form::Rejection::VERSION.into_de()),
    }
}

impl Default for Policy {
    /// RFC 0049 defaults: best effort, exponential 1..500 ms ×2, no jitter, no compat options.
    fn default() -> Self {
        Policy::RFC
    }
}

impl Policy {
    /// RFC 0049 defaults: best effort, exponential 1..500 ms ×2, no jitter, no compat options.
    pub const RFC: Policy = Policy {
        version: POLICY_VERSION,
        strategy: StrategyKind::BestEffort,
        backoff: Backoff::Exponential {
            min_ms: crate::backoff::BEST_EFFORT_MIN_MS,
            max_ms: crate::backoff::BEST_EFFORT_MAX_MS,
            factor: crate::backoff::BEST_EFFORT_FACTOR,
            first: FirstDelay::Min,
        },
        jitter: Jitter::None,
        compat: Compat {
            collection_outdated_not_always_retry: false,
            retry_kv_busy: false,
            query_retry_4040_to_4090: false,
            retry_unknown_if_idempotent: false,
        },
        #[cfg(feature = "guards")]
        budget: None,
        #[cfg(feature = "guards")]
        breaker: None,
    };

    /// The policy as a JSON document that `retrypolicy_wire::parse_policy` reads back unchanged.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| unreachable!("a policy always serializes"))
    }

    /// Checks cross-field constraints serde cannot (bounds order, factor range, version).
    pub fn validate(&self) -> Result<(), Error> {
        if self.version != POLICY_VERSION {
            return Err(Error::UnsupportedVersion {
                value: self.version.to_string(),
            });
        }
        self.backoff.validate("backoff")?;
        #[cfg(feature = "guards")]
        if let Some(doc) = &self.budget {
            BudgetConfig::from_document(doc, "budget")?;
        }
        #[cfg(feature = "guards")]
        if let Some(doc) = &self.breaker {
            BreakerConfig::from_document(doc, "breaker")?;
        }
        Ok(())
    }

    /// The policy's retry budget, its defaults filled in, when it names one.
    #[cfg(feature = "guards")]
    pub fn budget_config(&self) -> Result<Option<BudgetConfig>, Error> {
        self.budget
            .as_ref()
            .map(|doc| BudgetConfig::from_document(doc, "budget"))
            .transpose()
    }

    /// The policy's circuit breaker, Couchbase's defaults filled in, when it names one.
    #[cfg(feature = "guards")]
    pub fn breaker_config(&self) -> Result<Option<BreakerConfig>, Error> {
        self.breaker
            .as_ref()
            .map(|doc| BreakerConfig::from_document(doc, "breaker"))
            .transpose()
    }

    /// The best-effort strategy this policy configures.
    pub fn best_effort(&self) -> BestEffort {
        BestEffort {
            backoff: self.backoff,
            jitter: self.jitter,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rfc_constant_is_every_part_s_default() {
        assert_eq!(Policy::RFC.backoff, Backoff::default());
        assert_eq!(Policy::RFC.compat, Compat::default());
        assert_eq!(Policy::RFC.strategy, StrategyKind::default());
        assert_eq!(Policy::RFC.jitter, Jitter::default());
        assert_eq!(serde_json::from_str::<Policy>("{}").unwrap(), Policy::RFC);
    }
}
