//! `rp_budget`: a retry budget (the core's `RetryBudget`) behind a lock, shared between threads.

use std::ffi::c_char;
use std::sync::Mutex;

use retrypolicy::{BudgetConfig, BudgetDocument, BudgetSnapshot, BudgetVerdict, RetryBudget, RetryCause};

use crate::budget_enums::*;
use crate::enums::{from_c, to_c};
use crate::error::{rp_result, Failure};
use crate::ffi::{intern, lock, output, text, CBool};
use crate::handle::{get, register, release};
use crate::json::{snapshot_from_json, to_json};
use crate::panic::ffi_boundary;

/// A retry budget (gRPC's token bucket, the AWS retry quota or Finagle's percentage): create with
/// `rp_budget_from_json` or `rp_budget_restore`, free with `rp_budget_free`. Every call locks it,
/// so one handle may be shared by any number of threads.
pub struct rp_budget(pub(crate) Mutex<RetryBudget>);

/// A budget's answer to "may a retry be sent now?".
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rp_budget_verdict {
    /// Whether the retry may be sent (false: the budget is exhausted).
    pub permitted: CBool,
    /// The budget's kind.
    pub kind: rp_budget_kind,
    /// The rule that decided.
    pub rule: rp_budget_rule,
    /// The source text of that rule (static, owned by the library).
    pub source: *const c_char,
    /// What the budget holds now: thousandths of a token (token bucket), tokens (retry quota), or
    /// retries still allowed in the window (percentage); after the withdrawal for `rp_budget_try_retry`.
    pub balance: u64,
}

/// A core verdict as a C struct.
pub(crate) fn verdict_to_c(v: &BudgetVerdict) -> rp_budget_verdict {
    rp_budget_verdict {
        permitted: v.permitted.into(),
        kind: to_c(v.kind),
        rule: to_c(v.rule),
        source: intern(v.source).as_ptr(),
        balance: v.balance,
    }
}

/// A C verdict as the core's, checked by the wire layer as the JSON API checks one: `permitted`
/// and `kind` must be its rule's (`source` is not read); errors name `budget_verdict.<field>`.
pub(crate) fn verdict_from_c(v: &rp_budget_verdict) -> Result<BudgetVerdict, Failure> {
    let verdict = serde_json::json!({
        "permitted": v.permitted.get(),
        "kind": from_c(v.kind, "budget_verdict.kind")?,
        "rule": from_c(v.rule, "budget_verdict.rule")?,
        "balance": v.balance,
    });
    Ok(retrypolicy_wire::budget_verdict_from_value(&verdict)?)
}

/// The configuration a budget document holds, errors naming its fields ("max_tokens").
unsafe fn config(json: *const c_char, json_len: usize) -> Result<BudgetConfig, Failure> {
    // SAFETY: forwarded from this function's contract (the pointer contract, lib.rs).
    let doc: BudgetDocument =
        retrypolicy_wire::from_json_str(unsafe { text(json, Some(json_len), "json") }?)?;
    Ok(BudgetConfig::from_document(&doc, "")?)
}

/// `f` on the budget behind `budget`, locked for the call. A pointer that is no live
/// `rp_budget` is RP_RESULT_INVALID_HANDLE naming "budget".
pub(crate) fn with_locked<R>(
    budget: *const rp_budget,
    f: impl FnOnce(&mut RetryBudget) -> R,
) -> Result<R, Failure> {
    let handle = get(budget, "budget")?;
    let mut locked = lock(&handle.0, "budget")?;
    Ok(f(&mut locked))
}

/// `ask`'s verdict on the locked budget for `cause` (NONE: an error), as a C struct.
fn verdict(
    budget: *const rp_budget,
    cause: rp_retry_cause,
    ask: impl FnOnce(&mut RetryBudget, RetryCause) -> BudgetVerdict,
) -> Result<rp_budget_verdict, Failure> {
    let cause = from_c(cause, "cause")?.unwrap_or_default();
    with_locked(budget, |b| verdict_to_c(&ask(b, cause)))
}

/// A new handle of `budget`.
fn handle(budget: RetryBudget) -> *mut rp_budget {
    register(rp_budget(Mutex::new(budget)))
}

