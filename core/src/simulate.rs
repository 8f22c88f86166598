//! A whole retry schedule, replayed with `decide`: what a host loop would do, without the sleeping.

use serde::{Deserialize, Serialize};

use crate::decide::{decide, Decision, Request};
use crate::error::Error;
use crate::policy::Policy;
use crate::reason::RetryReason;

/// The most attempts a simulation runs before it stops and says so.
pub const MAX_SIMULATED_ATTEMPTS: u32 = 10_000;

/// A failure pattern to replay: each attempt fails with the next reason, or succeeds on `null`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// A short name, for listings (not used by the simulation).
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "crate::serde_form::or_default"
    )]
    pub name: String,
    /// What the scenario shows, for people (not used by the simulation).
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "crate::serde_form::or_default"
    )]
    pub description: String,
    /// The request as first sent (its `attempts` and `elapsed_ms` are the starting point).
    pub request: Request,
    /// Outcome of each attempt in order: a reason, or `null` for success.
    pub outcomes: Vec<Option<RetryReason>>,
    /// Whether the last outcome repeats once the list runs out (else the attempt succeeds).
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub repeat_last: bool,
    /// Time each attempt takes before its outcome is known.
    #[serde(with = "crate::serde_form::ms")]
    pub latency_ms: u64,
    /// Random draws used in turn by jittered delays (cycled; may be empty without jitter).
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub draws: Vec<f64>,
    /// The policy; the RFC default when absent.
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub policy: Policy,
}

/// One attempt of the timeline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    /// 0 for the first send, then one more per retry.
    pub attempt: u32,
    /// When the attempt was sent, from the request's start.
    #[serde(with = "crate::serde_form::ms")]
    pub sent_at_ms: u64,
    /// When its outcome was known.
    #[serde(with = "crate::serde_form::ms")]
    pub done_at_ms: u64,
    /// The failure, or `None` when the attempt succeeded.
    pub reason: Option<RetryReason>,
    /// The decision taken after the failure.
    pub decision: Option<Decision>,
}

/// How the schedule ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ending {
    /// An attempt succeeded.
    Succeeded,
    /// A decision said not to retry.
    Failed,
    /// The request was cancelled at its timeout (a `then_cancel` retry, or an attempt outlived it).
    TimedOut,
    /// [`MAX_SIMULATED_ATTEMPTS`] were made without an end.
    AttemptLimit,
}

/// The replayed schedule and its totals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Timeline {
    /// Every attempt in order.
    pub steps: Vec<Step>,
    /// How it ended.
    pub ending: Ending,
    /// Time from the start to the end.
    #[serde(with = "crate::serde_form::ms")]
    pub total_ms: u64,
    /// Time spent waiting between attempts.
    #[serde(with = "crate::serde_form::ms")]
    pub waited_ms: u64,
}

/// Replays `scenario` attempt by attempt through [`decide`].
pub fn simulate(scenario: &Scenario) -> Result<Timeline, Error> {
    scenario.policy.validate()?;
    for (i, d) in scenario.draws.iter().enumerate() {
        crate::backoff::check_draw(&format!("draws[{i}]"), *d)?;
    }
    let mut req = scenario.request.clone();
    let mut steps = Vec::new();
    let mut waited = 0u64;
    let mut now = req.elapsed_ms;
    for n in 0..MAX_SIMULATED_ATTEMPTS {
        let reason = match scenario.outcomes.get(n as usize) {
            Some(r) => *r,
            None if scenario.repeat_last => scenario.outcomes.last().copied().flatten(),
            None => None,
        };
        let sent = now;
        now = now.saturating_add(scenario.latency_ms);
        let Some(reason) = reason else {
            let ending = if now > req.timeout_ms {
                Ending::TimedOut
            } else {
                Ending::Succeeded
            };
            steps.push(step(req.attempts, sent, now, None, None));
            return Ok(finish(steps, ending, now, waited));
        };
        req.elapsed_ms = now;
        if !scenario.draws.is_empty() {
            req.random = Some(scenario.draws[n as usize % scenario.draws.len()]);
        }
        let decision = decide(&req, reason, &scenario.policy)?;
        steps.push(step(req.attempts, sent, now, Some(reason), Some(decision)));
        match decision {
            Decision::NoRetry(n) => {
                let ending = if n.cause == crate::NoRetryCause::DeadlinePassed {
                    Ending::TimedOut
                } else {
                    Ending::Failed
                };
                return Ok(finish(steps, ending, now, waited));
            }
            Decision::Retry(r) => {
                now = now.saturating_add(r.delay_ms);
                waited = waited.saturating_add(r.delay_ms);
                if r.then_cancel {
                    return Ok(finish(steps, Ending::TimedOut, now, waited));
                }
                req.attempts = req.attempts.saturating_add(1);
                req.previous_reasons.push(reason);
                req.previous_delay_ms = Some(r.delay_ms);
            }
        }
    }
    Ok(finish(steps, Ending::AttemptLimit, now, waited))
}

fn step(attempt: u32, sent: u64, done: u64, reason: Option<RetryReason>, decision: Option<Decision>) -> Step {
    Step {
        attempt,
        sent_at_ms: sent,
        done_at_ms: done,
        reason,
        decision,
    }
}

fn finish(steps: Vec<Step>, ending: Ending, total_ms: u64, waited_ms: u64) -> Timeline {
    Timeline {
        steps,
        ending,
        total_ms,
        waited_ms,
    }
}
