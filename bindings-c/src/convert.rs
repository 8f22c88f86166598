//! Marshalling between C values and the core's types. No retry rule lives here: each function
//! checks that a C value is well formed (a known enum number, a non-NULL pointer, UTF-8) and
//! converts it, or converts a core value back; names and JSON go through the core's own parsers.

use std::collections::BTreeMap;
use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::{OnceLock, RwLock};

use retrypolicy::{
    Backoff, Classification, Compat, Decision, DispatchFailure, Facts, FirstDelay, FlatDecision, HttpMethod,
    Jitter, KvOperation, NoRetry, NoRetryCause, Operation, Request, RetryAfter, RetryReason, RetryStrategy,
    Rule, StrategyKind, StrategyVerdict,
};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::{Failure, RP_RESULT_BUFFER_TOO_SMALL};
use crate::types::*;

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

c_enum!(rp_jitter <=> Jitter, [
    (RP_JITTER_NONE => Jitter::None),
    (RP_JITTER_FULL => Jitter::Full),
    (RP_JITTER_EQUAL => Jitter::Equal),
    (RP_JITTER_DECORRELATED => Jitter::Decorrelated),
]);

c_enum!(rp_backoff_kind <=> retrypolicy::backoff::BackoffKind, [
    (RP_BACKOFF_KIND_EXPONENTIAL => retrypolicy::backoff::BackoffKind::Exponential),
    (RP_BACKOFF_KIND_CONTROLLED => retrypolicy::backoff::BackoffKind::Controlled),
    (RP_BACKOFF_KIND_FIXED => retrypolicy::backoff::BackoffKind::Fixed),
]);

