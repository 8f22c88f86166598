//! The C enums of gRPC's retry and hedging (gRFC A6): `RP_GRPC_CODE_*` and the values of
//! `rp_grpc_retry` and `rp_grpc_hedge`, numbered and mapped to the core's values as in `enums.rs`;
//! their names are the core's serde forms, as in the JSON API's `grpc_retry` and `grpc_hedge`.
#![allow(missing_docs)]

use retrypolicy::grpc::{AttemptReach, GrpcAction, GrpcCode, GrpcJitter, HedgeEnd, ThrottleEvent};
use serde::{Deserialize, Serialize};

use crate::enums::{c_enum, CEnum};

/// A gRPC status code (an `RP_GRPC_CODE_*` constant, its number the code's own: 14 is UNAVAILABLE);
/// names "OK", "CANCELLED", ..., "UNAUTHENTICATED". A set of codes (a policy's
/// `retryable_status_codes`) is a `uint32_t` holding bit `1 << code` for each code in it.
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_grpc_code(pub u32);

pub const RP_GRPC_CODE_OK: rp_grpc_code = rp_grpc_code(0);
pub const RP_GRPC_CODE_CANCELLED: rp_grpc_code = rp_grpc_code(1);
pub const RP_GRPC_CODE_UNKNOWN: rp_grpc_code = rp_grpc_code(2);
pub const RP_GRPC_CODE_INVALID_ARGUMENT: rp_grpc_code = rp_grpc_code(3);
pub const RP_GRPC_CODE_DEADLINE_EXCEEDED: rp_grpc_code = rp_grpc_code(4);
pub const RP_GRPC_CODE_NOT_FOUND: rp_grpc_code = rp_grpc_code(5);
pub const RP_GRPC_CODE_ALREADY_EXISTS: rp_grpc_code = rp_grpc_code(6);
pub const RP_GRPC_CODE_PERMISSION_DENIED: rp_grpc_code = rp_grpc_code(7);
pub const RP_GRPC_CODE_RESOURCE_EXHAUSTED: rp_grpc_code = rp_grpc_code(8);
pub const RP_GRPC_CODE_FAILED_PRECONDITION: rp_grpc_code = rp_grpc_code(9);
pub const RP_GRPC_CODE_ABORTED: rp_grpc_code = rp_grpc_code(10);
pub const RP_GRPC_CODE_OUT_OF_RANGE: rp_grpc_code = rp_grpc_code(11);
pub const RP_GRPC_CODE_UNIMPLEMENTED: rp_grpc_code = rp_grpc_code(12);
pub const RP_GRPC_CODE_INTERNAL: rp_grpc_code = rp_grpc_code(13);
pub const RP_GRPC_CODE_UNAVAILABLE: rp_grpc_code = rp_grpc_code(14);
pub const RP_GRPC_CODE_DATA_LOSS: rp_grpc_code = rp_grpc_code(15);
pub const RP_GRPC_CODE_UNAUTHENTICATED: rp_grpc_code = rp_grpc_code(16);

/// How far a failed attempt got (an `RP_GRPC_REACH_*` constant; gRFC A6 "Transparent Retries").
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_grpc_reach(pub u32);

/// "processed": the server's application saw it, or the client cannot tell (the zero value).
pub const RP_GRPC_REACH_PROCESSED: rp_grpc_reach = rp_grpc_reach(0);
/// "never_sent": it never left the client.
pub const RP_GRPC_REACH_NEVER_SENT: rp_grpc_reach = rp_grpc_reach(1);
/// "unprocessed": it reached the server's gRPC library but not its application (REFUSED_STREAM).
pub const RP_GRPC_REACH_UNPROCESSED: rp_grpc_reach = rp_grpc_reach(2);

/// How the backoff bound is jittered (an `RP_GRPC_JITTER_*` constant).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_grpc_jitter(pub u32);

/// "full": A6's text before 2024-08-29 and grpc-java before 1.71, a draw from [0, bound).
pub const RP_GRPC_JITTER_FULL: rp_grpc_jitter = rp_grpc_jitter(0);
/// "plus_minus_20_percent": A6's text since 2024-08-29 (the JSON default), grpc-go, grpc core,
/// bound × (0.8 + 0.4 r).
pub const RP_GRPC_JITTER_PLUS_MINUS_20_PERCENT: rp_grpc_jitter = rp_grpc_jitter(1);

