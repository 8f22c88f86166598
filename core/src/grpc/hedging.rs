//! gRPC hedging (gRFC A6, "Hedging Policy", "Pushback", "Throttling Retry Attempts and Hedged
//! RPCs", "Summary of Retry and Hedging Logic") as a pure step machine: the host tells it what
//! happened to the call (it started, the hedging delay ran out, an attempt ended, the call was
//! committed) and it answers how many attempts to send now, when the next hedge is due, whether
//! to cancel the others, and whether the call is over.
//!
//! - The original attempt goes at once; each `hedgingDelay` without a success sends the next, up
//!   to `maxAttempts` (with a delay of 0, every attempt at once: one step, whatever the cap).
//! - `OK`: the call succeeds; every other attempt is cancelled.
//! - A non-fatal status: the next hedge goes at once (its delay cut short); later ones resume at
//!   `hedgingDelay`. With pushback of n ms, the next hedge goes after n ms instead; pushback not
//!   to retry stops hedging. Non-fatal statuses and pushback not to retry are throttling failures.
//! - Any other status (a fatal one): the call fails with it; every other attempt is cancelled,
//!   with or without pushback ("Summary of Retry and Hedging Logic" 2; grpc-java commits the call
//!   to the attempt). Pushback not to retry beside it is still a throttling failure.
//! - Throttling: the first attempt always goes; a hedge goes only while the bucket is above half.
//!   A hedge it refuses is not sent, and no later one goes, at the start (a delay of 0) as later
//!   (A6: "the hedged request is cancelled"; this machine does not ask again). Hedges sent
//!   together are asked as one by one, in one step.
//! - When no attempt is out and no more hedges will go, the call fails with the last status (the
//!   rule `max_attempts_reached`, or `hedging_stopped` once pushback, the bucket or a commit
//!   stopped hedging).
//! - Committed (the host chose one attempt to go on with): the others are cancelled, no more hedges.
//!
//! The call's deadline is the host's: it ends the call wherever the machine is.

use serde::{Deserialize, Serialize};

use super::code::GrpcCode;
use super::config::HedgingPolicy;
use super::retry::{read_pushback, GrpcAttempt, Pushback, ThrottleEvent};
use crate::budget::{BudgetEvent, BudgetVerdict, RetryBudget, RetryCause};
use crate::error::Error;

/// The source every hedging rule cites.
pub const GRPC_HEDGING_SOURCE: &str =
    "gRFC A6 Client Retries (grpc/proposal A6-client-retries.md): Hedging Policy, \
     Pushback, Throttling Retry Attempts and Hedged RPCs, Summary of Retry and Hedging Logic";

/// What happened to a hedged call. JSON: `{"event": "attempt_ended", "attempt": {...}}`, read
/// through [`HedgeEventForm`] so that an error inside the attempt names its field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case", try_from = "HedgeEventForm")]
pub enum HedgeEvent {
    /// The call starts.
    Start,
    /// The wait a step asked for (`next_hedge_in_ms`) is over.
    HedgeDue,
    /// One attempt ended.
    AttemptEnded {
        /// How it ended (`reach` and `committed` are not read: see [`HedgeEvent::Committed`]).
        attempt: GrpcAttempt,
    },
    /// The host committed the call to one attempt (its response headers arrived).
    Committed,
}

/// The kinds of [`HedgeEvent`], by their JSON names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HedgeEventKind {
    /// [`HedgeEvent::Start`].
    Start,
    /// [`HedgeEvent::HedgeDue`].
    HedgeDue,
    /// [`HedgeEvent::AttemptEnded`].
    AttemptEnded,
    /// [`HedgeEvent::Committed`].
    Committed,
}

/// A [`HedgeEvent`]'s JSON form as a plain struct: serde reads an internally tagged enum from a
/// copy of its fields, out of the error path's sight, so an error inside the attempt would name no
/// field; read as a struct, it names `attempt.<field>`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HedgeEventForm {
    event: HedgeEventKind,
    #[serde(default)]
    attempt: Option<GrpcAttempt>,
}

impl HedgeEvent {
    /// The event of `kind`: `attempt` is required for `attempt_ended` (`missing_field`) and
    /// refused for the others (`unknown_field`), both naming `attempt`.
    pub fn new(kind: HedgeEventKind, attempt: Option<GrpcAttempt>) -> Result<HedgeEvent, Error> {
        let field = || "attempt".to_owned();
        match (kind, attempt) {
            (HedgeEventKind::AttemptEnded, Some(attempt)) => Ok(HedgeEvent::AttemptEnded { attempt }),
            (HedgeEventKind::AttemptEnded, None) => Err(Error::MissingField { field: field() }),
            (_, Some(_)) => Err(Error::UnknownField { field: field() }),
            (HedgeEventKind::Start, None) => Ok(HedgeEvent::Start),
            (HedgeEventKind::HedgeDue, None) => Ok(HedgeEvent::HedgeDue),
            (HedgeEventKind::Committed, None) => Ok(HedgeEvent::Committed),
        }
    }
}

