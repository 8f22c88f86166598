//! The C enums: each a `uint32_t` typedef (a `#[repr(transparent)]` newtype here) with numbered
//! constants, never a Rust enum, since C may put any number in it and reading an out-of-range Rust
//! enum is undefined. The numbers are ABI: explicit, never reused. Each maps to a core value in a
//! `match` (`c_enum!`), so a number that names no constant is RP_RESULT_INVALID_ENUM.

use retrypolicy::{DispatchFailure, HttpMethod, KvOperation, NoRetryCause, RetryReason, Rule, StrategyKind};

use crate::error::Failure;

/// A retry reason of the RFC 0049 table (an `RP_REASON_*` constant).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_reason(pub u32);

/// UNKNOWN: never retried (RFC 0049: "must not be retried").
pub const RP_REASON_UNKNOWN: rp_reason = rp_reason(0);
/// SOCKET_NOT_AVAILABLE: no socket to write the request into.
pub const RP_REASON_SOCKET_NOT_AVAILABLE: rp_reason = rp_reason(1);
/// SERVICE_NOT_AVAILABLE: the service is not available on the node.
pub const RP_REASON_SERVICE_NOT_AVAILABLE: rp_reason = rp_reason(2);
/// NODE_NOT_AVAILABLE: the target node is not available.
pub const RP_REASON_NODE_NOT_AVAILABLE: rp_reason = rp_reason(3);
/// KV_NOT_MY_VBUCKET: KV status 0x07 (always retried).
pub const RP_REASON_KV_NOT_MY_VBUCKET: rp_reason = rp_reason(4);
/// KV_COLLECTION_OUTDATED: KV status 0x88 (always retried).
pub const RP_REASON_KV_COLLECTION_OUTDATED: rp_reason = rp_reason(5);
/// KV_ERROR_MAP_RETRY_INDICATED: an unknown KV status whose error-map entry says retry.
pub const RP_REASON_KV_ERROR_MAP_RETRY_INDICATED: rp_reason = rp_reason(6);
/// KV_LOCKED: KV status 0x09.
pub const RP_REASON_KV_LOCKED: rp_reason = rp_reason(7);
/// KV_TEMPORARY_FAILURE: KV status 0x86.
pub const RP_REASON_KV_TEMPORARY_FAILURE: rp_reason = rp_reason(8);
/// KV_SYNC_WRITE_IN_PROGRESS: KV status 0xa2.
pub const RP_REASON_KV_SYNC_WRITE_IN_PROGRESS: rp_reason = rp_reason(9);
/// KV_SYNC_WRITE_RE_COMMIT_IN_PROGRESS: KV status 0xa4.
pub const RP_REASON_KV_SYNC_WRITE_RE_COMMIT_IN_PROGRESS: rp_reason = rp_reason(10);
/// SERVICE_RESPONSE_CODE_INDICATED: a service response code marked retryable.
pub const RP_REASON_SERVICE_RESPONSE_CODE_INDICATED: rp_reason = rp_reason(11);
/// SOCKET_CLOSED_WHILE_IN_FLIGHT: the socket closed with the request on the wire.
pub const RP_REASON_SOCKET_CLOSED_WHILE_IN_FLIGHT: rp_reason = rp_reason(12);
/// CIRCUIT_BREAKER_OPEN: the endpoint's circuit breaker is open.
pub const RP_REASON_CIRCUIT_BREAKER_OPEN: rp_reason = rp_reason(13);
/// QUERY_PREPARED_STATEMENT_FAILURE: query codes 4040, 4050, 4070.
pub const RP_REASON_QUERY_PREPARED_STATEMENT_FAILURE: rp_reason = rp_reason(14);
/// QUERY_INDEX_NOT_FOUND: query code 5000 with `queryport.indexNotFound`.
pub const RP_REASON_QUERY_INDEX_NOT_FOUND: rp_reason = rp_reason(15);
/// ANALYTICS_TEMPORARY_FAILURE: analytics codes 23000, 23003, 23007.
pub const RP_REASON_ANALYTICS_TEMPORARY_FAILURE: rp_reason = rp_reason(16);
/// SEARCH_TOO_MANY_REQUESTS: search HTTP 429.
pub const RP_REASON_SEARCH_TOO_MANY_REQUESTS: rp_reason = rp_reason(17);
/// VIEWS_TEMPORARY_FAILURE: a retryable views HTTP status.
pub const RP_REASON_VIEWS_TEMPORARY_FAILURE: rp_reason = rp_reason(18);
/// VIEWS_NO_ACTIVE_PARTITION: views HTTP 302 (always retried).
pub const RP_REASON_VIEWS_NO_ACTIVE_PARTITION: rp_reason = rp_reason(19);

