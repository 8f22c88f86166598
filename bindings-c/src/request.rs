//! `rp_operation` and `rp_request`: what is being retried and its state, converted into the core's
//! `Operation` and `Request`; the RFC 0049 idempotency questions about them.

use std::ffi::c_char;

use retrypolicy::{Operation, Request, Service};

use crate::enums::{from_c, to_c, CEnum};
use crate::error::{rp_result, Failure};
use crate::ffi::{borrow, output, text, CBool};
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

/// An operation from C; only the fields its service uses are read. Errors name `operation.*`.
#[inline]
pub(crate) fn operation(op: &rp_operation) -> Result<Operation, Failure> {
    let method = || from_c(op.method, "operation.method");
    Ok(match from_c(op.service, "operation.service")? {
        Service::Kv => Operation::Kv(from_c(op.kv_operation, "operation.kv_operation")?),
        Service::Query => Operation::Query {
            readonly: op.readonly.get(),
        },
        Service::Analytics => Operation::Analytics {
            readonly: op.readonly.get(),
        },
        Service::Search => Operation::Search,
        Service::Views => Operation::Views,
        Service::ClusterManager => Operation::ClusterManager(method()?),
        Service::Management => Operation::Management(method()?),
    })
}

/// An operation back to C (unused fields zero).
fn operation_to_c(op: Operation) -> rp_operation {
    let mut c = rp_operation {
        service: to_c(op.service()),
        kv_operation: RP_KV_OPERATION_GET,
        readonly: CBool::default(),
        method: RP_HTTP_METHOD_GET,
    };
    match op {
        Operation::Kv(k) => c.kv_operation = to_c(k),
        Operation::Query { readonly } | Operation::Analytics { readonly } => c.readonly = readonly.into(),
        Operation::ClusterManager(m) | Operation::Management(m) => c.method = to_c(m),
        Operation::Search | Operation::Views => {}
    }
    c
}

/// A request from C, each field checked (errors name `request.*`).
/// Safety: `r.previous_reasons` must be NULL or point to `r.previous_reasons_len` readable values.
// #[inline] here and on `operation` and `inputs` (make bench): rp_decide 480 -> 432 instructions
// per call, from about 20x its no-op export to 17-19x (the budget is 20x).
#[inline]
pub(crate) unsafe fn request(r: &rp_request) -> Result<Request, Failure> {
    let operation = operation(&r.operation).map_err(|f| f.prefixed("request."))?;
    let previous: &[rp_reason] = match (r.previous_reasons_len, r.previous_reasons.is_null()) {
        (0, _) => &[],
        (_, true) => return Err(Failure::null("request.previous_reasons")),
        // SAFETY: non-NULL, and the caller promises `previous_reasons_len` readable values.
        (len, false) => unsafe { std::slice::from_raw_parts(r.previous_reasons, len) },
    };
    let previous_reasons = previous
        .iter()
        .enumerate()
        .map(|(i, p)| {
            p.core().ok_or_else(|| {
                Failure::invalid_enum(&format!("request.previous_reasons[{i}]"), "rp_reason", p.0)
            })
        })
        .collect::<Result<_, _>>()?;
    let strategy = if r.has_strategy.get() {
        Some(from_c(r.strategy, "request.strategy")?)
    } else {
        None
    };
    Ok(Request {
        operation,
        idempotent: r.has_idempotent.get().then_some(r.idempotent.get()),
        attempts: r.attempts,
        elapsed_ms: r.elapsed_ms,
        timeout_ms: r.timeout_ms,
        previous_reasons,
        strategy,
        random: r.has_random.get().then_some(r.random),
        previous_delay_ms: r.has_previous_delay_ms.get().then_some(r.previous_delay_ms),
    })
}

/// Reads an operation from its JSON form (`{"service": "kv", "operation": "get"}`,
/// `{"service": "query", "readonly": true}`, `{"service": "management", "method": "GET"}`).
#[no_mangle]
pub unsafe extern "C" fn rp_operation_from_json(
    json: *const c_char,
    json_len: usize,
    operation_out: *mut rp_operation,
) -> rp_result {
    output!(operation_out, {
        let json = text(json, json_len, "json", false)?;
        Ok(operation_to_c(retrypolicy_wire::from_json_str(json)?))
    })
}

/// Whether RFC 0049's idempotent-operation list calls `operation` idempotent.
#[no_mangle]
pub unsafe extern "C" fn rp_operation_is_idempotent(
    operation: *const rp_operation,
    idempotent_out: *mut bool,
) -> rp_result {
    output!(
        idempotent_out,
        Ok(self::operation(borrow(operation, "operation")?)?.is_idempotent())
    )
}

/// Whether `request` counts as idempotent: its `idempotent` override when set, else the RFC list.
#[no_mangle]
pub unsafe extern "C" fn rp_request_is_idempotent(
    request: *const rp_request,
    idempotent_out: *mut bool,
) -> rp_result {
    output!(
        idempotent_out,
        Ok(self::request(borrow(request, "request")?)?.is_idempotent())
    )
}
