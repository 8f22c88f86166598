//! gRPC's per-attempt decisions (gRFC A6): `rp_grpc_retry`, the core's `grpc_retry` after one
//! attempt of a retried call, and `rp_grpc_hedge`, one step of the core's hedging machine. The
//! throttling bucket (`retryThrottling`) is an `rp_budget` the call locks while it tells and asks it.

use std::ffi::c_char;

use retrypolicy::grpc::{
    grpc_hedge, grpc_retry, GrpcAttempt, GrpcRetryDecision, GrpcRetryState, HedgeEvent, HedgeState, HedgeStep,
};
use retrypolicy::{Error, Outcome, RetryBudget};

use crate::budget::{rp_budget, rp_budget_verdict, verdict_to_c};
use crate::enums::{from_c, to_c};
use crate::error::Failure;
use crate::ffi::{borrow, intern, lock, output, text, CBool};
use crate::grpc_config::{rp_grpc_hedging_policy, rp_grpc_retry_policy};
use crate::grpc_enums::*;
use crate::handle::{get, get_optional};
use crate::run::{blank, clock, or_minus_one, rp_run, rp_run_step, with_guards};
use crate::*;

/// How one attempt of a call ended, as the host saw it.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rp_grpc_attempt {
    /// Its status (`RP_GRPC_CODE_*`).
    pub status: rp_grpc_code,
    /// The values of the `grpc-retry-pushback-ms` trailer, in order, each NUL-terminated (A6: one
    /// signed 32-bit integer; several values, a negative or malformed one ask not to retry); may
    /// be NULL when `pushback_len` is 0 (no pushback).
    pub pushback: *const *const c_char,
    /// Number of entries in `pushback`.
    pub pushback_len: usize,
    /// Whether the call was committed: response headers arrived, or the outgoing message overflowed
    /// the retry buffer (not read by `rp_grpc_hedge`: tell it RP_GRPC_HEDGE_COMMITTED).
    pub committed: CBool,
    /// How far it got (`RP_GRPC_REACH_*`; 0 is PROCESSED; not read by `rp_grpc_hedge`).
    pub reach: rp_grpc_reach,
}

/// What the caller knows of a retried call before a decision (zeroed, then `attempts` = 1, for the
/// call's first decision); a retry's decision holds the next one (`next`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rp_grpc_retry_state {
    /// Attempts sent that count toward `maxAttempts`, the one that just failed included (at least 1).
    pub attempts: u32,
    /// Retries made so far, transparent ones included (0: this was the call's first attempt).
    pub retries: u32,
    /// Retries since the last pushback (or the first attempt): the backoff's exponent.
    pub retries_since_pushback: u32,
    /// Time since the call started, in ms.
    pub elapsed_ms: u64,
    /// Whether the call has a deadline (`deadline_ms`).
    pub has_deadline: CBool,
    /// The call's deadline, in ms from its start; read only when `has_deadline`.
    pub deadline_ms: u64,
}

/// The decision after one attempt of a retried call (`rp_grpc_retry`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rp_grpc_retry_decision {
    /// Succeeded, retry or fail (`RP_GRPC_ACTION_*`).
    pub action: rp_grpc_action,
    /// Retry: the wait before the next attempt, in ms (0 for the other actions).
    pub delay_ms: u64,
    /// Retry: a transparent retry (not counted toward `maxAttempts`).
    pub transparent: CBool,
    /// The valid pushback the server sent, in ms; -1 none.
    pub pushback_ms: i64,
    /// What the throttling bucket is told of this attempt (recorded in it when one was given).
    pub throttle: rp_grpc_throttle,
    /// Whether the bucket was asked (`budget` holds its verdict).
    pub has_budget: CBool,
    /// The bucket's verdict when `has_budget`.
    pub budget: rp_budget_verdict,
    /// Retry: whether `next` holds the call's state for the next attempt's decision.
    pub has_next: CBool,
    /// That state when `has_next`.
    pub next: rp_grpc_retry_state,
    /// The stable name of the rule that decided ("exponential_backoff", "pushback", "committed",
    /// "token_bucket_at_or_below_half", ...; static, owned by the library).
    pub rule: *const c_char,
    /// Its source (static, owned by the library).
    pub section: *const c_char,
}

