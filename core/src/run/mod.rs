//! The retry run: one pure state machine that owns the whole protocol of retrying one call.
//!
//! A host (a runner in Python, Node, C, the storm simulator) tells the machine what happened and
//! does what it answers: [`Run::start`] → send attempt 1; [`Run::attempt_ended`] with the
//! attempt's [`Outcome`] → wait D, or done; [`Run::wait_ended`] → send the next attempt (or wait
//! for the breaker, or done); [`Run::cancel`] ends it. The host passes the clock (`now_ms`, any
//! monotonic milliseconds, fractions allowed), the random draw and, for `Retry-After` dates, the
//! wall clock; the machine reads none of them itself. A shared [`RetryBudget`] and
//! [`CircuitBreaker`] are lent to each call ([`Guards`]) under the host's lock.
//!
//! The rules it applies, each chosen once here (README, "The retry run"):
//! - **decision**: RFC 0049's `decide` (Couchbase, and generic runners with a host-classified
//!   reason), the HTTP loop's `http_next`, or MongoDB's `decide_mongo`; an attempt cap beside the
//!   deadline; a valid `Retry-After` replaces the delay in every domain.
//! - **time**: elapsed time is rounded up to whole ms (a run never thinks it has more time than it
//!   has); a clock that goes back is read as no time passing; a delay that reaches the deadline
//!   ends the run at once, timed out (`then_cancel` included: waiting for a cancel is waiting for
//!   nothing).
//! - **budget**: told of the request when its first attempt is sent, of each sent attempt's end
//!   (success, failure, timeout, or a final failure), and asked before each retry that follows a
//!   sent failure; a refusal ends the run.
//! - **breaker**: asked before each attempt and told each sent attempt's end (a final failure is
//!   the server answering: a success); a cancelled canary is released while it is still the
//!   breaker's canary (its token: not once it timed out and another run's canary went out). An
//!   attempt it refuses is not sent and costs the budget nothing: the run waits for the breaker's
//!   window (never spins), or ends timed out when that wait reaches the deadline; a fail-fast
//!   strategy (the policy's, or the host's when one is given) gives up at once.

#[cfg(feature = "aws")]
mod aws;
#[cfg(feature = "grpc")]
mod grpc;
mod step;

use std::sync::Arc;

use serde::{Deserialize, Serialize};

#[cfg(feature = "aws")]
pub use aws::AwsRules;
#[cfg(feature = "grpc")]
pub use grpc::GrpcRules;
pub use step::{Outcome, RunAction, RunDecision, RunEnd, RunSignal, RunStats, RunStep};

use crate::backoff::check_draw;
#[cfg(feature = "http")]
use crate::backoff::{Backoff, Jitter};
use crate::breaker::{BreakerOutcome, CanaryToken, CircuitBreaker, BREAKER_SOURCE};
use crate::budget::{BudgetEvent, RetryBudget, RetryCause};
use crate::budgeted::BudgetedDecision;
use crate::classify::dispatch::{classify_dispatch, DispatchFailure};
#[cfg(feature = "couchbase")]
use crate::classify::kv::classify_kv;
use crate::decide::{decide_with, Decision, NoRetryCause, Request};
use crate::error::Error;
#[cfg(feature = "http")]
use crate::http::{
    default_loop_backoff, default_loop_backoff_if_null, next_with_budget, HttpClass, LoopAction, LoopState,
    RetryLoop, StepOutcome,
};
use crate::http::{AttemptView, HttpAttempt, RetryAfterHeader, DEADLINE_BEFORE_RETRY, RETRY_AFTER_SECTION};
#[cfg(feature = "mongodb")]
use crate::mongodb::errors::{MongoError, ServerKind};
#[cfg(feature = "mongodb")]
use crate::mongodb::operations::MongoOperation;
#[cfg(feature = "mongodb")]
use crate::mongodb::retry::{decide_mongo, MongoRequest};
use crate::operation::Operation;
use crate::policy::Policy;
use crate::reason::RetryReason;
use crate::strategy::{RetryStrategy, StrategyKind};

/// The source of the machine's own rules.
pub const RUN_SECTION: &str = "retrypolicy run machine (README, The retry run)";

/// RFC 0049's rules for a run: `decide` for `operation`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecideRules {
    /// What is being retried.
    pub operation: Operation,
    /// Overrides the idempotent-operation list when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent: Option<bool>,
    /// A per-request built-in strategy (RFC 0049 "Request Annotation").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<StrategyKind>,
    /// The policy; the RFC default when absent.
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub policy: Policy,
}

/// The HTTP loop's rules for a run (`http_next`): RFC 9110's method rule and the backoff.
#[cfg(feature = "http")]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpRules {
    /// The request's method; absent, the request is taken as idempotent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// The caller's word that the request is idempotent (or not) whatever its method.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent: Option<bool>,
    /// The backoff when no `Retry-After` applies (default 100 ms × 2^n up to 10 s).
    #[serde(
        default = "default_loop_backoff",
        deserialize_with = "default_loop_backoff_if_null"
    )]
    pub backoff: Backoff,
    /// Jitter on that backoff (default none).
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub jitter: Jitter,
}

