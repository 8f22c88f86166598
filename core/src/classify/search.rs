//! Search HTTP status → retry reason (RFC 0049 "Response Code Retry List", Search part).

use super::{Classification, RESPONSE_CODE_SECTION};
use crate::reason::RetryReason;

/// The one retryable search status: too many requests.
pub const SEARCH_TOO_MANY_REQUESTS_STATUS: u16 = 429;

/// Classifies a search response's HTTP status.
pub fn classify_search(http_status: u16) -> Classification {
    if http_status == SEARCH_TOO_MANY_REQUESTS_STATUS {
        Classification::retry(
            RetryReason::SearchTooManyRequests,
            "search_too_many_requests",
            RESPONSE_CODE_SECTION,
        )
    } else {
        Classification::no_retry("search_status_not_retried", RESPONSE_CODE_SECTION)
    }
}
