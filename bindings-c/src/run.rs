//! `rp_run`: one retry run (the core's run machine, `retrypolicy::Run`) as a C handle. The host
//! loop calls `rp_run_start`, then `rp_run_attempt_ended` / `rp_run_wait_ended` as each step asks,
//! and does what each `rp_run_step` says; the machine decides whether to send, wait or stop. A
//! run's budget and breaker are the shared `rp_budget` / `rp_breaker` handles, locked for each call
//! (the budget first, then the breaker).
#![allow(missing_docs)]

use std::ffi::c_char;
use std::sync::{Arc, Mutex};

use retrypolicy::{
    Clock, Error, Guards, MongoError, Outcome, Run, RunAction, RunConfig, RunEnd, RunSignal, RunStats,
    RunStep,
};

use crate::breaker::{rp_breaker_verdict, verdict_to_c as breaker_verdict_to_c};
use crate::budget::{rp_budget_verdict, verdict_to_c as budget_verdict_to_c};
use crate::budgeted::budgeted_to_c;
use crate::enums::{c_enum, from_c, to_c, CEnum, RP_REASON_UNKNOWN};
use crate::error::{rp_result, Failure};
use crate::ffi::{borrow, intern, lock, output, text, CBool};
use crate::handle::{get, get_optional, register, release};
use crate::*;

/// One retry run: create with `rp_run_new`, drive with `rp_run_start`, `rp_run_attempt_ended`,
/// `rp_run_wait_ended` and `rp_run_cancel`, free with `rp_run_free`. A run is one call's: use it
/// from one thread at a time (its budget and breaker may be shared by any number of runs; the run
/// keeps them alive until it is freed).
pub struct rp_run {
    run: Mutex<Run>,
    budget: Option<Arc<rp_budget>>,
    breaker: Option<Arc<rp_breaker>>,
}

/// How an attempt ended (an `RP_OUTCOME_*` constant), the `kind` of an `rp_outcome`.
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_outcome_kind(pub u32);

/// The call returned what the caller wanted.
pub const RP_OUTCOME_SUCCESS: rp_outcome_kind = rp_outcome_kind(0);
/// The call failed with an error the host surfaces as it is (its classifier found no reason).
pub const RP_OUTCOME_FINAL: rp_outcome_kind = rp_outcome_kind(1);
/// The call failed for `reason`, as the host classified it (`timeout`: it was a timeout).
pub const RP_OUTCOME_REASON: rp_outcome_kind = rp_outcome_kind(2);
/// No answer: the connection failed or broke (`sent`: 0 only when the request surely did not leave).
pub const RP_OUTCOME_NETWORK: rp_outcome_kind = rp_outcome_kind(3);
/// An HTTP response: `status` and `retry_after` (the header's text, or NULL).
pub const RP_OUTCOME_HTTP: rp_outcome_kind = rp_outcome_kind(4);
/// A Couchbase KV response status in `status`.
pub const RP_OUTCOME_KV: rp_outcome_kind = rp_outcome_kind(5);
/// The attempt reached the time bound its send step gave (`timeout_ms`), or the host's own.
pub const RP_OUTCOME_TIMEOUT: rp_outcome_kind = rp_outcome_kind(6);
/// A MongoDB error, as the JSON the core reads (`{"kind": "network"}`, `{"code": 11000}`) in
/// `mongodb_error` (the `mongodb` rules only).
pub const RP_OUTCOME_MONGODB: rp_outcome_kind = rp_outcome_kind(7);

/// How one attempt ended, as the host saw it: `kind` says which other fields are read.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rp_outcome {
    /// What happened (an `RP_OUTCOME_*` constant).
    pub kind: rp_outcome_kind,
    /// HTTP: the response status (100..=599); KV: the status (at most 0xffff).
    pub status: u32,
    /// HTTP: the `Retry-After` header's text (NUL-terminated), or NULL for none.
    pub retry_after: *const c_char,
    /// REASON: the reason the host classified the failure as.
    pub reason: rp_reason,
    /// NETWORK: whether the request may have reached the server: -1 unknown (maybe), 0 surely not, 1 yes.
    pub sent: i32,
    /// REASON: whether the failure was a timeout.
    pub timeout: CBool,
    /// MONGODB: the error as JSON text (NUL-terminated).
    pub mongodb_error: *const c_char,
}