/// MongoDB's rules for a run (`decide_mongo`): retryable reads and writes, overload retries.
#[cfg(feature = "mongodb")]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MongodbRules {
    /// The operation.
    pub operation: MongoOperation,
    /// The client's `retryWrites` (default true).
    #[serde(default = "yes", deserialize_with = "yes_if_null")]
    pub retry_writes: bool,
    /// The client's `retryReads` (default true).
    #[serde(default = "yes", deserialize_with = "yes_if_null")]
    pub retry_reads: bool,
    /// Which server answers.
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub server: ServerKind,
    /// `maxAdaptiveRetries` (default 2).
    #[serde(default = "two", deserialize_with = "two_if_null")]
    pub max_adaptive_retries: u32,
}

#[cfg(feature = "mongodb")]
fn yes() -> bool {
    true
}

#[cfg(feature = "mongodb")]
/// `null` read as [`yes`]'s value, as the key left out is.
fn yes_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    crate::serde_form::or_else(d, yes)
}

#[cfg(feature = "mongodb")]
fn two() -> u32 {
    crate::mongodb::backpressure::MAX_RETRIES
}

#[cfg(feature = "mongodb")]
/// `null` read as [`two`]'s value, as the key left out is.
fn two_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    crate::serde_form::or_else(d, two)
}

/// Which rules decide a run's retries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunRules {
    /// RFC 0049's `decide` (Couchbase operations, and any call whose failures the host names).
    Decide(Box<DecideRules>),
    /// The HTTP loop (`http_next`).
    #[cfg(feature = "http")]
    Http(HttpRules),
    /// MongoDB's retryable reads and writes (`decide_mongo`).
    #[cfg(feature = "mongodb")]
    Mongodb(MongodbRules),
    /// gRPC's retry policy (gRFC A6, `grpc_retry`).
    #[cfg(feature = "grpc")]
    Grpc(GrpcRules),
    /// The AWS SDKs' retry modes (`aws_decide`).
    #[cfg(feature = "aws")]
    Aws(AwsRules),
}

/// One run's configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// The rules that decide.
    pub rules: RunRules,
    /// No attempt starts at or after this many ms from the start (required by `decide`, which
    /// is RFC 0049's request timeout; for MongoDB, CSOT's `timeoutMS`).
    #[serde(
        default,
        with = "crate::serde_form::ms::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub timeout_ms: Option<u64>,
    /// Attempts sent in all, the first included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_attempts: Option<u32>,
    /// Each attempt ends after this many ms at the latest.
    #[serde(
        default,
        with = "crate::serde_form::ms::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub attempt_timeout_ms: Option<u64>,
}

impl RunConfig {
    /// A run of `rules` with no bound yet.
    pub fn new(rules: RunRules) -> RunConfig {
        RunConfig {
            rules,
            timeout_ms: None,
            max_attempts: None,
            attempt_timeout_ms: None,
        }
    }

    /// Checks the bounds and the rules' own settings.
    pub fn validate(&self) -> Result<(), Error> {
        let at_least_one = |field: &str, value: u64| Error::OutOfRange {
            field: field.to_owned(),
            value: value.to_string(),
            expected: "at least 1".to_owned(),
        };
        if self.max_attempts == Some(0) {
            return Err(at_least_one("max_attempts", 0));
        }
        if self.attempt_timeout_ms == Some(0) {
            return Err(at_least_one("attempt_timeout_ms", 0));
        }
        match &self.rules {
            RunRules::Decide(d) => {
                if self.timeout_ms.is_none() {
                    return Err(Error::MissingField {
                        field: "timeout_ms".to_owned(),
                    });
                }
                d.policy.validate()
            }
            #[cfg(feature = "http")]
            RunRules::Http(h) => {
                if self.timeout_ms.is_none() && self.max_attempts.is_none() {
                    return Err(Error::MissingField {
                        field: "max_attempts or timeout_ms".to_owned(),
                    });
                }
                h.backoff.validate("rules.http.backoff")
            }
            #[cfg(feature = "mongodb")]
            RunRules::Mongodb(_) => Ok(()),
            #[cfg(feature = "grpc")]
            RunRules::Grpc(g) => g.validate().map(drop),
            #[cfg(feature = "aws")]
            RunRules::Aws(a) => a.validate().map(drop),
        }
    }
}

/// The budget and breaker a run shares with others, lent for one call (under the host's lock).
#[derive(Debug, Default)]
pub struct Guards<'a> {
    /// The retry budget, if the run has one.
    pub budget: Option<&'a mut RetryBudget>,
    /// The circuit breaker, if the run has one.
    pub breaker: Option<&'a mut CircuitBreaker>,
}

impl Guards<'_> {
    /// No budget and no breaker.
    pub fn none() -> Guards<'static> {
        Guards::default()
    }
}

/// What the host reads off its clocks and random source for one event.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Clock {
    /// Its monotonic clock, in ms (fractions allowed; any origin).
    pub now_ms: f64,
    /// A random draw in [0, 1), for jitter (needed only when the rules jitter or back off).
    pub random: Option<f64>,
    /// The wall clock in ms since the Unix epoch, for a `Retry-After` date.
    pub now_unix_ms: Option<u64>,
}

impl Clock {
    /// The monotonic reading `now_ms` with no draw.
    pub fn at(now_ms: f64) -> Clock {
        Clock {
            now_ms,
            random: None,
            now_unix_ms: None,
        }
    }
}

