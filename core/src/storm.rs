//! A retry storm, replayed: many requests under a failure rate, each a run of the run machine,
//! with an optional shared retry budget and circuit breaker; the report says how many attempts
//! reached the server per request issued (the amplification a budget exists to bound).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use serde::{Deserialize, Serialize};

use crate::breaker::{BreakerConfig, BreakerDocument, CircuitBreaker};
use crate::budget::{BudgetConfig, BudgetDocument, RetryBudget};
use crate::decide::Request;
use crate::error::Error;
use crate::policy::Policy;
use crate::reason::RetryReason;
use crate::run::{Clock, DecideRules, Guards, Outcome, Run, RunAction, RunConfig, RunEnd, RunRules};

/// The most requests one storm may issue (`requests_per_second` × the duration in seconds):
/// requests are scheduled lazily, so memory follows the runs in flight, not this number.
pub const MAX_STORM_REQUESTS: u64 = 1_000_000;

/// The most attempts (sent or kept back by the breaker) one storm may replay, so a caller (a web
/// page) gets a typed error in a second rather than a replay that runs for minutes.
pub const MAX_STORM_ATTEMPTS: u64 = 2_000_000;

/// A storm to replay: requests arrive evenly for `duration_ms`, and a share of attempts fails.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StormScenario {
    /// The request every client sends: its operation, `idempotent`, `strategy` and `timeout_ms`
    /// (every request starts fresh: its `attempts`, `elapsed_ms` and `previous_*` are not read).
    pub request: Request,
    /// The reason a failed attempt reports.
    pub reason: RetryReason,
    /// New requests per second, evenly spaced (1 to 10,000).
    pub requests_per_second: u32,
    /// How long new requests keep arriving (at most 600,000 ms).
    #[serde(with = "crate::serde_form::ms")]
    pub duration_ms: u64,
    /// The share of sent attempts that fail, in [0, 1], spread evenly (1: every attempt fails).
    #[serde(default = "every_attempt", deserialize_with = "every_attempt_if_null")]
    pub failure_rate: f64,
    /// Time each sent attempt takes before its outcome is known.
    #[serde(with = "crate::serde_form::ms")]
    pub latency_ms: u64,
    /// The policy every client uses; the RFC default when absent.
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub policy: Policy,
    /// Random draws used in turn by jittered delays (cycled; may be empty without jitter).
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub draws: Vec<f64>,
    /// A retry budget all clients share; none when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<BudgetDocument>,
    /// A circuit breaker all clients share; none when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub breaker: Option<BreakerDocument>,
}

fn every_attempt() -> f64 {
    1.0
}

/// `null` read as [`every_attempt`]'s value, as the key left out is.
fn every_attempt_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    crate::serde_form::or_else(d, every_attempt)
}

/// What the storm did, in totals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StormReport {
    /// Requests issued.
    pub requests: u64,
    /// Attempts that reached the server (first sends and retries; not the breaker's rejections).
    pub attempts_sent: u64,
    /// `attempts_sent / requests`: 1.0 means no retry reached the server.
    pub amplification: f64,
    /// Retries the budget refused (each ends its request).
    pub budget_refusals: u64,
    /// Attempts the breaker kept from the server while open.
    pub breaker_rejections: u64,
    /// Requests that ended with a success.
    pub succeeded: u64,
    /// Requests that ended with a decision not to retry (a budget refusal included).
    pub failed: u64,
    /// Requests that reached their timeout.
    pub timed_out: u64,
    /// The budget's kind, when there is one.
    pub budget_kind: Option<&'static str>,
}

/// What happens next to a client: its run starts, its attempt's outcome is known, or its wait ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    Start,
    AttemptEnded,
    WaitEnded,
}

