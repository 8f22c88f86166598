//! The AWS SDKs' retry modes: `rp_aws_retry_config` (the core's `AwsRetryConfig`, an immutable
//! handle) and `rp_aws_decide` (the core's `aws_decide` after one failed attempt), with the
//! `RP_AWS_*` enums. The retry quota is an `rp_budget` of kind `retry_quota`: the host asks it
//! (`rp_budget_try_retry` with the decision's `cause`) and passes its verdict back.
#![allow(missing_docs)]

use std::ffi::{c_char, CString};

use retrypolicy::aws::{
    aws_decide, AwsAction, AwsBehavior, AwsDecision, AwsError, AwsMode, AwsRetryConfig, AwsRetryDocument,
    RetryableTrait,
};
use retrypolicy::{Error, Outcome};

use crate::budget::{rp_budget_verdict, verdict_from_c};
use crate::budget_enums::rp_retry_cause;
use crate::enums::{c_enum, from_c, to_c, CEnum};
use crate::error::{rp_result, Failure};
use crate::ffi::{borrow, intern, output, text, CBool};
use crate::grpc::draw;
use crate::handle::{get, get_optional, register, release};
use crate::json::to_json;
use crate::run::{clock, or_minus_one, rp_run, rp_run_step, with_guards};

/// An AWS SDK retry mode (an `RP_AWS_MODE_*` constant; names "standard", "adaptive", "legacy").
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_aws_mode(pub u32);

pub const RP_AWS_MODE_STANDARD: rp_aws_mode = rp_aws_mode(0);
/// Standard's decisions plus the client-side rate limiter (`rp_aws_rate_limiter`).
pub const RP_AWS_MODE_ADAPTIVE: rp_aws_mode = rp_aws_mode(1);
/// botocore's legacy mode (`data/_retry.json`): 5 attempts, no quota.
pub const RP_AWS_MODE_LEGACY: rp_aws_mode = rp_aws_mode(2);

/// Standard mode's behaviour (an `RP_AWS_BEHAVIOR_*` constant; names "classic", "2026").
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_aws_behavior(pub u32);

/// `rand × min(1 s × 2^i, 20 s)`, 3 attempts for every service (the default).
pub const RP_AWS_BEHAVIOR_CLASSIC: rp_aws_behavior = rp_aws_behavior(0);
/// The SDKs' `AWS_NEW_RETRIES_2026`: 50 ms base (1 s after throttling, 25 ms for DynamoDB),
/// `x-amz-retry-after`, DynamoDB's 4 attempts, the long-polling wait.
pub const RP_AWS_BEHAVIOR_2026: rp_aws_behavior = rp_aws_behavior(1);

/// The retryable trait of a modeled error shape (an `RP_AWS_RETRYABLE_*` constant).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_aws_retryable_trait(pub u32);

/// The operation does not model this error as retryable (no name).
pub const RP_AWS_RETRYABLE_NONE: rp_aws_retryable_trait = rp_aws_retryable_trait(0);
/// "transient": `retryable: {}`.
pub const RP_AWS_RETRYABLE_TRANSIENT: rp_aws_retryable_trait = rp_aws_retryable_trait(1);
/// "throttling": `retryable: {throttling: true}`.
pub const RP_AWS_RETRYABLE_THROTTLING: rp_aws_retryable_trait = rp_aws_retryable_trait(2);

/// Retry or not (an `RP_AWS_ACTION_*` constant; names "retry", "no_retry").
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_aws_action(pub u32);

/// Send the request again after `delay_ms`.
pub const RP_AWS_ACTION_RETRY: rp_aws_action = rp_aws_action(0);
/// Return the error (after `wait_ms` when that is set).
pub const RP_AWS_ACTION_NO_RETRY: rp_aws_action = rp_aws_action(1);

c_enum!(rp_aws_mode <=> AwsMode, [
    (RP_AWS_MODE_STANDARD => AwsMode::Standard),
    (RP_AWS_MODE_ADAPTIVE => AwsMode::Adaptive),
    (RP_AWS_MODE_LEGACY => AwsMode::Legacy),
]);