/// Where a run is between events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunPhase {
    /// Not started.
    Ready,
    /// An attempt is out.
    Sending,
    /// Waiting before the next attempt.
    Waiting,
    /// Over.
    Done,
}

/// How a sent attempt counts for the budget and the breaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Judged {
    Success,
    Final,
    Failure(RetryCause),
    /// Counted by neither: a gRPC transparent retry (the server's application never saw it).
    #[cfg(feature = "grpc")]
    Uncounted,
    /// A gRPC final status: the server answered (the breaker's success), and A6's throttling
    /// counts it as neither a success nor a failure.
    #[cfg(feature = "grpc")]
    Answered,
}

/// A decision made for a failure, as the run reads it.
struct Verdict {
    /// Wait this long, then retry; `None`: the run ends with `end`.
    delay_ms: Option<u64>,
    end: RunEnd,
    reason: Option<RetryReason>,
    rule: &'static str,
    section: &'static str,
    retry_after_ms: Option<u64>,
    decision: Option<RunDecision>,
}

/// One retry run: its configuration and where it is. Cheap to create; not shared between calls.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// Shared, so that copying a run made ready once (a runner's template) copies no rules.
    config: Arc<RunConfig>,
    phase: RunPhase,
    start_ms: f64,
    now_ms: f64,
    sent: u32,
    retries: u32,
    previous_delay_ms: Option<u64>,
    previous_reasons: Vec<RetryReason>,
    overloaded: bool,
    requested: bool,
    /// The canary this run's attempt out is, if it is the breaker's canary.
    canary: Option<CanaryToken>,
    retry_cause: Option<RetryCause>,
    last_reason: Option<RetryReason>,
    stats: RunStats,
    /// gRPC: transparent retries sent (not counted toward `maxAttempts`).
    transparent: u32,
    /// gRPC: retries since the last pushback (the backoff's exponent).
    since_pushback: u32,
}

impl Run {
    /// A run of `config`, checked, not started.
    pub fn new(config: RunConfig) -> Result<Run, Error> {
        config.validate()?;
        Ok(Run {
            config: Arc::new(config),
            phase: RunPhase::Ready,
            start_ms: 0.0,
            now_ms: 0.0,
            sent: 0,
            retries: 0,
            previous_delay_ms: None,
            previous_reasons: Vec::new(),
            overloaded: false,
            requested: false,
            canary: None,
            retry_cause: None,
            last_reason: None,
            stats: RunStats::default(),
            transparent: 0,
            since_pushback: 0,
        })
    }

    /// This run's configuration.
    pub fn config(&self) -> &RunConfig {
        &self.config
    }

    /// Where the run is.
    pub fn phase(&self) -> RunPhase {
        self.phase
    }

    /// Attempts sent so far.
    pub fn attempts_sent(&self) -> u32 {
        self.sent
    }

    /// What the run did so far: attempts, retries, waiting, the budget's and breaker's verdicts.
    pub fn stats(&self) -> RunStats {
        RunStats {
            attempts: self.sent,
            ..self.stats
        }
    }

    /// `step`, counted in the run's statistics.
    fn noted(&mut self, mut step: RunStep) -> RunStep {
        step.signal = RunSignal::of(&step);
        self.stats.note(&step);
        step
    }

    /// Starts the run at `clock.now_ms`: send attempt 1 (or wait for the breaker, or done).
    pub fn start(&mut self, clock: Clock, guards: Guards<'_>) -> Result<RunStep, Error> {
        self.start_with_strategy(clock, guards, None)
    }

    /// [`Run::start`], asking the host `strategy` (for `decide` rules) if the breaker refuses.
    pub fn start_with_strategy(
        &mut self,
        clock: Clock,
        guards: Guards<'_>,
        strategy: Option<&dyn RetryStrategy>,
    ) -> Result<RunStep, Error> {
        self.expect(RunPhase::Ready, "start")?;
        let now = check_now(clock.now_ms)?;
        self.start_ms = now;
        self.now_ms = now;
        let step = self.send_or_hold(clock, guards, strategy)?;
        Ok(self.noted(step))
    }

    /// The wait of a `wait` step is over: send the next attempt (or wait for the breaker, or done).
    pub fn wait_ended(&mut self, clock: Clock, guards: Guards<'_>) -> Result<RunStep, Error> {
        self.wait_ended_with_strategy(clock, guards, None)
    }

    /// [`Run::wait_ended`], asking the host `strategy` (for `decide` rules) if the breaker refuses.
    pub fn wait_ended_with_strategy(
        &mut self,
        clock: Clock,
        guards: Guards<'_>,
        strategy: Option<&dyn RetryStrategy>,
    ) -> Result<RunStep, Error> {
        self.expect(RunPhase::Waiting, "wait_ended")?;
        self.tick(clock.now_ms)?;
        let step = self.send_or_hold(clock, guards, strategy)?;
        Ok(self.noted(step))
    }

