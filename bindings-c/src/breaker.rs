//! `rp_breaker`: a circuit breaker (the core's `CircuitBreaker`) behind a lock, shared between
//! threads, with the host's state-change callback.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::ffi::{c_char, c_void};
use std::sync::Mutex;

use retrypolicy::{
    BreakerChange, BreakerConfig, BreakerDocument, BreakerSnapshot, BreakerVerdict, CircuitBreaker,
};

use crate::budget_enums::*;
use crate::enums::{from_c, rp_reason, to_c, RP_REASON_UNKNOWN};
use crate::error::{rp_result, Failure};
use crate::ffi::{intern, lock, non_null, output, text, CBool};
use crate::handle::{get, register, release};
use crate::json::{snapshot_from_json, to_json};
use crate::panic::ffi_boundary;

/// A circuit breaker with Couchbase's parameters: create with `rp_breaker_from_json` or
/// `rp_breaker_restore`, free with `rp_breaker_free`. Every call locks it, so one handle may be
/// shared by any number of threads (and lets out at most one canary between them).
pub struct rp_breaker(pub(crate) Mutex<Watched>);

/// One change of a circuit's state made by a call (`rp_breaker_permit`, `rp_breaker_record`, or a
/// run's step): the state before it, the state after it, and what moved it. One call can make two
/// changes (a canary found timed out, then the next canary sent): each is its own change, in order.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rp_breaker_change {
    /// The state before this change.
    pub from: rp_breaker_state,
    /// The state after it.
    pub to: rp_breaker_state,
    /// What moved it.
    pub rule: rp_breaker_change_rule,
}

/// The most changes one call can make (`rp_breaker_last_changes`'s array holds this many).
pub const RP_BREAKER_MAX_CHANGES: usize = 2;

/// A breaker's state-change callback (`rp_breaker_on_change`): `breaker` is the handle whose state
/// changed, `change` what changed. Called on the thread whose call made the change, once that call
/// has released the breaker's lock (and a run's lock), so it may call the breaker (and the run)
/// again; it must return normally (no longjmp, no C++ exception).
pub type rp_breaker_change_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, breaker: *mut rp_breaker, change: rp_breaker_change)>;

/// A registered callback and its `user_data`.
#[derive(Clone, Copy)]
struct Listener(
    unsafe extern "C" fn(*mut c_void, *mut rp_breaker, rp_breaker_change),
    *mut c_void,
);

// SAFETY: the header's contract for `rp_breaker_on_change`: the callback and its `user_data` may be
// used from any thread that calls the breaker or a run using it.
unsafe impl Send for Listener {}

/// A breaker's state and its host's callback, behind the handle's one lock: a change is told to the
/// callback that was registered when the change was made.
pub(crate) struct Watched {
    /// The core's breaker.
    pub(crate) breaker: CircuitBreaker,
    /// The host's state-change callback, if one is registered.
    listener: Option<Listener>,
}

impl Watched {
    /// What to tell the host of `changes` (a call's, in order), once the lock is released; None
    /// without a change or a callback.
    pub(crate) fn notice(&self, changes: &[BreakerChange]) -> Option<Notice> {
        let listener = self.listener?;
        (!changes.is_empty()).then(|| Notice(listener, changes.iter().map(change_to_c).collect()))
    }
}

/// The state changes of one call, to hand the host's callback one by one, in order, after the
/// lock is released (`Notice::deliver`).
pub(crate) struct Notice(Listener, Vec<rp_breaker_change>);

/// A breaker's changes waiting their turn to reach its callback (first in, first out).
type Queue = VecDeque<(Listener, rp_breaker_change)>;

thread_local! {
    /// On this thread, the handles whose changes are being delivered and their changes waiting.
    static DELIVERING: RefCell<Vec<(*const rp_breaker, Queue)>> = const { RefCell::new(Vec::new()) };
}

impl Notice {
    /// Calls the callback once per change, in order; `breaker` is the handle C holds. All of the
    /// call's changes are queued before the first is handed over, and the changes a callback makes
    /// (calling the breaker again) are handed over after them, by the outermost delivery: the
    /// callback hears a breaker's changes in the order they happened. Call it with no lock held.
    pub(crate) fn deliver(self, breaker: *const rp_breaker) {
        let Notice(listener, changes) = self;
        let nested = DELIVERING.with_borrow_mut(|d| match d.iter_mut().find(|(b, _)| *b == breaker) {
            Some((_, queue)) => {
                queue.extend(changes.iter().map(|&c| (listener, c)));
                true
            }
            None => {
                d.push((breaker, changes.iter().map(|&c| (listener, c)).collect()));
                false
            }
        });
        if nested {
            return; // a change a callback made: the delivery under way hands it over
        }
        while let Some((Listener(callback, user_data), change)) = DELIVERING.with_borrow_mut(|d| {
            let at = d.iter().position(|(b, _)| *b == breaker)?;
            let next = d[at].1.pop_front();
            if next.is_none() {
                d.swap_remove(at);
            }
            next
        }) {
            // SAFETY: the callback and user_data were registered by the host for this breaker
            // (`rp_breaker_on_change`'s contract); the handle's lock is not held.
            unsafe { callback(user_data, breaker.cast_mut(), change) }
        }
    }
}