c_enum!(rp_aws_behavior <=> AwsBehavior, [
    (RP_AWS_BEHAVIOR_CLASSIC => AwsBehavior::Classic),
    (RP_AWS_BEHAVIOR_2026 => AwsBehavior::Retries2026),
]);

c_enum!(rp_aws_retryable_trait <=> Option<RetryableTrait>, [
    (RP_AWS_RETRYABLE_NONE => None),
    (RP_AWS_RETRYABLE_TRANSIENT => Some(RetryableTrait::Transient)),
    (RP_AWS_RETRYABLE_THROTTLING => Some(RetryableTrait::Throttling)),
]);

c_enum!(rp_aws_action <=> AwsAction, [
    (RP_AWS_ACTION_RETRY => AwsAction::Retry),
    (RP_AWS_ACTION_NO_RETRY => AwsAction::NoRetry),
]);

/// A checked AWS retry configuration (mode, behaviour, attempts, service, `MAX_BACKOFF`, long
/// polling): immutable, shareable between threads; create with `rp_aws_retry_config_from_json`,
/// free with `rp_aws_retry_config_free`. Where a function takes one, NULL stands for standard mode's
/// defaults (classic, 3 attempts, 20 s).
pub struct rp_aws_retry_config {
    config: AwsRetryConfig,
    /// The service, for `rp_aws_retry_params`.
    service: Option<CString>,
}

/// An AWS retry configuration's fields (`rp_aws_retry_config_params`), the mode's defaults filled in.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rp_aws_retry_params {
    /// The mode.
    pub mode: rp_aws_mode,
    /// Standard mode's behaviour (legacy: classic, unused).
    pub behavior: rp_aws_behavior,
    /// Attempts in all, the first included.
    pub max_attempts: u32,
    /// The service as the SDK names it ("dynamodb"), NUL-terminated, or NULL for none; owned by the
    /// config, valid until it is freed.
    pub service: *const c_char,
    /// The longest backoff before jitter, in ms (standard and adaptive).
    pub max_backoff_ms: u64,
    /// Whether the operation long-polls (standard and adaptive).
    pub long_polling: CBool,
}

/// What a failed attempt produced, as the host read it: a response (`status`, and the AWS error
/// `code` its body named) or no response (`connection_error`, `timeout`), never both.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rp_aws_error {
    /// The AWS error code (`Error.Code`, `__type`), NUL-terminated, compared exactly; NULL for none.
    pub code: *const c_char,
    /// The HTTP status (100..=599); 0 for none.
    pub status: u32,
    /// No response: the connection failed, was refused, reset or closed.
    pub connection_error: CBool,
    /// No response: the attempt timed out connecting or reading.
    pub timeout: CBool,
    /// The modeled error shape's retryable trait (`RP_AWS_RETRYABLE_*`; NONE: not modeled as retryable).
    pub retryable_trait: rp_aws_retryable_trait,
    /// The `x-amz-retry-after` header as received (NUL-terminated; read by the 2026 behaviour), or NULL.
    pub retry_after: *const c_char,
    /// DynamoDB: the body's CRC32 did not match `x-amz-crc32`.
    pub crc32_mismatch: CBool,
}

/// The answer for one failed attempt (`rp_aws_decide`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rp_aws_decision {
    /// Retry or not (`RP_AWS_ACTION_*`).
    pub action: rp_aws_action,
    /// Retry: the wait before it, in ms (0 when not retrying).
    pub delay_ms: u64,
    /// The wait before returning the error without a retry (a long-polling operation whose retry
    /// the quota refused, 2026 behaviour), in ms; -1 none.
    pub wait_ms: i64,
    /// The bound the jitter drew the wait under, in ms; -1 when no wait was computed.
    pub ceiling_ms: i64,
    /// A valid `x-amz-retry-after` the 2026 behaviour read, in ms; -1 none.
    pub retry_after_ms: i64,
    /// Whether the error is retryable at all (attempts and quota aside).
    pub retryable: CBool,
    /// Whether it is a throttling error (tell an adaptive-mode `rp_aws_rate_limiter` so).
    pub throttling: CBool,
    /// What a retry is charged for in the quota (`RP_RETRY_CAUSE_ERROR`, `_TIMEOUT`,
    /// `_THROTTLING`): pass it to `rp_budget_try_retry`; RP_RETRY_CAUSE_NONE when not retryable.
    pub cause: rp_retry_cause,
    /// Attempts made, the failed one included.
    pub attempts: u32,
    /// The configuration's attempt limit.
    pub max_attempts: u32,
    /// The stable name of the rule that decided ("transient_status", "throttling_error",
    /// "max_attempts_reached", "retry_quota_exhausted", ...; static, owned by the library).
    pub rule: *const c_char,
    /// Its source (static, owned by the library).
    pub section: *const c_char,
}

