//! gRPC's service config and its policies (gRFC A6) as immutable handles: `rp_grpc_service_config`
//! (the core's `ServiceConfig`), `rp_grpc_retry_policy` and `rp_grpc_hedging_policy` (a validated
//! `retryPolicy` / `hedgingPolicy`), each read from gRPC's own JSON (camelCase).

use std::ffi::c_char;

use retrypolicy::grpc::{
    ClientOptions, CodeSet, HedgingPolicy, HedgingPolicyDocument, MethodPolicy, RetryPolicy,
    RetryPolicyDocument, ServiceConfig, ServiceConfigDocument,
};
use retrypolicy::Error;

use crate::enums::to_c;
use crate::error::{rp_result, Failure};
use crate::ffi::{output, text};
use crate::grpc_enums::*;
use crate::handle::{get, register, release};
use crate::json::to_json;

/// The client's cap on `maxAttempts` that gRFC A6 sets unless the client changes it: 5. Pass it
/// as `max_attempts_cap` for gRPC's own behaviour (the core's `DEFAULT_MAX_ATTEMPTS_CAP`, unit-tested).
pub const RP_GRPC_DEFAULT_MAX_ATTEMPTS_CAP: u32 = 5;

/// A validated gRPC service config (its `methodConfig` policies and `retryThrottling`): immutable,
/// shareable between threads; create with `rp_grpc_service_config_from_json`, free with
/// `rp_grpc_service_config_free`.
pub struct rp_grpc_service_config(ServiceConfig);

/// A validated gRPC `retryPolicy`: immutable, shareable between threads; from
/// `rp_grpc_retry_policy_from_json` or a service config's lookup, freed with `rp_grpc_retry_policy_free`.
pub struct rp_grpc_retry_policy(pub(crate) RetryPolicy);

/// A validated gRPC `hedgingPolicy`: immutable, shareable between threads; from
/// `rp_grpc_hedging_policy_from_json` or a service config's lookup, freed with `rp_grpc_hedging_policy_free`.
pub struct rp_grpc_hedging_policy(pub(crate) HedgingPolicy);

/// A retry policy's fields, as validated (`rp_grpc_retry_policy_params`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rp_grpc_retry_params {
    /// Attempts in all, the original included, after the client's cap.
    pub max_attempts: u32,
    /// `initialBackoff`, in nanoseconds.
    pub initial_backoff_ns: u64,
    /// `maxBackoff`, in nanoseconds.
    pub max_backoff_ns: u64,
    /// `backoffMultiplier`.
    pub backoff_multiplier: f64,
    /// `retryableStatusCodes`: bit `1 << code` for each `RP_GRPC_CODE_*` retried.
    pub retryable_status_codes: u32,
}

/// A hedging policy's fields, as validated (`rp_grpc_hedging_policy_params`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rp_grpc_hedging_params {
    /// Attempts in all, the original included, after the client's cap.
    pub max_attempts: u32,
    /// `hedgingDelay`, in nanoseconds (0: every attempt at once).
    pub hedging_delay_ns: u64,
    /// `nonFatalStatusCodes`: bit `1 << code` for each `RP_GRPC_CODE_*` after which hedging goes on.
    pub non_fatal_status_codes: u32,
}

/// The policy a service config gives one method (`rp_grpc_service_config_policy_for`): at most one
/// of `retry` and `hedging` is set, each a new handle the caller frees.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rp_grpc_method_policy {
    /// Which method config applied; RP_GRPC_MATCH_NONE when none does.
    pub matched: rp_grpc_match,
    /// The method's retry policy (free with `rp_grpc_retry_policy_free`), or NULL.
    pub retry: *mut rp_grpc_retry_policy,
    /// The method's hedging policy (free with `rp_grpc_hedging_policy_free`), or NULL.
    pub hedging: *mut rp_grpc_hedging_policy,
}

/// The client's options for `max_attempts_cap` (the core's rule: at least 2).
fn options(max_attempts_cap: u32) -> Result<ClientOptions, Failure> {
    ClientOptions::with_cap(max_attempts_cap, "max_attempts_cap").map_err(Failure::from)
}

