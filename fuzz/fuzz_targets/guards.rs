//! Budgets, breakers, storms and the run machine on structured inputs with extreme values (issue
//! 31): any clock (going back, jumping, past 2^53), any configuration the documents accept, any
//! sequence of events. Nothing panics or overflows, and:
//! 1. A budget's balance never exceeds its capacity (token bucket: `max_tokens`; AWS quota:
//!    `capacity`), a refused retry changes nothing, and its snapshot restores to the same answers.
//! 2. A breaker never lets two canaries out at the same instant with no outcome or release of the
//!    first between them and the clock never going back (a reading that goes back moves the
//!    canary's time back with it, so its timeout may pass by the time the clock returns), and a
//!    refusal always names a wait of at least 1 ms (`retry_in_ms`).
//! 3. A run never sends an attempt at or after its deadline, never waits past it, never waits 0 ms
//!    on a breaker's refusal, and ends within a bounded number of events when the host keeps
//!    answering.
//! 4. A storm of a few requests always reports `succeeded + failed + timed_out == requests`.
#![no_main]

mod limit;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use retrypolicy::*;

/// A clock reading: small steps (so windows are crossed), or anything (jumps, past 2^53).
#[derive(Arbitrary, Debug, Clone, Copy)]
enum At {
    Step(u16),
    Back(u16),
    Any(u64),
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum BudgetKindIn {
    Bucket {
        max: u32,
        ratio: u32,
    },
    Quota {
        capacity: u16,
        retry: u8,
        timeout: u8,
        throttling: u8,
        y2026: bool,
    },
    Percentage {
        percent: u32,
        ttl_s: u8,
        min: u8,
    },
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum BudgetStep {
    Request,
    Success(Option<u8>),
    Failure,
    Timeout,
    Final,
    Retry(u8),
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum BreakerStep {
    Request,
    Success,
    Failure,
    Timeout,
    Release(bool),
}

#[derive(Arbitrary, Debug, Clone)]
enum OutcomeIn {
    Success,
    Final,
    Timeout,
    Network(Option<bool>),
    Http(u16, Option<u8>),
    Reason(u8, bool),
}

#[derive(Arbitrary, Debug)]
struct Input {
    budget: BudgetKindIn,
    budget_steps: Vec<(At, BudgetStep)>,
    breaker: (u8, u8, u16, u16, u16),
    breaker_steps: Vec<(At, BreakerStep)>,
    http_run: bool,
    timeout_ms: u16,
    max_attempts: Option<u8>,
    latency: u8,
    outcomes: Vec<OutcomeIn>,
    storm: (u8, u8, u8, u8, bool),
}

fn cause(n: u8) -> RetryCause {
    match n % 3 {
        0 => RetryCause::Error,
        1 => RetryCause::Timeout,
        _ => RetryCause::Throttling,
    }
}

fn budget_doc(k: BudgetKindIn) -> serde_json::Value {
    match k {
        BudgetKindIn::Bucket { max, ratio } => serde_json::json!({"kind": "token_bucket",
            "max_tokens": f64::from(max % 1_000_001) / 1000.0, "token_ratio": f64::from(ratio % 1_000_001) / 1000.0}),
        BudgetKindIn::Quota {
            capacity,
            retry,
            timeout,
            throttling,
            y2026,
        } => serde_json::json!({"kind": "retry_quota",
            "capacity": capacity, "retry_cost": retry, "timeout_cost": timeout, "throttling_cost": throttling,
            "costs": if y2026 { "2026" } else { "classic" }}),
        BudgetKindIn::Percentage { percent, ttl_s, min } => serde_json::json!({"kind": "percentage",
            "percent": percent % 100_001, "ttl_ms": u64::from(ttl_s) * 1000, "min_retries_per_sec": min}),
    }
}

fn advance(now: u64, at: At) -> u64 {
    match at {
        At::Step(n) => now.saturating_add(u64::from(n)),
        At::Back(n) => now.saturating_sub(u64::from(n)),
        At::Any(n) => n,
    }
}

fn budgets(input: &Input) {
    let Ok(doc) = serde_json::from_value::<BudgetDocument>(budget_doc(input.budget)) else {
        return;
    };
    let Ok(config) = BudgetConfig::from_document(&doc, "budget") else {
        return;
    };
    let cap = match config {
        BudgetConfig::TokenBucket(c) => Some(c.max_milli_tokens),
        BudgetConfig::RetryQuota(c) => Some(c.capacity),
        BudgetConfig::Percentage(_) => None,
    };
    let mut budget = RetryBudget::new(&config);
    let mut now = 0u64;
    for (at, step) in input.budget_steps.iter().take(512) {
        now = advance(now, *at);
        match *step {
            BudgetStep::Request => budget.record(now, BudgetEvent::Request),
            BudgetStep::Success(c) => budget.record(
                now,
                BudgetEvent::Success {
                    after_retry: c.map(cause),
                },
            ),
            BudgetStep::Failure => budget.record(now, BudgetEvent::Failure),
            BudgetStep::Timeout => budget.record(now, BudgetEvent::Timeout),
            BudgetStep::Final => budget.record(now, BudgetEvent::Final),
            BudgetStep::Retry(c) => {
                let before = budget.snapshot();
                let v = budget.try_retry(now, cause(c));
                if !v.permitted {
                    assert_eq!(budget.snapshot(), before, "a refused retry changed the budget");
                }
            }
        }
        if let (Some(cap), Some(balance)) = (cap, budget.snapshot().balance) {
            assert!(balance <= cap, "balance {balance} over capacity {cap}");
        }
        let text = serde_json::to_string(&budget.snapshot()).unwrap();
        let snapshot: BudgetSnapshot = serde_json::from_str(&text).unwrap();
        let restored = RetryBudget::restore(&config, &snapshot, "state").expect("its own snapshot restores");
        assert_eq!(
            restored.permit(now, RetryCause::Error),
            budget.permit(now, RetryCause::Error)
        );
    }
}

fn breaker_of(b: (u8, u8, u16, u16, u16)) -> Option<CircuitBreaker> {
    let doc: BreakerDocument = serde_json::from_value(serde_json::json!({
        "volume_threshold": b.0, "error_threshold_percentage": b.1 % 101, "sleep_window_ms": b.2,
        "rolling_window_ms": b.3, "canary_timeout_ms": b.4}))
    .ok()?;
    Some(CircuitBreaker::new(
        &BreakerConfig::from_document(&doc, "breaker").ok()?,
    ))
}

fn breakers(input: &Input) {
    let Some(mut breaker) = breaker_of(input.breaker) else {
        return;
    };
    let (mut now, mut last_canary) = (0u64, None);
    for (at, step) in input.breaker_steps.iter().take(512) {
        let before = now;
        now = advance(now, *at);
        if now < before {
            last_canary = None; // the clock went back: the canary's time moved with it
        }
        match *step {
            BreakerStep::Request => {
                let v = breaker.permit(now);
                assert!(
                    v.permitted || breaker.retry_in_ms(now) > 0,
                    "a refusal without a wait: {v:?}"
                );
                if v.canary {
                    assert_ne!(last_canary, Some(now), "two canaries at {now}");
                    last_canary = Some(now);
                }
            }
            BreakerStep::Success => breaker.record(now, BreakerOutcome::Success),
            BreakerStep::Failure => breaker.record(now, BreakerOutcome::Failure),
            BreakerStep::Timeout => breaker.record(now, BreakerOutcome::Timeout),
            BreakerStep::Release(canary) => breaker.release(now, canary),
        }
        if !matches!(step, BreakerStep::Request) {
            last_canary = None; // the canary's end was told: the next may go
        }
    }
}

fn outcome(o: &OutcomeIn, http: bool) -> Outcome {
    match o {
        OutcomeIn::Success => Outcome::Success,
        OutcomeIn::Final => Outcome::Final,
        OutcomeIn::Timeout => Outcome::Timeout,
        OutcomeIn::Network(sent) => Outcome::Network { sent: *sent },
        OutcomeIn::Http(status, ra) => Outcome::Http {
            status: 200 + status % 400,
            retry_after: ra.map(|s| s.to_string()),
        },
        OutcomeIn::Reason(r, timeout) if !http => Outcome::Reason {
            reason: RetryReason::ALL[usize::from(*r) % RetryReason::ALL.len()],
            timeout: *timeout,
        },
        OutcomeIn::Reason(..) => Outcome::Network { sent: None },
    }
}

/// The run's guards: its breaker, if the input made a valid one.
fn guards(b: &mut Option<CircuitBreaker>) -> Guards<'_> {
    Guards {
        budget: None,
        breaker: b.as_mut(),
    }
}

fn runs(input: &Input) {
    let timeout = u64::from(input.timeout_ms).max(1);
    let rules = if input.http_run {
        RunRules::Http(HttpRules {
            method: Some("GET".to_owned()),
            idempotent: None,
            backoff: Backoff::Fixed { delay_ms: 0 },
            jitter: Jitter::None,
        })
    } else {
        RunRules::Decide(Box::new(DecideRules {
            operation: Operation::Kv(KvOperation::Get),
            idempotent: None,
            strategy: None,
            policy: Policy::default(),
        }))
    };
    let config = RunConfig {
        rules,
        timeout_ms: Some(timeout),
        max_attempts: input.max_attempts.map(|m| u32::from(m).max(1)),
        attempt_timeout_ms: None,
    };
    let mut run = Run::new(config).expect("a valid run");
    let mut breaker = breaker_of(input.breaker);
    let mut now = 0.0f64;
    let mut step = run.start(Clock::at(now), guards(&mut breaker)).expect("start");
    let mut i = 0usize;
    // At least 1 ms an attempt: with a 0 ms backoff and no latency no time would pass, and the
    // machine would rightly retry until its cap.
    let latency = f64::from(input.latency.max(1));
    for _ in 0..400_000 {
        match step.action {
            RunAction::Done => return,
            RunAction::Send => {
                assert!(
                    step.elapsed_ms < timeout,
                    "a send at {} of {timeout}",
                    step.elapsed_ms
                );
                now += latency;
                let o = input
                    .outcomes
                    .get(i)
                    .or(input.outcomes.last())
                    .cloned()
                    .unwrap_or(OutcomeIn::Success);
                i += 1;
                let clock = Clock {
                    now_ms: now,
                    random: Some(0.5),
                    now_unix_ms: Some(0),
                };
                step = run
                    .attempt_ended(&outcome(&o, input.http_run), clock, guards(&mut breaker), None)
                    .expect("an outcome");
            }
            RunAction::Wait => {
                let d = step.delay_ms.expect("a wait has a delay");
                assert!(step.elapsed_ms + d < timeout, "a wait past the deadline");
                if step.breaker.is_some_and(|v| !v.permitted) {
                    assert!(d >= 1, "a breaker refusal spun");
                }
                now += d as f64;
                step = run
                    .wait_ended(Clock::at(now), guards(&mut breaker))
                    .expect("a wait");
            }
        }
    }
    panic!("the run did not end in 400,000 events");
}

fn storms(input: &Input) {
    let (rps, seconds, rate, latency, breaker) = input.storm;
    let storm = serde_json::json!({
        "request": {"service": "kv", "operation": "get", "timeout_ms": 2500},
        "reason": "KV_TEMPORARY_FAILURE",
        "requests_per_second": u32::from(rps % 20) + 1,
        "duration_ms": u64::from(seconds % 3) * 1000,
        "latency_ms": latency,
        "failure_rate": f64::from(rate) / 255.0,
        "breaker": if breaker { serde_json::json!({}) } else { serde_json::Value::Null },
        "budget": budget_doc(input.budget),
    });
    let Ok(storm) = serde_json::from_value::<StormScenario>(storm) else {
        return;
    };
    if let Ok(r) = simulate_storm(&storm) {
        assert_eq!(r.succeeded + r.failed + r.timed_out, r.requests, "{r:?}");
    }
}

fuzz_target!(|input: Input| {
    budgets(&input);
    breakers(&input);
    runs(&input);
    storms(&input);
});
