//! A retry storm, replayed: many requests under a failure rate, each retried through `decide`,
//! with an optional shared retry budget and circuit breaker; the report says how many attempts
//! reached the server per request issued (the amplification a budget exists to bound).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use serde::{Deserialize, Serialize};

use crate::breaker::{BreakerConfig, BreakerDocument, BreakerOutcome, CircuitBreaker};
use crate::budget::{BudgetConfig, BudgetDocument, BudgetEvent, RetryBudget, RetryCause};
use crate::decide::{decide, Decision, NoRetryCause, Request};
use crate::error::Error;
use crate::policy::Policy;
use crate::reason::RetryReason;

/// The most requests one storm may issue (`requests_per_second` × the duration in seconds).
pub const MAX_STORM_REQUESTS: u64 = 100_000;

/// The most attempts (sent or kept back by the breaker) one storm may replay, so a caller (a web
/// page) gets a typed error in a second rather than a replay that runs for minutes.
pub const MAX_STORM_ATTEMPTS: u64 = 1_000_000;

/// A storm to replay: requests arrive evenly for `duration_ms`, and a share of attempts fails.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StormScenario {
    /// The request every client sends (its `attempts` and `elapsed_ms` should be 0).
    pub request: Request,
    /// The reason a failed attempt reports.
    pub reason: RetryReason,
    /// New requests per second, evenly spaced (1 to 10,000).
    pub requests_per_second: u32,
    /// How long new requests keep arriving (at most 600,000 ms).
    #[serde(with = "crate::serde_form::ms")]
    pub duration_ms: u64,
    /// The share of sent attempts that fail, in [0, 1], spread evenly (1: every attempt fails).
    #[serde(default = "every_attempt")]
    pub failure_rate: f64,
    /// Time each sent attempt takes before its outcome is known.
    #[serde(with = "crate::serde_form::ms")]
    pub latency_ms: u64,
    /// The policy every client uses; the RFC default when absent.
    #[serde(default)]
    pub policy: Policy,
    /// Random draws used in turn by jittered delays (cycled; may be empty without jitter).
    #[serde(default)]
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

/// One client request in flight.
struct Client {
    start_ms: u64,
    request: Request,
}

/// What happens next to client `usize`: send an attempt, or learn a sent attempt's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    Send,
    Done,
}

/// Replays `storm`: every request through `decide`, every retry through the shared budget, every
/// attempt through the shared breaker, in time order.
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
    let requests = u64::from(storm.requests_per_second) * storm.duration_ms / 1000;
    let mut queue = BinaryHeap::new();
    let mut clients = Vec::new();
    for i in 0..requests {
        let at = i * 1000 / u64::from(storm.requests_per_second);
        queue.push(Reverse((at, Step::Send, clients.len())));
        clients.push(Client {
            start_ms: at,
            request: storm.request.clone(),
        });
    }
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
    let (mut failures_due, mut draws) = (0.0, storm.draws.iter().cycle());
    let mut attempts = 0u64;
    while let Some(Reverse((now, step, id))) = queue.pop() {
        let failed = match step {
            Step::Send => {
                attempts += 1;
                if attempts > MAX_STORM_ATTEMPTS {
                    return Err(Error::OutOfRange {
                        field: "duration_ms".to_owned(),
                        value: storm.duration_ms.to_string(),
                        expected: "a storm of at most 1000000 attempts in all (fewer requests, or a shorter request timeout)"
                            .to_owned(),
                    });
                }
                if breaker.as_mut().is_some_and(|b| !b.permit(now).permitted) {
                    report.breaker_rejections += 1;
                    Some(RetryReason::CircuitBreakerOpen)
                } else {
                    report.attempts_sent += 1;
                    if clients[id].request.attempts == 0 {
                        if let Some(b) = budget.as_mut() {
                            b.record(now, BudgetEvent::Request);
                        }
                    }
                    queue.push(Reverse((now.saturating_add(storm.latency_ms), Step::Done, id)));
                    continue;
                }
            }
            Step::Done => {
                failures_due += storm.failure_rate;
                let fails = failures_due >= 1.0;
                if fails {
                    failures_due -= 1.0;
                }
                let retried = clients[id].request.attempts > 0;
                if let Some(b) = breaker.as_mut() {
                    b.record(
                        now,
                        if fails {
                            BreakerOutcome::Failure
                        } else {
                            BreakerOutcome::Success
                        },
                    );
                }
                if let Some(b) = budget.as_mut() {
                    b.record(
                        now,
                        if fails {
                            BudgetEvent::Failure
                        } else {
                            BudgetEvent::Success {
                                after_retry: retried.then_some(RetryCause::Error),
                            }
                        },
                    );
                }
                fails.then_some(storm.reason)
            }
        };
        let Some(reason) = failed else {
            report.succeeded += 1;
            continue;
        };
        let client = &mut clients[id];
        client.request.elapsed_ms = now - client.start_ms;
        if storm.policy.jitter != crate::Jitter::None {
            client.request.random = draws.next().copied();
        }
        match decide(&client.request, reason, &storm.policy)? {
            Decision::NoRetry(n) if n.cause == NoRetryCause::DeadlinePassed => report.timed_out += 1,
            Decision::NoRetry(_) => report.failed += 1,
            Decision::Retry(r) if r.then_cancel => report.timed_out += 1,
            Decision::Retry(r) => {
                if budget
                    .as_mut()
                    .is_some_and(|b| !b.try_retry(now, RetryCause::Error).permitted)
                {
                    report.budget_refusals += 1;
                    report.failed += 1;
                    continue;
                }
                client.request.attempts += 1;
                client.request.previous_reasons.push(reason);
                client.request.previous_delay_ms = Some(r.delay_ms);
                queue.push(Reverse((now.saturating_add(r.delay_ms), Step::Send, id)));
            }
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
            "at most 100000 requests in all (requests_per_second x seconds)",
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