/// A set of codes as C's bit set.
fn code_bits(codes: CodeSet) -> u32 {
    codes.codes().fold(0, |bits, c| bits | 1 << c.number())
}

/// A policy's validation error, named from the policy document's top ("maxAttempts").
fn at_top(e: Error) -> Failure {
    let field = e.field().trim_start_matches('.').to_owned();
    Failure::from(e.with_field(&field))
}

/// Reads and validates a service config (gRPC's JSON: `{"methodConfig": [{"name": [{"service":
/// "helloworld.Greeter"}], "retryPolicy": {...}}], "retryThrottling": {"maxTokens": 10,
/// "tokenRatio": 0.1}}`; fields A6 does not read are ignored) into a new handle, `maxAttempts`
/// capped at `max_attempts_cap` (at least 2; RP_GRPC_DEFAULT_MAX_ATTEMPTS_CAP for gRPC's 5).
/// Errors name the field, e.g. "methodConfig[0].retryPolicy.maxAttempts".
#[no_mangle]
pub unsafe extern "C" fn rp_grpc_service_config_from_json(
    json: *const c_char,
    json_len: usize,
    max_attempts_cap: u32,
    config_out: *mut *mut rp_grpc_service_config,
) -> rp_result {
    output!(config_out, {
        let doc: ServiceConfigDocument =
            retrypolicy_wire::from_json_str(text(json, Some(json_len), "json")?)?;
        let config = ServiceConfig::from_document(&doc, &options(max_attempts_cap)?)?;
        Ok(register(rp_grpc_service_config(config)))
    })
}

/// Frees a service config; NULL is a no-op. A pointer that is no live `rp_grpc_service_config`
/// frees nothing and sets this thread's last error (RP_RESULT_INVALID_HANDLE). The policies looked
/// up from it are handles of their own.
#[no_mangle]
pub extern "C" fn rp_grpc_service_config_free(config: *mut rp_grpc_service_config) {
    release(config, "config")
}

/// The policy for `service` and `method` (NUL-terminated; "" for none): the method config naming
/// exactly both, else the one naming the service, else the default config's. `*policy_out` says
/// which matched and holds the policy as a new handle (or neither, when no config matches or the
/// matching one has no policy).
#[no_mangle]
pub unsafe extern "C" fn rp_grpc_service_config_policy_for(
    config: *const rp_grpc_service_config,
    service: *const c_char,
    method: *const c_char,
    policy_out: *mut rp_grpc_method_policy,
) -> rp_result {
    output!(policy_out, {
        let config = get(config, "config")?;
        let (service, method) = (text(service, None, "service")?, text(method, None, "method")?);
        let matched = config.0.matched(service, method);
        let kind = matched
            .map(|(how, _)| retrypolicy_wire::parse_name::<MatchKind>("matched", how))
            .transpose()?;
        let mut out = rp_grpc_method_policy {
            matched: to_c(kind),
            retry: std::ptr::null_mut(),
            hedging: std::ptr::null_mut(),
        };
        match matched.map_or(MethodPolicy::None, |(_, p)| p) {
            MethodPolicy::None => {}
            MethodPolicy::Retry(p) => out.retry = register(rp_grpc_retry_policy(p)),
            MethodPolicy::Hedging(p) => out.hedging = register(rp_grpc_hedging_policy(p)),
        }
        Ok(out)
    })
}

/// The service config's `retryThrottling` as a budget document (`{"version": 1, "kind":
/// "token_bucket", "max_tokens": 10, "token_ratio": 0.1}`) for `rp_budget_from_json` or
/// `rp_budget_restore`, as JSON the caller frees with `rp_string_free`; NULL when the config has none.
/// The budget is the server's: share one `rp_budget` between the calls to it.
#[no_mangle]
pub unsafe extern "C" fn rp_grpc_service_config_throttling(
    config: *const rp_grpc_service_config,
    json_out: *mut *mut c_char,
) -> rp_result {
    output!(json_out, {
        let config = get(config, "config")?;
        match config.0.throttling() {
            Some(budget) => to_json(&budget.to_document()),
            None => Ok(std::ptr::null_mut()),
        }
    })
}