impl TryFrom<HedgeEventForm> for HedgeEvent {
    /// serde's message: the listed rejection's, so the wire layer names the field (both errors
    /// [`HedgeEvent::new`] makes are listed; anything else would say it is not).
    type Error = String;

    fn try_from(form: HedgeEventForm) -> Result<HedgeEvent, Self::Error> {
        HedgeEvent::new(form.event, form.attempt).map_err(|e| match crate::serde_form::Rejection::of(&e) {
            Some(r) => r.to_string(),
            None => "retrypolicy: unlisted rejection".to_owned(),
        })
    }
}

/// Where a hedged call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HedgeState {
    /// Attempts sent so far.
    pub sent: u32,
    /// Attempts out (sent, not ended).
    pub outstanding: u32,
    /// No more hedges will go (pushback not to retry, a hedge the bucket refused, a commit).
    pub stopped: bool,
    /// The call is over.
    pub done: bool,
    /// The status of the last attempt that failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_status: Option<GrpcCode>,
}

/// How a hedged call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HedgeEnd {
    /// An attempt succeeded.
    Succeeded,
    /// It failed with the last attempt's status.
    Failed,
}

/// The machine's answer to one event.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HedgeStep {
    /// Send this many attempts now.
    pub send: u32,
    /// Tell the machine [`HedgeEvent::HedgeDue`] after this many ms (replacing any earlier wait);
    /// none: no hedge is due.
    #[serde(with = "crate::serde_form::ms::option")]
    pub next_hedge_in_ms: Option<u64>,
    /// Cancel every attempt still out.
    pub cancel_others: bool,
    /// The call is over.
    pub end: Option<HedgeEnd>,
    /// The status the call fails with.
    pub status: Option<GrpcCode>,
    /// What the throttling bucket was told of the ended attempt.
    pub throttle: Option<ThrottleEvent>,
    /// The bucket's verdict on the last hedge it was asked for.
    pub budget: Option<BudgetVerdict>,
    /// The state after the event.
    pub state: HedgeState,
    /// The stable name of the rule that decided.
    pub rule: &'static str,
    /// Its source.
    pub section: &'static str,
}

/// The hedging delay in whole ms (rounded up: a hedge never goes early).
fn delay_ms(policy: &HedgingPolicy) -> u64 {
    policy.hedging_delay_ns.div_ceil(1_000_000)
}

/// One step of the hedged call in `state` under `policy`, for `event`; a bucket lent with the
/// caller's clock is asked before each hedge and told of each ended attempt.
pub fn grpc_hedge(
    policy: &HedgingPolicy,
    state: &HedgeState,
    event: &HedgeEvent,
    budget: Option<(&mut RetryBudget, u64)>,
) -> Result<HedgeStep, Error> {
    let misplaced = |expected: &str| Error::OutOfRange {
        field: "event".to_owned(),
        value: event_name(event).to_owned(),
        expected: expected.to_owned(),
    };
    if state.done {
        return Err(misplaced("no further event: the call is over"));
    }
    let started = state.sent > 0;
    match event {
        HedgeEvent::Start if started => return Err(misplaced("one start, first")),
        HedgeEvent::Start => {}
        _ if !started => return Err(misplaced("start first")),
        HedgeEvent::AttemptEnded { .. } | HedgeEvent::Committed if state.outstanding == 0 => {
            return Err(misplaced(
                "an attempt's end or a commit only while an attempt is out",
            ))
        }
        _ => {}
    }
    let mut m = Machine {
        policy,
        state: *state,
        budget,
        step: HedgeStep {
            send: 0,
            next_hedge_in_ms: None,
            cancel_others: false,
            end: None,
            status: None,
            throttle: None,
            budget: None,
            state: *state,
            rule: "",
            section: GRPC_HEDGING_SOURCE,
        },
    };
    match event {
        HedgeEvent::Start => {
            m.state.sent = 1;
            m.state.outstanding = 1;
            m.step.send = 1;
            m.step.rule = "original_attempt";
            if delay_ms(policy) == 0 {
                m.step.rule = "all_attempts_at_once";
                if !m.hedge_many(policy.max_attempts - m.state.sent) {
                    m.throttled();
                }
            } else {
                m.schedule(delay_ms(policy));
            }
        }
        HedgeEvent::HedgeDue => {
            if m.state.stopped || m.state.sent >= policy.max_attempts {
                m.step.rule = "no_hedge_due";
            } else if m.hedge() {
                m.step.rule = "hedging_delay_over";
                m.schedule(delay_ms(policy));
            } else {
                m.throttled();
                if m.state.outstanding == 0 {
                    let (rule, section) = (m.step.rule, m.step.section);
                    m.end(HedgeEnd::Failed, m.state.last_status, rule);
                    m.step.section = section;
                }
            }
        }
        HedgeEvent::Committed => {
            m.state.stopped = true;
            m.step.cancel_others = m.state.outstanding > 1;
            m.state.outstanding = m.state.outstanding.min(1);
            m.step.rule = "committed";
        }
        HedgeEvent::AttemptEnded { attempt } => {
            m.state.outstanding -= 1;
            m.ended(attempt);
        }
    }
    m.step.state = m.state;
    Ok(m.step)
}