/// Where a hedged call is (zeroed before its start); each step holds the next one (`state`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rp_grpc_hedge_state {
    /// Attempts sent so far.
    pub sent: u32,
    /// Attempts out (sent, not ended).
    pub outstanding: u32,
    /// No more hedges will go (pushback not to retry, a commit, a throttled hedge).
    pub stopped: CBool,
    /// The call is over.
    pub done: CBool,
    /// Whether `last_status` holds the status of the last attempt that failed.
    pub has_last_status: CBool,
    /// That status when `has_last_status` (`RP_GRPC_CODE_*`).
    pub last_status: rp_grpc_code,
}

/// The hedging machine's answer to one event (`rp_grpc_hedge`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rp_grpc_hedge_step {
    /// Send this many attempts now.
    pub send: u32,
    /// Tell the machine RP_GRPC_HEDGE_DUE after this many ms (replacing any earlier wait); -1: no
    /// hedge is due.
    pub next_hedge_in_ms: i64,
    /// Cancel every attempt still out.
    pub cancel_others: CBool,
    /// How the call ended (`RP_GRPC_HEDGE_END_*`); RP_GRPC_HEDGE_END_NONE while it goes on.
    pub end: rp_grpc_hedge_end,
    /// Whether `status` holds the status the call fails with.
    pub has_status: CBool,
    /// That status when `has_status`.
    pub status: rp_grpc_code,
    /// What the throttling bucket was told of the ended attempt.
    pub throttle: rp_grpc_throttle,
    /// Whether the bucket was asked for a hedge (`budget` holds its last verdict).
    pub has_budget: CBool,
    /// The bucket's verdict on the last hedge it was asked for, when `has_budget`.
    pub budget: rp_budget_verdict,
    /// The call's state after the event: pass it to the next `rp_grpc_hedge`.
    pub state: rp_grpc_hedge_state,
    /// The stable name of the rule that decided ("original_attempt", "hedging_delay_over",
    /// "non_fatal_status", "fatal_status", "ok", ...; static, owned by the library).
    pub rule: *const c_char,
    /// Its source (static, owned by the library).
    pub section: *const c_char,
}

/// A draw passed as a C double: NaN or negative is none (as `rp_run_start`'s `random`).
pub(crate) fn draw(random: f64) -> Option<f64> {
    (!random.is_nan() && random >= 0.0).then_some(random)
}

/// A C attempt as the core's; errors name `<at>.<field>` ("attempt.status", "attempt.pushback[1]").
/// Safety: `a.pushback` must be NULL or point to `a.pushback_len` NUL-terminated strings.
unsafe fn attempt_from_c(a: &rp_grpc_attempt, at: &str) -> Result<GrpcAttempt, Failure> {
    let values: &[*const c_char] = match (a.pushback_len, a.pushback.is_null()) {
        (0, _) => &[],
        (_, true) => return Err(Failure::null(&format!("{at}.pushback"))),
        // SAFETY: non-NULL, and the caller promises `pushback_len` readable pointers.
        (len, false) => unsafe { std::slice::from_raw_parts(a.pushback, len) },
    };
    let pushback = (values.iter().enumerate())
        .map(|(i, v)| {
            // SAFETY: each entry is NUL-terminated by this function's contract (NULL is refused).
            unsafe { text(*v, None, &format!("{at}.pushback[{i}]")) }.map(str::to_owned)
        })
        .collect::<Result<_, _>>()?;
    Ok(GrpcAttempt {
        status: from_c(a.status, format_args!("{at}.status"))?,
        pushback,
        committed: a.committed.get(),
        reach: from_c(a.reach, format_args!("{at}.reach"))?,
    })
}

/// A C retry state as the core's.
fn state_from_c(s: &rp_grpc_retry_state) -> GrpcRetryState {
    GrpcRetryState {
        attempts: s.attempts,
        retries: s.retries,
        retries_since_pushback: s.retries_since_pushback,
        elapsed_ms: s.elapsed_ms,
        deadline_ms: s.has_deadline.get().then_some(s.deadline_ms),
    }
}

/// The core's retry state as C's.
fn state_to_c(s: &GrpcRetryState) -> rp_grpc_retry_state {
    rp_grpc_retry_state {
        attempts: s.attempts,
        retries: s.retries,
        retries_since_pushback: s.retries_since_pushback,
        elapsed_ms: s.elapsed_ms,
        has_deadline: s.deadline_ms.is_some().into(),
        deadline_ms: s.deadline_ms.unwrap_or(0),
    }
}