    /// The attempt of a `send` step ended with `outcome`: wait, then retry; or done. A host
    /// strategy (RFC 0049 `RetryStrategy`) is asked by the `decide` rules when given.
    pub fn attempt_ended(
        &mut self,
        outcome: &Outcome,
        clock: Clock,
        guards: Guards<'_>,
        strategy: Option<&dyn RetryStrategy>,
    ) -> Result<RunStep, Error> {
        self.expect(RunPhase::Sending, "attempt_ended")?;
        self.tick(clock.now_ms)?;
        if let Some(r) = clock.random {
            check_draw("random", r)?;
        }
        let Guards { budget, breaker } = guards;
        let t = self.clock_ms();
        let (judged, verdict) = self.judge(outcome, clock, strategy)?;
        let canary = std::mem::take(&mut self.canary);
        let mut breaker_changes = Vec::new();
        let breaker_outcome = match judged {
            Judged::Success | Judged::Final => Some(BreakerOutcome::Success),
            #[cfg(feature = "grpc")]
            Judged::Answered => Some(BreakerOutcome::Success),
            Judged::Failure(RetryCause::Timeout) => Some(BreakerOutcome::Timeout),
            Judged::Failure(RetryCause::Error | RetryCause::Throttling) => Some(BreakerOutcome::Failure),
            #[cfg(feature = "grpc")]
            Judged::Uncounted => None,
        };
        match (breaker, breaker_outcome) {
            (Some(b), Some(o)) => {
                b.record(t, o);
                breaker_changes = b.last_changes();
            }
            // An attempt counted by neither (a gRPC transparent retry) frees the canary it held.
            (Some(b), None) => {
                b.release_canary(t, canary);
                breaker_changes = b.last_changes();
            }
            (None, _) => {}
        }
        let mut budget = budget;
        let budget_event = match judged {
            Judged::Success => Some(BudgetEvent::Success {
                after_retry: self.retry_cause,
            }),
            Judged::Final => Some(BudgetEvent::Final),
            Judged::Failure(RetryCause::Timeout) => Some(BudgetEvent::Timeout),
            Judged::Failure(RetryCause::Error | RetryCause::Throttling) => Some(BudgetEvent::Failure),
            #[cfg(feature = "grpc")]
            Judged::Uncounted | Judged::Answered => None,
        };
        if let (Some(b), Some(e)) = (budget.as_deref_mut(), budget_event) {
            b.record(t, e);
        }
        let mut verdict = verdict;
        self.last_reason = verdict.reason.or(self.last_reason);
        let mut budget_verdict = None;
        if let Some(delay) = verdict.delay_ms {
            // The cap counts every attempt sent (a gRPC transparent resend too); the budget is
            // asked only after a sent failure.
            if self.config.max_attempts.is_some_and(|m| self.sent >= m) {
                verdict = self.stopped(verdict, outcome, clock, None)?;
            } else if let (Some(b), Judged::Failure(cause)) = (budget, judged) {
                let v = b.try_retry(t, cause);
                budget_verdict = Some(v);
                if v.permitted {
                    self.retry_cause = Some(cause);
                } else {
                    verdict = self.stopped(verdict, outcome, clock, Some(&v))?;
                }
            }
            if verdict.delay_ms.is_some() && matches!(judged, Judged::Failure(_)) {
                self.retries = self.retries.saturating_add(1);
                if let Some(r) = verdict.reason {
                    self.previous_reasons.push(r);
                }
                self.previous_delay_ms = Some(delay);
            }
        }
        let mut step = self.finish_verdict(verdict);
        step.budget = budget_verdict;
        step.breaker_changes = breaker_changes;
        Ok(self.noted(step))
    }

    /// The host cancelled the run (its caller aborted, or gave up waiting): done, cancelled. An
    /// attempt out as the breaker's canary is released.
    pub fn cancel(&mut self, clock: Clock, guards: Guards<'_>) -> Result<RunStep, Error> {
        if self.phase == RunPhase::Done {
            return Err(self.misplaced("cancel"));
        }
        if self.phase != RunPhase::Ready {
            self.tick(clock.now_ms)?;
        } else {
            let now = check_now(clock.now_ms)?;
            self.start_ms = now;
            self.now_ms = now;
        }
        let mut breaker_changes = Vec::new();
        if self.phase == RunPhase::Sending {
            if let Some(b) = guards.breaker {
                b.release_canary(self.clock_ms(), self.canary);
                breaker_changes = b.last_changes();
            }
        }
        self.canary = None;
        self.phase = RunPhase::Done;
        let step = self.step(RunAction::Done, "cancelled", RUN_SECTION, |s| {
            s.end = Some(RunEnd::Cancelled);
            s.breaker_changes = breaker_changes;
        });
        Ok(self.noted(step))
    }

    fn expect(&self, phase: RunPhase, event: &str) -> Result<(), Error> {
        if self.phase == phase {
            Ok(())
        } else {
            Err(self.misplaced(event))
        }
    }

    fn misplaced(&self, event: &str) -> Error {
        let expected = match self.phase {
            RunPhase::Ready => "start (or cancel): the run has not started",
            RunPhase::Sending => "attempt_ended (or cancel): an attempt is out",
            RunPhase::Waiting => "wait_ended (or cancel): the run is waiting",
            RunPhase::Done => "no further event: the run is over",
        };
        Error::OutOfRange {
            field: "event".to_owned(),
            value: event.to_owned(),
            expected: expected.to_owned(),
        }
    }

    /// Reads the clock; a clock that went back is read as no time passing.
    fn tick(&mut self, now_ms: f64) -> Result<(), Error> {
        let now = check_now(now_ms)?;
        self.now_ms = self.now_ms.max(now);
        Ok(())
    }

