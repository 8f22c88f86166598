//! The JSON forms of a circuit breaker: its versioned document ([`BreakerDocument`], checked into a
//! [`BreakerConfig`]) and the snapshot of its state ([`BreakerSnapshot`]), with typed errors
//! naming the field.

use serde::{Deserialize, Serialize};

use super::{BreakerState, CircuitBreaker};
use crate::error::{join_field as join, Error};
use crate::serde_form::ms::MAX_SAFE;

/// The breaker document version this release reads and writes.
pub const BREAKER_VERSION: u64 = 1;

/// A breaker document as JSON holds it: `{"version": 1, "enabled": true, "volume_threshold": 20,
/// "error_threshold_percentage": 50, "sleep_window_ms": 5000, "rolling_window_ms": 60000,
/// "canary_timeout_ms": 5000}`; every field may be left out (or null) and takes Couchbase's default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BreakerDocument {
    /// Document version; only 1 is read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    /// Whether the breaker acts at all (Couchbase: true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Outcomes the window needs before it can trip (Couchbase: 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_threshold: Option<u64>,
    /// Failed share of the window, in percent, that trips it, 0 to 100 (Couchbase: 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_threshold_percentage: Option<u64>,
    /// How long the circuit stays open before a canary (Couchbase: 5000 ms).
    #[serde(
        default,
        with = "crate::serde_form::ms::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub sleep_window_ms: Option<u64>,
    /// How long a counting window lasts (Couchbase: 60000 ms).
    #[serde(
        default,
        with = "crate::serde_form::ms::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub rolling_window_ms: Option<u64>,
    /// How long the canary may take before it counts as failed (Couchbase: 5000 ms).
    #[serde(
        default,
        with = "crate::serde_form::ms::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub canary_timeout_ms: Option<u64>,
}

/// A checked breaker configuration, every parameter set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BreakerConfig {
    /// Whether the breaker acts at all.
    pub enabled: bool,
    /// Outcomes the window needs before it can trip.
    pub volume_threshold: u64,
    /// Failed share of the window, in percent, that trips it.
    pub error_threshold_percentage: u64,
    /// How long the circuit stays open before a canary.
    pub sleep_window_ms: u64,
    /// How long a counting window lasts.
    pub rolling_window_ms: u64,
    /// How long the canary may take before it counts as failed.
    pub canary_timeout_ms: u64,
}

impl Default for BreakerConfig {
    /// Couchbase's defaults.
    fn default() -> Self {
        BreakerConfig {
            enabled: true,
            volume_threshold: 20,
            error_threshold_percentage: 50,
            sleep_window_ms: 5_000,
            rolling_window_ms: 60_000,
            canary_timeout_ms: 5_000,
        }
    }
}

fn at_most(prefix: &str, name: &str, value: u64, max: u64) -> Result<u64, Error> {
    if value <= max {
        Ok(value)
    } else {
        Err(Error::OutOfRange {
            field: join(prefix, name),
            value: value.to_string(),
            expected: format!("0..={max}"),
        })
    }
}

impl BreakerConfig {
    /// Checks `doc` (found at `field`, e.g. `breaker`) and fills in Couchbase's defaults.
    pub fn from_document(doc: &BreakerDocument, field: &str) -> Result<BreakerConfig, Error> {
        if let Some(v) = doc.version.filter(|v| *v != BREAKER_VERSION) {
            return Err(Error::UnsupportedVersion { value: v.to_string() });
        }
        let d = BreakerConfig::default();
        Ok(BreakerConfig {
            enabled: doc.enabled.unwrap_or(d.enabled),
            volume_threshold: at_most(
                field,
                "volume_threshold",
                doc.volume_threshold.unwrap_or(d.volume_threshold),
                MAX_SAFE,
            )?,
            error_threshold_percentage: at_most(
                field,
                "error_threshold_percentage",
                doc.error_threshold_percentage
                    .unwrap_or(d.error_threshold_percentage),
                100,
            )?,
            sleep_window_ms: doc.sleep_window_ms.unwrap_or(d.sleep_window_ms),
            rolling_window_ms: doc.rolling_window_ms.unwrap_or(d.rolling_window_ms),
            canary_timeout_ms: doc.canary_timeout_ms.unwrap_or(d.canary_timeout_ms),
        })
    }

