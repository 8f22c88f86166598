//! `rp_aws_rate_limiter`: adaptive mode's client-side rate limiter (the core's
//! `AdaptiveRateLimiter`: botocore's token bucket with its CUBIC rate) behind a lock, shared between
//! threads, on the host's clock.

use std::ffi::c_char;
use std::sync::Mutex;

use retrypolicy::aws::{
    AcquireVerdict, AdaptiveRateLimiter, RateLimiterConfig, RateLimiterDocument, RateLimiterSnapshot,
    RateUpdate,
};

use crate::error::{rp_result, Failure};
use crate::ffi::{intern, lock, output, text, CBool};
use crate::handle::{get, register, release};
use crate::json::{snapshot_from_json, to_json};

/// Adaptive mode's rate limiter: create with `rp_aws_rate_limiter_from_json` or
/// `rp_aws_rate_limiter_restore`, free with `rp_aws_rate_limiter_free`. Every call locks it, so one
/// handle (one per client, as the SDKs keep one) may be shared by any number of threads.
pub struct rp_aws_rate_limiter(Mutex<AdaptiveRateLimiter>);

/// The limiter's answer to "may an attempt be sent now?" (`rp_aws_rate_limiter_acquire`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rp_aws_acquire_verdict {
    /// Whether the attempt may be sent now (a token was taken, or the limiter is off).
    pub acquired: CBool,
    /// When not: wait this many ms, then ask again (a token will be there); 0 when acquired.
    pub wait_ms: u64,
    /// Tokens left in the bucket.
    pub capacity: f64,
    /// "limiter_off" (no throttle yet: no token needed), "token_taken" or "wait_for_token"
    /// (static, owned by the library).
    pub rule: *const c_char,
    /// Its source (static, owned by the library).
    pub section: *const c_char,
}

/// What a response did to the limiter (`rp_aws_rate_limiter_record`); rates are requests per second.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rp_aws_rate_update {
    /// Whether the response was recorded as a throttle.
    pub throttled: CBool,
    /// The measured send rate after it.
    pub measured_rate: f64,
    /// The rate CUBIC asks for, before the cap of twice the measured rate.
    pub calculated_rate: f64,
    /// The bucket's fill rate now.
    pub fill_rate: f64,
    /// The bucket's capacity now (at least 1).
    pub max_capacity: f64,
    /// Whether the token bucket is on (after the first throttle).
    pub enabled: CBool,
    /// The term that gave `calculated_rate`: "throttle_beta" (β × the rate in use) or
    /// "cubic_curve" (static, owned by the library).
    pub rule: *const c_char,
    /// What set the fill rate instead of `calculated_rate`: "capped_at_twice_measured" or
    /// "raised_to_min_fill_rate" (the floor, when both applied), or NULL (static, owned by the
    /// library).
    pub bound: *const c_char,
}

fn acquire_to_c(v: &AcquireVerdict) -> rp_aws_acquire_verdict {
    rp_aws_acquire_verdict {
        acquired: v.acquired.into(),
        wait_ms: v.wait_ms.unwrap_or(0),
        capacity: v.capacity,
        rule: intern(v.rule).as_ptr(),
        section: intern(v.section).as_ptr(),
    }
}

fn update_to_c(u: &RateUpdate) -> rp_aws_rate_update {
    rp_aws_rate_update {
        throttled: u.throttled.into(),
        measured_rate: u.measured_rate,
        calculated_rate: u.calculated_rate,
        fill_rate: u.fill_rate,
        max_capacity: u.max_capacity,
        enabled: u.enabled.into(),
        rule: intern(u.rule).as_ptr(),
        bound: u.bound.map_or(std::ptr::null(), |b| intern(b).as_ptr()),
    }
}

/// The configuration a limiter document holds (`{}`: the SDKs' constants), errors naming its fields.
unsafe fn config(json: *const c_char, json_len: usize) -> Result<RateLimiterConfig, Failure> {
    // SAFETY: forwarded from this function's contract (the pointer contract, lib.rs).
    let doc: RateLimiterDocument =
        retrypolicy_wire::from_json_str(unsafe { text(json, Some(json_len), "json") }?)?;
    Ok(RateLimiterConfig::from_document(&doc, "")?)
}

/// `f` on the limiter behind `limiter`, locked for the call. A pointer that is no live
/// `rp_aws_rate_limiter` is RP_RESULT_INVALID_HANDLE naming "limiter".
fn with_locked<R>(
    limiter: *const rp_aws_rate_limiter,
    f: impl FnOnce(&mut AdaptiveRateLimiter) -> R,
) -> Result<R, Failure> {
    let handle = get(limiter, "limiter")?;
    let mut locked = lock(&handle.0, "limiter")?;
    Ok(f(&mut locked))
}