/// Replays `storm`: every request is one [`Run`] of the run machine (the same protocol every
/// runner follows), sharing the storm's budget and breaker, in time order. Requests are scheduled
/// lazily: only runs in flight are held, so memory follows concurrency, not the storm's length.
pub fn simulate_storm(storm: &StormScenario) -> Result<StormReport, Error> {
    check(storm)?;
    let mut budget = match &storm.budget {
        Some(doc) => Some(RetryBudget::new(&BudgetConfig::from_document(doc, "budget")?)),
        None => None,
    };
    let mut breaker = match &storm.breaker {
        Some(doc) => Some(CircuitBreaker::new(&BreakerConfig::from_document(
            doc, "breaker",
        )?)),
        None => None,
    };
    let config = RunConfig {
        rules: RunRules::Decide(Box::new(DecideRules {
            operation: storm.request.operation,
            idempotent: storm.request.idempotent,
            strategy: storm.request.strategy,
            policy: storm.policy,
        })),
        timeout_ms: Some(storm.request.timeout_ms),
        max_attempts: None,
        attempt_timeout_ms: None,
    };
    let requests = u64::from(storm.requests_per_second) * storm.duration_ms / 1000;
    let arrival = |i: u64| i * 1000 / u64::from(storm.requests_per_second);
    let mut report = StormReport {
        requests,
        attempts_sent: 0,
        amplification: 0.0,
        budget_refusals: 0,
        breaker_rejections: 0,
        succeeded: 0,
        failed: 0,
        timed_out: 0,
        budget_kind: budget.as_ref().map(|b| b.config().kind().name()),
    };
    let failure = Outcome::Reason {
        reason: storm.reason,
        timeout: false,
    };
    let jitter = storm.policy.jitter != crate::Jitter::None;
    let (mut failures_due, mut draws) = (0.0, storm.draws.iter().cycle());
    // Runs in flight, in slots reused once a run is done.
    let mut runs: Vec<Option<Run>> = Vec::new();
    let mut free: Vec<usize> = Vec::new();
    let mut queue: BinaryHeap<Reverse<(u64, Event, usize)>> = BinaryHeap::new();
    let (mut next_arrival, mut attempts) = (0u64, 0u64);
    loop {
        // The next arrival joins the queue only when it is the earliest thing left to happen.
        let arrival_due = next_arrival < requests
            && queue
                .peek()
                .is_none_or(|Reverse((t, _, _))| arrival(next_arrival) <= *t);
        let (now, event, id) = if arrival_due {
            let run = Run::new(config.clone())?;
            let id = match free.pop() {
                Some(id) => {
                    runs[id] = Some(run);
                    id
                }
                None => {
                    runs.push(Some(run));
                    runs.len() - 1
                }
            };
            next_arrival += 1;
            (arrival(next_arrival - 1), Event::Start, id)
        } else {
            match queue.pop() {
                Some(Reverse(e)) => e,
                None => break,
            }
        };
        let run = runs[id]
            .as_mut()
            .unwrap_or_else(|| unreachable!("a queued run is live"));
        let guards = Guards {
            budget: budget.as_mut(),
            breaker: breaker.as_mut(),
        };
        let clock = Clock {
            now_ms: now as f64,
            // One draw per attempt's outcome, as the runners draw one per failure.
            random: if jitter && event == Event::AttemptEnded {
                draws.next().copied()
            } else {
                None
            },
            now_unix_ms: None,
        };
        let step = match event {
            Event::Start => run.start(clock, guards)?,
            Event::WaitEnded => run.wait_ended(clock, guards)?,
            Event::AttemptEnded => {
                failures_due += storm.failure_rate;
                let fails = failures_due >= 1.0;
                if fails {
                    failures_due -= 1.0;
                }
                let outcome = if fails { &failure } else { &Outcome::Success };
                run.attempt_ended(outcome, clock, guards, None)?
            }
        };
        if step.breaker.is_some_and(|v| !v.permitted) {
            report.breaker_rejections += 1;
            attempts += 1;
        }
        if step.budget.is_some_and(|v| !v.permitted) {
            report.budget_refusals += 1;
        }
        match step.action {
            RunAction::Send => {
                attempts += 1;
                report.attempts_sent += 1;
                queue.push(Reverse((
                    now.saturating_add(storm.latency_ms),
                    Event::AttemptEnded,
                    id,
                )));
            }
            RunAction::Wait => {
                let delay = step.delay_ms.unwrap_or(0);
                queue.push(Reverse((now.saturating_add(delay), Event::WaitEnded, id)));
            }
            RunAction::Done => {
                match step.end {
                    Some(RunEnd::Succeeded) => report.succeeded += 1,
                    Some(RunEnd::TimedOut) => report.timed_out += 1,
                    _ => report.failed += 1,
                }
                runs[id] = None;
                free.push(id);
            }
        }
        if attempts > MAX_STORM_ATTEMPTS {
            return Err(Error::OutOfRange {
                field: "duration_ms".to_owned(),
                value: storm.duration_ms.to_string(),
                expected: "a storm of at most 2000000 attempts in all (fewer requests, or a shorter request timeout)"
                    .to_owned(),
            });
        }
    }
    report.amplification = if requests == 0 {
        0.0
    } else {
        report.attempts_sent as f64 / requests as f64
    };
    Ok(report)
}

fn check(storm: &StormScenario) -> Result<(), Error> {
    storm.policy.validate()?;
    for (i, d) in storm.draws.iter().enumerate() {
        crate::backoff::check_draw(&format!("draws[{i}]"), *d)?;
    }
    let out_of_range = |field: &str, value: String, expected: &str| Error::OutOfRange {
        field: field.to_owned(),
        value,
        expected: expected.to_owned(),
    };
    if !(1..=10_000).contains(&storm.requests_per_second) {
        return Err(out_of_range(
            "requests_per_second",
            storm.requests_per_second.to_string(),
            "1..=10000",
        ));
    }
    if storm.duration_ms > 600_000 {
        return Err(out_of_range(
            "duration_ms",
            storm.duration_ms.to_string(),
            "at most 600000 ms",
        ));
    }
    if u64::from(storm.requests_per_second) * storm.duration_ms / 1000 > MAX_STORM_REQUESTS {
        return Err(out_of_range(
            "duration_ms",
            storm.duration_ms.to_string(),
            "at most 1000000 requests in all (requests_per_second x seconds)",
        ));
    }
    if !(0.0..=1.0).contains(&storm.failure_rate) {
        return Err(out_of_range(
            "failure_rate",
            crate::units::number_text(storm.failure_rate),
            "a share in [0, 1]",
        ));
    }
    if storm.policy.jitter != crate::Jitter::None && storm.draws.is_empty() {
        return Err(Error::MissingField {
            field: "draws".to_owned(),
        });
    }
    Ok(())
}
