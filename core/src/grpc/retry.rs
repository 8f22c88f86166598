//! gRPC's retry decision for one failed attempt (gRFC A6), in the order grpc-go's
//! `csAttempt.shouldRetry` (`stream.go`) applies A6:
//! 1. `OK` ends the call (a success for the throttling bucket).
//! 2. A committed call (response headers arrived, or the outgoing message overflowed the retry
//!    buffer) is never retried ("When Retries are Valid").
//! 3. Transparent retries, whatever the policy ("Transparent Retries"): an attempt that never left
//!    the client is retried at once until the deadline (A6: "until a success occurs, or the RPC's
//!    deadline passes"), at most [`MAX_TRANSPARENT_RETRIES`] times in a call, grpc-java's bound
//!    (a call with no deadline would otherwise never end); one that reached the server but not its
//!    application is retried at once, once (on the call's first attempt). Neither counts toward
//!    `maxAttempts` nor as a throttling failure. A run's own `max_attempts` counts every attempt
//!    it sends, transparent ones included (the run machine's rule).
//! 4. Server pushback (`grpc-retry-pushback-ms`, "Pushback"): more than one value, a value that is
//!    not a signed 32-bit integer, or a negative one asks not to retry, and counts as a throttling
//!    failure even when the method has no retry policy (grpc-go reads pushback before it looks for
//!    the policy; grpc-java counts it only under a policy); a valid value is the delay.
//! 5. No retry policy: not retried.
//! 6. A status not in `retryableStatusCodes` is not retried (and not a throttling failure).
//! 7. Throttling: the failure is recorded in the bucket, which is then asked; at or below half it
//!    refuses the retry.
//! 8. `maxAttempts` reached: not retried, even after pushback.
//! 9. The delay: the pushback's (and the backoff restarts at `initialBackoff`), else
//!    `min(initialBackoff × backoffMultiplier^n, maxBackoff) × random(0.8, 1.2)` with n the
//!    retries since the last pushback ("Exponential Backoff" since grpc/proposal dc9fd4f,
//!    2024-08-29: "Jitter of plus or minus 0.2 is applied to the backoff delay"; the product is not
//!    clamped, as that text says: "slightly lower than `initialBackoff` or slightly higher than
//!    `maxBackoff`"); a delay that reaches the call's deadline ends the call now (waiting would
//!    only end in DEADLINE_EXCEEDED).
//!
//! Where implementations or an older text differ from A6's text, the difference is a named option:
//! A6's text before 2024-08-29 drew from `[0, bound)`, as grpc-java did before 1.71
//! (`nextBackoffIntervalNanos * random.nextDouble()`) and still does with
//! `GRPC_EXPERIMENTAL_XDS_RLS_LB=false` ([`GrpcJitter::Full`]).

use serde::{Deserialize, Serialize};

use super::code::GrpcCode;
use super::config::RetryPolicy;
use crate::backoff::check_draw;
use crate::budget::{BudgetEvent, BudgetVerdict, RetryBudget, RetryCause};
use crate::error::Error;

/// The section every rule below cites.
pub const GRPC_RETRY_SOURCE: &str =
    "gRFC A6 Client Retries (grpc/proposal A6-client-retries.md); grpc-go stream.go \
     shouldRetry (the order of the checks)";

/// Transparent retries of attempts that never left the client, at most, in one call: grpc-java's
/// bound (`RetriableStream`: more than 1,000 local-only transparent retries fail the call, "Too many
/// transparent retries"); A6 sets none but the deadline, and grpc-go none at all. Counted here over
/// every transparent retry of the call (the one after an unprocessed attempt too).
pub const MAX_TRANSPARENT_RETRIES: u32 = 1_000;

/// How far a failed attempt got (gRFC A6, "Transparent Retries").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttemptReach {
    /// The server's application saw it, or the client cannot tell.
    #[default]
    Processed,
    /// It never left the client.
    NeverSent,
    /// It reached the server's gRPC library but not its application (an HTTP/2 `REFUSED_STREAM`,
    /// a GOAWAY that did not cover it).
    Unprocessed,
}