/// Reads and validates a `retryPolicy` (gRPC's JSON: `{"maxAttempts": 4, "initialBackoff": ".1s",
/// "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}`) into a
/// new handle, `maxAttempts` capped at `max_attempts_cap` (at least 2); errors name the field
/// ("maxAttempts", "retryableStatusCodes[0]").
#[no_mangle]
pub unsafe extern "C" fn rp_grpc_retry_policy_from_json(
    json: *const c_char,
    json_len: usize,
    max_attempts_cap: u32,
    policy_out: *mut *mut rp_grpc_retry_policy,
) -> rp_result {
    output!(policy_out, {
        let doc: RetryPolicyDocument = retrypolicy_wire::from_json_str(text(json, Some(json_len), "json")?)?;
        let policy = doc.validate("", &options(max_attempts_cap)?).map_err(at_top)?;
        Ok(register(rp_grpc_retry_policy(policy)))
    })
}

/// Frees a retry policy; NULL is a no-op (as `rp_grpc_service_config_free` for another pointer).
#[no_mangle]
pub extern "C" fn rp_grpc_retry_policy_free(policy: *mut rp_grpc_retry_policy) {
    release(policy, "policy")
}

/// A retry policy's fields as validated.
#[no_mangle]
pub unsafe extern "C" fn rp_grpc_retry_policy_params(
    policy: *const rp_grpc_retry_policy,
    params_out: *mut rp_grpc_retry_params,
) -> rp_result {
    output!(params_out, {
        let p = get(policy, "policy")?.0;
        Ok(rp_grpc_retry_params {
            max_attempts: p.max_attempts,
            initial_backoff_ns: p.initial_backoff_ns,
            max_backoff_ns: p.max_backoff_ns,
            backoff_multiplier: p.backoff_multiplier,
            retryable_status_codes: code_bits(p.retryable_status_codes),
        })
    })
}

/// Reads and validates a `hedgingPolicy` (gRPC's JSON: `{"maxAttempts": 4, "hedgingDelay": "0.5s",
/// "nonFatalStatusCodes": ["UNAVAILABLE"]}`) into a new handle, `maxAttempts` capped at
/// `max_attempts_cap` (at least 2); errors name the field ("hedgingDelay").
#[no_mangle]
pub unsafe extern "C" fn rp_grpc_hedging_policy_from_json(
    json: *const c_char,
    json_len: usize,
    max_attempts_cap: u32,
    policy_out: *mut *mut rp_grpc_hedging_policy,
) -> rp_result {
    output!(policy_out, {
        let doc: HedgingPolicyDocument =
            retrypolicy_wire::from_json_str(text(json, Some(json_len), "json")?)?;
        let policy = doc.validate("", &options(max_attempts_cap)?).map_err(at_top)?;
        Ok(register(rp_grpc_hedging_policy(policy)))
    })
}

/// Frees a hedging policy; NULL is a no-op (as `rp_grpc_service_config_free` for another pointer).
#[no_mangle]
pub extern "C" fn rp_grpc_hedging_policy_free(policy: *mut rp_grpc_hedging_policy) {
    release(policy, "policy")
}

/// A hedging policy's fields as validated.
#[no_mangle]
pub unsafe extern "C" fn rp_grpc_hedging_policy_params(
    policy: *const rp_grpc_hedging_policy,
    params_out: *mut rp_grpc_hedging_params,
) -> rp_result {
    output!(params_out, {
        let p = get(policy, "policy")?.0;
        Ok(rp_grpc_hedging_params {
            max_attempts: p.max_attempts,
            hedging_delay_ns: p.hedging_delay_ns,
            non_fatal_status_codes: code_bits(p.non_fatal_status_codes),
        })
    })
}