/// A service an operation is sent to (an `RP_SERVICE_*` constant).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_service(pub u32);

/// Key-value.
pub const RP_SERVICE_KV: rp_service = rp_service(0);
/// N1QL / SQL++ query.
pub const RP_SERVICE_QUERY: rp_service = rp_service(1);
/// Analytics.
pub const RP_SERVICE_ANALYTICS: rp_service = rp_service(2);
/// Full-text search.
pub const RP_SERVICE_SEARCH: rp_service = rp_service(3);
/// Map-reduce views.
pub const RP_SERVICE_VIEWS: rp_service = rp_service(4);
/// The cluster manager REST API.
pub const RP_SERVICE_CLUSTER_MANAGER: rp_service = rp_service(5);
/// The management APIs.
pub const RP_SERVICE_MANAGEMENT: rp_service = rp_service(6);

/// A KV operation of the RFC 0049 catalog (an `RP_KV_OPERATION_*` constant).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_kv_operation(pub u32);

/// get (idempotent).
pub const RP_KV_OPERATION_GET: rp_kv_operation = rp_kv_operation(0);
/// get_and_lock.
pub const RP_KV_OPERATION_GET_AND_LOCK: rp_kv_operation = rp_kv_operation(1);
/// get_and_touch.
pub const RP_KV_OPERATION_GET_AND_TOUCH: rp_kv_operation = rp_kv_operation(2);
/// get_replica (idempotent).
pub const RP_KV_OPERATION_GET_REPLICA: rp_kv_operation = rp_kv_operation(3);
/// lookup_in (idempotent).
pub const RP_KV_OPERATION_LOOKUP_IN: rp_kv_operation = rp_kv_operation(4);
/// exists (GetMeta; not on the RFC's idempotent list).
pub const RP_KV_OPERATION_EXISTS: rp_kv_operation = rp_kv_operation(5);
/// noop (idempotent).
pub const RP_KV_OPERATION_NOOP: rp_kv_operation = rp_kv_operation(6);
/// observe_cas (idempotent).
pub const RP_KV_OPERATION_OBSERVE_CAS: rp_kv_operation = rp_kv_operation(7);
/// observe_seqno (idempotent).
pub const RP_KV_OPERATION_OBSERVE_SEQNO: rp_kv_operation = rp_kv_operation(8);
/// get_collection_id (idempotent).
pub const RP_KV_OPERATION_GET_COLLECTION_ID: rp_kv_operation = rp_kv_operation(9);
/// get_collection_manifest (idempotent).
pub const RP_KV_OPERATION_GET_COLLECTION_MANIFEST: rp_kv_operation = rp_kv_operation(10);
/// carrier_config (idempotent).
pub const RP_KV_OPERATION_CARRIER_CONFIG: rp_kv_operation = rp_kv_operation(11);
/// global_config (idempotent).
pub const RP_KV_OPERATION_GLOBAL_CONFIG: rp_kv_operation = rp_kv_operation(12);
/// insert.
pub const RP_KV_OPERATION_INSERT: rp_kv_operation = rp_kv_operation(13);
/// upsert.
pub const RP_KV_OPERATION_UPSERT: rp_kv_operation = rp_kv_operation(14);
/// replace.
pub const RP_KV_OPERATION_REPLACE: rp_kv_operation = rp_kv_operation(15);
/// remove.
pub const RP_KV_OPERATION_REMOVE: rp_kv_operation = rp_kv_operation(16);
/// append.
pub const RP_KV_OPERATION_APPEND: rp_kv_operation = rp_kv_operation(17);
/// prepend.
pub const RP_KV_OPERATION_PREPEND: rp_kv_operation = rp_kv_operation(18);
/// increment.
pub const RP_KV_OPERATION_INCREMENT: rp_kv_operation = rp_kv_operation(19);
/// decrement.
pub const RP_KV_OPERATION_DECREMENT: rp_kv_operation = rp_kv_operation(20);
/// touch.
pub const RP_KV_OPERATION_TOUCH: rp_kv_operation = rp_kv_operation(21);
/// unlock.
pub const RP_KV_OPERATION_UNLOCK: rp_kv_operation = rp_kv_operation(22);
/// mutate_in.
pub const RP_KV_OPERATION_MUTATE_IN: rp_kv_operation = rp_kv_operation(23);

