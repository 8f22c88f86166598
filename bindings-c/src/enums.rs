//! The C enums: each a `uint32_t` typedef (a `#[repr(transparent)]` newtype here) with numbered
//! constants, never a Rust enum, since C may put any number in it and reading an out-of-range Rust
//! enum is undefined. The numbers are ABI: explicit, never reused. Each maps to a core value in one
//! table (`c_enum!`), so a number that names no constant is RP_RESULT_INVALID_ENUM; names are the
//! core values' serde forms (`names.rs`). Every type has a doc; the constants are the RFC's and
//! the core's own names (RP_REASON_KV_LOCKED is the RFC's KV_LOCKED, RP_RULE_FAIL_FAST the rule
//! "fail_fast"), documented where those are.
#![allow(missing_docs)]

use std::fmt::Display;

use retrypolicy::{
    BudgetCause, BudgetRule, HttpMethod, KvOperation, NoRetryCause, RetryReason, Rule, Service, StrategyKind,
};
use serde::{de::DeserializeOwned, Deserialize, Deserializer, Serialize};

use crate::error::Failure;

/// A retry reason of the RFC 0049 table (an `RP_REASON_*` constant).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_reason(pub u32);

pub const RP_REASON_UNKNOWN: rp_reason = rp_reason(0);
pub const RP_REASON_SOCKET_NOT_AVAILABLE: rp_reason = rp_reason(1);
pub const RP_REASON_SERVICE_NOT_AVAILABLE: rp_reason = rp_reason(2);
pub const RP_REASON_NODE_NOT_AVAILABLE: rp_reason = rp_reason(3);
pub const RP_REASON_KV_NOT_MY_VBUCKET: rp_reason = rp_reason(4);
pub const RP_REASON_KV_COLLECTION_OUTDATED: rp_reason = rp_reason(5);
pub const RP_REASON_KV_ERROR_MAP_RETRY_INDICATED: rp_reason = rp_reason(6);
pub const RP_REASON_KV_LOCKED: rp_reason = rp_reason(7);
pub const RP_REASON_KV_TEMPORARY_FAILURE: rp_reason = rp_reason(8);
pub const RP_REASON_KV_SYNC_WRITE_IN_PROGRESS: rp_reason = rp_reason(9);
pub const RP_REASON_KV_SYNC_WRITE_RE_COMMIT_IN_PROGRESS: rp_reason = rp_reason(10);
pub const RP_REASON_SERVICE_RESPONSE_CODE_INDICATED: rp_reason = rp_reason(11);
pub const RP_REASON_SOCKET_CLOSED_WHILE_IN_FLIGHT: rp_reason = rp_reason(12);
pub const RP_REASON_CIRCUIT_BREAKER_OPEN: rp_reason = rp_reason(13);
pub const RP_REASON_QUERY_PREPARED_STATEMENT_FAILURE: rp_reason = rp_reason(14);
pub const RP_REASON_QUERY_INDEX_NOT_FOUND: rp_reason = rp_reason(15);
pub const RP_REASON_ANALYTICS_TEMPORARY_FAILURE: rp_reason = rp_reason(16);
pub const RP_REASON_SEARCH_TOO_MANY_REQUESTS: rp_reason = rp_reason(17);
pub const RP_REASON_VIEWS_TEMPORARY_FAILURE: rp_reason = rp_reason(18);
pub const RP_REASON_VIEWS_NO_ACTIVE_PARTITION: rp_reason = rp_reason(19);
pub const RP_REASON_QUERY_ERROR_RETRYABLE: rp_reason = rp_reason(20);

/// A service an operation is sent to (an `RP_SERVICE_*` constant; cluster manager and management: HTTP APIs).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_service(pub u32);

pub const RP_SERVICE_KV: rp_service = rp_service(0);
pub const RP_SERVICE_QUERY: rp_service = rp_service(1);
pub const RP_SERVICE_ANALYTICS: rp_service = rp_service(2);
pub const RP_SERVICE_SEARCH: rp_service = rp_service(3);
pub const RP_SERVICE_VIEWS: rp_service = rp_service(4);
pub const RP_SERVICE_CLUSTER_MANAGER: rp_service = rp_service(5);
pub const RP_SERVICE_MANAGEMENT: rp_service = rp_service(6);

/// A KV operation of the RFC 0049 catalog (an `RP_KV_OPERATION_*` constant).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_kv_operation(pub u32);