c_enum!(rp_first_delay <=> FirstDelay, [
    (RP_FIRST_DELAY_MIN => FirstDelay::Min),
    (RP_FIRST_DELAY_ZERO => FirstDelay::Zero),
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

/// The C constant of a core value the binding produced itself (every one has a constant:
/// unit-tested; should a newer core produce one without, the boundary reports RP_RESULT_PANIC).
#[inline]
pub(crate) fn to_c<C: CEnum>(v: C::Core) -> C {
    match C::from_core(v) {
        Some(c) => c,
        None => unreachable!("a core value without a {} constant", C::TYPE_NAME),
    }
}

/// A retry reason from C.
#[inline]
pub(crate) fn reason(c: rp_reason, argument: &str) -> Result<RetryReason, Failure> {
    from_c(c, argument)
}

/// An operation from C; only the fields its service uses are read. Errors name `operation.*`.
#[inline]
pub(crate) fn operation(op: &rp_operation) -> Result<Operation, Failure> {
    use retrypolicy::Service as S;
    let service = from_c(op.service, "operation.service")?;
    let method = || from_c(op.method, "operation.method");
    Ok(match service {
        S::Kv => Operation::Kv(from_c(op.kv_operation, "operation.kv_operation")?),
        S::Query => Operation::Query {
            readonly: op.readonly,
        },
        S::Analytics => Operation::Analytics {
            readonly: op.readonly,
        },
        S::Search => Operation::Search,
        S::Views => Operation::Views,
        S::ClusterManager => Operation::ClusterManager(method()?),
        S::Management => Operation::Management(method()?),
    })
}

/// An operation back to C (unused fields zero); a service this C library has no constant for yet
/// is `unknown_name`.
pub(crate) fn operation_to_c(op: Operation) -> Result<rp_operation, Failure> {
    let service = rp_service::from_core(op.service()).ok_or_else(|| {
        Failure::from(retrypolicy::Error::UnknownName {
            field: "service".to_owned(),
            value: serde_name(&op.service()).to_string_lossy().into_owned(),
            expected: "a service this version of the C library supports".to_owned(),
        })
    })?;
    let mut c = rp_operation {
        service,
        kv_operation: RP_KV_OPERATION_GET,
        readonly: false,
        method: RP_HTTP_METHOD_GET,
    };
    match op {
        Operation::Kv(k) => c.kv_operation = to_c(k),
        Operation::Query { readonly } | Operation::Analytics { readonly } => c.readonly = readonly,
        Operation::ClusterManager(m) | Operation::Management(m) => c.method = to_c(m),
        Operation::Search | Operation::Views => {}
    }
    Ok(c)
}

/// The previous reasons of a C request, each checked (an empty list may be NULL).
///
/// # Safety
/// `r.previous_reasons` must be NULL or point to `r.previous_reasons_len` readable values.
#[inline(always)]
unsafe fn previous_reasons(r: &rp_request) -> Result<&[rp_reason], Failure> {
    if r.previous_reasons_len == 0 {
        return Ok(&[]);
    }
    if r.previous_reasons.is_null() {
        return Err(Failure::null("request.previous_reasons"));
    }
    // SAFETY: non-NULL, and the caller promises `previous_reasons_len` readable values.
    let previous = unsafe { std::slice::from_raw_parts(r.previous_reasons, r.previous_reasons_len) };
    if let Some(i) = previous.iter().position(|p| p.core().is_none()) {
        return Err(Failure::invalid_enum(
            &format!("request.previous_reasons[{i}]"),
            "rp_reason",
            previous[i].0,
        ));
    }
    Ok(previous)
}

/// The fields of a C request the built-in orchestrator reads, checked as [`request`] checks them.
///
/// # Safety
/// `r.previous_reasons` must be NULL or point to `r.previous_reasons_len` readable values.
#[inline(always)]
pub(crate) unsafe fn facts(r: &rp_request) -> Result<Facts, Failure> {
    let op = operation(&r.operation).map_err(|f| f.prefixed("request."))?;
    // SAFETY: forwarded from this function's contract.
    unsafe { previous_reasons(r) }?;
    let strategy = if r.has_strategy {
        Some(from_c(r.strategy, "request.strategy")?)
    } else {
        None
    };
    Ok(facts_of(r, op.is_idempotent(), strategy))
}

/// The facts of a checked request, given its operation's idempotency and its strategy override.
#[inline(always)]
fn facts_of(r: &rp_request, operation_idempotent: bool, strategy: Option<StrategyKind>) -> Facts {
    Facts {
        idempotent: if r.has_idempotent {
            r.idempotent
        } else {
            operation_idempotent
        },
        attempts: r.attempts,
        elapsed_ms: r.elapsed_ms,
        timeout_ms: r.timeout_ms,
        strategy,
        random: r.has_random.then_some(r.random),
        previous_delay_ms: r.has_previous_delay_ms.then_some(r.previous_delay_ms),
    }
}

/// Each C operation's idempotency, or that it is not a valid operation, looked up by its four
/// fields (built from [`operation`] and the core's idempotent-operation list, so no rule is here).
pub(crate) struct OperationTable([u8; OperationTable::LEN]);

impl OperationTable {
    /// The services (a larger number is refused before the lookup).
    const SERVICES: usize = 7;
    /// The KV operations, and one bucket for every number past them.
    const KV_OPERATIONS: usize = 25;
    /// The HTTP methods, and one bucket for every number past them.
    const METHODS: usize = 8;
    /// Buckets: by service, KV operation, method and `readonly`.
    const LEN: usize = Self::SERVICES * Self::KV_OPERATIONS * Self::METHODS * 2;
    /// A bucket's value for an operation [`operation`] refuses (else 0 or 1: idempotent).
    const INVALID: u8 = 2;

    /// Looks up every operation once.
    pub(crate) fn new() -> OperationTable {
        let mut table = [Self::INVALID; Self::LEN];
        for service in 0..Self::SERVICES as u32 {
            for kv_operation in 0..Self::KV_OPERATIONS as u32 {
                for method in 0..Self::METHODS as u32 {
                    for readonly in [false, true] {
                        let c = op_c(service, kv_operation, method, readonly);
                        if let Ok(op) = operation(&c) {
                            table[Self::index(&c)] = u8::from(op.is_idempotent());
                        }
                    }
                }
            }
        }
        OperationTable(table)
    }

    /// The bucket of `op`; the service must be below [`Self::SERVICES`]. Like [`operation`], it
    /// reads only the fields the service uses (`readonly` is a C `bool` that callers may leave
    /// unset for other services, and a byte other than 0 or 1 is no Rust `bool`).
    #[inline(always)]
    fn index(op: &rp_operation) -> usize {
        let s = op.service;
        let kv = match s {
            RP_SERVICE_KV => (op.kv_operation.0 as usize).min(Self::KV_OPERATIONS - 1),
            _ => 0,
        };
        let method = match s {
            RP_SERVICE_CLUSTER_MANAGER | RP_SERVICE_MANAGEMENT => {
                (op.method.0 as usize).min(Self::METHODS - 1)
            }
            _ => 0,
        };
        let readonly = matches!(s, RP_SERVICE_QUERY | RP_SERVICE_ANALYTICS) && op.readonly;
        ((s.0 as usize * Self::KV_OPERATIONS + kv) * Self::METHODS + method) * 2 + usize::from(readonly)
    }

    /// Whether `op` is idempotent, or `None` if [`operation`] refuses it.
    #[inline(always)]
    pub(crate) fn idempotent(&self, op: &rp_operation) -> Option<bool> {
        if op.service.0 as usize >= Self::SERVICES {
            return None;
        }
        match *self.0.get(Self::index(op))? {
            Self::INVALID => None,
            idempotent => Some(idempotent == 1),
        }
    }
}

/// An `rp_operation` from its four fields.
fn op_c(service: u32, kv_operation: u32, method: u32, readonly: bool) -> rp_operation {
    rp_operation {
        service: rp_service(service),
        kv_operation: rp_kv_operation(kv_operation),
        readonly,
        method: rp_http_method(method),
    }
}

/// [`facts`] for a request that passes every check, or `None` (nothing is reported: the caller
/// then runs [`facts`] for the error).
///
/// # Safety
/// `r.previous_reasons` must be NULL or point to `r.previous_reasons_len` readable values.
#[inline(always)]
pub(crate) unsafe fn facts_fast(r: &rp_request, operations: &OperationTable) -> Option<Facts> {
    let op_idempotent = operations.idempotent(&r.operation)?;
    if r.previous_reasons_len != 0 {
        if r.previous_reasons.is_null() {
            return None;
        }
        // SAFETY: non-NULL, and the caller promises `previous_reasons_len` readable values.
        let previous = unsafe { std::slice::from_raw_parts(r.previous_reasons, r.previous_reasons_len) };
        if previous.iter().any(|p| p.core().is_none()) {
            return None;
        }
    }
    let strategy = if r.has_strategy {
        Some(r.strategy.core()?)
    } else {
        None
    };
    Some(facts_of(r, op_idempotent, strategy))
}

/// A request from C.
///
/// # Safety
/// `r.previous_reasons` must be NULL or point to `r.previous_reasons_len` readable values.
pub(crate) unsafe fn request(r: &rp_request) -> Result<Request, Failure> {
    let op = operation(&r.operation).map_err(|f| f.prefixed("request."))?;
    let mut out = Request::new(op, r.elapsed_ms, r.timeout_ms);
    out.attempts = r.attempts;
    out.idempotent = r.has_idempotent.then_some(r.idempotent);
    // SAFETY: forwarded from this function's contract.
    let previous = unsafe { previous_reasons(r) }?;
    out.previous_reasons = previous.iter().filter_map(|p| p.core()).collect();
    if r.has_strategy {
        out.strategy = Some(from_c(r.strategy, "request.strategy")?);
    }
    out.random = r.has_random.then_some(r.random);
    out.previous_delay_ms = r.has_previous_delay_ms.then_some(r.previous_delay_ms);
    Ok(out)
}

/// A table's flat decision as a C struct, for the request's `facts` and its (valid) `reason`.
#[inline(always)]
pub(crate) fn flat_decision_to_c(d: FlatDecision, facts: &Facts, reason: rp_reason) -> rp_decision {
    rp_decision {
        action: to_c(d.cause.is_none()),
        delay_ms: d.delay_ms,
        capped: d.capped,
        then_cancel: d.then_cancel,
        cause: to_c(d.cause),
        rule: to_c(d.rule),
        reason,
        attempts: facts.attempts,
        idempotent: facts.idempotent,
    }
}

/// A core decision as a C struct.
#[inline(always)]
pub(crate) fn decision_to_c(d: &Decision) -> rp_decision {
    match d {
        Decision::Retry(r) => rp_decision {
            action: RP_ACTION_RETRY,
            delay_ms: r.delay_ms,
            capped: r.capped,
            then_cancel: r.then_cancel,
            cause: RP_NO_RETRY_CAUSE_NONE,
            rule: to_c(r.rule),
            reason: to_c(r.reason),
            attempts: r.attempts,
            idempotent: r.idempotent,
        },
        Decision::NoRetry(n) => rp_decision {
            action: RP_ACTION_NO_RETRY,
            delay_ms: 0,
            capped: false,
            then_cancel: false,
            cause: to_c(Some(n.cause)),
            rule: to_c(n.rule),
            reason: to_c(n.reason),
            attempts: n.attempts,
            idempotent: n.idempotent,
        },
    }
}

/// A C decision back to the core's type (for its log line); a retry must have cause NONE and a
/// no-retry a cause.
pub(crate) fn decision(d: &rp_decision) -> Result<Decision, Failure> {
    let retry = from_c(d.action, "decision.action")?;
    let rule = from_c(d.rule, "decision.rule")?;
    let reason = reason(d.reason, "decision.reason")?;
    let cause = from_c(d.cause, "decision.cause")?;
    Ok(match (retry, cause) {
        (true, None) => Decision::Retry(RetryAfter {
            delay_ms: d.delay_ms,
            reason,
            rule,
            section: rule.section(),
            capped: d.capped,
            then_cancel: d.then_cancel,
            attempts: d.attempts,
            idempotent: d.idempotent,
        }),
        (false, Some(cause)) => Decision::NoRetry(NoRetry {
            reason,
            cause,
            rule,
            section: rule.section(),
            attempts: d.attempts,
            idempotent: d.idempotent,
        }),
        _ => {
            return Err(Failure::invalid_enum(
                "decision.cause",
                "rp_no_retry_cause for this action",
                d.cause.0,
            ))
        }
    })
}

/// A core classification as a C struct; its strings are interned static C strings.
pub(crate) fn classification_to_c(c: &Classification) -> rp_classification {
    rp_classification {
        has_reason: c.reason.is_some(),
        reason: c.reason.map_or(RP_REASON_UNKNOWN, to_c),
        rule: intern(c.rule).as_ptr(),
        section: intern(c.section).as_ptr(),
        surface_as: c.surface_as.map_or(std::ptr::null(), |s| intern(s).as_ptr()),
    }
}

/// Compatibility options from C; NULL means all off.
pub(crate) fn compat(c: Option<&rp_compat>) -> Compat {
    c.map_or_else(Compat::default, |c| Compat {
        collection_outdated_not_always_retry: c.collection_outdated_not_always_retry,
        retry_kv_busy: c.retry_kv_busy,
        query_retry_4040_to_4090: c.query_retry_4040_to_4090,
        retry_unknown_if_idempotent: c.retry_unknown_if_idempotent,
    })
}

/// Compatibility options back to C.
pub(crate) fn compat_to_c(c: &Compat) -> rp_compat {
    rp_compat {
        collection_outdated_not_always_retry: c.collection_outdated_not_always_retry,
        retry_kv_busy: c.retry_kv_busy,
        query_retry_4040_to_4090: c.query_retry_4040_to_4090,
        retry_unknown_if_idempotent: c.retry_unknown_if_idempotent,
    }
}

/// A backoff from C, validated by the core (bounds order, factor range).
pub(crate) fn backoff(b: &rp_backoff) -> Result<Backoff, Failure> {
    use retrypolicy::backoff::BackoffKind as K;
    let out = match from_c(b.kind, "backoff.kind")? {
        K::Exponential => Backoff::Exponential {
            min_ms: b.min_ms,
            max_ms: b.max_ms,
            factor: b.factor,
            first: from_c(b.first, "backoff.first")?,
        },
        K::Controlled => Backoff::Controlled,
        K::Fixed => Backoff::Fixed { delay_ms: b.delay_ms },
    };
    out.validate("backoff")?;
    Ok(out)
}

/// A core backoff as a C struct (unused fields zero).
pub(crate) fn backoff_to_c(b: &Backoff) -> rp_backoff {
    let mut c = rp_backoff {
        kind: RP_BACKOFF_KIND_CONTROLLED,
        min_ms: 0,
        max_ms: 0,
        factor: 0.0,
        first: RP_FIRST_DELAY_MIN,
        delay_ms: 0,
    };
    match *b {
        Backoff::Exponential {
            min_ms,
            max_ms,
            factor,
            first,
        } => {
            c.kind = RP_BACKOFF_KIND_EXPONENTIAL;
            c.min_ms = min_ms;
            c.max_ms = max_ms;
            c.factor = factor;
            c.first = to_c(first);
        }
        Backoff::Controlled => {}
        Backoff::Fixed { delay_ms } => {
            c.kind = RP_BACKOFF_KIND_FIXED;
            c.delay_ms = delay_ms;
        }
    }
    c
}

/// A shared reference from a C pointer, or RP_RESULT_NULL_POINTER naming `argument`.
///
/// # Safety
/// `p` must be NULL or valid for reads of `T` for the returned lifetime.
#[inline]
pub(crate) unsafe fn borrow<'a, T>(p: *const T, argument: &str) -> Result<&'a T, Failure> {
    // SAFETY: the caller promises p is NULL or valid.
    unsafe { p.as_ref() }.ok_or_else(|| Failure::null(argument))
}

/// An optional shared reference from a C pointer (NULL is `None`).
///
/// # Safety
/// `p` must be NULL or valid for reads of `T` for the returned lifetime.
#[inline]
pub(crate) unsafe fn borrow_opt<'a, T>(p: *const T) -> Option<&'a T> {
    // SAFETY: the caller promises p is NULL or valid.
    unsafe { p.as_ref() }
}

/// Checks an out-parameter is non-NULL before any work, so outputs are all-or-nothing.
#[inline]
pub(crate) fn out_ptr<T>(p: *mut T, argument: &str) -> Result<*mut T, Failure> {
    if p.is_null() {
        Err(Failure::null(argument))
    } else {
        Ok(p)
    }
}

/// Writes `value` through an out-parameter already checked by `out_ptr`.
///
/// # Safety
/// `p` must be non-NULL, aligned and valid for writes of `T`.
#[inline]
pub(crate) unsafe fn write<T>(p: *mut T, value: T) {
    // SAFETY: the caller promises p is valid for writes; `write` does not drop the old contents,
    // which C may have left uninitialised.
    unsafe { p.write(value) }
}

/// A NUL-terminated UTF-8 string from C.
///
/// # Safety
/// `p` must be NULL or point to a NUL-terminated string that stays valid for `'a`.
pub(crate) unsafe fn c_str<'a>(p: *const c_char, argument: &str) -> Result<&'a str, Failure> {
    if p.is_null() {
        return Err(Failure::null(argument));
    }
    // SAFETY: non-NULL, and the caller promises a NUL-terminated string.
    let bytes = unsafe { CStr::from_ptr(p) };
    bytes.to_str().map_err(|e| Failure::invalid_utf8(argument, e))
}

/// A (pointer, length) UTF-8 text from C; NULL is accepted only with length 0 when `allow_empty`.
///
/// # Safety
/// `p` must be NULL or point to `len` readable bytes that stay valid for `'a`.
pub(crate) unsafe fn text<'a>(
    p: *const c_char,
    len: usize,
    argument: &str,
    allow_empty: bool,
) -> Result<&'a str, Failure> {
    if p.is_null() {
        return if len == 0 && allow_empty {
            Ok("")
        } else {
            Err(Failure::null(argument))
        };
    }
    // SAFETY: non-NULL, and the caller promises `len` readable bytes.
    let bytes = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) };
    std::str::from_utf8(bytes).map_err(|e| Failure::invalid_utf8(argument, e))
}