/// How one attempt of a call ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrpcAttempt {
    /// Its status.
    pub status: GrpcCode,
    /// The values of the `grpc-retry-pushback-ms` trailer, in order (none: no pushback).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "crate::serde_form::or_default"
    )]
    pub pushback: Vec<String>,
    /// Whether the call was committed: response headers arrived (not a Trailers-Only answer), or
    /// the outgoing message overflowed the retry buffer.
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub committed: bool,
    /// How far it got.
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub reach: AttemptReach,
}

/// What the caller knows of its call before this decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrpcRetryState {
    /// Attempts sent that count toward `maxAttempts`, the one that just failed included.
    pub attempts: u32,
    /// Retries made so far, transparent ones included (0: this was the call's first attempt).
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub retries: u32,
    /// Retries since the last pushback (or the first attempt): the backoff's exponent.
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub retries_since_pushback: u32,
    /// Time since the call started, in ms.
    #[serde(default, with = "crate::serde_form::ms::or_zero")]
    pub elapsed_ms: u64,
    /// The call's deadline, in ms from its start (none: no deadline).
    #[serde(default, with = "crate::serde_form::ms::option")]
    pub deadline_ms: Option<u64>,
}

/// How the backoff bound is jittered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GrpcJitter {
    /// A6's text before grpc/proposal dc9fd4f (2024-08-29) and grpc-java before 1.71: a draw from
    /// `[0, bound)`.
    Full,
    /// The default, A6's text since dc9fd4f (2024-08-29), `bound × random(0.8, 1.2)`, as
    /// `bound × (0.8 + 0.4 r)`: grpc-go (`stream.go`: `cur *= 0.8 + 0.4*rand.Float64()`), grpc
    /// core, grpc-java since 1.80 (`RetriableStream.intervalWithJitter`).
    #[default]
    #[serde(rename = "plus_minus_20_percent")]
    PlusMinus20Percent,
}

/// What to do after the attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GrpcAction {
    /// The attempt succeeded: return its answer.
    Succeeded,
    /// Send the next attempt after `delay_ms`.
    Retry,
    /// Return the attempt's status to the application.
    Fail,
}

/// What the throttling bucket was told of this attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThrottleEvent {
    /// A successful RPC (adds `tokenRatio`).
    Success,
    /// A failed RPC (takes a token): a retryable or non-fatal status, or pushback not to retry.
    Failure,
}

/// The decision for one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct GrpcRetryDecision {
    /// Succeeded, retry or fail.
    pub action: GrpcAction,
    /// Retry: the wait before the next attempt.
    #[serde(with = "crate::serde_form::ms::option")]
    pub delay_ms: Option<u64>,
    /// Retry: a transparent retry (not counted toward `maxAttempts`).
    pub transparent: bool,
    /// The valid pushback the server sent, in ms.
    #[serde(with = "crate::serde_form::ms::option")]
    pub pushback_ms: Option<u64>,
    /// What the throttling bucket is told of this attempt (recorded here when one was lent).
    pub throttle: Option<ThrottleEvent>,
    /// The bucket's verdict, when it was asked.
    pub budget: Option<BudgetVerdict>,
    /// Retry: the call's state for the next attempt's decision.
    pub next: Option<GrpcRetryState>,
    /// The stable name of the rule that decided.
    pub rule: &'static str,
    /// Its source.
    pub section: &'static str,
}

/// The server's pushback: absent, a delay, or "do not retry".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pushback {
    /// No `grpc-retry-pushback-ms`.
    None,
    /// Retry after this many ms.
    RetryAfter(u64),
    /// Do not retry (a negative or unparseable value, or several values), with the rule.
    Stop(&'static str),
}