/// Reads an AWS retry document (`{"version": 1, "mode": "standard", "behavior": "classic",
/// "max_attempts": 3, "service": "dynamodb", "max_backoff_ms": 20000, "long_polling": false}`; every
/// field may be left out, `{}` is standard mode's defaults) into a new handle; errors name the
/// field ("max_attempts", "mode"). A service name holding a NUL byte has no C form (RP_RESULT_OUT_OF_RANGE).
#[no_mangle]
pub unsafe extern "C" fn rp_aws_retry_config_from_json(
    json: *const c_char,
    json_len: usize,
    config_out: *mut *mut rp_aws_retry_config,
) -> rp_result {
    output!(config_out, {
        let doc: AwsRetryDocument = retrypolicy_wire::from_json_str(text(json, Some(json_len), "json")?)?;
        let config = AwsRetryConfig::from_document(&doc, "")?;
        let service = (config.service.as_deref())
            .map(|s| {
                CString::new(s).map_err(|_| Error::OutOfRange {
                    field: "service".to_owned(),
                    value: retrypolicy::error::shorten(s),
                    expected: "a name without NUL bytes".to_owned(),
                })
            })
            .transpose()?;
        Ok(register(rp_aws_retry_config { config, service }))
    })
}

/// Frees an AWS retry configuration; NULL is a no-op. A pointer that is no live
/// `rp_aws_retry_config` frees nothing and sets this thread's last error (RP_RESULT_INVALID_HANDLE).
#[no_mangle]
pub extern "C" fn rp_aws_retry_config_free(config: *mut rp_aws_retry_config) {
    release(config, "config")
}

/// The configuration's fields, the mode's defaults filled in.
#[no_mangle]
pub unsafe extern "C" fn rp_aws_retry_config_params(
    config: *const rp_aws_retry_config,
    params_out: *mut rp_aws_retry_params,
) -> rp_result {
    output!(params_out, {
        let handle = get(config, "config")?;
        let c = &handle.config;
        Ok(rp_aws_retry_params {
            mode: to_c(c.mode),
            behavior: to_c(c.behavior),
            max_attempts: c.max_attempts,
            // The handle (and so its string) lives until rp_aws_retry_config_free.
            service: handle.service.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
            max_backoff_ms: c.max_backoff_ms,
            long_polling: c.long_polling.into(),
        })
    })
}

/// The configuration as its normalized document (version 1, every field of its mode set), as JSON
/// the caller frees with `rp_string_free`.
#[no_mangle]
pub unsafe extern "C" fn rp_aws_retry_config_document(
    config: *const rp_aws_retry_config,
    json_out: *mut *mut c_char,
) -> rp_result {
    output!(json_out, to_json(&get(config, "config")?.config.to_document()))
}

