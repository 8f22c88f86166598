//! Query error code → retry reason (RFC 0049 "Response Code Retry List", Query part).

use super::{Classification, RESPONSE_CODE_SECTION};
use crate::policy::Compat;
use crate::reason::RetryReason;

/// Codes that mean the prepared statement must be re-prepared.
pub const QUERY_PREPARED_STATEMENT_CODES: [u32; 3] = [4040, 4050, 4070];
/// Go SDK's wider prepared-statement range, used with compat `query_retry_4040_to_4090`.
pub const GO_QUERY_PREPARED_STATEMENT_CODES: [u32; 6] = [4040, 4050, 4060, 4070, 4080, 4090];
/// Code that means "index not found" when the message says so.
pub const QUERY_INDEX_NOT_FOUND_CODE: u32 = 5000;
/// The message fragment that makes code 5000 retryable.
pub const QUERY_INDEX_NOT_FOUND_MARKER: &str = "queryport.indexNotFound";

/// The query code whose `"retry": true` every SDK ignores (MB-50643).
pub const QUERY_RETRY_FLAG_IGNORED_CODE: u32 = 12016;
/// Where the query retry flag's handling comes from.
pub const QUERY_RETRY_FLAG_SECTION: &str = "gocbcore n1qlcomponent.go, core-io QueryMessageHandler, .NET QueryResultBase: the first error's \"retry\": true, except code 12016 (MB-50643)";

/// Classifies the first error of a query response: its `code`, `message` and the `retry` flag
/// the server sets on the error object. RFC 0049's codes come first (as in core-io), then the
/// flag, which every SDK honours except for code 12016.
pub fn classify_query(code: u32, message: &str, retry: bool, compat: &Compat) -> Classification {
    if QUERY_PREPARED_STATEMENT_CODES.contains(&code) {
        return Classification::retry(
            RetryReason::QueryPreparedStatementFailure,
            "query_prepared_statement_failure",
            RESPONSE_CODE_SECTION,
        );
    }
    if compat.query_retry_4040_to_4090 && GO_QUERY_PREPARED_STATEMENT_CODES.contains(&code) {
        return Classification::retry(
            RetryReason::QueryPreparedStatementFailure,
            "compat_query_retry_4040_to_4090",
            "compat query_retry_4040_to_4090: the Go SDK retries 4040..4090",
        );
    }
    if code == QUERY_INDEX_NOT_FOUND_CODE && message.contains(QUERY_INDEX_NOT_FOUND_MARKER) {
        return Classification::retry(
            RetryReason::QueryIndexNotFound,
            "query_index_not_found",
            RESPONSE_CODE_SECTION,
        );
    }
    if retry && code == QUERY_RETRY_FLAG_IGNORED_CODE {
        return Classification::no_retry("query_12016_retry_flag_ignored", QUERY_RETRY_FLAG_SECTION);
    }
    if retry {
        return Classification::retry(
            RetryReason::QueryErrorRetryable,
            "query_error_retryable",
            QUERY_RETRY_FLAG_SECTION,
        );
    }
    Classification::no_retry("query_code_not_retried", RESPONSE_CODE_SECTION)
}
