//! RetryReason and its two flags, exactly as the RFC 0049 table gives them.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::Error;

/// Why an operation is a candidate for retry: the vocabulary of RFC 0049, section "RetryReason".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RetryReason {
    /// Unexpected or unknown: never retried (RFC 0049: "must not be retried").
    Unknown,
    /// The socket the operation should be written into is not available.
    SocketNotAvailable,
    /// The service (kv, query, ...) is not available on the node.
    ServiceNotAvailable,
    /// The node the operation should go to is not available.
    NodeNotAvailable,
    /// KV status 0x07: the vbucket moved.
    KvNotMyVbucket,
    /// KV status 0x88: the collection manifest is outdated.
    KvCollectionOutdated,
    /// An unknown KV status whose error-map entry carries `retry-now` or `retry-later`.
    KvErrorMapRetryIndicated,
    /// KV status 0x09: the document is locked.
    KvLocked,
    /// KV status 0x86: temporary failure.
    KvTemporaryFailure,
    /// KV status 0xa2: a synchronous write is in progress.
    KvSyncWriteInProgress,
    /// KV status 0xa4: a synchronous write re-commit is in progress.
    KvSyncWriteReCommitInProgress,
    /// A service response code that the response-code list marks as retryable.
    ServiceResponseCodeIndicated,
    /// The socket closed while the operation was in flight.
    SocketClosedWhileInFlight,
    /// The circuit breaker for the endpoint is open.
    CircuitBreakerOpen,
    /// Query codes 4040, 4050, 4070: the prepared statement failed.
    QueryPreparedStatementFailure,
    /// Query code 5000 with `queryport.indexNotFound`.
    QueryIndexNotFound,
    /// Analytics codes 23000, 23003, 23007.
    AnalyticsTemporaryFailure,
    /// Search HTTP 429.
    SearchTooManyRequests,
    /// Views: a retryable HTTP status.
    ViewsTemporaryFailure,
    /// Views HTTP 302: no active partition.
    ViewsNoActivePartition,
    /// A query error the server marks `"retry": true` (not in RFC 0049's table: gocbcore,
    /// core-io and the .NET SDK add it, as the RFC allows "depending on implementation specifics").
    QueryErrorRetryable,
}

/// One row of the RFC 0049 "RetryReason" table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReasonRow {
    /// The reason this row describes.
    pub reason: RetryReason,
    /// The stable SCREAMING_SNAKE name the table uses.
    pub name: &'static str,
    /// Column "Non-idempotent Retry".
    pub allows_non_idempotent_retry: bool,
    /// Column "Always retry".
    pub always_retry: bool,
}

const fn row(reason: RetryReason, name: &'static str, non_idem: bool, always: bool) -> ReasonRow {
    ReasonRow {
        reason,
        name,
        allows_non_idempotent_retry: non_idem,
        always_retry: always,
    }
}

/// RFC 0049, section "RetryReason": the table, verbatim, in the RFC's row order, then the one
/// reason the SDKs add ("additional reasons might be added depending on implementation
/// specifics"): QUERY_ERROR_RETRYABLE, with the flags gocbcore (retry.go) and core-io
/// (RetryReason.java) give it.
pub const REASON_TABLE: [ReasonRow; 21] = {
    use RetryReason::*;
    [
        row(Unknown, "UNKNOWN", false, false),
        row(SocketNotAvailable, "SOCKET_NOT_AVAILABLE", true, false),
        row(ServiceNotAvailable, "SERVICE_NOT_AVAILABLE", true, false),
        row(NodeNotAvailable, "NODE_NOT_AVAILABLE", true, false),
        row(KvNotMyVbucket, "KV_NOT_MY_VBUCKET", true, true),
        row(KvCollectionOutdated, "KV_COLLECTION_OUTDATED", true, true),
        row(
            KvErrorMapRetryIndicated,
            "KV_ERROR_MAP_RETRY_INDICATED",
            true,
            false,
        ),
        row(KvLocked, "KV_LOCKED", true, false),
        row(KvTemporaryFailure, "KV_TEMPORARY_FAILURE", true, false),
        row(KvSyncWriteInProgress, "KV_SYNC_WRITE_IN_PROGRESS", true, false),
        row(
            KvSyncWriteReCommitInProgress,
            "KV_SYNC_WRITE_RE_COMMIT_IN_PROGRESS",
            true,
            false,
        ),
        row(
            ServiceResponseCodeIndicated,
            "SERVICE_RESPONSE_CODE_INDICATED",
            true,
            false,
        ),
        row(
            SocketClosedWhileInFlight,
            "SOCKET_CLOSED_WHILE_IN_FLIGHT",
            false,
            false,
        ),
        row(CircuitBreakerOpen, "CIRCUIT_BREAKER_OPEN", true, false),
        row(
            QueryPreparedStatementFailure,
            "QUERY_PREPARED_STATEMENT_FAILURE",
            true,
            false,
        ),
        row(QueryIndexNotFound, "QUERY_INDEX_NOT_FOUND", true, false),
        row(
            AnalyticsTemporaryFailure,
            "ANALYTICS_TEMPORARY_FAILURE",
            true,
            false,
        ),
        row(SearchTooManyRequests, "SEARCH_TOO_MANY_REQUESTS", true, false),
        row(ViewsTemporaryFailure, "VIEWS_TEMPORARY_FAILURE", true, false),
        row(ViewsNoActivePartition, "VIEWS_NO_ACTIVE_PARTITION", true, true),
        row(QueryErrorRetryable, "QUERY_ERROR_RETRYABLE", true, false),
    ]
};