pub const RP_KV_OPERATION_GET: rp_kv_operation = rp_kv_operation(0);
pub const RP_KV_OPERATION_GET_AND_LOCK: rp_kv_operation = rp_kv_operation(1);
pub const RP_KV_OPERATION_GET_AND_TOUCH: rp_kv_operation = rp_kv_operation(2);
pub const RP_KV_OPERATION_GET_REPLICA: rp_kv_operation = rp_kv_operation(3);
pub const RP_KV_OPERATION_LOOKUP_IN: rp_kv_operation = rp_kv_operation(4);
pub const RP_KV_OPERATION_EXISTS: rp_kv_operation = rp_kv_operation(5);
pub const RP_KV_OPERATION_NOOP: rp_kv_operation = rp_kv_operation(6);
pub const RP_KV_OPERATION_OBSERVE_CAS: rp_kv_operation = rp_kv_operation(7);
pub const RP_KV_OPERATION_OBSERVE_SEQNO: rp_kv_operation = rp_kv_operation(8);
pub const RP_KV_OPERATION_GET_COLLECTION_ID: rp_kv_operation = rp_kv_operation(9);
pub const RP_KV_OPERATION_GET_COLLECTION_MANIFEST: rp_kv_operation = rp_kv_operation(10);
pub const RP_KV_OPERATION_CARRIER_CONFIG: rp_kv_operation = rp_kv_operation(11);
pub const RP_KV_OPERATION_GLOBAL_CONFIG: rp_kv_operation = rp_kv_operation(12);
pub const RP_KV_OPERATION_INSERT: rp_kv_operation = rp_kv_operation(13);
pub const RP_KV_OPERATION_UPSERT: rp_kv_operation = rp_kv_operation(14);
pub const RP_KV_OPERATION_REPLACE: rp_kv_operation = rp_kv_operation(15);
pub const RP_KV_OPERATION_REMOVE: rp_kv_operation = rp_kv_operation(16);
pub const RP_KV_OPERATION_APPEND: rp_kv_operation = rp_kv_operation(17);
pub const RP_KV_OPERATION_PREPEND: rp_kv_operation = rp_kv_operation(18);
pub const RP_KV_OPERATION_INCREMENT: rp_kv_operation = rp_kv_operation(19);
pub const RP_KV_OPERATION_DECREMENT: rp_kv_operation = rp_kv_operation(20);
pub const RP_KV_OPERATION_TOUCH: rp_kv_operation = rp_kv_operation(21);
pub const RP_KV_OPERATION_UNLOCK: rp_kv_operation = rp_kv_operation(22);
pub const RP_KV_OPERATION_MUTATE_IN: rp_kv_operation = rp_kv_operation(23);

/// An HTTP method, for the cluster manager and management services (an `RP_HTTP_METHOD_*` constant).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_http_method(pub u32);

pub const RP_HTTP_METHOD_GET: rp_http_method = rp_http_method(0);
pub const RP_HTTP_METHOD_HEAD: rp_http_method = rp_http_method(1);
pub const RP_HTTP_METHOD_POST: rp_http_method = rp_http_method(2);
pub const RP_HTTP_METHOD_PUT: rp_http_method = rp_http_method(3);
pub const RP_HTTP_METHOD_DELETE: rp_http_method = rp_http_method(4);
pub const RP_HTTP_METHOD_PATCH: rp_http_method = rp_http_method(5);
pub const RP_HTTP_METHOD_OPTIONS: rp_http_method = rp_http_method(6);

/// A built-in retry strategy (an `RP_STRATEGY_*` constant).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_strategy(pub u32);

pub const RP_STRATEGY_BEST_EFFORT: rp_strategy = rp_strategy(0);
pub const RP_STRATEGY_FAIL_FAST: rp_strategy = rp_strategy(1);

/// Why a request is not retried (an `RP_NO_RETRY_CAUSE_*` constant).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_no_retry_cause(pub u32);

pub const RP_NO_RETRY_CAUSE_NONE: rp_no_retry_cause = rp_no_retry_cause(0);
pub const RP_NO_RETRY_CAUSE_NOT_IDEMPOTENT: rp_no_retry_cause = rp_no_retry_cause(1);
pub const RP_NO_RETRY_CAUSE_STRATEGY_DECLINED: rp_no_retry_cause = rp_no_retry_cause(2);
pub const RP_NO_RETRY_CAUSE_DEADLINE_PASSED: rp_no_retry_cause = rp_no_retry_cause(3);
pub const RP_NO_RETRY_CAUSE_UNKNOWN_REASON: rp_no_retry_cause = rp_no_retry_cause(4);
/// A C-only code for the core's `BudgetRefusal` (`rp_decide_with_budget`): the budget refused the
/// retry the policy wanted; the decision's rule is the budget's refusing rule. Name "budget_exhausted".
pub const RP_NO_RETRY_CAUSE_BUDGET_EXHAUSTED: rp_no_retry_cause = rp_no_retry_cause(5);