/// What the host does next (an `RP_RUN_*` constant).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_run_action(pub u32);

/// Send attempt `attempt` now, ending it within `timeout_ms` (-1: no bound); then `rp_run_attempt_ended`.
pub const RP_RUN_SEND: rp_run_action = rp_run_action(0);
/// Wait `delay_ms`, then call `rp_run_wait_ended`.
pub const RP_RUN_WAIT: rp_run_action = rp_run_action(1);
/// The run is over: see `end`.
pub const RP_RUN_DONE: rp_run_action = rp_run_action(2);

/// How a run ended (an `RP_RUN_END_*` constant); RP_RUN_END_NONE while it goes on.
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_run_end(pub u32);

/// The run is not over (a send or wait step).
pub const RP_RUN_END_NONE: rp_run_end = rp_run_end(0);
/// An attempt succeeded: return its result.
pub const RP_RUN_END_SUCCEEDED: rp_run_end = rp_run_end(1);
/// The last attempt ended in a final failure: surface it as it is.
pub const RP_RUN_END_FINAL: rp_run_end = rp_run_end(2);
/// A retryable failure is not retried (not idempotent, a strategy declined, the attempts or the
/// budget ran out, the breaker stayed open): surface the last failure.
pub const RP_RUN_END_GAVE_UP: rp_run_end = rp_run_end(3);
/// No time is left for another attempt: raise the host's timeout error (never retried by an outer run).
pub const RP_RUN_END_TIMED_OUT: rp_run_end = rp_run_end(4);
/// The host cancelled the run.
pub const RP_RUN_END_CANCELLED: rp_run_end = rp_run_end(5);

/// What a step is for an observer's signals (an `RP_RUN_SIGNAL_*` constant; the core decides it).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rp_run_signal(pub u32);

/// Neither a retry, a wait for the breaker nor a give-up: a send, an end that succeeded, was final
/// or cancelled.
pub const RP_RUN_SIGNAL_NONE: rp_run_signal = rp_run_signal(0);
/// A wait after a failed attempt: a retry decided.
pub const RP_RUN_SIGNAL_RETRY: rp_run_signal = rp_run_signal(1);
/// The end of a run that gave up or timed out.
pub const RP_RUN_SIGNAL_GIVE_UP: rp_run_signal = rp_run_signal(2);
/// A wait for the breaker's window: the breaker kept the next attempt back.
pub const RP_RUN_SIGNAL_BREAKER_WAIT: rp_run_signal = rp_run_signal(3);

c_enum!(rp_run_signal <=> RunSignal, [
    (RP_RUN_SIGNAL_NONE => RunSignal::None),
    (RP_RUN_SIGNAL_RETRY => RunSignal::Retry),
    (RP_RUN_SIGNAL_GIVE_UP => RunSignal::GiveUp),
    (RP_RUN_SIGNAL_BREAKER_WAIT => RunSignal::BreakerWait),
]);

c_enum!(rp_run_action <=> RunAction, [
    (RP_RUN_SEND => RunAction::Send),
    (RP_RUN_WAIT => RunAction::Wait),
    (RP_RUN_DONE => RunAction::Done),
]);

c_enum!(rp_run_end <=> Option<RunEnd>, [
    (RP_RUN_END_NONE => None),
    (RP_RUN_END_SUCCEEDED => Some(RunEnd::Succeeded)),
    (RP_RUN_END_FINAL => Some(RunEnd::Final)),
    (RP_RUN_END_GAVE_UP => Some(RunEnd::GaveUp)),
    (RP_RUN_END_TIMED_OUT => Some(RunEnd::TimedOut)),
    (RP_RUN_END_CANCELLED => Some(RunEnd::Cancelled)),
]);