/// An HTTP method, for the cluster manager and management services (an `RP_HTTP_METHOD_*` constant).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_http_method(pub u32);

/// GET: the only method RFC 0049 calls idempotent.
pub const RP_HTTP_METHOD_GET: rp_http_method = rp_http_method(0);
/// HEAD.
pub const RP_HTTP_METHOD_HEAD: rp_http_method = rp_http_method(1);
/// POST.
pub const RP_HTTP_METHOD_POST: rp_http_method = rp_http_method(2);
/// PUT.
pub const RP_HTTP_METHOD_PUT: rp_http_method = rp_http_method(3);
/// DELETE.
pub const RP_HTTP_METHOD_DELETE: rp_http_method = rp_http_method(4);
/// PATCH.
pub const RP_HTTP_METHOD_PATCH: rp_http_method = rp_http_method(5);
/// OPTIONS.
pub const RP_HTTP_METHOD_OPTIONS: rp_http_method = rp_http_method(6);

/// A built-in retry strategy (an `RP_STRATEGY_*` constant).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_strategy(pub u32);

/// RFC 0049 "Best Effort": retry while safe, with backoff, until the timeout.
pub const RP_STRATEGY_BEST_EFFORT: rp_strategy = rp_strategy(0);
/// RFC 0049 "Fail Fast": never retry (always-retry reasons still are).
pub const RP_STRATEGY_FAIL_FAST: rp_strategy = rp_strategy(1);

/// A failure the SDK saw before or while the request was on the wire (an `RP_DISPATCH_FAILURE_*` constant).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_dispatch_failure(pub u32);

/// Client dispatch: no socket available to write into.
pub const RP_DISPATCH_FAILURE_SOCKET_NOT_AVAILABLE: rp_dispatch_failure = rp_dispatch_failure(0);
/// Client dispatch: the service is not available.
pub const RP_DISPATCH_FAILURE_SERVICE_NOT_AVAILABLE: rp_dispatch_failure = rp_dispatch_failure(1);
/// Client dispatch: the target node is not available.
pub const RP_DISPATCH_FAILURE_NODE_NOT_AVAILABLE: rp_dispatch_failure = rp_dispatch_failure(2);
/// Client dispatch: the endpoint's circuit breaker is open.
pub const RP_DISPATCH_FAILURE_CIRCUIT_BREAKER_OPEN: rp_dispatch_failure = rp_dispatch_failure(3);
/// Network time: the socket closed while the request was in flight.
pub const RP_DISPATCH_FAILURE_SOCKET_CLOSED_WHILE_IN_FLIGHT: rp_dispatch_failure = rp_dispatch_failure(4);

/// What a decision says to do (an `RP_ACTION_*` constant).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_action(pub u32);

/// Fail the request now (0, so a zeroed decision never means "retry").
pub const RP_ACTION_NO_RETRY: rp_action = rp_action(0);
/// Wait `delay_ms`, then resend (or cancel, when `then_cancel`).
pub const RP_ACTION_RETRY: rp_action = rp_action(1);

/// Why a request is not retried (an `RP_NO_RETRY_CAUSE_*` constant).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_no_retry_cause(pub u32);

/// No cause: the decision is to retry.
pub const RP_NO_RETRY_CAUSE_NONE: rp_no_retry_cause = rp_no_retry_cause(0);
/// Not idempotent, and the reason does not allow non-idempotent retry.
pub const RP_NO_RETRY_CAUSE_NOT_IDEMPOTENT: rp_no_retry_cause = rp_no_retry_cause(1);
/// The strategy (fail fast or a host strategy) declined.
pub const RP_NO_RETRY_CAUSE_STRATEGY_DECLINED: rp_no_retry_cause = rp_no_retry_cause(2);
/// The request is at or past its timeout.
pub const RP_NO_RETRY_CAUSE_DEADLINE_PASSED: rp_no_retry_cause = rp_no_retry_cause(3);
/// The reason is UNKNOWN.
pub const RP_NO_RETRY_CAUSE_UNKNOWN_REASON: rp_no_retry_cause = rp_no_retry_cause(4);