/// What to do after an attempt of a retried call (an `RP_GRPC_ACTION_*` constant).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_grpc_action(pub u32);

/// "succeeded": return the attempt's answer.
pub const RP_GRPC_ACTION_SUCCEEDED: rp_grpc_action = rp_grpc_action(0);
/// "retry": send the next attempt after `delay_ms`.
pub const RP_GRPC_ACTION_RETRY: rp_grpc_action = rp_grpc_action(1);
/// "fail": return the attempt's status to the application.
pub const RP_GRPC_ACTION_FAIL: rp_grpc_action = rp_grpc_action(2);

/// What the throttling bucket was told of an attempt (an `RP_GRPC_THROTTLE_*` constant).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_grpc_throttle(pub u32);

/// Nothing (no name).
pub const RP_GRPC_THROTTLE_NONE: rp_grpc_throttle = rp_grpc_throttle(0);
/// "success": a successful RPC (adds `tokenRatio`).
pub const RP_GRPC_THROTTLE_SUCCESS: rp_grpc_throttle = rp_grpc_throttle(1);
/// "failure": a failed RPC (takes a token).
pub const RP_GRPC_THROTTLE_FAILURE: rp_grpc_throttle = rp_grpc_throttle(2);

/// What happened to a hedged call (an `RP_GRPC_HEDGE_*` constant), told to `rp_grpc_hedge`.
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_grpc_hedge_event(pub u32);

/// "start": the call starts.
pub const RP_GRPC_HEDGE_START: rp_grpc_hedge_event = rp_grpc_hedge_event(0);
/// "hedge_due": the wait a step asked for (`next_hedge_in_ms`) is over.
pub const RP_GRPC_HEDGE_DUE: rp_grpc_hedge_event = rp_grpc_hedge_event(1);
/// "attempt_ended": one attempt ended (the `attempt` argument says how).
pub const RP_GRPC_HEDGE_ATTEMPT_ENDED: rp_grpc_hedge_event = rp_grpc_hedge_event(2);
/// "committed": the host committed the call to one attempt (its response headers arrived).
pub const RP_GRPC_HEDGE_COMMITTED: rp_grpc_hedge_event = rp_grpc_hedge_event(3);

/// How a hedged call ended (an `RP_GRPC_HEDGE_END_*` constant).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_grpc_hedge_end(pub u32);

/// The call is not over (no name).
pub const RP_GRPC_HEDGE_END_NONE: rp_grpc_hedge_end = rp_grpc_hedge_end(0);
/// "succeeded": an attempt succeeded.
pub const RP_GRPC_HEDGE_END_SUCCEEDED: rp_grpc_hedge_end = rp_grpc_hedge_end(1);
/// "failed": the call failed with `status`.
pub const RP_GRPC_HEDGE_END_FAILED: rp_grpc_hedge_end = rp_grpc_hedge_end(2);

/// Which method config of a service config applied to a method (an `RP_GRPC_MATCH_*` constant).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_grpc_match(pub u32);

/// No method config applies (no name): the RPC is neither retried nor hedged.
pub const RP_GRPC_MATCH_NONE: rp_grpc_match = rp_grpc_match(0);
/// "exact": the method config naming this service and method.
pub const RP_GRPC_MATCH_EXACT: rp_grpc_match = rp_grpc_match(1);
/// "service": the one naming the service alone.
pub const RP_GRPC_MATCH_SERVICE: rp_grpc_match = rp_grpc_match(2);
/// "default": the default method config (an empty name).
pub const RP_GRPC_MATCH_DEFAULT: rp_grpc_match = rp_grpc_match(3);

/// The kinds of hedging event, named as the JSON API's `grpc_hedge` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum HedgeEventKind {
    /// The call starts.
    Start,
    /// A hedge is due.
    HedgeDue,
    /// An attempt ended.
    AttemptEnded,
    /// The call was committed.
    Committed,
}

/// How a method config matched, named as the core's `ServiceConfig::matched` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum MatchKind {
    /// The exact method.
    Exact,
    /// The service's default.
    Service,
    /// The default config.
    Default,
}