/// The machine's answer to one event: send, wait or done, with the rule that decided.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rp_run_step {
    /// Send, wait or done (an `RP_RUN_*` constant).
    pub action: rp_run_action,
    /// Send: the attempt to send (the first is 1); wait: the attempt that follows; done: attempts sent.
    pub attempt: u32,
    /// Send: the attempt must end within this many ms; -1 when the run has no bound.
    pub timeout_ms: i64,
    /// Wait: how long, in ms (0 for the other actions).
    pub delay_ms: u64,
    /// Done: how the run ended; RP_RUN_END_NONE otherwise.
    pub end: rp_run_end,
    /// Whether `reason` holds the reason of the failure behind a wait or an end.
    pub has_reason: CBool,
    /// That reason when `has_reason`, else RP_REASON_UNKNOWN.
    pub reason: rp_reason,
    /// The stable name of the rule that decided ("first_attempt", "best_effort_backoff", ...;
    /// static, owned by the library).
    pub rule: *const c_char,
    /// Its source (static, owned by the library).
    pub section: *const c_char,
    /// Time since the run started, rounded up to whole ms.
    pub elapsed_ms: u64,
    /// The wait a valid `Retry-After` asked for (also when it ended the run at its deadline); -1 none.
    pub retry_after_ms: i64,
    /// Whether `decision` holds the decide rules' decision behind this step (RFC 0049 `decide`,
    /// with the budget's refusal applied); the HTTP and MongoDB rules' decisions are not in C.
    pub has_decision: CBool,
    /// That decision when `has_decision` (format it with `rp_decision_format`).
    pub decision: rp_decision,
    /// Whether the run's budget was asked for this step (`budget` holds its verdict).
    pub has_budget: CBool,
    /// The budget's verdict when `has_budget`.
    pub budget: rp_budget_verdict,
    /// Whether the run's breaker was asked for this step (`breaker` holds its verdict).
    pub has_breaker: CBool,
    /// The breaker's verdict when `has_breaker`.
    pub breaker: rp_breaker_verdict,
    /// What the step is for an observer: RP_RUN_SIGNAL_RETRY, RP_RUN_SIGNAL_BREAKER_WAIT,
    /// RP_RUN_SIGNAL_GIVE_UP or RP_RUN_SIGNAL_NONE.
    pub signal: rp_run_signal,
}

/// What a run did so far (`rp_run_statistics`): counts, time, and its last step's rule, reason and
/// verdicts, as tenacity's `statistics`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rp_run_stats {
    /// Attempts sent.
    pub attempts: u32,
    /// Retries decided: waits after a failed attempt (a wait for the breaker is none).
    pub retries: u32,
    /// All the waiting the run asked for (retries' and the breaker's), in ms.
    pub waited_ms: u64,
    /// Time since the run started at its last event, rounded up to whole ms.
    pub elapsed_ms: u64,
    /// Retries the budget refused (each ends the run).
    pub budget_refusals: u32,
    /// Attempts the breaker kept back (each a wait for its window, or the end).
    pub breaker_rejections: u32,
    /// How the run ended; RP_RUN_END_NONE while it goes on.
    pub end: rp_run_end,
    /// The stable name of the last step's rule (static, owned by the library); NULL before the start.
    pub last_rule: *const c_char,
    /// Whether `last_reason` holds the reason of the last step that had one.
    pub has_last_reason: CBool,
    /// That reason when `has_last_reason`, else RP_REASON_UNKNOWN.
    pub last_reason: rp_reason,
    /// Whether the run's budget was asked in this run (`last_budget` holds its last verdict).
    pub has_last_budget: CBool,
    /// The budget's last verdict in this run when `has_last_budget`.
    pub last_budget: rp_budget_verdict,
    /// Whether the run's breaker was asked in this run (`last_breaker` holds its last verdict).
    pub has_last_breaker: CBool,
    /// The breaker's last verdict in this run when `has_last_breaker`.
    pub last_breaker: rp_breaker_verdict,
}

