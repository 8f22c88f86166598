//! KV response status → retry reason (RFC 0049 "Response Code Retry List", KV part).

use super::error_map::{ErrorMap, ERROR_MAP_SECTION};
use super::{Classification, RESPONSE_CODE_SECTION};
use crate::operation::KvOperation;
use crate::policy::Compat;
use crate::reason::RetryReason;

/// A known KV status: its code, its protocol name, and the reason RFC 0049 gives it (if any).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KvStatus {
    /// Status code.
    pub code: u16,
    /// Name in the memcached binary protocol (docs/BinaryProtocol.md, "Response Status").
    pub name: &'static str,
    /// The RFC 0049 retry reason; `None` means "known, complete response: do not retry".
    pub reason: Option<RetryReason>,
}

const fn st(code: u16, name: &'static str, reason: Option<RetryReason>) -> KvStatus {
    KvStatus { code, name, reason }
}

/// Every KV status the core knows. The six with a reason are RFC 0049's KV retry list; every
/// other known status is a complete response and is not retried ("By default, once a complete,
/// known response is received it should not be retried"). Unknown codes go to the error map.
pub const KV_STATUS_TABLE: &[KvStatus] = {
    use RetryReason::*;
    &[
        st(0x00, "SUCCESS", None),
        st(0x01, "KEY_ENOENT", None),
        st(0x02, "KEY_EEXISTS", None),
        st(0x03, "E2BIG", None),
        st(0x04, "EINVAL", None),
        st(0x05, "NOT_STORED", None),
        st(0x06, "DELTA_BADVAL", None),
        st(0x07, "NOT_MY_VBUCKET", Some(KvNotMyVbucket)),
        st(0x08, "NO_BUCKET", None),
        st(0x09, "LOCKED", Some(KvLocked)),
        st(0x0a, "DCP_STREAM_NOT_FOUND", None),
        st(0x0b, "OPAQUE_NO_MATCH", None),
        st(0x0c, "EWOULDTHROTTLE", None),
        st(0x0d, "ECONFIGONLY", None),
        st(0x0e, "NOT_LOCKED", None),
        st(0x0f, "CAS_VALUE_INVALID", None),
        st(0x1f, "AUTH_STALE", None),
        st(0x20, "AUTH_ERROR", None),
        st(0x21, "AUTH_CONTINUE", None),
        st(0x22, "ERANGE", None),
        st(0x23, "ROLLBACK", None),
        st(0x24, "EACCESS", None),
        st(0x25, "NOT_INITIALIZED", None),
        st(0x30, "RATE_LIMITED_NETWORK_INGRESS", None),
        st(0x31, "RATE_LIMITED_NETWORK_EGRESS", None),
        st(0x32, "RATE_LIMITED_MAX_CONNECTIONS", None),
        st(0x33, "RATE_LIMITED_MAX_COMMANDS", None),
        st(0x34, "SCOPE_SIZE_LIMIT_EXCEEDED", None),
        st(0x81, "UNKNOWN_COMMAND", None),
        st(0x82, "ENOMEM", None),
        st(0x83, "NOT_SUPPORTED", None),
        st(0x84, "EINTERNAL", None),
        st(0x85, "EBUSY", None),
        st(0x86, "ETMPFAIL", Some(KvTemporaryFailure)),
        st(0x87, "XATTR_EINVAL", None),
        st(0x88, "UNKNOWN_COLLECTION", Some(KvCollectionOutdated)),
        st(0x89, "NO_COLLECTIONS_MANIFEST", None),
        st(0x8a, "CANNOT_APPLY_COLLECTIONS_MANIFEST", None),
        st(0x8b, "COLLECTIONS_MANIFEST_IS_AHEAD", None),
        st(0x8c, "UNKNOWN_SCOPE", None),
        st(0x8d, "DCP_STREAMID_INVALID", None),
        st(0xa0, "DURABILITY_INVALID_LEVEL", None),
        st(0xa1, "DURABILITY_IMPOSSIBLE", None),
        st(0xa2, "SYNC_WRITE_IN_PROGRESS", Some(KvSyncWriteInProgress)),
        st(0xa3, "SYNC_WRITE_AMBIGUOUS", None),
        st(
            0xa4,
            "SYNC_WRITE_RE_COMMIT_IN_PROGRESS",
            Some(KvSyncWriteReCommitInProgress),
        ),
        st(0xc0, "SUBDOC_PATH_ENOENT", None),
        st(0xc1, "SUBDOC_PATH_MISMATCH", None),
        st(0xc2, "SUBDOC_PATH_EINVAL", None),
        st(0xc3, "SUBDOC_PATH_E2BIG", None),
        st(0xc4, "SUBDOC_DOC_E2DEEP", None),
        st(0xc5, "SUBDOC_VALUE_CANTINSERT", None),
        st(0xc6, "SUBDOC_DOC_NOT_JSON", None),
        st(0xc7, "SUBDOC_NUM_ERANGE", None),
        st(0xc8, "SUBDOC_DELTA_EINVAL", None),
        st(0xc9, "SUBDOC_PATH_EEXISTS", None),
        st(0xca, "SUBDOC_VALUE_ETOODEEP", None),
        st(0xcb, "SUBDOC_INVALID_COMBO", None),
        st(0xcc, "SUBDOC_MULTI_PATH_FAILURE", None),
        st(0xcd, "SUBDOC_SUCCESS_DELETED", None),
        st(0xce, "SUBDOC_XATTR_INVALID_FLAG_COMBO", None),
        st(0xcf, "SUBDOC_XATTR_INVALID_KEY_COMBO", None),
        st(0xd0, "SUBDOC_XATTR_UNKNOWN_MACRO", None),
        st(0xd1, "SUBDOC_XATTR_UNKNOWN_VATTR", None),
        st(0xd2, "SUBDOC_XATTR_CANT_MODIFY_VATTR", None),
        st(0xd3, "SUBDOC_MULTI_PATH_FAILURE_DELETED", None),
        st(0xd4, "SUBDOC_INVALID_XATTR_ORDER", None),
        st(0xd5, "SUBDOC_XATTR_UNKNOWN_VATTR_MACRO", None),
        st(0xd6, "SUBDOC_CAN_ONLY_REVIVE_DELETED_DOCUMENTS", None),
        st(0xd7, "SUBDOC_DELETED_DOCUMENT_CANT_HAVE_VALUE", None),
    ]
};

/// KV status 0x85 EBUSY: not on RFC 0049's list; the Java and Go SDKs retry it (compat `retry_kv_busy`).
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
    match (known.reason, operation) {
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
        (None, _) => Classification::no_retry("kv_known_status_not_retried", RESPONSE_CODE_SECTION),
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