/// The rule that produced a decision (an `RP_RULE_*` constant); `rp_rule_section` gives its spec text.
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_rule(pub u32);

/// The request is at or past its timeout: never retried.
pub const RP_RULE_DEADLINE_PASSED: rp_rule = rp_rule(0);
/// UNKNOWN is never retried.
pub const RP_RULE_UNKNOWN_NEVER_RETRIED: rp_rule = rp_rule(1);
/// An always-retry reason: controlled backoff, strategy skipped.
pub const RP_RULE_ALWAYS_RETRY_CONTROLLED_BACKOFF: rp_rule = rp_rule(2);
/// Best effort retried with its backoff.
pub const RP_RULE_BEST_EFFORT_BACKOFF: rp_rule = rp_rule(3);
/// Best effort declined: not idempotent and the reason does not allow it.
pub const RP_RULE_BEST_EFFORT_NOT_IDEMPOTENT: rp_rule = rp_rule(4);
/// Fail fast declined.
pub const RP_RULE_FAIL_FAST: rp_rule = rp_rule(5);
/// A host-supplied strategy decided.
pub const RP_RULE_CUSTOM_STRATEGY: rp_rule = rp_rule(6);

/// A C enum newtype (`rp_reason`, ...) and the core value each of its constants stands for.
pub(crate) trait CEnum: Copy + 'static {
    /// The core type.
    type Core: Copy;
    /// The C type's name, for error details.
    const TYPE_NAME: &'static str;
    /// Every constant with its core value (for the one-to-one test).
    #[cfg(test)]
    const ALL: &'static [(Self, Self::Core)];
    /// The core value, or `None` for a number that names no constant.
    fn core(self) -> Option<Self::Core>;
    /// The constant for a core value, or `None` if this C library has none for it yet.
    fn from_core(v: Self::Core) -> Option<Self>;
    /// The raw number.
    fn raw(self) -> u32;
}

/// Declares one mapping as data and implements `CEnum` with two `match`es (compiled to tables).
/// The C numbers are the ABI; the row order is free.
macro_rules! c_enum {
    ($c:ident <=> $core:ty, [$(($cv:path => $($corev:tt)+)),* $(,)?]) => {
        impl CEnum for $c {
            type Core = $core;
            const TYPE_NAME: &'static str = stringify!($c);
            #[cfg(test)]
            const ALL: &'static [($c, $core)] = &[$(($cv, $($corev)+)),*];
            #[inline]
            fn core(self) -> Option<$core> {
                match self {
                    $($cv => Some($($corev)+),)*
                    _ => None,
                }
            }
            #[inline]
            #[allow(unreachable_patterns)] // a later core may add values this C library lacks
            fn from_core(v: $core) -> Option<$c> {
                match v {
                    $($($corev)+ => Some($cv),)*
                    _ => None,
                }
            }
            #[inline]
            fn raw(self) -> u32 {
                self.0
            }
        }
    };
}