/// The rule that produced a decision (an `RP_RULE_*` constant); `rp_rule_section` gives its spec text.
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_rule(pub u32);

pub const RP_RULE_DEADLINE_PASSED: rp_rule = rp_rule(0);
pub const RP_RULE_UNKNOWN_NEVER_RETRIED: rp_rule = rp_rule(1);
pub const RP_RULE_ALWAYS_RETRY_CONTROLLED_BACKOFF: rp_rule = rp_rule(2);
pub const RP_RULE_BEST_EFFORT_BACKOFF: rp_rule = rp_rule(3);
pub const RP_RULE_BEST_EFFORT_NOT_IDEMPOTENT: rp_rule = rp_rule(4);
pub const RP_RULE_FAIL_FAST: rp_rule = rp_rule(5);
pub const RP_RULE_CUSTOM_STRATEGY: rp_rule = rp_rule(6);
/// C-only code for a budget refusal (`RP_NO_RETRY_CAUSE_BUDGET_EXHAUSTED`): gRPC's bucket at or below half.
pub const RP_RULE_TOKEN_BUCKET_AT_OR_BELOW_HALF: rp_rule = rp_rule(7);
/// C-only code for a budget refusal: the AWS retry quota holds less than the retry's cost.
pub const RP_RULE_RETRY_QUOTA_EXHAUSTED: rp_rule = rp_rule(8);
/// C-only code for a budget refusal: Finagle's percentage of the window is spent.
pub const RP_RULE_PERCENTAGE_BUDGET_SPENT: rp_rule = rp_rule(9);

/// A C enum newtype (`rp_reason`, ...) and the core value each of its constants stands for.
pub(crate) trait CEnum: Copy + 'static {
    /// The core type; its serde form is the constant's name.
    type Core: Copy + Serialize + DeserializeOwned;
    /// The C type's name, for error details.
    const TYPE_NAME: &'static str;
    /// Every constant with its core value (for the one-to-one test).
    #[cfg(test)]
    const ALL: &'static [(Self, Self::Core)];
    /// The constant holding the raw number `raw` (which may name none).
    fn new(raw: u32) -> Self;
    /// The raw number.
    fn raw(self) -> u32;
    /// The core value, or `None` for a number that names no constant.
    fn core(self) -> Option<Self::Core>;
    /// The constant for a core value, or `None` if this C library has none for it yet.
    fn from_core(v: Self::Core) -> Option<Self>;
}

/// Implements `CEnum` from one table of (C constant => core value) rows, as two `match`es
/// (compiled to lookups); the C numbers are the ABI, the row order is free.
macro_rules! c_enum {
    ($c:ident <=> $core:ty, [$(($cv:path => $($corev:tt)+)),* $(,)?]) => {
        impl CEnum for $c {
            type Core = $core;
            const TYPE_NAME: &'static str = stringify!($c);
            #[cfg(test)]
            const ALL: &'static [($c, $core)] = &[$(($cv, $($corev)+)),*];
            fn new(raw: u32) -> $c {
                $c(raw)
            }
            fn raw(self) -> u32 {
                self.0
            }
            fn core(self) -> Option<$core> {
                match self {
                    $($cv => Some($($corev)+),)*
                    _ => None,
                }
            }
            #[allow(unreachable_patterns)] // a later core may add values this C library lacks
            fn from_core(v: $core) -> Option<$c> {
                match v {
                    $($($corev)+ => Some($cv),)*
                    _ => None,
                }
            }
        }
    };
}

pub(crate) use c_enum;

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
    (RP_REASON_QUERY_ERROR_RETRYABLE => RetryReason::QueryErrorRetryable),
]);

