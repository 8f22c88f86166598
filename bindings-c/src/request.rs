//! `rp_operation` and `rp_request`: what is being retried and its state, converted into the core's
//! `Operation` and `Request`.

use retrypolicy::{Operation, Request, Service};

use crate::enums::from_c;
use crate::error::Failure;
use crate::ffi::CBool;
use crate::*;

/// What is being retried: a service and what the idempotency rule needs (other services' fields are ignored).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rp_operation {
    /// The service (`RP_SERVICE_*`).
    pub service: rp_service,
    /// The KV operation (`RP_KV_OPERATION_*`); read only when `service` is RP_SERVICE_KV.
    pub kv_operation: rp_kv_operation,
    /// The query's `readonly` property; read only for RP_SERVICE_QUERY and RP_SERVICE_ANALYTICS.
    pub readonly: CBool,
    /// The HTTP method (`RP_HTTP_METHOD_*`); read only for the cluster manager and management services.
    pub method: rp_http_method,
}

/// The state of one request at the moment it failed: everything a decision depends on.
///
/// Zero-initialise it (`rp_request r = {0};`), then fill the fields: every optional field has a
/// `has_*` flag, so a zeroed request has no override, no random draw and no previous delay.
/// Every `bool` is read as a byte: any non-zero value is true.
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
    pub has_idempotent: CBool,
    /// The override, read only when `has_idempotent`.
    pub idempotent: CBool,
    /// Reasons of earlier retries (RFC 0049 `retryReasons()`); may be NULL when the length is 0.
    pub previous_reasons: *const rp_reason,
    /// Number of entries in `previous_reasons`.
    pub previous_reasons_len: usize,
    /// Whether `strategy` overrides the policy's strategy for this request (RFC 0049 "Request Annotation").
    pub has_strategy: CBool,
    /// The override (`RP_STRATEGY_*`), read only when `has_strategy`.
    pub strategy: rp_strategy,
    /// Whether `random` holds the caller's draw (required when the policy has jitter).
    pub has_random: CBool,
    /// The caller's random draw in [0, 1), read only when `has_random`.
    pub random: f64,
    /// Whether `previous_delay_ms` holds the previous retry's delay (for decorrelated jitter).
    pub has_previous_delay_ms: CBool,
    /// The previous retry's delay in milliseconds, read only when `has_previous_delay_ms`.
    pub previous_delay_ms: u64,
}

/// An operation from C; only the fields its service uses are read.
fn operation(op: &rp_operation) -> Result<Operation, Failure> {
    // Read lazily: a field the service does not use may hold anything, even uninitialised bytes.
    let readonly = || op.readonly.get();
    let method = || from_c(op.method, "request.operation.method");
    Ok(match from_c(op.service, "request.operation.service")? {
        Service::Kv => Operation::Kv(from_c(op.kv_operation, "request.operation.kv_operation")?),
        Service::Query => Operation::Query { readonly: readonly() },
        Service::Analytics => Operation::Analytics { readonly: readonly() },
        Service::Search => Operation::Search,
        Service::Views => Operation::Views,
        Service::ClusterManager => Operation::ClusterManager(method()?),
        Service::Management => Operation::Management(method()?),
    })
}

/// A request from C, each field checked (errors name `request.*`).
/// Safety: `r.previous_reasons` must be NULL or point to `r.previous_reasons_len` readable values.
pub(crate) unsafe fn request(r: &rp_request) -> Result<Request, Failure> {
    let operation = operation(&r.operation)?;
    let previous: &[rp_reason] = match (r.previous_reasons_len, r.previous_reasons.is_null()) {
        (0, _) => &[],
        (_, true) => return Err(Failure::null("request.previous_reasons")),
        // SAFETY: non-NULL, and the caller promises `previous_reasons_len` readable values.
        (len, false) => unsafe { std::slice::from_raw_parts(r.previous_reasons, len) },
    };
    let previous_reasons = (previous.iter().enumerate())
        .map(|(i, p)| from_c(*p, format_args!("request.previous_reasons[{i}]")))
        .collect::<Result<_, _>>()?;
    let strategy = (r.has_strategy.get()).then(|| from_c(r.strategy, "request.strategy"));
    Ok(Request {
        operation,
        idempotent: r.has_idempotent.get().then_some(r.idempotent.get()),
        attempts: r.attempts,
        elapsed_ms: r.elapsed_ms,
        timeout_ms: r.timeout_ms,
        previous_reasons,
        strategy: strategy.transpose()?,
        random: r.has_random.get().then_some(r.random),
        previous_delay_ms: r.has_previous_delay_ms.get().then_some(r.previous_delay_ms),
    })
}