/// Copies `s` and a NUL into the caller's buffer and stores its length (without the NUL) in
/// `*written`. When the buffer is too small, nothing is copied, `*written` receives the length
/// needed (without the NUL) and the result is RP_RESULT_BUFFER_TOO_SMALL, which does not touch
/// this thread's last-error detail.
///
/// # Safety
/// `buf` must be NULL (only with `len` 0) or valid for `len` bytes of writes; `written` must be
/// NULL or valid for a write.
pub(crate) unsafe fn write_text(
    s: &str,
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> Result<(), Failure> {
    let written = out_ptr(written, "written")?;
    if buf.is_null() && len > 0 {
        return Err(Failure::null("buf"));
    }
    if s.len() >= len {
        // SAFETY: checked non-NULL; the caller promises it is valid for writes.
        unsafe { write(written, s.len()) };
        return Err(Failure::quiet(RP_RESULT_BUFFER_TOO_SMALL));
    }
    // SAFETY: buf is non-NULL (len > s.len() >= 0) and valid for len > s.len() bytes; the regions
    // cannot overlap (s is Rust-owned or static).
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr(), buf.cast::<u8>(), s.len());
        buf.add(s.len()).write(0);
        write(written, s.len());
    }
    Ok(())
}

/// A static, NUL-terminated copy of `s`, made once per distinct text and kept for the life of the
/// process (names and spec sections are a small fixed set), so C can hold the pointer forever.
/// A BTreeMap, not a HashMap: its nodes are pointed to from their start, so leak checkers see the
/// table as reachable (hashbrown points into the middle of its allocation: "possibly lost").
pub(crate) fn intern(s: &str) -> &'static CStr {
    static TABLE: OnceLock<RwLock<BTreeMap<String, &'static CStr>>> = OnceLock::new();
    let table = TABLE.get_or_init(Default::default);
    if let Some(c) = table.read().unwrap_or_else(|e| e.into_inner()).get(s) {
        return c;
    }
    let mut w = table.write().unwrap_or_else(|e| e.into_inner());
    w.entry(s.to_owned()).or_insert_with(|| {
        // The core's names and sections contain no NUL; should one ever, it is cut there.
        let c = CString::new(s.split('\0').next().unwrap_or_default()).unwrap_or_default();
        Box::leak(c.into_boxed_c_str())
    })
}

