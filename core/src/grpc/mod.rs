//! gRPC's retry and hedging policy (gRFC A6, grpc/proposal `A6-client-retries.md`), pure like the
//! rest: the service config's policies validated and matched by method ([`config`]), the decision
//! after each attempt of a retried call ([`retry`]), and the step machine of a hedged call
//! ([`hedging`]). Throttling is the core's token bucket (`retryThrottling`), lent to each call.

// The status codes are in every build (the serde forms' refusals name them); the rules are the
// `grpc` feature's.
pub mod code;
#[cfg(feature = "grpc")]
pub mod config;
#[cfg(feature = "grpc")]
pub mod hedging;
#[cfg(feature = "grpc")]
pub mod retry;

pub use code::{CodeSet, GrpcCode, GRPC_CODES};
#[cfg(feature = "grpc")]
pub use config::{
    parse_duration, ClientOptions, HedgingPolicy, HedgingPolicyDocument, MethodConfigDocument, MethodName,
    MethodPolicy, RetryPolicy, RetryPolicyDocument, RetryThrottlingDocument, ServiceConfig,
    ServiceConfigDocument, DEFAULT_MAX_ATTEMPTS_CAP,
};
#[cfg(feature = "grpc")]
pub use hedging::{grpc_hedge, HedgeEnd, HedgeEvent, HedgeEventForm, HedgeEventKind, HedgeState, HedgeStep};
#[cfg(feature = "grpc")]
pub use retry::{
    backoff_bound_ns, grpc_retry, jittered_ms, read_pushback, AttemptReach, GrpcAction, GrpcAttempt,
    GrpcJitter, GrpcRetryDecision, GrpcRetryState, Pushback, ThrottleEvent, MAX_TRANSPARENT_RETRIES,
};