/// Reads `grpc-retry-pushback-ms` values (gRFC A6, "Pushback": "an ASCII encoded signed 32-bit
/// integer"; grpc-go refuses more than one value). Leading zeros and a `+` are read as grpc-go and
/// grpc-java read them (`strconv.Atoi`, `Integer.parseInt`), though A6 asks servers not to send them.
pub fn read_pushback(values: &[String]) -> Pushback {
    match values {
        [] => Pushback::None,
        [one] => match one.parse::<i32>() {
            Ok(ms) if ms >= 0 => Pushback::RetryAfter(ms as u64),
            Ok(_) => Pushback::Stop("pushback_negative"),
            Err(_) => Pushback::Stop("pushback_malformed"),
        },
        _ => Pushback::Stop("pushback_multiple_values"),
    }
}

/// The backoff bound before the `n`-th retry since the last pushback, in ns:
/// `min(initialBackoff × backoffMultiplier^n, maxBackoff)` (multiplied step by step, so every
/// language computes the same float).
pub fn backoff_bound_ns(policy: &RetryPolicy, n: u32) -> f64 {
    let max = policy.max_backoff_ns as f64;
    let mut bound = policy.initial_backoff_ns as f64;
    for _ in 0..n {
        let next = bound * policy.backoff_multiplier;
        // Past the cap, or no longer changing (a multiplier of 1, or 0 reached): n more steps change nothing.
        if bound >= max || next == bound {
            break;
        }
        bound = next;
    }
    bound.min(max)
}

/// The jittered delay in whole ms (rounded down) for bound `bound_ns` and draw `r`; ±20 % may
/// pass `maxBackoff` (A6: "slightly higher than `maxBackoff`"), so it is not clamped.
pub fn jittered_ms(bound_ns: f64, r: f64, jitter: GrpcJitter) -> u64 {
    let ns = match jitter {
        GrpcJitter::Full => bound_ns * r,
        GrpcJitter::PlusMinus20Percent => bound_ns * (0.8 + 0.4 * r),
    };
    (ns / 1_000_000.0).floor() as u64
}

fn decision(action: GrpcAction, rule: &'static str) -> GrpcRetryDecision {
    GrpcRetryDecision {
        action,
        delay_ms: None,
        transparent: false,
        pushback_ms: None,
        throttle: None,
        budget: None,
        next: None,
        rule,
        section: GRPC_RETRY_SOURCE,
    }
}

/// Whether a wait of `delay_ms` reaches the deadline.
fn past_deadline(state: &GrpcRetryState, delay_ms: u64) -> bool {
    state
        .deadline_ms
        .is_some_and(|d| state.elapsed_ms.saturating_add(delay_ms) >= d)
}