/// The snake_case name the core's serde form gives `value` (a service, jitter, strategy ...).
pub(crate) fn serde_name<T: Serialize>(value: &T) -> &'static CStr {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => intern(&s),
        other => unreachable!("a unit enum serializes to a string, got {other:?}"),
    }
}

/// Parses a name through the core's serde form of `T` (`retrypolicy::json::parse_name`).
pub(crate) fn parse_serde_name<T: DeserializeOwned>(field: &str, name: &str) -> Result<T, Failure> {
    Ok(retrypolicy::json::parse_name(field, name)?)
}

/// A core error that names `field` instead of the placeholder the core uses for a bare value.
pub(crate) fn with_field(e: retrypolicy::Error, field: &str) -> retrypolicy::Error {
    use retrypolicy::Error;
    match e {
        Error::InvalidDuration { value, .. } => Error::InvalidDuration {
            field: field.to_owned(),
            value,
        },
        Error::OutOfRange { value, expected, .. } => Error::OutOfRange {
            field: field.to_owned(),
            value,
            expected,
        },
        Error::InvalidType { message, .. } => Error::InvalidType {
            field: field.to_owned(),
            message,
        },
        other => other,
    }
}

/// Reads `value` with a core serde helper for one field (milliseconds, status codes), naming
/// `field` in the error.
pub(crate) fn through_core<T: DeserializeOwned>(value: serde_json::Value, field: &str) -> Result<T, Failure> {
    retrypolicy::json::from_json_value::<T>(&value).map_err(|e| Failure::from(with_field(e, field)))
}