    /// Elapsed time, rounded up to whole ms.
    fn elapsed_ms(&self) -> u64 {
        (self.now_ms - self.start_ms).max(0.0).ceil() as u64
    }

    /// The clock in whole ms (floor), for the budget and the breaker.
    fn clock_ms(&self) -> u64 {
        self.now_ms.floor() as u64
    }

    fn left_ms(&self) -> Option<u64> {
        self.config
            .timeout_ms
            .map(|t| t.saturating_sub(self.elapsed_ms()))
    }

    /// A step of `action` with the run's counts filled in.
    fn step(
        &self,
        action: RunAction,
        rule: &'static str,
        section: &'static str,
        fill: impl FnOnce(&mut RunStep),
    ) -> RunStep {
        let mut s = RunStep {
            action,
            attempt: self.sent,
            timeout_ms: None,
            delay_ms: None,
            end: None,
            reason: None,
            rule,
            section,
            elapsed_ms: self.elapsed_ms(),
            retry_after_ms: None,
            decision: None,
            budget: None,
            breaker: None,
            breaker_changes: Vec::new(),
            signal: RunSignal::None,
        };
        fill(&mut s);
        s
    }

    /// Sends the next attempt if the deadline and the breaker allow; else waits or ends.
    fn send_or_hold(
        &mut self,
        clock: Clock,
        guards: Guards<'_>,
        strategy: Option<&dyn RetryStrategy>,
    ) -> Result<RunStep, Error> {
        let first = self.sent == 0;
        if self.left_ms() == Some(0) {
            self.phase = RunPhase::Done;
            let reason = self.last_reason;
            return Ok(self.step(RunAction::Done, "deadline_passed", RUN_SECTION, |s| {
                s.end = Some(RunEnd::TimedOut);
                s.reason = reason;
            }));
        }
        let t = self.clock_ms();
        let Guards { budget, breaker } = guards;
        let mut breaker_verdict = None;
        let mut breaker_changes = Vec::new();
        if let Some(b) = breaker {
            let v = b.permit(t);
            breaker_changes = b.last_changes();
            if !v.permitted {
                let wait = b.retry_in_ms(t).max(1);
                let mut step = self.breaker_refused(wait, clock, strategy)?;
                step.breaker = Some(v);
                step.breaker_changes = breaker_changes;
                return Ok(step);
            }
            self.canary = v.canary_token;
            breaker_verdict = Some(v);
        }
        if !self.requested {
            if let Some(b) = budget {
                b.record(t, BudgetEvent::Request);
            }
            self.requested = true;
        }
        self.sent = self.sent.saturating_add(1);
        self.phase = RunPhase::Sending;
        let timeout = match (self.config.attempt_timeout_ms, self.left_ms()) {
            (Some(a), Some(l)) => Some(a.min(l)),
            (a, l) => a.or(l),
        };
        let (rule, section) = if first {
            ("first_attempt", RUN_SECTION)
        } else {
            ("wait_over", RUN_SECTION)
        };
        Ok(self.step(RunAction::Send, rule, section, |s| {
            s.timeout_ms = timeout;
            s.breaker = breaker_verdict;
            s.breaker_changes = breaker_changes;
        }))
    }