fn event_name(event: &HedgeEvent) -> &'static str {
    match event {
        HedgeEvent::Start => "start",
        HedgeEvent::HedgeDue => "hedge_due",
        HedgeEvent::AttemptEnded { .. } => "attempt_ended",
        HedgeEvent::Committed => "committed",
    }
}

struct Machine<'p, 'b> {
    policy: &'p HedgingPolicy,
    state: HedgeState,
    budget: Option<(&'b mut RetryBudget, u64)>,
    step: HedgeStep,
}

impl Machine<'_, '_> {
    /// Sends one more hedge if the bucket allows it; says whether it went.
    fn hedge(&mut self) -> bool {
        self.hedge_many(1)
    }

    /// Sends up to `n` more hedges at once, the bucket asked for each in turn until it refuses (in
    /// one step whatever `n`); says whether all went.
    fn hedge_many(&mut self, n: u32) -> bool {
        let sent = match self.budget.as_mut() {
            Some((b, now)) if n > 0 => {
                let (permitted, v) = b.try_retries(*now, RetryCause::Error, n);
                self.step.budget = Some(v);
                permitted
            }
            _ => n,
        };
        self.state.sent += sent;
        self.state.outstanding += sent;
        self.step.send += sent;
        sent == n
    }

    /// The bucket refused a hedge: no more go.
    fn throttled(&mut self) {
        self.state.stopped = true;
        self.step.rule = self.step.budget.map_or("hedge_throttled", |v| v.rule.name());
        self.step.section = self.step.budget.map_or(GRPC_HEDGING_SOURCE, |v| v.source);
    }

    /// The next hedge is due in `ms`, if one is left.
    fn schedule(&mut self, ms: u64) {
        if !self.state.stopped && self.state.sent < self.policy.max_attempts {
            self.step.next_hedge_in_ms = Some(ms);
        }
    }

    fn tell(&mut self, event: ThrottleEvent) {
        self.step.throttle = Some(event);
        if let Some((b, now)) = self.budget.as_mut() {
            b.record(
                *now,
                match event {
                    ThrottleEvent::Success => BudgetEvent::Success { after_retry: None },
                    ThrottleEvent::Failure => BudgetEvent::Failure,
                },
            );
        }
    }

    fn end(&mut self, end: HedgeEnd, status: Option<GrpcCode>, rule: &'static str) {
        self.state.done = true;
        self.step.cancel_others = self.state.outstanding > 0;
        self.state.outstanding = 0;
        self.step.end = Some(end);
        self.step.status = status;
        self.step.next_hedge_in_ms = None;
        self.step.rule = rule;
    }

    fn ended(&mut self, attempt: &GrpcAttempt) {
        let status = attempt.status;
        if status == GrpcCode::Ok {
            self.tell(ThrottleEvent::Success);
            return self.end(HedgeEnd::Succeeded, None, "ok");
        }
        self.state.last_status = Some(status);
        let pushback = read_pushback(&attempt.pushback);
        let non_fatal = self.policy.non_fatal_status_codes.contains(status);
        // A6 "Throttling": a non-fatal status and pushback not to retry are failures.
        if non_fatal || matches!(pushback, Pushback::Stop(_)) {
            self.tell(ThrottleEvent::Failure);
        }
        if !non_fatal {
            return self.end(HedgeEnd::Failed, Some(status), "fatal_status");
        }
        let more = !self.state.stopped && self.state.sent < self.policy.max_attempts;
        match pushback {
            Pushback::Stop(rule) => {
                self.state.stopped = true;
                self.step.rule = rule;
            }
            Pushback::RetryAfter(ms) if more => {
                self.step.rule = "pushback";
                self.step.next_hedge_in_ms = Some(ms);
            }
            Pushback::None if more => {
                if self.hedge() {
                    self.step.rule = "non_fatal_status";
                    self.schedule(delay_ms(self.policy));
                } else {
                    self.throttled();
                }
            }
            _ if self.state.stopped => self.step.rule = "hedging_stopped",
            _ => self.step.rule = "max_attempts_reached",
        }
        if self.state.outstanding == 0 && self.step.send == 0 && self.step.next_hedge_in_ms.is_none() {
            let rule = self.step.rule;
            let section = self.step.section;
            self.end(HedgeEnd::Failed, Some(status), rule);
            self.step.section = section;
        }
    }
}