/// A C error as the core's (a `false` flag is the field left out); errors name `<at>.<field>`
/// ("error.status", "outcome.error.code").
/// Safety: `code` and `retry_after` must be NULL or NUL-terminated.
unsafe fn error_from_c(e: &rp_aws_error, at: &str) -> Result<AwsError, Failure> {
    let optional = |p: *const c_char, field: &str| -> Result<Option<String>, Failure> {
        match p.is_null() {
            true => Ok(None),
            // SAFETY: non-NULL and NUL-terminated by this function's contract.
            false => Ok(Some(unsafe { text(p, None, field) }?.to_owned())),
        }
    };
    let status = match e.status {
        0 => None,
        s => Some(u16::try_from(s).map_err(|_| Error::OutOfRange {
            field: format!("{at}.status"),
            value: s.to_string(),
            expected: "an HTTP status in 100..=599".to_owned(),
        })?),
    };
    let flag = |b: CBool| b.get().then_some(true);
    Ok(AwsError {
        code: optional(e.code, &format!("{at}.code"))?,
        status,
        connection_error: flag(e.connection_error),
        timeout: flag(e.timeout),
        retryable_trait: from_c(e.retryable_trait, format_args!("{at}.retryable_trait"))?,
        retry_after: optional(e.retry_after, &format!("{at}.retry_after"))?,
        crc32_mismatch: flag(e.crc32_mismatch),
    })
}

/// A core decision as a C struct; rule and section are interned.
fn decision_to_c(d: &AwsDecision) -> rp_aws_decision {
    rp_aws_decision {
        action: to_c(d.action),
        delay_ms: d.delay_ms.unwrap_or(0),
        wait_ms: or_minus_one(d.wait_ms),
        ceiling_ms: or_minus_one(d.ceiling_ms),
        retry_after_ms: or_minus_one(d.retry_after_ms),
        retryable: d.retryable.into(),
        throttling: d.throttling.into(),
        cause: to_c(d.cause),
        attempts: d.attempts,
        max_attempts: d.max_attempts,
        rule: intern(d.rule).as_ptr(),
        section: intern(d.section).as_ptr(),
    }
}

/// The decision after a failed attempt under `config` (NULL: standard mode's defaults): `attempts`
/// made (the failed one included, at least 1), what it produced (`error`), the draw `random` in
/// [0, 1) (NaN or negative: none; needed when a jittered wait is computed), and the retry quota's
/// verdict for this retry (`budget_verdict`, from `rp_budget_try_retry` with the decision's
/// `cause`; NULL: not asked). A refused verdict turns a retry into a no-retry with the quota's rule.
/// The usual loop: decide with NULL; on a retry ask the quota; if it refuses, decide again with its
/// verdict. Errors name the field ("attempts", "error.status", "random", "budget_verdict.permitted").
#[no_mangle]
pub unsafe extern "C" fn rp_aws_decide(
    config: *const rp_aws_retry_config,
    attempts: u32,
    error: *const rp_aws_error,
    random: f64,
    budget_verdict: *const rp_budget_verdict,
    decision_out: *mut rp_aws_decision,
) -> rp_result {
    output!(decision_out, {
        let handle = get_optional(config, "config")?;
        let default = AwsRetryConfig::default();
        let config = handle.as_ref().map_or(&default, |h| &h.config);
        let error = error_from_c(borrow(error, "error")?, "error")?;
        let verdict = budget_verdict.as_ref().map(verdict_from_c).transpose()?;
        let d = aws_decide(config, attempts, &error, draw(random), verdict.as_ref())?;
        Ok(decision_to_c(&d))
    })
}

/// The attempt of a send step of a run with `aws` rules failed with `error` (or use
/// `rp_run_attempt_ended` with RP_OUTCOME_SUCCESS) at `now_ms` (`random`: the draw for the backoff,
/// NaN or negative for none): wait, or done; the run's budget is its retry quota, charged each
/// retry's cause. In a run with other rules it is RP_RESULT_OUT_OF_RANGE naming "outcome.kind".
/// Errors name the error's field ("outcome.error.status").
#[no_mangle]
pub unsafe extern "C" fn rp_run_attempt_ended_aws(
    run: *mut rp_run,
    error: *const rp_aws_error,
    now_ms: f64,
    random: f64,
    step_out: *mut rp_run_step,
) -> rp_result {
    output!(step_out, {
        let error = error_from_c(borrow(error, "error")?, "outcome.error")?;
        let outcome = Outcome::Aws { error };
        with_guards(run, |r, g| {
            r.attempt_ended(&outcome, clock(now_ms, random, -1), g, None)
        })
    })
}