    /// The breaker kept the attempt back: wait `wait_ms` for its window, unless that reaches the
    /// deadline (timed out) or the `decide` rules fail fast (gave up).
    #[cfg_attr(
        not(any(feature = "http", feature = "mongodb")),
        allow(irrefutable_let_patterns)
    )]
    fn breaker_refused(
        &mut self,
        wait_ms: u64,
        clock: Clock,
        strategy: Option<&dyn RetryStrategy>,
    ) -> Result<RunStep, Error> {
        let reason = RetryReason::CircuitBreakerOpen;
        self.last_reason = Some(reason);
        let mut decision = None;
        if let RunRules::Decide(rules) = &self.config.rules {
            // Only whether the strategy retries matters here; the wait is the breaker's.
            let mut request = self.request(rules);
            request.random = clock.random.or(Some(0.0));
            let d = decide_with(&request, reason, &rules.policy, strategy)?;
            if !d.is_retry() {
                self.phase = RunPhase::Done;
                let end = match d {
                    Decision::NoRetry(n) if n.cause == NoRetryCause::DeadlinePassed => RunEnd::TimedOut,
                    _ => RunEnd::GaveUp,
                };
                return Ok(self.step(RunAction::Done, d.rule().name(), d.section(), |s| {
                    s.end = Some(end);
                    s.reason = Some(reason);
                    s.decision = Some(RunDecision::Decide(BudgetedDecision::Decided(d)));
                }));
            }
            decision = Some(RunDecision::Decide(BudgetedDecision::Decided(d)));
            self.retries = self.retries.saturating_add(1);
            self.previous_reasons.push(reason);
        }
        if self.left_ms().is_some_and(|l| wait_ms >= l) {
            self.phase = RunPhase::Done;
            return Ok(
                self.step(RunAction::Done, "breaker_open_at_deadline", BREAKER_SOURCE, |s| {
                    s.end = Some(RunEnd::TimedOut);
                    s.reason = Some(reason);
                    s.decision = decision;
                }),
            );
        }
        self.phase = RunPhase::Waiting;
        Ok(self.step(RunAction::Wait, "breaker_wait", BREAKER_SOURCE, |s| {
            s.attempt += 1;
            s.delay_ms = Some(wait_ms);
            s.reason = Some(reason);
            s.decision = decision;
        }))
    }

    /// The step for a verdict on a failure (or the end of a success or final failure).
    fn finish_verdict(&mut self, v: Verdict) -> RunStep {
        let action = if v.delay_ms.is_some() {
            self.phase = RunPhase::Waiting;
            RunAction::Wait
        } else {
            self.phase = RunPhase::Done;
            RunAction::Done
        };
        self.step(action, v.rule, v.section, |s| {
            if let Some(d) = v.delay_ms {
                s.attempt += 1;
                s.delay_ms = Some(d);
            } else {
                s.end = Some(v.end);
            }
            s.reason = v.reason;
            s.retry_after_ms = v.retry_after_ms;
            s.decision = v.decision;
        })
    }

    /// RFC 0049's request for this run's next decision.
    fn request(&self, rules: &DecideRules) -> Request {
        Request {
            operation: rules.operation,
            idempotent: rules.idempotent,
            attempts: self.retries,
            elapsed_ms: self.elapsed_ms(),
            timeout_ms: self.config.timeout_ms.unwrap_or(u64::MAX),
            previous_reasons: self.previous_reasons.clone(),
            strategy: rules.strategy,
            random: None,
            previous_delay_ms: self.previous_delay_ms,
        }
    }

    /// How the outcome counts and what the rules decide for it.
    fn judge(
        &mut self,
        outcome: &Outcome,
        clock: Clock,
        strategy: Option<&dyn RetryStrategy>,
    ) -> Result<(Judged, Verdict), Error> {
        let ended = |end: RunEnd, rule: &'static str, section: &'static str| Verdict {
            delay_ms: None,
            end,
            reason: None,
            rule,
            section,
            retry_after_ms: None,
            decision: None,
        };
        match outcome {
            Outcome::Success => {
                return Ok((
                    Judged::Success,
                    ended(RunEnd::Succeeded, "attempt_succeeded", RUN_SECTION),
                ))
            }
            Outcome::Final => return Ok((Judged::Final, ended(RunEnd::Final, "final_failure", RUN_SECTION))),
            _ => {}
        }
        let config = Arc::clone(&self.config);
        match &config.rules {
            RunRules::Decide(rules) => self.judge_decide(rules, outcome, clock, strategy),
            #[cfg(feature = "http")]
            RunRules::Http(rules) => self.judge_http(rules, outcome, clock, None),
            #[cfg(feature = "mongodb")]
            RunRules::Mongodb(rules) => self.judge_mongodb(rules, outcome, clock),
            #[cfg(feature = "grpc")]
            RunRules::Grpc(rules) => self.judge_grpc(rules, outcome, clock),
            #[cfg(feature = "aws")]
            RunRules::Aws(rules) => self.judge_aws(rules, outcome, clock, None),
        }
    }

    fn judge_decide(
        &mut self,
        rules: &DecideRules,
        outcome: &Outcome,
        clock: Clock,
        strategy: Option<&dyn RetryStrategy>,
    ) -> Result<(Judged, Verdict), Error> {
        let mut retry_after = RetryAfterHeader::None;
        let (reason, cause, rule, section) = match outcome {
            Outcome::Reason { reason, timeout } => (
                Some(*reason),
                if *timeout {
                    RetryCause::Timeout
                } else {
                    RetryCause::Error
                },
                "host_classified",
                RUN_SECTION,
            ),
            Outcome::Network { sent } => {
                let failure = if *sent == Some(false) {
                    DispatchFailure::SocketNotAvailable
                } else {
                    DispatchFailure::SocketClosedWhileInFlight
                };
                let c = classify_dispatch(failure);
                (c.reason, RetryCause::Error, c.rule, c.section)
            }
            Outcome::Timeout => {
                let c = classify_dispatch(DispatchFailure::SocketClosedWhileInFlight);
                (c.reason, RetryCause::Timeout, c.rule, c.section)
            }
            #[cfg(feature = "couchbase")]
            Outcome::Kv { status } => {
                let Operation::Kv(op) = rules.operation else {
                    return Err(not_for("outcome.kind", "kv", "a KV operation's run"));
                };
                let c = classify_kv(op, *status, None, &rules.policy.compat);
                (c.reason, RetryCause::Error, c.rule, c.section)
            }
            Outcome::Http {
                status,
                retry_after: header,
            } => {
                let attempt = HttpAttempt::Response {
                    status: *status,
                    retry_after: header.clone(),
                };
                let view = AttemptView::of(&attempt, clock.now_unix_ms).map_err(outcome_error)?;
                retry_after = view.retry_after;
                (
                    view.class.retry_reason,
                    RetryCause::Error,
                    view.class.rule,
                    view.class.section,
                )
            }
            #[cfg(feature = "mongodb")]
            Outcome::Mongodb { .. } => return Err(not_for("outcome.kind", "mongodb", "a mongodb run")),
            #[cfg(feature = "grpc")]
            Outcome::Grpc { .. } => return Err(not_for("outcome.kind", "grpc", "a grpc run")),
            #[cfg(feature = "aws")]
            Outcome::Aws { .. } => return Err(not_for("outcome.kind", "aws", "an aws run")),
            Outcome::Success | Outcome::Final => unreachable!("judged before the rules"),
        };
        let Some(reason) = reason else {
            let v = Verdict {
                delay_ms: None,
                end: RunEnd::Final,
                reason: None,
                rule,
                section,
                retry_after_ms: None,
                decision: None,
            };
            return Ok((Judged::Final, v));
        };
        let mut request = self.request(rules);
        request.random = clock.random;
        let mut d = decide_with(&request, reason, &rules.policy, strategy)?;
        let mut v = Verdict {
            delay_ms: None,
            end: RunEnd::GaveUp,
            reason: Some(reason),
            rule: d.rule().name(),
            section: d.section(),
            retry_after_ms: None,
            decision: None,
        };
        match &mut d {
            Decision::Retry(r) if r.then_cancel => v.end = RunEnd::TimedOut,
            Decision::Retry(r) => match retry_after {
                RetryAfterHeader::Valid(ms) if self.left_ms().is_some_and(|l| ms >= l) => {
                    v.end = RunEnd::TimedOut;
                    v.rule = DEADLINE_BEFORE_RETRY;
                    v.section = RETRY_AFTER_SECTION;
                    v.retry_after_ms = Some(ms);
                }
                RetryAfterHeader::Valid(ms) => {
                    r.delay_ms = ms;
                    v.delay_ms = Some(ms);
                    v.rule = "retry_after";
                    v.section = RETRY_AFTER_SECTION;
                    v.retry_after_ms = Some(ms);
                }
                _ => v.delay_ms = Some(r.delay_ms),
            },
            Decision::NoRetry(n) if n.cause == NoRetryCause::DeadlinePassed => v.end = RunEnd::TimedOut,
            Decision::NoRetry(_) => {}
        }
        v.decision = Some(RunDecision::Decide(BudgetedDecision::Decided(d)));
        Ok((Judged::Failure(cause), v))
    }

    #[cfg(feature = "http")]
    fn judge_http(
        &mut self,
        rules: &HttpRules,
        outcome: &Outcome,
        clock: Clock,
        verdict: Option<&crate::budget::BudgetVerdict>,
    ) -> Result<(Judged, Verdict), Error> {
        let (attempt, timeout) = match outcome {
            Outcome::Http { status, retry_after } => (
                HttpAttempt::Response {
                    status: *status,
                    retry_after: retry_after.clone(),
                },
                false,
            ),
            Outcome::Network { sent } => (HttpAttempt::NetworkError { sent: *sent }, false),
            Outcome::Timeout => (HttpAttempt::NetworkError { sent: None }, true),
            other => return Err(not_for("outcome.kind", other.kind_name(), "an http run")),
        };
        let retry_loop = RetryLoop {
            max_attempts: self.config.max_attempts,
            deadline_ms: self.config.timeout_ms,
            backoff: rules.backoff,
            jitter: rules.jitter,
            method: rules.method.clone(),
            idempotent: rules.idempotent,
        };
        let state = LoopState {
            attempts: self.sent.max(1),
            elapsed_ms: self.elapsed_ms(),
            previous_delay_ms: self.previous_delay_ms,
        };
        let d = next_with_budget(
            &retry_loop,
            &state,
            &attempt,
            clock.now_unix_ms,
            clock.random,
            verdict,
        )
        .map_err(outcome_error)?;
        let judged = match (d.class, &attempt) {
            (HttpClass::Success, _) => Judged::Success,
            (HttpClass::Transient, _) if timeout => Judged::Failure(RetryCause::Timeout),
            (HttpClass::Transient, HttpAttempt::Response { status, .. }) => {
                Judged::Failure(http_cause(*status))
            }
            (HttpClass::Transient, _) => Judged::Failure(RetryCause::Error),
            (HttpClass::Redirect | HttpClass::Rejection, _) => Judged::Final,
        };
        let reason = match attempt {
            HttpAttempt::NetworkError { .. } => crate::http::classify_network_error().retry_reason,
            HttpAttempt::Response { .. } if judged == Judged::Success => None,
            HttpAttempt::Response { .. } => {
                (judged != Judged::Final).then_some(RetryReason::ServiceResponseCodeIndicated)
            }
        };
        let end = match (d.action, d.outcome, d.class) {
            (_, _, HttpClass::Success) => RunEnd::Succeeded,
            (_, Some(StepOutcome::Final), _) => RunEnd::Final,
            _ if d.rule == DEADLINE_BEFORE_RETRY || d.rule == "deadline_reached" => RunEnd::TimedOut,
            _ => RunEnd::GaveUp,
        };
        let v = Verdict {
            delay_ms: (d.action == LoopAction::Retry).then(|| d.delay_ms.unwrap_or(0)),
            end,
            reason,
            rule: d.rule,
            section: d.section,
            retry_after_ms: d.retry_after_ms,
            decision: Some(RunDecision::Http(d)),
        };
        // The loop counts attempts itself: a cap it reached is already its stop.
        Ok((judged, v))
    }

    #[cfg(feature = "mongodb")]
    fn mongo_request(&self, rules: &MongodbRules, random: Option<f64>) -> MongoRequest {
        MongoRequest {
            operation: rules.operation,
            retry_writes: rules.retry_writes,
            retry_reads: rules.retry_reads,
            server: rules.server,
            max_adaptive_retries: rules.max_adaptive_retries,
            attempts: self.retries,
            overloaded: self.overloaded,
            elapsed_ms: self.elapsed_ms(),
            timeout_ms: self.config.timeout_ms,
            random,
        }
    }

    #[cfg(feature = "mongodb")]
    fn judge_mongodb(
        &mut self,
        rules: &MongodbRules,
        outcome: &Outcome,
        clock: Clock,
    ) -> Result<(Judged, Verdict), Error> {
        let (error, timeout) = match outcome {
            Outcome::Mongodb { error } => (error.clone(), false),
            Outcome::Network { .. } => (MongoError::network(), false),
            Outcome::Timeout => (MongoError::network(), true),
            other => return Err(not_for("outcome.kind", other.kind_name(), "a mongodb run")),
        };
        let d = decide_mongo(&self.mongo_request(rules, clock.random), &error)?;
        // A failure is an error the rules retry at all (a first failure, no deadline).
        let fresh = MongoRequest {
            attempts: 0,
            overloaded: false,
            timeout_ms: None,
            random: Some(0.0),
            ..self.mongo_request(rules, None)
        };
        let retryable = decide_mongo(&fresh, &error)?.is_retry();
        self.overloaded = d.overloaded;
        let judged = match (retryable, timeout) {
            (false, _) => Judged::Final,
            (true, true) => Judged::Failure(RetryCause::Timeout),
            (true, false) => Judged::Failure(RetryCause::Error),
        };
        let end = match d.rule {
            _ if judged == Judged::Final => RunEnd::Final,
            "timeout_expired" | "backoff_past_deadline" => RunEnd::TimedOut,
            _ => RunEnd::GaveUp,
        };
        let v = Verdict {
            delay_ms: d.is_retry().then(|| d.delay_ms.unwrap_or(0)),
            end,
            reason: None,
            rule: d.rule,
            section: d.section,
            retry_after_ms: None,
            decision: Some(RunDecision::Mongodb(d)),
        };
        Ok((judged, v))
    }

    /// The verdict once the run stopped the retry `v` wanted: `budget` refused it, or (none) the
    /// run's `max_attempts` was reached. The HTTP loop and the AWS modes take a budget's verdict
    /// themselves (the AWS 2026 behaviour's wait before a refused long-polling call returns); any
    /// other decision says "no retry" through [`RunDecision::stopped`], so a done step never
    /// carries a decision to retry.
    #[cfg_attr(not(any(feature = "http", feature = "aws")), allow(unused_variables))]
    fn stopped(
        &mut self,
        v: Verdict,
        outcome: &Outcome,
        clock: Clock,
        budget: Option<&crate::budget::BudgetVerdict>,
    ) -> Result<Verdict, Error> {
        let config = Arc::clone(&self.config);
        let rejudged = match (&config.rules, budget) {
            #[cfg(feature = "http")]
            (RunRules::Http(rules), Some(b)) => Some(self.judge_http(rules, outcome, clock, Some(b))?.1),
            #[cfg(feature = "aws")]
            (RunRules::Aws(rules), Some(b)) => Some(self.judge_aws(rules, outcome, clock, Some(b))?.1),
            _ => None,
        };
        let stopped = rejudged.unwrap_or_else(|| {
            let (rule, section) = budget.map_or(("max_attempts_reached", RUN_SECTION), |b| {
                (b.rule.name(), b.source)
            });
            Verdict {
                rule,
                section,
                decision: v.decision.map(|d| d.stopped(rule, section, budget, self.retries)),
                ..v
            }
        });
        Ok(Verdict {
            delay_ms: None,
            end: RunEnd::GaveUp,
            ..stopped
        })
    }
}