/// Names accepted on input besides the table's own. RFC 0049 spells 0xa4's reason
/// `KV_SYNC_RE_COMMIT_IN_PROGRESS` in its response-code list but
/// `KV_SYNC_WRITE_RE_COMMIT_IN_PROGRESS` in its table; we accept both and emit the table's.
pub const REASON_ALIASES: [(&str, RetryReason); 1] = [(
    "KV_SYNC_RE_COMMIT_IN_PROGRESS",
    RetryReason::KvSyncWriteReCommitInProgress,
)];

impl RetryReason {
    /// Every reason, in the RFC table's order.
    pub const ALL: [RetryReason; 21] = {
        let mut all = [RetryReason::Unknown; 21];
        let mut i = 0;
        while i < 21 {
            all[i] = REASON_TABLE[i].reason;
            i += 1;
        }
        all
    };

    /// This reason's row of the RFC table.
    #[inline]
    pub fn row(self) -> &'static ReasonRow {
        // The table is in declaration order, so the discriminant is the row index.
        &REASON_TABLE[self as usize]
    }

    /// The stable SCREAMING_SNAKE name from the RFC table.
    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// Whether a non-idempotent request may be retried for this reason (RFC table column).
    pub fn allows_non_idempotent_retry(self) -> bool {
        self.row().allows_non_idempotent_retry
    }

    /// Whether this reason is retried regardless of the strategy (RFC table column).
    pub fn always_retry(self) -> bool {
        self.row().always_retry
    }

    /// Parses a reason name (the table's names plus [`REASON_ALIASES`]); `field` names the input in errors.
    pub fn parse(field: &str, value: &str) -> Result<RetryReason, Error> {
        REASON_TABLE
            .iter()
            .find(|r| r.name == value)
            .map(|r| r.reason)
            .or_else(|| {
                REASON_ALIASES
                    .iter()
                    .find(|(alias, _)| *alias == value)
                    .map(|(_, r)| *r)
            })
            .ok_or_else(|| Error::UnknownReason {
                field: field.to_owned(),
                value: crate::error::shorten(value),
            })
    }
}

impl fmt::Display for RetryReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for RetryReason {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        RetryReason::parse("reason", s)
    }
}

impl Serialize for RetryReason {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for RetryReason {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        RetryReason::parse("", &text).map_err(|_| crate::serde_form::Rejection::REASON.into_de())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_rows_follow_declaration_order() {
        for (i, r) in REASON_TABLE.iter().enumerate() {
            assert_eq!(r.reason as usize, i, "{} out of order", r.name);
        }
    }

    #[test]
    fn alias_parses_and_table_name_is_emitted() {
        let r: RetryReason = "KV_SYNC_RE_COMMIT_IN_PROGRESS".parse().unwrap();
        assert_eq!(r.name(), "KV_SYNC_WRITE_RE_COMMIT_IN_PROGRESS");
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            "\"KV_SYNC_WRITE_RE_COMMIT_IN_PROGRESS\""
        );
    }

    #[test]
    fn unknown_name_is_a_typed_error() {
        let e = RetryReason::parse("reason", "KV_BOGUS").unwrap_err();
        assert_eq!(e.code(), "unknown_reason");
        assert!(e.to_string().contains("KV_BOGUS"));
    }
}
