//! Failures before or while a request is on the wire (RFC 0049, "Different Stage Retry Semantics").

use serde::{Deserialize, Serialize};

use super::Classification;
use crate::reason::RetryReason;

/// A failure the SDK itself observes, not a server response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DispatchFailure {
    /// Client dispatch: no socket available to write into.
    SocketNotAvailable,
    /// Client dispatch: the service is not available (e.g. no query node after failover).
    ServiceNotAvailable,
    /// Client dispatch: the target node is not available.
    NodeNotAvailable,
    /// Client dispatch: the endpoint's circuit breaker is open.
    CircuitBreakerOpen,
    /// Network time: the socket closed while the request was in flight.
    SocketClosedWhileInFlight,
}

/// RFC 0049: the stage table, (failure, reason, section).
pub const DISPATCH_TABLE: [(DispatchFailure, RetryReason, &str); 5] = [
    (
        DispatchFailure::SocketNotAvailable,
        RetryReason::SocketNotAvailable,
        "RFC 0049, Client Dispatch",
    ),
    (
        DispatchFailure::ServiceNotAvailable,
        RetryReason::ServiceNotAvailable,
        "RFC 0049, Client Dispatch",
    ),
    (
        DispatchFailure::NodeNotAvailable,
        RetryReason::NodeNotAvailable,
        "RFC 0049, Client Dispatch",
    ),
    (
        DispatchFailure::CircuitBreakerOpen,
        RetryReason::CircuitBreakerOpen,
        "RFC 0049, RetryReason (CIRCUIT_BREAKER_OPEN)",
    ),
    (
        DispatchFailure::SocketClosedWhileInFlight,
        RetryReason::SocketClosedWhileInFlight,
        "RFC 0049, Network Time",
    ),
];

/// Names the retry reason for a failure the SDK observed before or during transmission.
pub fn classify_dispatch(failure: DispatchFailure) -> Classification {
    let (_, reason, section) = DISPATCH_TABLE
        .iter()
        .find(|(f, _, _)| *f == failure)
        .copied()
        .unwrap_or((failure, RetryReason::Unknown, "RFC 0049, RetryReason"));
    Classification::retry(reason, "dispatch_stage", section)
}
