//! The C data types: enum-like integers with their constants, plain input/output structs, opaque handles.
//!
//! Every enum crosses the boundary as a `uint32_t` typedef (a `#[repr(transparent)]` newtype here),
//! never as a Rust enum: a C caller can put any number in it, and reading an out-of-range Rust
//! enum is undefined behaviour. `convert.rs` checks each value and answers RP_RESULT_INVALID_ENUM.
//! The numbers are part of the ABI: they are explicit, and a number is never reused.

use std::ffi::{c_char, c_void};

use retrypolicy::{DecisionTable, ErrorMap, Policy};

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

/// How a random draw spreads a backoff delay (an `RP_JITTER_*` constant).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_jitter(pub u32);

/// The delay as calculated.
pub const RP_JITTER_NONE: rp_jitter = rp_jitter(0);
/// floor(delay * r).
pub const RP_JITTER_FULL: rp_jitter = rp_jitter(1);
/// delay/2 + floor((delay - delay/2) * r).
pub const RP_JITTER_EQUAL: rp_jitter = rp_jitter(2);
/// lower + floor((min(upper, 3 * previous) - lower) * r).
pub const RP_JITTER_DECORRELATED: rp_jitter = rp_jitter(3);

/// The kind of backoff calculator (an `RP_BACKOFF_KIND_*` constant).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_backoff_kind(pub u32);

/// min_ms * factor^attempt, clamped to [min_ms, max_ms].
pub const RP_BACKOFF_KIND_EXPONENTIAL: rp_backoff_kind = rp_backoff_kind(0);
/// RFC 0049's controlled backoff table: 1, 10, 50, 100, 500, then 1000 ms.
pub const RP_BACKOFF_KIND_CONTROLLED: rp_backoff_kind = rp_backoff_kind(1);
/// The same delay every time.
pub const RP_BACKOFF_KIND_FIXED: rp_backoff_kind = rp_backoff_kind(2);

/// Where an exponential sequence starts (an `RP_FIRST_DELAY_*` constant).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_first_delay(pub u32);

/// 1, 2, 4, ... ms (the default; the RFC's 1 ms lower bound holds from the first retry).
pub const RP_FIRST_DELAY_MIN: rp_first_delay = rp_first_delay(0);
/// 0, 1, 2, 4, ... ms (the Java SDK: the first retry is immediate).
pub const RP_FIRST_DELAY_ZERO: rp_first_delay = rp_first_delay(1);

/// A failure the SDK observed before or while the request was on the wire (an `RP_DISPATCH_FAILURE_*` constant).
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

/// What is being retried: a service plus what the idempotency rule needs; fields other services use are ignored.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rp_operation {
    /// The service (`RP_SERVICE_*`).
    pub service: rp_service,
    /// The KV operation (`RP_KV_OPERATION_*`); read only when `service` is RP_SERVICE_KV.
    pub kv_operation: rp_kv_operation,
    /// The query's `readonly` property; read only for RP_SERVICE_QUERY and RP_SERVICE_ANALYTICS.
    pub readonly: bool,
    /// The HTTP method (`RP_HTTP_METHOD_*`); read only for RP_SERVICE_CLUSTER_MANAGER and RP_SERVICE_MANAGEMENT.
    pub method: rp_http_method,
}

/// The state of one request at the moment it failed: everything a decision depends on.
///
/// Zero-initialise it (`rp_request r = {0};`), then fill the fields: every optional field has a
/// `has_*` flag, so a zeroed request has no override, no random draw and no previous delay.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rp_request {
    /// What is being retried.
    pub operation: rp_operation,
    /// Retries already made (RFC 0049 `retryAttempts()`).
    pub attempts: u32,
    /// Time since the request started, in whole milliseconds.
    pub elapsed_ms: u64,
    /// The request's timeout, in whole milliseconds.
    pub timeout_ms: u64,
    /// Whether `idempotent` overrides the RFC's idempotent-operation list.
    pub has_idempotent: bool,
    /// The override, read only when `has_idempotent`.
    pub idempotent: bool,
    /// Reasons of earlier retries (RFC 0049 `retryReasons()`); may be NULL when the length is 0.
    pub previous_reasons: *const rp_reason,
    /// Number of entries in `previous_reasons`.
    pub previous_reasons_len: usize,
    /// Whether `strategy` overrides the policy's strategy for this request (RFC 0049 "Request Annotation").
    pub has_strategy: bool,
    /// The override (`RP_STRATEGY_*`), read only when `has_strategy`.
    pub strategy: rp_strategy,
    /// Whether `random` holds the caller's draw (required when the policy has jitter).
    pub has_random: bool,
    /// The caller's random draw in [0, 1), read only when `has_random`.
    pub random: f64,
    /// Whether `previous_delay_ms` holds the previous retry's delay (for decorrelated jitter).
    pub has_previous_delay_ms: bool,
    /// The previous retry's delay in milliseconds, read only when `has_previous_delay_ms`.
    pub previous_delay_ms: u64,
}