/// The core's statistics as a C struct.
fn stats_to_c(s: &RunStats) -> rp_run_stats {
    rp_run_stats {
        attempts: s.attempts,
        retries: s.retries,
        waited_ms: s.waited_ms,
        elapsed_ms: s.elapsed_ms,
        budget_refusals: s.budget_refusals,
        breaker_rejections: s.breaker_rejections,
        end: to_c(s.end),
        last_rule: s.last_rule.map_or(std::ptr::null(), |r| intern(r).as_ptr()),
        has_last_reason: s.last_reason.is_some().into(),
        last_reason: s.last_reason.map_or(RP_REASON_UNKNOWN, to_c),
        has_last_budget: s.last_budget.is_some().into(),
        last_budget: s.last_budget.as_ref().map_or_else(blank, budget_verdict_to_c),
        has_last_breaker: s.last_breaker.is_some().into(),
        last_breaker: s.last_breaker.as_ref().map_or_else(blank, breaker_verdict_to_c),
    }
}

/// An i64 for a C field where -1 is none (durations never come near i64::MAX).
pub(crate) fn or_minus_one(v: Option<u64>) -> i64 {
    v.map_or(-1, |v| i64::try_from(v).unwrap_or(i64::MAX))
}

/// Plain C data (integers, `CBool`s and raw pointers only): the all-zero value of a field whose
/// `has_*` flag is false.
pub(crate) trait Blank: Copy {}
impl Blank for rp_decision {}
impl Blank for rp_budget_verdict {}
impl Blank for rp_breaker_verdict {}

/// The all-zero value of `T`.
pub(crate) fn blank<T: Blank>() -> T {
    // SAFETY: `Blank` types hold only integers, `CBool`s and raw pointers: all-zero is valid for each.
    unsafe { std::mem::zeroed() }
}

/// A core step as a C struct; rule and section are interned (no allocation once seen).
fn step_to_c(s: &RunStep) -> rp_run_step {
    let decision = match &s.decision {
        Some(retrypolicy::RunDecision::Decide(d)) => Some(budgeted_to_c(d)),
        _ => None,
    };
    rp_run_step {
        action: to_c(s.action),
        attempt: s.attempt,
        timeout_ms: or_minus_one(s.timeout_ms),
        delay_ms: s.delay_ms.unwrap_or(0),
        end: to_c(s.end),
        has_reason: s.reason.is_some().into(),
        reason: s.reason.map_or(RP_REASON_UNKNOWN, to_c),
        rule: intern(s.rule).as_ptr(),
        section: intern(s.section).as_ptr(),
        elapsed_ms: s.elapsed_ms,
        retry_after_ms: or_minus_one(s.retry_after_ms),
        has_decision: decision.is_some().into(),
        decision: decision.unwrap_or_else(blank),
        has_budget: s.budget.is_some().into(),
        budget: s.budget.as_ref().map_or_else(blank, budget_verdict_to_c),
        has_breaker: s.breaker.is_some().into(),
        breaker: s.breaker.as_ref().map_or_else(blank, breaker_verdict_to_c),
        signal: to_c(s.signal),
    }
}

/// The host's clock for one event: `random` NaN or negative is no draw, `now_unix_ms` negative none.
pub(crate) fn clock(now_ms: f64, random: f64, now_unix_ms: i64) -> Clock {
    Clock {
        now_ms,
        random: (!random.is_nan() && random >= 0.0).then_some(random),
        now_unix_ms: u64::try_from(now_unix_ms).ok(),
    }
}

/// `outcome.<field>` out of range.
fn out_of_range(field: &str, value: impl ToString, expected: &str) -> Failure {
    Failure::from(Error::OutOfRange {
        field: format!("outcome.{field}"),
        value: value.to_string(),
        expected: expected.to_owned(),
    })
}