/// A core decision as a C struct; rule and section are interned.
fn decision_to_c(d: &GrpcRetryDecision) -> rp_grpc_retry_decision {
    rp_grpc_retry_decision {
        action: to_c(d.action),
        delay_ms: d.delay_ms.unwrap_or(0),
        transparent: d.transparent.into(),
        pushback_ms: or_minus_one(d.pushback_ms),
        throttle: to_c(d.throttle),
        has_budget: d.budget.is_some().into(),
        budget: d.budget.as_ref().map_or_else(blank, verdict_to_c),
        has_next: d.next.is_some().into(),
        next: d
            .next
            .as_ref()
            .map_or(state_to_c(&GrpcRetryState::default()), state_to_c),
        rule: intern(d.rule).as_ptr(),
        section: intern(d.section).as_ptr(),
    }
}

/// A C hedge state as the core's; errors name `state.<field>`.
fn hedge_state_from_c(s: &rp_grpc_hedge_state) -> Result<HedgeState, Failure> {
    let last_status = s
        .has_last_status
        .get()
        .then(|| from_c(s.last_status, "state.last_status"));
    Ok(HedgeState {
        sent: s.sent,
        outstanding: s.outstanding,
        stopped: s.stopped.get(),
        done: s.done.get(),
        last_status: last_status.transpose()?,
    })
}

/// The core's hedge state as C's.
fn hedge_state_to_c(s: &HedgeState) -> rp_grpc_hedge_state {
    rp_grpc_hedge_state {
        sent: s.sent,
        outstanding: s.outstanding,
        stopped: s.stopped.into(),
        done: s.done.into(),
        has_last_status: s.last_status.is_some().into(),
        last_status: s.last_status.map_or(RP_GRPC_CODE_OK, to_c),
    }
}

/// A core hedge step as a C struct; rule and section are interned.
fn step_to_c(s: &HedgeStep) -> rp_grpc_hedge_step {
    rp_grpc_hedge_step {
        send: s.send,
        next_hedge_in_ms: or_minus_one(s.next_hedge_in_ms),
        cancel_others: s.cancel_others.into(),
        end: to_c(s.end),
        has_status: s.status.is_some().into(),
        status: s.status.map_or(RP_GRPC_CODE_OK, to_c),
        throttle: to_c(s.throttle),
        has_budget: s.budget.is_some().into(),
        budget: s.budget.as_ref().map_or_else(blank, verdict_to_c),
        state: hedge_state_to_c(&s.state),
        rule: intern(s.rule).as_ptr(),
        section: intern(s.section).as_ptr(),
    }
}

/// `decide` with the throttling bucket behind `throttling` (NULL: none) locked for the call and
/// lent with `now_ms`. A pointer that is no live `rp_budget` is RP_RESULT_INVALID_HANDLE naming "throttling".
fn with_throttling<R>(
    throttling: *const rp_budget,
    now_ms: u64,
    decide: impl FnOnce(Option<(&mut RetryBudget, u64)>) -> Result<R, Error>,
) -> Result<R, Failure> {
    let Some(handle) = get_optional(throttling, "throttling")? else {
        return Ok(decide(None)?);
    };
    let mut bucket = lock(&handle.0, "throttling")?;
    Ok(decide(Some((&mut bucket, now_ms)))?)
}

