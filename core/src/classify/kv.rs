//! KV response status → retry reason (RFC 0049 "Response Code Retry List", KV part).

use super::error_map::{ErrorMap, ERROR_MAP_SECTION};
use super::{Classification, RESPONSE_CODE_SECTION};
use crate::operation::KvOperation;
use crate::policy::Compat;
use crate::reason::RetryReason;

/// What the core does with a named KV status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KvRule {
    /// RFC 0049's KV retry list: retry with this reason.
    Retry(RetryReason),
    /// A complete, known response that SDKs handle themselves: never retried ("By default, once a
    /// complete, known response is received it should not be retried").
    Final,
    /// A status with a name but no rule of its own: like an unknown code, the error map decides
    /// (RFC 0049 "KV Error Map Handling": every KV error the SDK "does not know anything about").
    ErrorMap,
}

/// A named KV status: its code, its protocol name, and what the core does with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KvStatus {
    /// Status code.
    pub code: u16,
    /// Name in the memcached binary protocol (docs/BinaryProtocol.md, "Response Status").
    pub name: &'static str,
    /// The status's rule.
    pub rule: KvRule,
}

impl KvStatus {
    /// The RFC 0049 retry reason, for a status on the RFC's KV retry list.
    pub fn reason(&self) -> Option<RetryReason> {
        match self.rule {
            KvRule::Retry(r) => Some(r),
            KvRule::Final | KvRule::ErrorMap => None,
        }
    }
}

const fn st(code: u16, name: &'static str, rule: KvRule) -> KvStatus {
    KvStatus { code, name, rule }
}

/// Every KV status the core names. The six `Retry` rows are RFC 0049's KV retry list. `Final`
/// rows are statuses every SDK handles itself (gocbcore, Java core-io and .NET, each row checked
/// against their code: see spec-fixtures/cases/classify_kv.json), among them the rate limits
/// 0x30-0x33, which stay final although the server's error map marks 0x30, 0x31 and 0x33
/// `retry-later` (gocbcore errmapcomponent.go, core-io KeyValueMessageHandler, .NET
/// ResponseStatusExtensions all surface RateLimited). `ErrorMap` rows have a name but no rule:
/// gocbcore and core-io send them to the error map (0x0c, 0x0d, 0x82, ...), as RFC 0049 asks for
/// every status the SDK "does not know anything about". Unknown codes go to the error map too.
pub const KV_STATUS_TABLE: &[KvStatus] = {
    use KvRule::{ErrorMap, Final, Retry};
    use RetryReason::*;
    &[
        st(0x00, "SUCCESS", Final),
        st(0x01, "KEY_ENOENT", Final),
        st(0x02, "KEY_EEXISTS", Final),
        st(0x03, "E2BIG", Final),
        st(0x04, "EINVAL", Final),
        st(0x05, "NOT_STORED", Final),
        st(0x06, "DELTA_BADVAL", Final),
        st(0x07, "NOT_MY_VBUCKET", Retry(KvNotMyVbucket)),
        st(0x08, "NO_BUCKET", ErrorMap),
        st(0x09, "LOCKED", Retry(KvLocked)),
        st(0x0a, "DCP_STREAM_NOT_FOUND", ErrorMap),
        st(0x0b, "OPAQUE_NO_MATCH", ErrorMap),
        st(0x0c, "EWOULDTHROTTLE", ErrorMap),
        st(0x0d, "ECONFIGONLY", ErrorMap),
        st(0x0e, "NOT_LOCKED", Final),
        st(0x0f, "CAS_VALUE_INVALID", ErrorMap),
        st(0x1f, "AUTH_STALE", Final),
        st(0x20, "AUTH_ERROR", Final),
        st(0x21, "AUTH_CONTINUE", ErrorMap),
        st(0x22, "ERANGE", Final),
        st(0x23, "ROLLBACK", ErrorMap),
        st(0x24, "EACCESS", Final),
        st(0x25, "NOT_INITIALIZED", Final),
        st(0x30, "RATE_LIMITED_NETWORK_INGRESS", Final),
        st(0x31, "RATE_LIMITED_NETWORK_EGRESS", Final),
        st(0x32, "RATE_LIMITED_MAX_CONNECTIONS", Final),
        st(0x33, "RATE_LIMITED_MAX_COMMANDS", Final),
        st(0x34, "SCOPE_SIZE_LIMIT_EXCEEDED", Final),
        st(0x81, "UNKNOWN_COMMAND", Final),
        st(0x82, "ENOMEM", ErrorMap),
        st(0x83, "NOT_SUPPORTED", Final),
        st(0x84, "EINTERNAL", Final),
        st(0x85, "EBUSY", ErrorMap),
        st(0x86, "ETMPFAIL", Retry(KvTemporaryFailure)),
        st(0x87, "XATTR_EINVAL", ErrorMap),
        st(0x88, "UNKNOWN_COLLECTION", Retry(KvCollectionOutdated)),
        st(0x89, "NO_COLLECTIONS_MANIFEST", Final),
        st(0x8a, "CANNOT_APPLY_COLLECTIONS_MANIFEST", Final),
        st(0x8b, "COLLECTIONS_MANIFEST_IS_AHEAD", Final),
        st(0x8c, "UNKNOWN_SCOPE", Final),
        st(0x8d, "DCP_STREAMID_INVALID", Final),
        st(0xa0, "DURABILITY_INVALID_LEVEL", Final),
        st(0xa1, "DURABILITY_IMPOSSIBLE", Final),
        st(0xa2, "SYNC_WRITE_IN_PROGRESS", Retry(KvSyncWriteInProgress)),
        st(0xa3, "SYNC_WRITE_AMBIGUOUS", Final),
        st(
            0xa4,
            "SYNC_WRITE_RE_COMMIT_IN_PROGRESS",
            Retry(KvSyncWriteReCommitInProgress),
        ),
        st(0xc0, "SUBDOC_PATH_ENOENT", Final),
        st(0xc1, "SUBDOC_PATH_MISMATCH", Final),
        st(0xc2, "SUBDOC_PATH_EINVAL", Final),
        st(0xc3, "SUBDOC_PATH_E2BIG", Final),
        st(0xc4, "SUBDOC_DOC_E2DEEP", Final),
        st(0xc5, "SUBDOC_VALUE_CANTINSERT", Final),
        st(0xc6, "SUBDOC_DOC_NOT_JSON", Final),
        st(0xc7, "SUBDOC_NUM_ERANGE", Final),
        st(0xc8, "SUBDOC_DELTA_EINVAL", Final),
        st(0xc9, "SUBDOC_PATH_EEXISTS", Final),
        st(0xca, "SUBDOC_VALUE_ETOODEEP", Final),
        st(0xcb, "SUBDOC_INVALID_COMBO", Final),
        st(0xcc, "SUBDOC_MULTI_PATH_FAILURE", Final),
        st(0xcd, "SUBDOC_SUCCESS_DELETED", Final),
        st(0xce, "SUBDOC_XATTR_INVALID_FLAG_COMBO", Final),
        st(0xcf, "SUBDOC_XATTR_INVALID_KEY_COMBO", Final),
        st(0xd0, "SUBDOC_XATTR_UNKNOWN_MACRO", Final),
        st(0xd1, "SUBDOC_XATTR_UNKNOWN_VATTR", Final),
        st(0xd2, "SUBDOC_XATTR_CANT_MODIFY_VATTR", Final),
        st(0xd3, "SUBDOC_MULTI_PATH_FAILURE_DELETED", Final),
        st(0xd4, "SUBDOC_INVALID_XATTR_ORDER", Final),
        st(0xd5, "SUBDOC_XATTR_UNKNOWN_VATTR_MACRO", Final),
        st(0xd6, "SUBDOC_CAN_ONLY_REVIVE_DELETED_DOCUMENTS", Final),
        st(0xd7, "SUBDOC_DELETED_DOCUMENT_CANT_HAVE_VALUE", Final),
    ]
};