/// A C outcome as the core's; errors name `outcome.<field>`.
/// Safety: `retry_after` and `mongodb_error` must be NULL or NUL-terminated.
unsafe fn outcome_from_c(o: &rp_outcome) -> Result<Outcome, Failure> {
    let status =
        || u16::try_from(o.status).map_err(|_| out_of_range("status", o.status, "a status in 0..=65535"));
    Ok(match o.kind {
        RP_OUTCOME_SUCCESS => Outcome::Success,
        RP_OUTCOME_FINAL => Outcome::Final,
        RP_OUTCOME_TIMEOUT => Outcome::Timeout,
        RP_OUTCOME_REASON => Outcome::Reason {
            reason: from_c(o.reason, "outcome.reason")?,
            timeout: o.timeout.get(),
        },
        RP_OUTCOME_NETWORK => Outcome::Network {
            sent: match o.sent {
                -1 => None,
                0 => Some(false),
                1 => Some(true),
                v => return Err(out_of_range("sent", v, "-1 (unknown), 0 or 1")),
            },
        },
        RP_OUTCOME_KV => Outcome::Kv { status: status()? },
        RP_OUTCOME_HTTP => Outcome::Http {
            status: status()?,
            retry_after: match o.retry_after.is_null() {
                true => None,
                // SAFETY: non-NULL and NUL-terminated by this function's contract.
                false => Some(unsafe { text(o.retry_after, None, "outcome.retry_after") }?.to_owned()),
            },
        },
        RP_OUTCOME_MONGODB => {
            // SAFETY: NULL (refused by `text`) or NUL-terminated by this function's contract.
            let json = unsafe { text(o.mongodb_error, None, "outcome.mongodb_error") }?;
            let error: MongoError = retrypolicy_wire::from_json_str(json).map_err(|e| {
                let field = match e.field() {
                    "" => "outcome.mongodb_error".to_owned(),
                    f => format!("outcome.mongodb_error.{f}"),
                };
                Failure::from(e.with_field(&field))
            })?;
            Outcome::Mongodb { error }
        }
        other => return Err(Failure::invalid_enum("outcome.kind", "rp_outcome_kind", other.0)),
    })
}

