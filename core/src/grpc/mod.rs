//! gRPC's retry and hedging policy (gRFC A6, grpc/proposal `A6-client-retries.md`), pure like the
//! rest: the service config's policies validated and matched by method ([`config`]), the decision
//! after each attempt of a retried call ([`retry`]), and the step machine of a hedged call
//! ([`hedging`]). Throttling is the core's token bucket (`retryThrottling`), lent to each call.

pub mod code;
pub mod config;
pub mod hedging;
pub mod retry;

pub use code::{CodeSet, GrpcCode, GRPC_CODES};
pub use config::{
    parse_duration, ClientOptions, HedgingPolicy, HedgingPolicyDocument, MethodConfigDocument, MethodName,
    MethodPolicy, RetryPolicy, RetryPolicyDocument, RetryThrottlingDocument, ServiceConfig,
    ServiceConfigDocument, DEFAULT_MAX_ATTEMPTS_CAP,
};
pub use hedging::{grpc_hedge, HedgeEnd, HedgeEvent, HedgeState, HedgeStep};
pub use retry::{
    backoff_bound_ns, grpc_retry, jittered_ms, read_pushback, AttemptReach, GrpcAction, GrpcAttempt,
    GrpcJitter, GrpcRetryDecision, GrpcRetryState, Pushback, ThrottleEvent,
};