    /// The normalized document: version 1, every field set.
    pub fn to_document(&self) -> BreakerDocument {
        BreakerDocument {
            version: Some(BREAKER_VERSION),
            enabled: Some(self.enabled),
            volume_threshold: Some(self.volume_threshold),
            error_threshold_percentage: Some(self.error_threshold_percentage),
            sleep_window_ms: Some(self.sleep_window_ms),
            rolling_window_ms: Some(self.rolling_window_ms),
            canary_timeout_ms: Some(self.canary_timeout_ms),
        }
    }
}

/// A breaker's state as JSON holds it: `{"version": 1, "state": "open", "since_ms": 1200,
/// "window_start_ms": 0, "total": 20, "failures": 10}`. `since_ms` is when the circuit opened
/// (open) or the canary was sent (half-open), and absent (or null) when closed;
/// `window_start_ms` is null until the first outcome after a reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BreakerSnapshot {
    /// Snapshot version; only 1 is read.
    #[serde(
        default = "crate::serde_form::one",
        deserialize_with = "crate::serde_form::version_or_one"
    )]
    pub version: u64,
    /// The circuit's state.
    pub state: BreakerState,
    /// When the circuit opened or the canary was sent.
    #[serde(default, with = "crate::serde_form::ms::option")]
    pub since_ms: Option<u64>,
    /// When the counting window started.
    #[serde(default, with = "crate::serde_form::ms::option")]
    pub window_start_ms: Option<u64>,
    /// Outcomes in the window.
    pub total: u64,
    /// Failures in the window.
    pub failures: u64,
}

impl CircuitBreaker {
    /// The state as a value that serialises to JSON and back ([`CircuitBreaker::restore`]).
    pub fn snapshot(&self) -> BreakerSnapshot {
        BreakerSnapshot {
            version: BREAKER_VERSION,
            state: self.state,
            since_ms: (self.state != BreakerState::Closed).then_some(self.since_ms),
            window_start_ms: (self.window_start_ms != super::NO_WINDOW).then_some(self.window_start_ms),
            total: self.total,
            failures: self.failures,
        }
    }

    /// A breaker of `config` in the state `snapshot` (found at `field`, e.g. `state`).
    pub fn restore(
        config: &BreakerConfig,
        snapshot: &BreakerSnapshot,
        field: &str,
    ) -> Result<CircuitBreaker, Error> {
        if snapshot.version != BREAKER_VERSION {
            return Err(Error::UnsupportedVersion {
                value: snapshot.version.to_string(),
            });
        }
        let since_ms = match (snapshot.state, snapshot.since_ms) {
            (BreakerState::Closed, None) => 0,
            (BreakerState::Closed, Some(_)) => {
                return Err(Error::UnknownField {
                    field: join(field, "since_ms"),
                })
            }
            (_, Some(ms)) => ms,
            (_, None) => {
                return Err(Error::MissingField {
                    field: join(field, "since_ms"),
                })
            }
        };
        let window_start_ms = match snapshot.window_start_ms {
            Some(ms) => at_most(field, "window_start_ms", ms, MAX_SAFE)?,
            None => super::NO_WINDOW,
        };
        let total = at_most(field, "total", snapshot.total, MAX_SAFE)?;
        let failures = at_most(field, "failures", snapshot.failures, total)?;
        Ok(CircuitBreaker {
            config: *config,
            state: snapshot.state,
            since_ms,
            window_start_ms,
            total,
            failures,
            changes: [None; super::MAX_BREAKER_CHANGES],
            canaries: 0,
        })
    }
}