/// The decision after one attempt of a retried call (gRFC A6, in grpc-go's order: OK, committed,
/// transparent retries, no policy, pushback not to retry, status not retryable, the throttling
/// bucket, `maxAttempts`, the delay). `policy`: the method's retry policy (NULL: none; transparent
/// retries still happen); `state`: the call so far (`attempts` at least 1); `random`: the draw in
/// [0, 1) for the backoff (NaN or negative: none; needed only for a backoff); `jitter`:
/// RP_GRPC_JITTER_PLUS_MINUS_20_PERCENT (A6's text since 2024-08-29) or _FULL (A6's before);
/// `throttling`: the server's `retryThrottling` bucket (an `rp_budget` made from
/// `rp_grpc_service_config_throttling`; NULL: none), locked for the call, in which the attempt's
/// success or failure is recorded and which is asked before a retry, at the host's `now_ms`. Errors
/// name the field ("state.attempts", "random", "attempt.status").
#[no_mangle]
pub unsafe extern "C" fn rp_grpc_retry(
    policy: *const rp_grpc_retry_policy,
    state: *const rp_grpc_retry_state,
    attempt: *const rp_grpc_attempt,
    random: f64,
    jitter: rp_grpc_jitter,
    throttling: *mut rp_budget,
    now_ms: u64,
    decision_out: *mut rp_grpc_retry_decision,
) -> rp_result {
    output!(decision_out, {
        let policy = get_optional(policy, "policy")?;
        let state = state_from_c(borrow(state, "state")?);
        let attempt = attempt_from_c(borrow(attempt, "attempt")?, "attempt")?;
        let jitter = from_c(jitter, "jitter")?;
        let policy = policy.as_ref().map(|p| &p.0);
        let d = with_throttling(throttling, now_ms, |bucket| {
            grpc_retry(policy, &state, &attempt, draw(random), jitter, bucket)
        })?;
        Ok(decision_to_c(&d))
    })
}

/// One step of a hedged call under `policy` (gRFC A6 "Hedging Policy"): `state` is where the call
/// is (zeroed before RP_GRPC_HEDGE_START; then the previous step's `state`), `event` what happened,
/// `attempt` how the attempt ended, read only for RP_GRPC_HEDGE_ATTEMPT_ENDED (may be NULL
/// otherwise). The answer says how many attempts to send now, when the next hedge is due, whether
/// to cancel the others and whether the call is over. `throttling` (NULL: none) is the server's
/// bucket, locked for the call, asked before each hedge and told of each ended attempt at
/// `now_ms`. An event out of order is RP_RESULT_OUT_OF_RANGE naming "event".
#[no_mangle]
pub unsafe extern "C" fn rp_grpc_hedge(
    policy: *const rp_grpc_hedging_policy,
    state: *const rp_grpc_hedge_state,
    event: rp_grpc_hedge_event,
    attempt: *const rp_grpc_attempt,
    throttling: *mut rp_budget,
    now_ms: u64,
    step_out: *mut rp_grpc_hedge_step,
) -> rp_result {
    output!(step_out, {
        let policy = get(policy, "policy")?;
        let state = hedge_state_from_c(borrow(state, "state")?)?;
        let event = match from_c(event, "event")? {
            HedgeEventKind::Start => HedgeEvent::Start,
            HedgeEventKind::HedgeDue => HedgeEvent::HedgeDue,
            HedgeEventKind::Committed => HedgeEvent::Committed,
            HedgeEventKind::AttemptEnded => HedgeEvent::AttemptEnded {
                attempt: attempt_from_c(borrow(attempt, "attempt")?, "attempt")?,
            },
        };
        let step = with_throttling(throttling, now_ms, |bucket| {
            grpc_hedge(&policy.0, &state, &event, bucket)
        })?;
        Ok(step_to_c(&step))
    })
}

/// The attempt of a send step of a run with `grpc` rules ended as `attempt` says (its status, the
/// pushback values, `committed`, `reach`) at `now_ms` (`random`: the draw for the backoff, NaN or
/// negative for none): wait, or done, as `rp_run_attempt_ended` (a connection failure or a time
/// bound is RP_OUTCOME_NETWORK / RP_OUTCOME_TIMEOUT there). In a run with other rules it is
/// RP_RESULT_OUT_OF_RANGE naming "outcome.kind". Errors name the attempt's field ("outcome.status").
#[no_mangle]
pub unsafe extern "C" fn rp_run_attempt_ended_grpc(
    run: *mut rp_run,
    attempt: *const rp_grpc_attempt,
    now_ms: f64,
    random: f64,
    step_out: *mut rp_run_step,
) -> rp_result {
    output!(step_out, {
        let a = attempt_from_c(borrow(attempt, "attempt")?, "outcome")?;
        let outcome = Outcome::Grpc {
            status: a.status,
            pushback: a.pushback,
            committed: a.committed,
            reach: a.reach,
        };
        with_guards(run, |r, g| {
            r.attempt_ended(&outcome, clock(now_ms, random, -1), g, None)
        })
    })
}