/// The outcome of one decision: retry after `delay_ms`, or fail, with the rule that decided.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rp_decision {
    /// RP_ACTION_RETRY or RP_ACTION_NO_RETRY.
    pub action: rp_action,
    /// Milliseconds to wait before resending (0 when not retrying).
    pub delay_ms: u64,
    /// Whether the delay was cut to the time left before the timeout.
    pub capped: bool,
    /// Whether the request must be cancelled (timed out) when the delay ends instead of resent.
    pub then_cancel: bool,
    /// Why not retried (RP_NO_RETRY_CAUSE_NONE when retrying).
    pub cause: rp_no_retry_cause,
    /// The rule that decided (`RP_RULE_*`; `rp_rule_section` gives the spec section).
    pub rule: rp_rule,
    /// The reason decided on.
    pub reason: rp_reason,
    /// Retries made before this decision.
    pub attempts: u32,
    /// Whether the request counted as idempotent.
    pub idempotent: bool,
}

/// The outcome of classifying one failure: the reason to hand to `rp_decide`, or none, and why.
///
/// The three strings are static, owned by the library: never free them; they stay valid until
/// the library is unloaded.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rp_classification {
    /// Whether `reason` is set; false means: fail the request without retry handling.
    pub has_reason: bool,
    /// The retry reason, read only when `has_reason`.
    pub reason: rp_reason,
    /// The stable name of the rule that matched (static, never freed).
    pub rule: *const c_char,
    /// The spec section the rule comes from (static, never freed).
    pub section: *const c_char,
    /// The error to surface instead (e.g. "cas_mismatch"), or NULL (static, never freed).
    pub surface_as: *const c_char,
}

/// Opt-in deviations from RFC 0049 that major SDKs ship; all false follows the RFC.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct rp_compat {
    /// Java SDK: KV_COLLECTION_OUTDATED goes through the strategy instead of always retrying.
    pub collection_outdated_not_always_retry: bool,
    /// Java and Go SDKs: KV status 0x85 (EBUSY) is retried as KV_TEMPORARY_FAILURE.
    pub retry_kv_busy: bool,
    /// Go SDK: query codes 4040 to 4090 are prepared-statement failures.
    pub query_retry_4040_to_4090: bool,
    /// RFC 0049's best-effort pseudo-code read literally: UNKNOWN is retried for idempotent requests.
    pub retry_unknown_if_idempotent: bool,
}

/// A backoff calculator; `rp_backoff_default` fills the best-effort default.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rp_backoff {
    /// The kind (`RP_BACKOFF_KIND_*`); the fields below that it does not use are ignored.
    pub kind: rp_backoff_kind,
    /// Exponential: lower bound (and first delay unless `first` is RP_FIRST_DELAY_ZERO).
    pub min_ms: u64,
    /// Exponential: upper bound, at least `min_ms`.
    pub max_ms: u64,
    /// Exponential: growth per attempt, in [1, 1000].
    pub factor: f64,
    /// Exponential: where the sequence starts (`RP_FIRST_DELAY_*`).
    pub first: rp_first_delay,
    /// Fixed: the delay.
    pub delay_ms: u64,
}

/// A loaded policy: immutable, shareable between threads; create with `rp_policy_new_default` or
/// `rp_policy_from_json`, free with `rp_policy_free`.
pub struct rp_policy {
    /// The policy with its decisions precomputed (`rp_decide` looks them up).
    pub(crate) table: DecisionTable,
}

impl rp_policy {
    /// A handle for `policy`, its decision table built once here.
    pub(crate) fn new(policy: &Policy) -> rp_policy {
        rp_policy {
            table: DecisionTable::new(policy),
        }
    }

    /// The policy itself.
    pub(crate) fn inner(&self) -> &Policy {
        self.table.policy()
    }
}

/// What `rp_decide` reads on every call besides the request: built once, on first use.
pub(crate) struct Hot {
    /// The decision table of the RFC default policy, for calls that pass no policy.
    pub(crate) rfc: DecisionTable,
    /// Each C operation's idempotency.
    pub(crate) operations: crate::convert::OperationTable,
}

static HOT: std::sync::OnceLock<Hot> = std::sync::OnceLock::new();

/// The [`Hot`] tables, built on first use.
pub(crate) fn hot() -> &'static Hot {
    HOT.get_or_init(|| Hot {
        rfc: DecisionTable::new(&Policy::RFC),
        operations: crate::convert::OperationTable::new(),
    })
}

/// The [`Hot`] tables if [`hot`] has built them (a check, never a call).
#[inline(always)]
pub(crate) fn hot_if_built() -> Option<&'static Hot> {
    HOT.get()
}

/// A parsed KV error map (RFC 0013): immutable, shareable between threads; create with
/// `rp_error_map_from_json`, free with `rp_error_map_free`.
pub struct rp_error_map {
    pub(crate) inner: ErrorMap,
}

/// A host retry strategy: return true and set `*delay_ms_out` to retry after that many
/// milliseconds, or return false not to retry. It is called synchronously, on the calling thread,
/// only from inside `rp_decide_with_strategy`, with the caller's own request pointer; it must
/// return normally (no longjmp). The core still applies the deadline, UNKNOWN and always-retry
/// rules before it, and caps its delay to the timeout after it.
pub type rp_strategy_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        request: *const rp_request,
        reason: rp_reason,
        delay_ms_out: *mut u64,
    ) -> bool,
>;