/// KV status 0x85 EBUSY: not on RFC 0049's list, so the error map decides; the Java, Go and .NET
/// SDKs retry it as KV_TEMPORARY_FAILURE whatever the map says (compat `retry_kv_busy`).
pub const KV_STATUS_BUSY: u16 = 0x85;

/// The known status with this code, if any.
pub fn kv_status(code: u16) -> Option<&'static KvStatus> {
    KV_STATUS_TABLE.iter().find(|s| s.code == code)
}

/// Classifies a KV response status for `operation`; unknown codes consult `error_map`.
pub fn classify_kv(
    operation: KvOperation,
    status: u16,
    error_map: Option<&ErrorMap>,
    compat: &Compat,
) -> Classification {
    let Some(known) = kv_status(status) else {
        return classify_unknown_status(status, error_map);
    };
    match (known.reason(), operation) {
        // "Explicitly excluded here is the GetCollectionID KV command, since it returns 0x88
        // if the collection is not found."
        (Some(RetryReason::KvCollectionOutdated), KvOperation::GetCollectionId) => Classification::no_retry(
            "kv_collection_outdated_excluded_for_get_collection_id",
            RESPONSE_CODE_SECTION,
        ),
        // "do NOT retry on KV_LOCKED for the Unlock command (the retry handler should never see
        // it in the first place!) ... this needs to be surfaced as a cas mismatch".
        (Some(RetryReason::KvLocked), KvOperation::Unlock) => Classification {
            surface_as: Some("cas_mismatch"),
            ..Classification::no_retry("kv_locked_on_unlock_is_cas_mismatch", RESPONSE_CODE_SECTION)
        },
        (Some(reason), _) => Classification::retry(reason, "kv_response_code", RESPONSE_CODE_SECTION),
        (None, _) if status == KV_STATUS_BUSY && compat.retry_kv_busy => Classification::retry(
            RetryReason::KvTemporaryFailure,
            "compat_retry_kv_busy",
            "compat retry_kv_busy: Java and Go SDKs retry 0x85 as KV_TEMPORARY_FAILURE",
        ),
        (None, _) if known.rule == KvRule::ErrorMap => classify_named_status(status, error_map),
        (None, _) => Classification::no_retry("kv_known_status_not_retried", RESPONSE_CODE_SECTION),
    }
}

/// A named status without a rule of its own: the error map decides, as for an unknown code.
fn classify_named_status(status: u16, error_map: Option<&ErrorMap>) -> Classification {
    match error_map.and_then(|m| m.entry(status)) {
        Some(_) => classify_unknown_status(status, error_map),
        None => Classification::no_retry("kv_named_status_not_in_error_map", ERROR_MAP_SECTION),
    }
}

fn classify_unknown_status(status: u16, error_map: Option<&ErrorMap>) -> Classification {
    match error_map.and_then(|m| m.entry(status)) {
        Some(entry) if entry.indicates_retry() => Classification::retry(
            RetryReason::KvErrorMapRetryIndicated,
            "kv_error_map_retry_indicated",
            ERROR_MAP_SECTION,
        ),
        // "If the KV error map misses any retry indication, it must be cancelled and not be
        // sent to the Retry orchestrator."
        Some(_) => Classification::no_retry("kv_error_map_no_retry_indication", ERROR_MAP_SECTION),
        None => Classification::no_retry("kv_unknown_status_not_in_error_map", ERROR_MAP_SECTION),
    }
}
