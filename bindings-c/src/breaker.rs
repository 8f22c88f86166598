//! `rp_breaker`: a circuit breaker (the core's `CircuitBreaker`) behind a lock, shared between threads.

use std::ffi::c_char;
use std::sync::Mutex;

use retrypolicy::{BreakerConfig, BreakerDocument, BreakerSnapshot, BreakerVerdict, CircuitBreaker};

use crate::budget_enums::*;
use crate::enums::{from_c, rp_reason, to_c, RP_REASON_UNKNOWN};
use crate::error::{rp_result, Failure};
use crate::ffi::{intern, lock, output, text, CBool};
use crate::handle::{get, register, release};
use crate::json::{snapshot_from_json, to_json};
use crate::panic::ffi_boundary;

/// A circuit breaker with Couchbase's parameters: create with `rp_breaker_from_json` or
/// `rp_breaker_restore`, free with `rp_breaker_free`. Every call locks it, so one handle may be
/// shared by any number of threads (and lets out at most one canary between them).
pub struct rp_breaker(pub(crate) Mutex<CircuitBreaker>);

/// A breaker's answer to "may a request be sent now?".
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rp_breaker_verdict {
    /// Whether the request may be sent.
    pub permitted: CBool,
    /// Whether this request is the half-open circuit's one canary.
    pub canary: CBool,
    /// The circuit's state after this call.
    pub state: rp_breaker_state,
    /// Whether `reason` holds the reason to hand `rp_decide` (when refused).
    pub has_reason: CBool,
    /// RP_REASON_CIRCUIT_BREAKER_OPEN when refused (`has_reason`), else RP_REASON_UNKNOWN.
    pub reason: rp_reason,
    /// The rule that decided.
    pub rule: rp_breaker_rule,
    /// The source text of that rule (static, owned by the library).
    pub source: *const c_char,
}

/// A core verdict as a C struct.
pub(crate) fn verdict_to_c(v: &BreakerVerdict) -> rp_breaker_verdict {
    rp_breaker_verdict {
        permitted: v.permitted.into(),
        canary: v.canary.into(),
        state: to_c(v.state),
        has_reason: v.reason.is_some().into(),
        reason: v.reason.map_or(RP_REASON_UNKNOWN, to_c),
        rule: to_c(v.rule),
        source: intern(v.source).as_ptr(),
    }
}

/// The configuration a breaker document holds (`{}`: Couchbase's defaults), errors naming its fields.
unsafe fn config(json: *const c_char, json_len: usize) -> Result<BreakerConfig, Failure> {
    // SAFETY: forwarded from this function's contract (the pointer contract, lib.rs).
    let doc: BreakerDocument =
        retrypolicy_wire::from_json_str(unsafe { text(json, Some(json_len), "json") }?)?;
    Ok(BreakerConfig::from_document(&doc, "")?)
}

/// `f` on the breaker behind `breaker`, locked for the call. A pointer that is no live
/// `rp_breaker` is RP_RESULT_INVALID_HANDLE naming "breaker".
pub(crate) fn with_locked<R>(
    breaker: *const rp_breaker,
    f: impl FnOnce(&mut CircuitBreaker) -> R,
) -> Result<R, Failure> {
    let handle = get(breaker, "breaker")?;
    let mut locked = lock(&handle.0, "breaker")?;
    Ok(f(&mut locked))
}

/// A new handle of `breaker`.
fn handle(breaker: CircuitBreaker) -> *mut rp_breaker {
    register(rp_breaker(Mutex::new(breaker)))
}

/// A new, closed breaker from its document (`{"volume_threshold": 20, "error_threshold_percentage":
/// 50, "sleep_window_ms": 5000, "rolling_window_ms": 60000, "canary_timeout_ms": 5000, "enabled":
/// true}`; `{}` is Couchbase's defaults); free it with `rp_breaker_free`.
#[no_mangle]
pub unsafe extern "C" fn rp_breaker_from_json(
    json: *const c_char,
    json_len: usize,
    breaker_out: *mut *mut rp_breaker,
) -> rp_result {
    output!(
        breaker_out,
        Ok(handle(CircuitBreaker::new(&config(json, json_len)?)))
    )
}