c_enum!(rp_reason <=> RetryReason, [
    (RP_REASON_UNKNOWN => RetryReason::Unknown),
    (RP_REASON_SOCKET_NOT_AVAILABLE => RetryReason::SocketNotAvailable),
    (RP_REASON_SERVICE_NOT_AVAILABLE => RetryReason::ServiceNotAvailable),
    (RP_REASON_NODE_NOT_AVAILABLE => RetryReason::NodeNotAvailable),
    (RP_REASON_KV_NOT_MY_VBUCKET => RetryReason::KvNotMyVbucket),
    (RP_REASON_KV_COLLECTION_OUTDATED => RetryReason::KvCollectionOutdated),
    (RP_REASON_KV_ERROR_MAP_RETRY_INDICATED => RetryReason::KvErrorMapRetryIndicated),
    (RP_REASON_KV_LOCKED => RetryReason::KvLocked),
    (RP_REASON_KV_TEMPORARY_FAILURE => RetryReason::KvTemporaryFailure),
    (RP_REASON_KV_SYNC_WRITE_IN_PROGRESS => RetryReason::KvSyncWriteInProgress),
    (RP_REASON_KV_SYNC_WRITE_RE_COMMIT_IN_PROGRESS => RetryReason::KvSyncWriteReCommitInProgress),
    (RP_REASON_SERVICE_RESPONSE_CODE_INDICATED => RetryReason::ServiceResponseCodeIndicated),
    (RP_REASON_SOCKET_CLOSED_WHILE_IN_FLIGHT => RetryReason::SocketClosedWhileInFlight),
    (RP_REASON_CIRCUIT_BREAKER_OPEN => RetryReason::CircuitBreakerOpen),
    (RP_REASON_QUERY_PREPARED_STATEMENT_FAILURE => RetryReason::QueryPreparedStatementFailure),
    (RP_REASON_QUERY_INDEX_NOT_FOUND => RetryReason::QueryIndexNotFound),
    (RP_REASON_ANALYTICS_TEMPORARY_FAILURE => RetryReason::AnalyticsTemporaryFailure),
    (RP_REASON_SEARCH_TOO_MANY_REQUESTS => RetryReason::SearchTooManyRequests),
    (RP_REASON_VIEWS_TEMPORARY_FAILURE => RetryReason::ViewsTemporaryFailure),
    (RP_REASON_VIEWS_NO_ACTIVE_PARTITION => RetryReason::ViewsNoActivePartition),
]);

// The services that have a C constant; MongoDB and HTTP arrive with issue 3.
c_enum!(rp_service <=> retrypolicy::Service, [
    (RP_SERVICE_KV => retrypolicy::Service::Kv),
    (RP_SERVICE_QUERY => retrypolicy::Service::Query),
    (RP_SERVICE_ANALYTICS => retrypolicy::Service::Analytics),
    (RP_SERVICE_SEARCH => retrypolicy::Service::Search),
    (RP_SERVICE_VIEWS => retrypolicy::Service::Views),
    (RP_SERVICE_CLUSTER_MANAGER => retrypolicy::Service::ClusterManager),
    (RP_SERVICE_MANAGEMENT => retrypolicy::Service::Management),
]);

c_enum!(rp_kv_operation <=> KvOperation, [
    (RP_KV_OPERATION_GET => KvOperation::Get),
    (RP_KV_OPERATION_GET_AND_LOCK => KvOperation::GetAndLock),
    (RP_KV_OPERATION_GET_AND_TOUCH => KvOperation::GetAndTouch),
    (RP_KV_OPERATION_GET_REPLICA => KvOperation::GetReplica),
    (RP_KV_OPERATION_LOOKUP_IN => KvOperation::LookupIn),
    (RP_KV_OPERATION_EXISTS => KvOperation::Exists),
    (RP_KV_OPERATION_NOOP => KvOperation::Noop),
    (RP_KV_OPERATION_OBSERVE_CAS => KvOperation::ObserveCas),
    (RP_KV_OPERATION_OBSERVE_SEQNO => KvOperation::ObserveSeqno),
    (RP_KV_OPERATION_GET_COLLECTION_ID => KvOperation::GetCollectionId),
    (RP_KV_OPERATION_GET_COLLECTION_MANIFEST => KvOperation::GetCollectionManifest),
    (RP_KV_OPERATION_CARRIER_CONFIG => KvOperation::CarrierConfig),
    (RP_KV_OPERATION_GLOBAL_CONFIG => KvOperation::GlobalConfig),
    (RP_KV_OPERATION_INSERT => KvOperation::Insert),
    (RP_KV_OPERATION_UPSERT => KvOperation::Upsert),
    (RP_KV_OPERATION_REPLACE => KvOperation::Replace),
    (RP_KV_OPERATION_REMOVE => KvOperation::Remove),
    (RP_KV_OPERATION_APPEND => KvOperation::Append),
    (RP_KV_OPERATION_PREPEND => KvOperation::Prepend),
    (RP_KV_OPERATION_INCREMENT => KvOperation::Increment),
    (RP_KV_OPERATION_DECREMENT => KvOperation::Decrement),
    (RP_KV_OPERATION_TOUCH => KvOperation::Touch),
    (RP_KV_OPERATION_UNLOCK => KvOperation::Unlock),
    (RP_KV_OPERATION_MUTATE_IN => KvOperation::MutateIn),
]);

