//! Analytics error code → retry reason (RFC 0049 "Response Code Retry List", Analytics part).

use super::{Classification, RESPONSE_CODE_SECTION};
use crate::reason::RetryReason;

/// Analytics codes that mean a temporary failure.
pub const ANALYTICS_TEMPORARY_FAILURE_CODES: [u32; 3] = [23000, 23003, 23007];

/// Classifies the first error of an analytics response.
pub fn classify_analytics(code: u32) -> Classification {
    if ANALYTICS_TEMPORARY_FAILURE_CODES.contains(&code) {
        Classification::retry(
            RetryReason::AnalyticsTemporaryFailure,
            "analytics_temporary_failure",
            RESPONSE_CODE_SECTION,
        )
    } else {
        Classification::no_retry("analytics_code_not_retried", RESPONSE_CODE_SECTION)
    }
}