fn check_now(now_ms: f64) -> Result<f64, Error> {
    // 2^53 ms is about 285,000 years: any real clock reads less.
    if now_ms.is_finite() && (0.0..=9_007_199_254_740_991.0).contains(&now_ms) {
        Ok(now_ms)
    } else {
        Err(Error::OutOfRange {
            field: "now_ms".to_owned(),
            value: crate::units::number_text(now_ms),
            expected: "a clock reading in ms, finite, in [0, 2^53 - 1]".to_owned(),
        })
    }
}

/// The budget's cause for a transient HTTP status: 429 Too Many Requests is the server throttling
/// (the AWS SDKs count it so: aws-sdk-ruby's `throttling_error?`), anything else an error.
#[cfg(feature = "http")]
fn http_cause(status: u16) -> RetryCause {
    if status == 429 {
        RetryCause::Throttling
    } else {
        RetryCause::Error
    }
}

/// An HTTP outcome's error, naming the outcome's field.
fn outcome_error(e: Error) -> Error {
    match e.code() {
        "out_of_range" if e.field() == "http_status" => e.with_field("outcome.status"),
        "missing_field" => e,
        _ if e.field() == "value" || e.field() == "retry_after" => e.with_field("outcome.retry_after"),
        _ => e,
    }
}

#[cfg(any(
    feature = "couchbase",
    feature = "http",
    feature = "mongodb",
    feature = "grpc",
    feature = "aws"
))]
fn not_for(field: &str, value: &str, expected: &str) -> Error {
    Error::OutOfRange {
        field: field.to_owned(),
        value: value.to_owned(),
        expected: format!("an outcome for {expected}"),
    }
}