c_enum!(rp_http_method <=> HttpMethod, [
    (RP_HTTP_METHOD_GET => HttpMethod::Get),
    (RP_HTTP_METHOD_HEAD => HttpMethod::Head),
    (RP_HTTP_METHOD_POST => HttpMethod::Post),
    (RP_HTTP_METHOD_PUT => HttpMethod::Put),
    (RP_HTTP_METHOD_DELETE => HttpMethod::Delete),
    (RP_HTTP_METHOD_PATCH => HttpMethod::Patch),
    (RP_HTTP_METHOD_OPTIONS => HttpMethod::Options),
]);

c_enum!(rp_strategy <=> StrategyKind, [
    (RP_STRATEGY_BEST_EFFORT => StrategyKind::BestEffort),
    (RP_STRATEGY_FAIL_FAST => StrategyKind::FailFast),
]);

c_enum!(rp_dispatch_failure <=> DispatchFailure, [
    (RP_DISPATCH_FAILURE_SOCKET_NOT_AVAILABLE => DispatchFailure::SocketNotAvailable),
    (RP_DISPATCH_FAILURE_SERVICE_NOT_AVAILABLE => DispatchFailure::ServiceNotAvailable),
    (RP_DISPATCH_FAILURE_NODE_NOT_AVAILABLE => DispatchFailure::NodeNotAvailable),
    (RP_DISPATCH_FAILURE_CIRCUIT_BREAKER_OPEN => DispatchFailure::CircuitBreakerOpen),
    (RP_DISPATCH_FAILURE_SOCKET_CLOSED_WHILE_IN_FLIGHT => DispatchFailure::SocketClosedWhileInFlight),
]);

c_enum!(rp_no_retry_cause <=> Option<NoRetryCause>, [
    (RP_NO_RETRY_CAUSE_NONE => None),
    (RP_NO_RETRY_CAUSE_NOT_IDEMPOTENT => Some(NoRetryCause::NotIdempotent)),
    (RP_NO_RETRY_CAUSE_STRATEGY_DECLINED => Some(NoRetryCause::StrategyDeclined)),
    (RP_NO_RETRY_CAUSE_DEADLINE_PASSED => Some(NoRetryCause::DeadlinePassed)),
    (RP_NO_RETRY_CAUSE_UNKNOWN_REASON => Some(NoRetryCause::UnknownReason)),
]);

c_enum!(rp_rule <=> Rule, [
    (RP_RULE_DEADLINE_PASSED => Rule::DeadlinePassed),
    (RP_RULE_UNKNOWN_NEVER_RETRIED => Rule::UnknownNeverRetried),
    (RP_RULE_ALWAYS_RETRY_CONTROLLED_BACKOFF => Rule::AlwaysRetryControlledBackoff),
    (RP_RULE_BEST_EFFORT_BACKOFF => Rule::BestEffortBackoff),
    (RP_RULE_BEST_EFFORT_NOT_IDEMPOTENT => Rule::BestEffortNotIdempotent),
    (RP_RULE_FAIL_FAST => Rule::FailFast),
    (RP_RULE_CUSTOM_STRATEGY => Rule::CustomStrategy),
]);

c_enum!(rp_action <=> bool, [
    (RP_ACTION_NO_RETRY => false),
    (RP_ACTION_RETRY => true),
]);

/// The core value of C constant `c`, or RP_RESULT_INVALID_ENUM naming `argument`.
#[inline]
pub(crate) fn from_c<C: CEnum>(c: C, argument: &str) -> Result<C::Core, Failure> {
    c.core()
        .ok_or_else(|| Failure::invalid_enum(argument, C::TYPE_NAME, c.raw()))
}

/// The C constant of a core value the library produced itself (every one has a constant, which
/// the unit tests check; should a newer core add one without, the boundary reports RP_RESULT_PANIC).
#[inline]
pub(crate) fn to_c<C: CEnum>(v: C::Core) -> C {
    match C::from_core(v) {
        Some(c) => c,
        None => unreachable!("a core value without a {} constant", C::TYPE_NAME),
    }
}