/// A millisecond value read by the core's `json::ms` rules (a whole number, or a decimal string).
#[derive(serde::Deserialize)]
pub(crate) struct Millis(#[serde(with = "retrypolicy::json::ms")] pub(crate) u64);

/// A KV status read by the core's `json::status` rules (a number, or a `0x` hex string).
#[derive(serde::Deserialize)]
pub(crate) struct KvStatus(#[serde(with = "retrypolicy::json::status")] pub(crate) u16);

/// A C strategy callback seen as the core's `RetryStrategy`, for `decide_with`.
pub(crate) struct CStrategy {
    /// The host's function.
    pub(crate) callback: unsafe extern "C" fn(*mut c_void, *const rp_request, rp_reason, *mut u64) -> bool,
    /// Passed back to the host untouched.
    pub(crate) user_data: *mut c_void,
    /// The caller's own request, handed to the callback as it was given.
    pub(crate) request: *const rp_request,
}

impl RetryStrategy for CStrategy {
    fn retry_after(
        &self,
        _request: &Request,
        reason: RetryReason,
    ) -> Result<StrategyVerdict, retrypolicy::Error> {
        let mut delay_ms = 0u64;
        // SAFETY: callback, user_data and request come from the C caller of rp_decide_with_strategy,
        // which promised they are valid for the duration of that call, inside which this runs.
        let retry = unsafe { (self.callback)(self.user_data, self.request, to_c(reason), &mut delay_ms) };
        Ok(if retry {
            StrategyVerdict::custom_retry(delay_ms)
        } else {
            StrategyVerdict::custom_no_retry()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each constant once, each core value once, and both directions agree.
    fn one_to_one<C: CEnum + PartialEq>()
    where
        C::Core: PartialEq + std::fmt::Debug,
    {
        for (i, (c, v)) in C::ALL.iter().enumerate() {
            assert!(
                c.core() == Some(*v),
                "{} {} maps elsewhere",
                C::TYPE_NAME,
                c.raw()
            );
            assert!(
                C::from_core(*v) == Some(*c),
                "{} {:?} maps elsewhere",
                C::TYPE_NAME,
                v
            );
            for (d, w) in &C::ALL[i + 1..] {
                assert!(c != d && v != w, "duplicate row in {}", C::TYPE_NAME);
            }
        }
    }

    #[test]
    fn every_core_value_has_exactly_one_c_constant() {
        one_to_one::<rp_reason>();
        for r in RetryReason::ALL {
            assert!(rp_reason::from_core(r).is_some(), "{r} has no rp_reason");
        }
        one_to_one::<rp_kv_operation>();
        for row in retrypolicy::operation::KV_CATALOG {
            assert!(
                rp_kv_operation::from_core(row.operation).is_some(),
                "{}",
                row.name
            );
        }
        one_to_one::<rp_service>();
        one_to_one::<rp_http_method>();
        one_to_one::<rp_strategy>();
        one_to_one::<rp_jitter>();
        one_to_one::<rp_backoff_kind>();
        one_to_one::<rp_first_delay>();
        one_to_one::<rp_dispatch_failure>();
        for (f, _, _) in retrypolicy::classify::dispatch::DISPATCH_TABLE {
            assert!(rp_dispatch_failure::from_core(f).is_some(), "{f:?}");
        }
        one_to_one::<rp_no_retry_cause>();
        one_to_one::<rp_rule>();
        one_to_one::<rp_action>();
        assert_eq!(rp_reason(20).core(), None);
        assert_eq!(rp_rule(u32::MAX).core(), None);
    }

    #[test]
    fn serde_names_round_trip() {
        for (_, s) in rp_service::ALL {
            let name = serde_name(s).to_str().unwrap();
            assert_eq!(
                parse_serde_name::<retrypolicy::Service>("service", name).unwrap(),
                *s
            );
        }
        assert_eq!(serde_name(&HttpMethod::Delete).to_str().unwrap(), "DELETE");
    }

    #[test]
    fn intern_returns_the_same_pointer_for_the_same_text() {
        let a = intern("kv_response_code");
        let b = intern(&String::from("kv_response_code"));
        assert_eq!(a.as_ptr(), b.as_ptr());
        assert_eq!(a.to_str().unwrap(), "kv_response_code");
    }

    /// The operation table answers as `operation` does, for numbers in and past every range.
    #[test]
    fn the_operation_table_agrees_with_operation() {
        let table = OperationTable::new();
        let (mut valid, mut invalid) = (0, 0);
        for service in [0, 1, 2, 3, 4, 5, 6, 7, 8, 1000, u32::MAX] {
            for kv_operation in (0..30).chain([1000, u32::MAX]) {
                for method in (0..10).chain([u32::MAX]) {
                    for readonly in [false, true] {
                        let op = op_c(service, kv_operation, method, readonly);
                        let want = operation(&op).ok().map(|o| o.is_idempotent());
                        assert_eq!(table.idempotent(&op), want, "{op:?}");
                        if want.is_some() {
                            valid += 1;
                        } else {
                            invalid += 1;
                        }
                    }
                }
            }
        }
        assert!(valid > 1000 && invalid > 1000, "{valid} valid, {invalid} invalid");
    }

    /// `facts` (rp_decide's path) checks and reads a C request exactly as `request` does.
    #[test]
    fn facts_agree_with_the_full_request() {
        let reasons = [RP_REASON_KV_LOCKED, rp_reason(99)];
        let mut cases = Vec::new();
        for service in [0, 1, 2, 3, 4, 5, 6, 77] {
            for kv_operation in [0, 5, 999] {
                for method in [0, 3, 99] {
                    for (has_idempotent, idempotent) in [(false, false), (true, false), (true, true)] {
                        for (i, (strategy, previous)) in [(None, 0), (Some(1), 1), (Some(9), 0), (None, 2)]
                            .into_iter()
                            .enumerate()
                        {
                            // SAFETY: all-zero is a valid rp_request (NULL list, zero length).
                            let mut r: rp_request = unsafe { std::mem::zeroed() };
                            r.operation.service = rp_service(service);
                            r.operation.kv_operation = rp_kv_operation(kv_operation);
                            r.operation.method = rp_http_method(method);
                            r.operation.readonly = !idempotent;
                            r.attempts = 3;
                            r.elapsed_ms = 100;
                            r.timeout_ms = 2500;
                            r.has_idempotent = has_idempotent;
                            r.idempotent = idempotent;
                            r.has_strategy = strategy.is_some();
                            r.strategy = rp_strategy(strategy.unwrap_or(0));
                            r.previous_reasons = reasons.as_ptr();
                            r.previous_reasons_len = previous;
                            // Draws and previous delays vary too (a fast read that ignored
                            // `has_random` or `has_previous_delay_ms` would differ).
                            let draw = [None, Some(0.25), Some(f64::NAN), Some(1.0)][i];
                            r.has_random = draw.is_some();
                            r.random = draw.unwrap_or(0.5);
                            r.has_previous_delay_ms = i % 2 == 1;
                            r.previous_delay_ms = 40;
                            cases.push(r);
                        }
                    }
                }
            }
        }
        let mut null_list: rp_request = cases[0];
        null_list.previous_reasons = std::ptr::null();
        null_list.previous_reasons_len = 1;
        cases.push(null_list);
        let operations = OperationTable::new();
        let (mut ok, mut failed) = (0, 0);
        for r in &cases {
            // SAFETY: every list pointer is NULL or points to `reasons`, long enough.
            let (a, b) = unsafe { (facts(r), request(r).map(|q| q.facts())) };
            // The fast read accepts exactly what the checked one accepts, with the same facts.
            // SAFETY: as above.
            let fast = unsafe { facts_fast(r, &operations) };
            assert_eq!(fast, a.as_ref().ok().copied(), "{r:?}");
            match (a, b) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(a, b);
                    ok += 1;
                }
                (Err(a), Err(b)) => {
                    assert_eq!(format!("{a:?}"), format!("{b:?}"));
                    failed += 1;
                }
                (a, b) => panic!("facts {a:?} but request {b:?}"),
            }
        }
        assert!(ok > 50 && failed > 50, "{ok} accepted, {failed} refused");
    }
}