c_enum!(rp_grpc_code <=> GrpcCode, [
    (RP_GRPC_CODE_OK => GrpcCode::Ok),
    (RP_GRPC_CODE_CANCELLED => GrpcCode::Cancelled),
    (RP_GRPC_CODE_UNKNOWN => GrpcCode::Unknown),
    (RP_GRPC_CODE_INVALID_ARGUMENT => GrpcCode::InvalidArgument),
    (RP_GRPC_CODE_DEADLINE_EXCEEDED => GrpcCode::DeadlineExceeded),
    (RP_GRPC_CODE_NOT_FOUND => GrpcCode::NotFound),
    (RP_GRPC_CODE_ALREADY_EXISTS => GrpcCode::AlreadyExists),
    (RP_GRPC_CODE_PERMISSION_DENIED => GrpcCode::PermissionDenied),
    (RP_GRPC_CODE_RESOURCE_EXHAUSTED => GrpcCode::ResourceExhausted),
    (RP_GRPC_CODE_FAILED_PRECONDITION => GrpcCode::FailedPrecondition),
    (RP_GRPC_CODE_ABORTED => GrpcCode::Aborted),
    (RP_GRPC_CODE_OUT_OF_RANGE => GrpcCode::OutOfRange),
    (RP_GRPC_CODE_UNIMPLEMENTED => GrpcCode::Unimplemented),
    (RP_GRPC_CODE_INTERNAL => GrpcCode::Internal),
    (RP_GRPC_CODE_UNAVAILABLE => GrpcCode::Unavailable),
    (RP_GRPC_CODE_DATA_LOSS => GrpcCode::DataLoss),
    (RP_GRPC_CODE_UNAUTHENTICATED => GrpcCode::Unauthenticated),
]);

c_enum!(rp_grpc_reach <=> AttemptReach, [
    (RP_GRPC_REACH_PROCESSED => AttemptReach::Processed),
    (RP_GRPC_REACH_NEVER_SENT => AttemptReach::NeverSent),
    (RP_GRPC_REACH_UNPROCESSED => AttemptReach::Unprocessed),
]);

c_enum!(rp_grpc_jitter <=> GrpcJitter, [
    (RP_GRPC_JITTER_FULL => GrpcJitter::Full),
    (RP_GRPC_JITTER_PLUS_MINUS_20_PERCENT => GrpcJitter::PlusMinus20Percent),
]);

c_enum!(rp_grpc_action <=> GrpcAction, [
    (RP_GRPC_ACTION_SUCCEEDED => GrpcAction::Succeeded),
    (RP_GRPC_ACTION_RETRY => GrpcAction::Retry),
    (RP_GRPC_ACTION_FAIL => GrpcAction::Fail),
]);

c_enum!(rp_grpc_throttle <=> Option<ThrottleEvent>, [
    (RP_GRPC_THROTTLE_NONE => None),
    (RP_GRPC_THROTTLE_SUCCESS => Some(ThrottleEvent::Success)),
    (RP_GRPC_THROTTLE_FAILURE => Some(ThrottleEvent::Failure)),
]);

c_enum!(rp_grpc_hedge_event <=> HedgeEventKind, [
    (RP_GRPC_HEDGE_START => HedgeEventKind::Start),
    (RP_GRPC_HEDGE_DUE => HedgeEventKind::HedgeDue),
    (RP_GRPC_HEDGE_ATTEMPT_ENDED => HedgeEventKind::AttemptEnded),
    (RP_GRPC_HEDGE_COMMITTED => HedgeEventKind::Committed),
]);

c_enum!(rp_grpc_hedge_end <=> Option<HedgeEnd>, [
    (RP_GRPC_HEDGE_END_NONE => None),
    (RP_GRPC_HEDGE_END_SUCCEEDED => Some(HedgeEnd::Succeeded)),
    (RP_GRPC_HEDGE_END_FAILED => Some(HedgeEnd::Failed)),
]);

c_enum!(rp_grpc_match <=> Option<MatchKind>, [
    (RP_GRPC_MATCH_NONE => None),
    (RP_GRPC_MATCH_EXACT => Some(MatchKind::Exact)),
    (RP_GRPC_MATCH_SERVICE => Some(MatchKind::Service)),
    (RP_GRPC_MATCH_DEFAULT => Some(MatchKind::Default)),
]);
