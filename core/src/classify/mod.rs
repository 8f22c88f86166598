//! What happened → `Option<RetryReason>`: one module per service, each table once, as data.

use serde::Serialize;

use crate::reason::RetryReason;

#[cfg(feature = "couchbase")]
pub mod analytics;
pub mod dispatch;
#[cfg(feature = "couchbase")]
pub mod error_map;
#[cfg(feature = "couchbase")]
pub mod kv;
#[cfg(feature = "couchbase")]
pub mod query;
#[cfg(feature = "couchbase")]
pub mod search;
#[cfg(feature = "couchbase")]
pub mod views;

/// RFC 0049 section cited by the response-code rules.
pub const RESPONSE_CODE_SECTION: &str = "RFC 0049, Response Code Retry List";

/// The outcome of classifying one failure: the reason to hand to `decide`, or none, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Classification {
    /// The retry reason, or `None` when the failure must surface without retry handling.
    pub reason: Option<RetryReason>,
    /// The stable name of the rule that matched.
    pub rule: &'static str,
    /// The spec section the rule comes from.
    pub section: &'static str,
    /// When set, the error the SDK must surface instead (e.g. `cas_mismatch` for LOCKED on unlock).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub surface_as: Option<&'static str>,
}

impl Classification {
    /// A classification that hands `reason` to the orchestrator.
    pub const fn retry(reason: RetryReason, rule: &'static str, section: &'static str) -> Self {
        Classification {
            reason: Some(reason),
            rule,
            section,
            surface_as: None,
        }
    }

    /// A classification that fails the request without consulting the orchestrator.
    pub const fn no_retry(rule: &'static str, section: &'static str) -> Self {
        Classification {
            reason: None,
            rule,
            section,
            surface_as: None,
        }
    }
}