/// The decision for `attempt` under `policy` (`None`: the method has no retry policy), with the
/// caller's draw `random` (needed only for a backoff) and, if the server has `retryThrottling`,
/// its bucket lent with the caller's clock `now_ms` (the attempt's success or failure is recorded
/// in it here).
pub fn grpc_retry(
    policy: Option<&RetryPolicy>,
    state: &GrpcRetryState,
    attempt: &GrpcAttempt,
    random: Option<f64>,
    jitter: GrpcJitter,
    budget: Option<(&mut RetryBudget, u64)>,
) -> Result<GrpcRetryDecision, Error> {
    if state.attempts == 0 {
        return Err(Error::OutOfRange {
            field: "state.attempts".to_owned(),
            value: "0".to_owned(),
            expected: "the attempts sent, the failed one included: 1 or more".to_owned(),
        });
    }
    if let Some(r) = random {
        check_draw("random", r)?;
    }
    let mut budget = budget;
    let mut tell = |event: ThrottleEvent, d: &mut GrpcRetryDecision| {
        d.throttle = Some(event);
        if let Some((b, now)) = budget.as_mut() {
            b.record(
                *now,
                match event {
                    ThrottleEvent::Success => BudgetEvent::Success { after_retry: None },
                    ThrottleEvent::Failure => BudgetEvent::Failure,
                },
            );
        }
    };
    if attempt.status == GrpcCode::Ok {
        let mut d = decision(GrpcAction::Succeeded, "ok");
        tell(ThrottleEvent::Success, &mut d);
        return Ok(d);
    }
    if attempt.committed {
        return Ok(decision(GrpcAction::Fail, "committed"));
    }
    // Retries made that did not count toward maxAttempts.
    let transparent_so_far = state.retries.saturating_sub(state.attempts - 1);
    let transparent = match attempt.reach {
        AttemptReach::NeverSent if transparent_so_far >= MAX_TRANSPARENT_RETRIES => {
            return Ok(decision(GrpcAction::Fail, "transparent_retries_exhausted"));
        }
        AttemptReach::NeverSent => Some("transparent_never_sent"),
        AttemptReach::Unprocessed if state.retries == 0 => Some("transparent_unprocessed"),
        _ => None,
    };
    if let Some(rule) = transparent {
        if past_deadline(state, 0) {
            return Ok(decision(GrpcAction::Fail, "deadline_reached"));
        }
        let mut d = decision(GrpcAction::Retry, rule);
        d.delay_ms = Some(0);
        d.transparent = true;
        d.next = Some(GrpcRetryState {
            retries: state.retries.saturating_add(1),
            ..*state
        });
        return Ok(d);
    }
    let pushback = read_pushback(&attempt.pushback);
    if let Pushback::Stop(rule) = pushback {
        let mut d = decision(GrpcAction::Fail, rule);
        tell(ThrottleEvent::Failure, &mut d);
        return Ok(d);
    }
    let Some(policy) = policy else {
        return Ok(decision(GrpcAction::Fail, "no_retry_policy"));
    };
    if !policy.retryable_status_codes.contains(attempt.status) {
        return Ok(decision(GrpcAction::Fail, "status_not_retryable"));
    }
    let mut d = decision(GrpcAction::Fail, "max_attempts_reached");
    tell(ThrottleEvent::Failure, &mut d);
    if let Some((b, now)) = budget {
        let v = b.try_retry(now, RetryCause::Error);
        d.budget = Some(v);
        if !v.permitted {
            d.rule = v.rule.name();
            d.section = v.source;
            return Ok(d);
        }
    }
    if state.attempts >= policy.max_attempts {
        return Ok(d);
    }
    let (delay, rule, since) = match pushback {
        Pushback::RetryAfter(ms) => {
            d.pushback_ms = Some(ms);
            (ms, "pushback", 0)
        }
        _ => {
            let r = random.ok_or_else(|| Error::MissingField {
                field: "random".to_owned(),
            })?;
            let bound = backoff_bound_ns(policy, state.retries_since_pushback);
            (
                jittered_ms(bound, r, jitter),
                "exponential_backoff",
                state.retries_since_pushback.saturating_add(1),
            )
        }
    };
    if past_deadline(state, delay) {
        d.rule = "deadline_before_retry";
        return Ok(d);
    }
    d.action = GrpcAction::Retry;
    d.delay_ms = Some(delay);
    d.rule = rule;
    d.next = Some(GrpcRetryState {
        attempts: state.attempts.saturating_add(1),
        retries: state.retries.saturating_add(1),
        retries_since_pushback: since,
        elapsed_ms: state.elapsed_ms,
        deadline_ms: state.deadline_ms,
    });
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_jitter_is_a6s_plus_minus_20_percent_and_may_pass_max_backoff() {
        assert_eq!(GrpcJitter::default(), GrpcJitter::PlusMinus20Percent);
        // A 1 s bound (maxBackoff) times 0.8 + 0.4 × 0.999 = 1.1996: 1,199.6 ms, floored to 1,199,
        // past maxBackoff as A6's text allows; r = 0 gives 0.8 × 1 s.
        assert_eq!(jittered_ms(1e9, 0.999, GrpcJitter::PlusMinus20Percent), 1_199);
        assert_eq!(jittered_ms(1e9, 0.0, GrpcJitter::PlusMinus20Percent), 800);
        // The older text's full draw: 1 s × 0.999.
        assert_eq!(jittered_ms(1e9, 0.999, GrpcJitter::Full), 999);
    }
}
