//! Views HTTP status and body → retry reason (RFC 0049 "Response Code Retry List", View part).

use super::{Classification, RESPONSE_CODE_SECTION};
use crate::reason::RetryReason;

/// Status that means no active partition. RFC 0049 lists 302 twice (as
/// VIEWS_NO_ACTIVE_PARTITION and among the VIEWS_TEMPORARY_FAILURE codes); the specific rule
/// wins because the RFC lists it first and names it explicitly, the second list being "Others".
pub const VIEWS_NO_ACTIVE_PARTITION_STATUS: u16 = 302;

/// Statuses retried as VIEWS_TEMPORARY_FAILURE regardless of the body.
pub const VIEWS_TEMPORARY_FAILURE_STATUSES: [u16; 15] = [
    300, 301, 302, 303, 307, 401, 408, 409, 412, 416, 417, 501, 502, 503, 504,
];

/// A 404 is retried only when the body contains this.
pub const VIEWS_404_RETRY_MARKER: &str = r#""reason":"missing""#;

/// A 500 is not retried when the body contains "error" and one of these.
pub const VIEWS_500_EXCLUSION_MARKERS: [&str; 2] = ["{not_found, missing_named_view}", r#""badarg""#];

/// Classifies a views response from its HTTP status and body text.
pub fn classify_views(http_status: u16, body: &str) -> Classification {
    let temp = |rule| Classification::retry(RetryReason::ViewsTemporaryFailure, rule, RESPONSE_CODE_SECTION);
    match http_status {
        VIEWS_NO_ACTIVE_PARTITION_STATUS => Classification::retry(
            RetryReason::ViewsNoActivePartition,
            "views_no_active_partition",
            RESPONSE_CODE_SECTION,
        ),
        s if VIEWS_TEMPORARY_FAILURE_STATUSES.contains(&s) => temp("views_temporary_failure_status"),
        404 if body.contains(VIEWS_404_RETRY_MARKER) => temp("views_404_reason_missing"),
        500 if body.contains("error") && VIEWS_500_EXCLUSION_MARKERS.iter().any(|m| body.contains(m)) => {
            Classification::no_retry("views_500_excluded_body", RESPONSE_CODE_SECTION)
        }
        500 => temp("views_500_retried"),
        _ => Classification::no_retry("views_status_not_retried", RESPONSE_CODE_SECTION),
    }
}