/// Runs `event` on the run with its budget and breaker locked (the run first, then the budget,
/// then the breaker); each change of the breaker's state goes to its callback, in order, once all
/// three locks are released. A pointer that is no live `rp_run` is RP_RESULT_INVALID_HANDLE naming "run".
pub(crate) fn with_guards(
    run: *mut rp_run,
    event: impl FnOnce(&mut Run, Guards<'_>) -> Result<RunStep, Error>,
) -> Result<rp_run_step, Failure> {
    let handle = get(run.cast_const(), "run")?;
    let (step, notice) = {
        let mut run = lock(&handle.run, "run")?;
        let mut budget = handle.budget.as_ref().map(|b| lock(&b.0, "budget")).transpose()?;
        let mut breaker = handle
            .breaker
            .as_ref()
            .map(|b| lock(&b.0, "breaker"))
            .transpose()?;
        let guards = Guards {
            budget: budget.as_deref_mut(),
            breaker: breaker.as_deref_mut().map(|w| &mut w.breaker),
        };
        let step = event(&mut run, guards)?;
        let notice = breaker.as_ref().and_then(|w| w.notice(&step.breaker_changes));
        (step_to_c(&step), notice)
    };
    if let (Some(notice), Some(breaker)) = (notice, &handle.breaker) {
        notice.deliver(Arc::as_ptr(breaker));
    }
    Ok(step)
}

/// A new run of `config_json` (the core's RunConfig: `{"rules": {"decide": {"operation": {"service":
/// "kv", "operation": "get"}}}, "timeout_ms": 2500}`, `{"rules": {"http": {"method": "GET"}},
/// "max_attempts": 5}`, `{"rules": {"mongodb": {"operation": {"name": "find"}}}}`, with
/// `attempt_timeout_ms` optional), not started; errors name the field ("timeout_ms",
/// "rules.http.backoff.min_ms"). `budget` and `breaker` (each NULL: none) are shared handles the run
/// locks for each call; the run keeps them alive (freeing them first is fine). Free the run with
/// `rp_run_free`. A `budget` or `breaker` that is no live handle of its type is
/// RP_RESULT_INVALID_HANDLE naming it.
#[no_mangle]
pub unsafe extern "C" fn rp_run_new(
    config_json: *const c_char,
    config_len: usize,
    budget: *const rp_budget,
    breaker: *const rp_breaker,
    run_out: *mut *mut rp_run,
) -> rp_result {
    output!(run_out, {
        let config: RunConfig =
            retrypolicy_wire::from_json_str(text(config_json, Some(config_len), "config_json")?)?;
        let budget = get_optional(budget, "budget")?.map(|b| b.to_arc());
        let breaker = get_optional(breaker, "breaker")?.map(|b| b.to_arc());
        let run = Mutex::new(Run::new(config)?);
        Ok(register(rp_run { run, budget, breaker }))
    })
}

/// Frees a run; NULL is a no-op (its budget and breaker stay the caller's). A pointer that is no
/// live `rp_run` frees nothing and sets this thread's last error (RP_RESULT_INVALID_HANDLE).
#[no_mangle]
pub extern "C" fn rp_run_free(run: *mut rp_run) {
    release(run, "run")
}

/// Starts the run at `now_ms` (the host's monotonic clock, any origin, fractions allowed; `random`:
/// a draw in [0, 1), or NaN or negative for none): send attempt 1, or wait for the breaker, or done.
/// An event out of order is RP_RESULT_OUT_OF_RANGE naming "event".
#[no_mangle]
pub unsafe extern "C" fn rp_run_start(
    run: *mut rp_run,
    now_ms: f64,
    random: f64,
    step_out: *mut rp_run_step,
) -> rp_result {
    output!(
        step_out,
        with_guards(run, |r, g| r.start(clock(now_ms, random, -1), g))
    )
}

/// The attempt of a send step ended with `outcome` at `now_ms` (`random`: the draw for jitter, NaN
/// or negative for none; `now_unix_ms`: the wall clock for a `Retry-After` date, negative for none):
/// wait, or done. Errors name the outcome's field ("outcome.status").
#[no_mangle]
pub unsafe extern "C" fn rp_run_attempt_ended(
    run: *mut rp_run,
    outcome: *const rp_outcome,
    now_ms: f64,
    random: f64,
    now_unix_ms: i64,
    step_out: *mut rp_run_step,
) -> rp_result {
    output!(step_out, {
        let outcome = outcome_from_c(borrow(outcome, "outcome")?)?;
        with_guards(run, |r, g| {
            r.attempt_ended(&outcome, clock(now_ms, random, now_unix_ms), g, None)
        })
    })
}

/// The wait of a wait step is over at `now_ms`: send the next attempt, or wait for the breaker, or done.
#[no_mangle]
pub unsafe extern "C" fn rp_run_wait_ended(
    run: *mut rp_run,
    now_ms: f64,
    random: f64,
    step_out: *mut rp_run_step,
) -> rp_result {
    output!(
        step_out,
        with_guards(run, |r, g| r.wait_ended(clock(now_ms, random, -1), g))
    )
}

/// The host cancels the run at `now_ms` (its caller aborted): done, cancelled; an attempt out as
/// the breaker's canary is released.
#[no_mangle]
pub unsafe extern "C" fn rp_run_cancel(
    run: *mut rp_run,
    now_ms: f64,
    step_out: *mut rp_run_step,
) -> rp_result {
    output!(
        step_out,
        with_guards(run, |r, g| r.cancel(clock(now_ms, f64::NAN, -1), g))
    )
}

/// Attempts the run has sent so far.
#[no_mangle]
pub unsafe extern "C" fn rp_run_attempts_sent(run: *const rp_run, attempts_out: *mut u32) -> rp_result {
    output!(attempts_out, {
        let handle = get(run, "run")?;
        let sent = lock(&handle.run, "run")?.attempts_sent();
        Ok(sent)
    })
}

/// What the run did so far (attempts, retries, waiting, elapsed time, the budget's and breaker's
/// refusals and last verdicts, the end and the last rule and reason), at any point of the run and
/// after it ends: for the host's statistics, logs and give-up error.
#[no_mangle]
pub unsafe extern "C" fn rp_run_statistics(run: *const rp_run, stats_out: *mut rp_run_stats) -> rp_result {
    output!(stats_out, {
        let handle = get(run, "run")?;
        let stats = lock(&handle.run, "run")?.stats();
        Ok(stats_to_c(&stats))
    })
}