/// A new budget from its document (`{"version": 1, "kind": "token_bucket", "max_tokens": 10,
/// "token_ratio": 0.1}`, `{"kind": "retry_quota"}`, `{"kind": "percentage", "percent": 20}`; a left-out
/// field takes its source's default), in its initial state; free it with `rp_budget_free`.
#[no_mangle]
pub unsafe extern "C" fn rp_budget_from_json(
    json: *const c_char,
    json_len: usize,
    budget_out: *mut *mut rp_budget,
) -> rp_result {
    output!(budget_out, Ok(handle(RetryBudget::new(&config(json, json_len)?))))
}

/// A budget from its document and a snapshot of its state (`rp_budget_snapshot`'s JSON); errors
/// in the snapshot name fields under "snapshot" ("snapshot.balance").
#[no_mangle]
pub unsafe extern "C" fn rp_budget_restore(
    json: *const c_char,
    json_len: usize,
    snapshot_json: *const c_char,
    snapshot_len: usize,
    budget_out: *mut *mut rp_budget,
) -> rp_result {
    output!(budget_out, {
        let config = config(json, json_len)?;
        let snapshot: BudgetSnapshot =
            snapshot_from_json(text(snapshot_json, Some(snapshot_len), "snapshot_json")?)?;
        Ok(handle(RetryBudget::restore(&config, &snapshot, "snapshot")?))
    })
}

/// Frees a budget; NULL is a no-op. A pointer that is no live `rp_budget` (freed already, another
/// type's handle) frees nothing and sets this thread's last error (RP_RESULT_INVALID_HANDLE); runs
/// made with the budget keep it until they are freed.
#[no_mangle]
pub extern "C" fn rp_budget_free(budget: *mut rp_budget) {
    release(budget, "budget")
}

/// Whether a retry for `cause` may be sent at `now_ms` (NONE: an error); changes nothing.
#[no_mangle]
pub unsafe extern "C" fn rp_budget_permit(
    budget: *const rp_budget,
    now_ms: u64,
    cause: rp_retry_cause,
    verdict_out: *mut rp_budget_verdict,
) -> rp_result {
    output!(
        verdict_out,
        verdict(budget, cause, |b, cause| b.permit(now_ms, cause))
    )
}

/// Tells the budget `event` happened at `now_ms`. `cause`: for RP_BUDGET_EVENT_SUCCESS the cause of
/// the retry that succeeded (NONE: the first attempt succeeded), for RP_BUDGET_EVENT_RETRY what the
/// retry repeats (NONE: an error); RP_RETRY_CAUSE_NONE for the other events.
#[no_mangle]
pub unsafe extern "C" fn rp_budget_record(
    budget: *mut rp_budget,
    now_ms: u64,
    event: rp_budget_event,
    cause: rp_retry_cause,
) -> rp_result {
    ffi_boundary(|| {
        let event = budget_event(from_c(event, "event")?, from_c(cause, "cause")?)?;
        with_locked(budget, |b| b.record(now_ms, event))?;
        Ok(())
    })
}

/// Asks for a retry for `cause` at `now_ms` and, when permitted, records it, in one locked step:
/// the call a host makes before sending a retry (two threads never both take the last one).
#[no_mangle]
pub unsafe extern "C" fn rp_budget_try_retry(
    budget: *mut rp_budget,
    now_ms: u64,
    cause: rp_retry_cause,
    verdict_out: *mut rp_budget_verdict,
) -> rp_result {
    output!(
        verdict_out,
        verdict(budget, cause, |b, cause| b.try_retry(now_ms, cause))
    )
}

/// The budget's state as JSON (`{"version": 1, "kind": "token_bucket", "balance": 4000}`), for
/// `rp_budget_restore`; the caller frees it with `rp_string_free`.
#[no_mangle]
pub unsafe extern "C" fn rp_budget_snapshot(
    budget: *const rp_budget,
    json_out: *mut *mut c_char,
) -> rp_result {
    output!(json_out, with_locked(budget, |b| to_json(&b.snapshot()))?)
}

/// The budget's configuration as its normalized document (version 1, every field of its kind set,
/// defaults filled in), as JSON the caller frees with `rp_string_free`.
#[no_mangle]
pub unsafe extern "C" fn rp_budget_document(
    budget: *const rp_budget,
    json_out: *mut *mut c_char,
) -> rp_result {
    output!(
        json_out,
        with_locked(budget, |b| to_json(&b.config().to_document()))?
    )
}

#[cfg(test)]
impl rp_budget {
    /// The lock, for the unit test that poisons it.
    pub(crate) fn lock_for_test(&self) -> std::sync::MutexGuard<'_, RetryBudget> {
        self.0.lock().unwrap()
    }
}