// The services that have a C constant; MongoDB and HTTP are reached through rp_call_json.
c_enum!(rp_service <=> Service, [
    (RP_SERVICE_KV => Service::Kv),
    (RP_SERVICE_QUERY => Service::Query),
    (RP_SERVICE_ANALYTICS => Service::Analytics),
    (RP_SERVICE_SEARCH => Service::Search),
    (RP_SERVICE_VIEWS => Service::Views),
    (RP_SERVICE_CLUSTER_MANAGER => Service::ClusterManager),
    (RP_SERVICE_MANAGEMENT => Service::Management),
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

// The core keeps a budget's refusal apart from `decide`'s causes and rules (`BudgetRefusal`); a C
// decision has one cause field and one rule field, so each of these enums holds both: `decide`'s
// values on the left, the refusal's on the right.
c_enum!(rp_no_retry_cause <=> Option<Either<NoRetryCause, BudgetCause>>, [
    (RP_NO_RETRY_CAUSE_NONE => None),
    (RP_NO_RETRY_CAUSE_NOT_IDEMPOTENT => Some(Either::Left(NoRetryCause::NotIdempotent))),
    (RP_NO_RETRY_CAUSE_STRATEGY_DECLINED => Some(Either::Left(NoRetryCause::StrategyDeclined))),
    (RP_NO_RETRY_CAUSE_DEADLINE_PASSED => Some(Either::Left(NoRetryCause::DeadlinePassed))),
    (RP_NO_RETRY_CAUSE_UNKNOWN_REASON => Some(Either::Left(NoRetryCause::UnknownReason))),
    (RP_NO_RETRY_CAUSE_BUDGET_EXHAUSTED => Some(Either::Right(BudgetCause::BudgetExhausted))),
]);

c_enum!(rp_rule <=> Either<Rule, BudgetRule>, [
    (RP_RULE_DEADLINE_PASSED => Either::Left(Rule::DeadlinePassed)),
    (RP_RULE_UNKNOWN_NEVER_RETRIED => Either::Left(Rule::UnknownNeverRetried)),
    (RP_RULE_ALWAYS_RETRY_CONTROLLED_BACKOFF => Either::Left(Rule::AlwaysRetryControlledBackoff)),
    (RP_RULE_BEST_EFFORT_BACKOFF => Either::Left(Rule::BestEffortBackoff)),
    (RP_RULE_BEST_EFFORT_NOT_IDEMPOTENT => Either::Left(Rule::BestEffortNotIdempotent)),
    (RP_RULE_FAIL_FAST => Either::Left(Rule::FailFast)),
    (RP_RULE_CUSTOM_STRATEGY => Either::Left(Rule::CustomStrategy)),
    (RP_RULE_TOKEN_BUCKET_AT_OR_BELOW_HALF => Either::Right(BudgetRule::TokenBucketAtOrBelowHalf)),
    (RP_RULE_RETRY_QUOTA_EXHAUSTED => Either::Right(BudgetRule::RetryQuotaExhausted)),
    (RP_RULE_PERCENTAGE_BUDGET_SPENT => Either::Right(BudgetRule::PercentageBudgetSpent)),
]);

/// A value of one of two core types, named as that type names it (serde): the core value behind a
/// C enum whose constants come from two core enums.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub(crate) enum Either<A, B> {
    /// A value of the first type.
    Left(A),
    /// A value of the second type.
    Right(B),
}

impl<'de, A: DeserializeOwned, B: DeserializeOwned> Deserialize<'de> for Either<A, B> {
    /// The first type's reading of the name, else the second's; when neither knows it, serde's
    /// "unknown variant" naming both types' names.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(d)?;
        let left = match serde_json::from_value::<A>(value.clone()) {
            Ok(a) => return Ok(Either::Left(a)),
            Err(e) => e.to_string(),
        };
        let right = match serde_json::from_value::<B>(value) {
            Ok(b) => return Ok(Either::Right(b)),
            Err(e) => e.to_string(),
        };
        let expected = |m: &str| {
            let e = m.rsplit_once("expected ").map_or("", |(_, e)| e);
            e.strip_prefix("one of ").unwrap_or(e).to_owned()
        };
        let message = match left.split_once(", expected ") {
            Some((unknown, _)) if unknown.starts_with("unknown variant `") => {
                format!(
                    "{unknown}, expected one of {}, {}",
                    expected(&left),
                    expected(&right)
                )
            }
            _ => left,
        };
        Err(serde::de::Error::custom(message))
    }
}

/// The core value of C constant `c`, or RP_RESULT_INVALID_ENUM naming `argument` and the value.
pub(crate) fn from_c<C: CEnum>(c: C, argument: impl Display) -> Result<C::Core, Failure> {
    c.core()
        .ok_or_else(|| Failure::invalid_enum(argument, C::TYPE_NAME, c.raw()))
}

/// The C constant of a core value the library produced itself (every one has a constant, which
/// the unit tests check; should a newer core add one without, the boundary reports RP_RESULT_PANIC).
pub(crate) fn to_c<C: CEnum>(v: C::Core) -> C {
    match C::from_core(v) {
        Some(c) => c,
        None => unreachable!("a core value without a {} constant", C::TYPE_NAME),
    }
}