/// A core change as a C struct.
pub(crate) fn change_to_c(c: &BreakerChange) -> rp_breaker_change {
    rp_breaker_change {
        from: to_c(c.from),
        to: to_c(c.to),
        rule: to_c(c.rule),
    }
}

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
    Ok(f(&mut locked.breaker))
}

/// `f` on the breaker behind `breaker` as `with_locked`, for a call that may change its state: the
/// change it made goes to the host's callback once the lock is released.
fn with_watched<R>(
    breaker: *const rp_breaker,
    f: impl FnOnce(&mut CircuitBreaker) -> R,
) -> Result<R, Failure> {
    let handle = get(breaker, "breaker")?;
    let (result, notice) = {
        let mut locked = lock(&handle.0, "breaker")?;
        let result = f(&mut locked.breaker);
        let changes = locked.breaker.last_changes();
        (result, locked.notice(&changes))
    };
    if let Some(notice) = notice {
        notice.deliver(breaker);
    }
    Ok(result)
}

/// A new handle of `breaker`, with no callback.
fn handle(breaker: CircuitBreaker) -> *mut rp_breaker {
    register(rp_breaker(Mutex::new(Watched {
        breaker,
        listener: None,
    })))
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
/// this request out as the one canary (the circuit turns half-open); a change goes to the callback.
#[no_mangle]
pub unsafe extern "C" fn rp_breaker_permit(
    breaker: *mut rp_breaker,
    now_ms: u64,
    verdict_out: *mut rp_breaker_verdict,
) -> rp_result {
    output!(
        verdict_out,
        with_watched(breaker, |b| verdict_to_c(&b.permit(now_ms)))
    )
}

/// Tells the breaker how a request ended at `now_ms`; a change of state goes to the callback.
#[no_mangle]
pub unsafe extern "C" fn rp_breaker_record(
    breaker: *mut rp_breaker,
    now_ms: u64,
    outcome: rp_breaker_outcome,
) -> rp_result {
    ffi_boundary(|| {
        let outcome = from_c(outcome, "outcome")?;
        with_watched(breaker, |b| b.record(now_ms, outcome))?;
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

/// Registers `callback` (with `user_data`, handed back on each call) as the breaker's state-change
/// callback, in place of any before; NULL unregisters. From then on every change of the circuit's
/// state, by `rp_breaker_permit`, `rp_breaker_record` or a run using the breaker, calls it once,
/// after the call that made it has released the breaker's lock (see `rp_breaker_change_fn`).
/// `callback` and `user_data` must stay usable, from any thread that calls the breaker or its runs,
/// until unregistered; a call that made its change before this one returned (on another thread)
/// may still hand that change to the callback registered before.
#[no_mangle]
pub unsafe extern "C" fn rp_breaker_on_change(
    breaker: *mut rp_breaker,
    callback: rp_breaker_change_fn,
    user_data: *mut c_void,
) -> rp_result {
    ffi_boundary(|| {
        let handle = get(breaker.cast_const(), "breaker")?;
        lock(&handle.0, "breaker")?.listener = callback.map(|c| Listener(c, user_data));
        Ok(())
    })
}

/// The changes of state the breaker's last call made (`rp_breaker_permit`, `rp_breaker_record`, or
/// a run's asking, telling or releasing it; on whichever thread), in order: `*count_out` says how
/// many (0 to RP_BREAKER_MAX_CHANGES), and only those first elements of `changes_out` (an array of
/// RP_BREAKER_MAX_CHANGES) are written.
#[no_mangle]
pub unsafe extern "C" fn rp_breaker_last_changes(
    breaker: *const rp_breaker,
    changes_out: *mut rp_breaker_change,
    count_out: *mut usize,
) -> rp_result {
    ffi_boundary(|| {
        non_null(changes_out, "changes_out")?;
        non_null(count_out, "count_out")?;
        let changes = with_locked(breaker, |b| b.last_changes())?;
        for (i, c) in changes.iter().take(RP_BREAKER_MAX_CHANGES).enumerate() {
            // SAFETY: the pointer contract (lib.rs): `changes_out` holds RP_BREAKER_MAX_CHANGES
            // elements; checked non-NULL.
            unsafe { changes_out.add(i).write(change_to_c(c)) };
        }
        // SAFETY: the pointer contract (lib.rs); checked non-NULL.
        unsafe { count_out.write(changes.len().min(RP_BREAKER_MAX_CHANGES)) };
        Ok(())
    })
}

#[cfg(test)]
impl rp_breaker {
    /// The lock, for the unit test that poisons it.
    pub(crate) fn lock_for_test(&self) -> std::sync::MutexGuard<'_, Watched> {
        self.0.lock().unwrap()
    }
}