/// A breaker from its document and a snapshot of its state (`rp_breaker_snapshot`'s JSON); errors
/// in the snapshot name fields under "snapshot" ("snapshot.since_ms").
#[no_mangle]
pub unsafe extern "C" fn rp_breaker_restore(
    json: *const c_char,
    json_len: usize,
    snapshot_json: *const c_char,
    snapshot_len: usize,
    breaker_out: *mut *mut rp_breaker,
) -> rp_result {
    output!(breaker_out, {
        let config = config(json, json_len)?;
        let snapshot: BreakerSnapshot =
            snapshot_from_json(text(snapshot_json, Some(snapshot_len), "snapshot_json")?)?;
        Ok(handle(CircuitBreaker::restore(&config, &snapshot, "snapshot")?))
    })
}

/// Frees a breaker; NULL is a no-op. A pointer that is no live `rp_breaker` (freed already, another
/// type's handle) frees nothing and sets this thread's last error (RP_RESULT_INVALID_HANDLE); runs
/// made with the breaker keep it until they are freed.
#[no_mangle]
pub extern "C" fn rp_breaker_free(breaker: *mut rp_breaker) {
    release(breaker, "breaker")
}

/// Asks whether a request may be sent at `now_ms`. Changes state: past the sleep window it lets
/// this request out as the one canary (the circuit turns half-open).
#[no_mangle]
pub unsafe extern "C" fn rp_breaker_permit(
    breaker: *mut rp_breaker,
    now_ms: u64,
    verdict_out: *mut rp_breaker_verdict,
) -> rp_result {
    output!(
        verdict_out,
        with_locked(breaker, |b| verdict_to_c(&b.permit(now_ms)))
    )
}

/// Tells the breaker how a request ended at `now_ms`.
#[no_mangle]
pub unsafe extern "C" fn rp_breaker_record(
    breaker: *mut rp_breaker,
    now_ms: u64,
    outcome: rp_breaker_outcome,
) -> rp_result {
    ffi_boundary(|| {
        let outcome = from_c(outcome, "outcome")?;
        with_locked(breaker, |b| b.record(now_ms, outcome))?;
        Ok(())
    })
}

/// The circuit's state at `now_ms`, a canary unanswered past its timeout counting as failed;
/// changes nothing (`_state_at`: `rp_breaker_state` names the type).
#[no_mangle]
pub unsafe extern "C" fn rp_breaker_state_at(
    breaker: *const rp_breaker,
    now_ms: u64,
    state_out: *mut rp_breaker_state,
) -> rp_result {
    output!(state_out, with_locked(breaker, |b| to_c(b.state(now_ms))))
}

/// The breaker's state as JSON (`{"version": 1, "state": "open", "since_ms": 1200, ...}`), for
/// `rp_breaker_restore`; the caller frees it with `rp_string_free`.
#[no_mangle]
pub unsafe extern "C" fn rp_breaker_snapshot(
    breaker: *const rp_breaker,
    json_out: *mut *mut c_char,
) -> rp_result {
    output!(json_out, with_locked(breaker, |b| to_json(&b.snapshot()))?)
}

/// The breaker's configuration as its normalized document (version 1, every field set, Couchbase's
/// defaults filled in), as JSON the caller frees with `rp_string_free`.
#[no_mangle]
pub unsafe extern "C" fn rp_breaker_document(
    breaker: *const rp_breaker,
    json_out: *mut *mut c_char,
) -> rp_result {
    output!(
        json_out,
        with_locked(breaker, |b| to_json(&b.config().to_document()))?
    )
}

#[cfg(test)]
impl rp_breaker {
    /// The lock, for the unit test that poisons it.
    pub(crate) fn lock_for_test(&self) -> std::sync::MutexGuard<'_, CircuitBreaker> {
        self.0.lock().unwrap()
    }
}