/// A new limiter from its document (`{"version": 1, "min_fill_rate": 0.5, "beta": 0.7,
/// "scale_constant": 0.4, "smoothing": 0.8}`; `{}` is botocore's and aws-sdk-go-v2's constants),
/// created at the host's `start_ms`: off until the first throttle, as the SDKs build it. Free it
/// with `rp_aws_rate_limiter_free`; errors name the document's field ("beta").
#[no_mangle]
pub unsafe extern "C" fn rp_aws_rate_limiter_from_json(
    json: *const c_char,
    json_len: usize,
    start_ms: u64,
    limiter_out: *mut *mut rp_aws_rate_limiter,
) -> rp_result {
    output!(limiter_out, {
        let limiter = AdaptiveRateLimiter::new(&config(json, json_len)?, start_ms);
        Ok(register(rp_aws_rate_limiter(Mutex::new(limiter))))
    })
}

/// A limiter from its document and a snapshot of its state (`rp_aws_rate_limiter_snapshot`'s JSON;
/// it keeps its own times); errors in the snapshot name fields under "snapshot" ("snapshot.capacity").
#[no_mangle]
pub unsafe extern "C" fn rp_aws_rate_limiter_restore(
    json: *const c_char,
    json_len: usize,
    snapshot_json: *const c_char,
    snapshot_len: usize,
    limiter_out: *mut *mut rp_aws_rate_limiter,
) -> rp_result {
    output!(limiter_out, {
        let config = config(json, json_len)?;
        let snapshot: RateLimiterSnapshot =
            snapshot_from_json(text(snapshot_json, Some(snapshot_len), "snapshot_json")?)?;
        let limiter = AdaptiveRateLimiter::restore(&config, &snapshot, "snapshot")?;
        Ok(register(rp_aws_rate_limiter(Mutex::new(limiter))))
    })
}

/// Frees a limiter; NULL is a no-op. A pointer that is no live `rp_aws_rate_limiter` frees nothing
/// and sets this thread's last error (RP_RESULT_INVALID_HANDLE).
#[no_mangle]
pub extern "C" fn rp_aws_rate_limiter_free(limiter: *mut rp_aws_rate_limiter) {
    release(limiter, "limiter")
}

/// Asks for a token before an attempt at `now_ms`: go (the limiter is off, or a token was taken),
/// or wait `wait_ms` and ask again (the SDKs block there; the host sleeps).
#[no_mangle]
pub unsafe extern "C" fn rp_aws_rate_limiter_acquire(
    limiter: *mut rp_aws_rate_limiter,
    now_ms: u64,
    verdict_out: *mut rp_aws_acquire_verdict,
) -> rp_result {
    output!(
        verdict_out,
        with_locked(limiter, |l| acquire_to_c(&l.acquire(now_ms)))
    )
}

/// Tells the limiter a response arrived at `now_ms`, a throttling error (`throttled`, as
/// `rp_aws_decision.throttling` says) or not: the measured rate counts it and CUBIC sets the new rate.
#[no_mangle]
pub unsafe extern "C" fn rp_aws_rate_limiter_record(
    limiter: *mut rp_aws_rate_limiter,
    now_ms: u64,
    throttled: CBool,
    update_out: *mut rp_aws_rate_update,
) -> rp_result {
    let throttled = throttled.get();
    output!(
        update_out,
        with_locked(limiter, |l| update_to_c(&l.record(now_ms, throttled)))
    )
}

/// The limiter's state as JSON (`{"version": 1, "enabled": true, "fill_rate": 0.5, ...}`), for
/// `rp_aws_rate_limiter_restore`; the caller frees it with `rp_string_free`.
#[no_mangle]
pub unsafe extern "C" fn rp_aws_rate_limiter_snapshot(
    limiter: *const rp_aws_rate_limiter,
    json_out: *mut *mut c_char,
) -> rp_result {
    output!(json_out, with_locked(limiter, |l| to_json(&l.snapshot()))?)
}

/// The limiter's configuration as its normalized document (version 1, every field set), as JSON
/// the caller frees with `rp_string_free`.
#[no_mangle]
pub unsafe extern "C" fn rp_aws_rate_limiter_document(
    limiter: *const rp_aws_rate_limiter,
    json_out: *mut *mut c_char,
) -> rp_result {
    output!(
        json_out,
        with_locked(limiter, |l| to_json(&l.config().to_document()))?
    )
}

#[cfg(test)]
impl rp_aws_rate_limiter {
    /// The lock, for the unit test that poisons it.
    pub(crate) fn lock_for_test(&self) -> std::sync::MutexGuard<'_, AdaptiveRateLimiter> {
        self.0.lock().unwrap()
    }
}
