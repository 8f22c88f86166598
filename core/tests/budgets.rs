//! Properties of the retry budgets and the circuit breaker (issue 20 item 4): a budget never lets
//! retries exceed its stated bound, a breaker never lets more than one canary through while
//! half-open, and every state survives its JSON snapshot.

use proptest::prelude::*;
use retrypolicy::budget::{PercentageConfig, RetryQuotaConfig, TokenBucketConfig};
use retrypolicy::*;

/// An event a host may tell a budget, or a retry it may ask for.
#[derive(Debug, Clone, Copy)]
enum Step {
    Request,
    Success(Option<RetryCause>),
    Failure,
    Timeout,
    AskRetry(RetryCause),
}

fn cause() -> impl Strategy<Value = RetryCause> {
    prop_oneof![Just(RetryCause::Error), Just(RetryCause::Timeout)]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        Just(Step::Request),
        proptest::option::of(cause()).prop_map(Step::Success),
        Just(Step::Failure),
        Just(Step::Timeout),
        cause().prop_map(Step::AskRetry),
    ]
}

/// Steps at non-decreasing times: each a gap of 0 to `max_gap − 1` ms after the previous.
fn timed<S: Strategy>(step: S, max_gap: u64) -> impl Strategy<Value = Vec<(u64, S::Value)>> {
    proptest::collection::vec((0..max_gap, step), 0..300).prop_map(|v| {
        let mut now = 0;
        v.into_iter()
            .map(|(gap, s)| {
                now += gap;
                (now, s)
            })
            .collect()
    })
}

fn timed_steps() -> impl Strategy<Value = Vec<(u64, Step)>> {
    timed(step(), 3000)
}

fn apply(budget: &mut RetryBudget, now: u64, step: Step) -> Option<BudgetVerdict> {
    match step {
        Step::Request => budget.record(now, BudgetEvent::Request),
        Step::Success(after_retry) => budget.record(now, BudgetEvent::Success { after_retry }),
        Step::Failure => budget.record(now, BudgetEvent::Failure),
        Step::Timeout => budget.record(now, BudgetEvent::Timeout),
        Step::AskRetry(cause) => return Some(budget.try_retry(now, cause)),
    }
    None
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// gRFC A6: a failure after which a retry is permitted leaves more than max/2 tokens, each such
    /// failure takes 1000 milli-tokens and only successes add any (`token_ratio` each), so with P
    /// permitted failures and S successes, 1000·P < max − max/2 + ratio·S. Under a storm (S = 0)
    /// at most max_tokens/2 failures are ever retried: retries per failure go to 0.
    #[test]
    fn token_bucket_retries_per_failure_are_bounded(
        max in 1u64..=1_000_000,
        ratio in 1u64..=2_000,
        steps in timed_steps(),
    ) {
        let c = TokenBucketConfig { max_milli_tokens: max, milli_token_ratio: ratio };
        let mut budget = RetryBudget::new(&BudgetConfig::TokenBucket(c));
        let (mut permitted_failures, mut successes) = (0u128, 0u128);
        for (now, s) in steps {
            apply(&mut budget, now, s);
            match s {
                Step::Failure | Step::Timeout if budget.permit(now, RetryCause::Error).permitted => {
                    permitted_failures += 1;
                }
                Step::Success(_) => successes += 1,
                _ => {}
            }
            let bound = u128::from(max - c.threshold()) + u128::from(ratio) * successes;
            prop_assert!(1000 * permitted_failures < bound, "{permitted_failures} retried failures, {successes} successes");
        }
    }

    /// AWS: the quota never goes below zero, so the costs of permitted retries are at most the
    /// capacity plus every increment and refund credited; with no success, at most
    /// capacity / cheapest cost retries.
    #[test]
    fn retry_quota_spends_at_most_what_it_was_given(
        capacity in 0u64..2_000,
        retry_cost in 1u64..20,
        timeout_cost in 1u64..40,
        increment in 0u64..3,
        steps in timed_steps(),
    ) {
        let c = RetryQuotaConfig { capacity, retry_cost, timeout_cost, throttling_cost: retry_cost, no_retry_increment: increment };
        let mut budget = RetryBudget::new(&BudgetConfig::RetryQuota(c));
        let (mut spent, mut credited, mut retries, mut any_success) = (0u64, 0u64, 0u64, false);
        for (now, s) in steps {
            if let Some(v) = apply(&mut budget, now, s) {
                if v.permitted {
                    spent += c.cost(if let Step::AskRetry(cause) = s { cause } else { unreachable!() });
                    retries += 1;
                }
            }
            if let Step::Success(after) = s {
                any_success = true;
                credited += after.map_or(increment, |cause| c.cost(cause));
            }
            prop_assert!(spent <= capacity + credited, "spent {spent} of {capacity} + {credited}");
            if !any_success {
                prop_assert!(retries <= capacity / retry_cost.min(timeout_cost));
            }
        }
    }

    /// Finagle: when a retry is permitted in slice s (a tenth of the ttl), the retries of the
    /// window's slices (s − 10, s],
    /// that one included, are at most ⌊percent/100 × that window's requests⌋ + the floor
    /// (min_retries_per_sec × ttl); and a retry is refused only when that bound is reached.
    #[test]
    fn percentage_retries_stay_within_percent_of_requests_plus_floor(
        percent in 0u64..=300,
        ttl_s in 1u64..=5,
        min in 0u64..=3,
        steps in timed_steps(),
    ) {
        let c = PercentageConfig { percent: percent as f64, ttl_s, min_retries_per_sec: min };
        let mut budget = RetryBudget::new(&BudgetConfig::Percentage(c));
        // The reference model: every request and permitted retry with its slice of ttl/10.
        let (mut requests, mut retries): (Vec<u64>, Vec<u64>) = (Vec::new(), Vec::new());
        for (now, s) in steps {
            let slice = now / (ttl_s * 100);
            let in_window = |v: &Vec<u64>| v.iter().filter(|t| slice - **t < 10).count() as u64;
            let allowed = percent * in_window(&requests) / 100 + min * ttl_s;
            let retries_before = in_window(&retries);
            match apply(&mut budget, now, s) {
                Some(v) => {
                    prop_assert_eq!(v.permitted, retries_before < allowed, "at {} ms", now);
                    if v.permitted {
                        retries.push(slice);
                        prop_assert!(in_window(&retries) <= allowed);
                    }
                }
                None => {
                    if let Step::Request = s {
                        requests.push(slice);
                    }
                }
            }
        }
    }

    /// Every budget's state survives its JSON snapshot: the restored budget answers every later
    /// step as the original does.
    #[test]
    fn budget_snapshots_round_trip_through_json(
        kind in 0u8..3,
        before in timed_steps(),
        after in timed_steps(),
    ) {
        let config = match kind {
            0 => BudgetConfig::TokenBucket(TokenBucketConfig { max_milli_tokens: 10_000, milli_token_ratio: 100 }),
            1 => BudgetConfig::RetryQuota(RetryQuotaConfig { capacity: 50, retry_cost: 5, timeout_cost: 10, throttling_cost: 3, no_retry_increment: 1 }),
            _ => BudgetConfig::Percentage(PercentageConfig { percent: 20.0, ttl_s: 3, min_retries_per_sec: 1 }),
        };
        let mut original = RetryBudget::new(&config);
        let mut last = 0;
        for (now, s) in before {
            apply(&mut original, now, s);
            last = now;
        }
        let text = serde_json::to_string(&original.snapshot()).unwrap();
        let snapshot: BudgetSnapshot = serde_json::from_str(&text).unwrap();
        let mut restored = RetryBudget::restore(&config, &snapshot, "state").unwrap();
        for (gap, s) in after {
            let now = last + gap;
            prop_assert_eq!(apply(&mut original, now, s), apply(&mut restored, now, s));
            prop_assert_eq!(original.permit(now, RetryCause::Error), restored.permit(now, RetryCause::Error));
        }
    }
}

/// A request asked of a breaker, or how one ended.
#[derive(Debug, Clone, Copy)]
enum BreakerStep {
    Request,
    Outcome(BreakerOutcome),
}

fn breaker_steps() -> impl Strategy<Value = Vec<(u64, BreakerStep)>> {
    let step = prop_oneof![
        3 => Just(BreakerStep::Request),
        1 => Just(BreakerStep::Outcome(BreakerOutcome::Success)),
        2 => Just(BreakerStep::Outcome(BreakerOutcome::Failure)),
        1 => Just(BreakerStep::Outcome(BreakerOutcome::Timeout)),
    ];
    timed(step, 700)
}

fn breaker_config() -> impl Strategy<Value = BreakerConfig> {
    (
        any::<bool>(),
        0u64..6,
        0u64..=100,
        0u64..2000,
        0u64..5000,
        0u64..1000,
    )
        .prop_map(|(disabled, volume, pct, sleep, rolling, canary)| BreakerConfig {
            enabled: !disabled,
            volume_threshold: volume,
            error_threshold_percentage: pct,
            sleep_window_ms: sleep,
            rolling_window_ms: rolling,
            canary_timeout_ms: canary,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// While a canary is out (sent, no outcome recorded since, its timeout not yet run out), no
    /// request is let through, canary or not; a request is refused only with CIRCUIT_BREAKER_OPEN.
    #[test]
    fn breaker_lets_one_canary_through_while_half_open(config in breaker_config(), steps in breaker_steps()) {
        let mut breaker = CircuitBreaker::new(&config);
        let mut canary_out: Option<u64> = None;
        for (now, s) in steps {
            match s {
                BreakerStep::Outcome(o) => {
                    breaker.record(now, o);
                    canary_out = None;
                }
                BreakerStep::Request => {
                    let v = breaker.permit(now);
                    if let Some(sent) = canary_out {
                        if now - sent < config.canary_timeout_ms {
                            prop_assert!(!v.permitted, "a second request through at {now} ms, canary sent at {sent} ms: {v:?}");
                        }
                    }
                    if v.canary {
                        canary_out = Some(now);
                    }
                    prop_assert_eq!(v.permitted, v.reason.is_none());
                    if !v.permitted {
                        prop_assert_eq!(v.reason, Some(RetryReason::CircuitBreakerOpen));
                    }
                    prop_assert!(!v.canary || v.state == BreakerState::HalfOpen);
                }
            }
        }
    }

    /// A breaker's state survives its JSON snapshot.
    #[test]
    fn breaker_snapshots_round_trip_through_json(
        config in breaker_config(),
        before in breaker_steps(),
        after in breaker_steps(),
    ) {
        let mut original = CircuitBreaker::new(&config);
        let mut last = 0;
        for (now, s) in before {
            match s {
                BreakerStep::Request => { original.permit(now); }
                BreakerStep::Outcome(o) => original.record(now, o),
            }
            last = now;
        }
        let text = serde_json::to_string(&original.snapshot()).unwrap();
        let snapshot: BreakerSnapshot = serde_json::from_str(&text).unwrap();
        let mut restored = CircuitBreaker::restore(&config, &snapshot, "state").unwrap();
        prop_assert_eq!(&restored, &original);
        for (gap, s) in after {
            let now = last + gap;
            match s {
                BreakerStep::Request => prop_assert_eq!(original.permit(now), restored.permit(now)),
                BreakerStep::Outcome(o) => {
                    original.record(now, o);
                    restored.record(now, o);
                }
            }
            prop_assert_eq!(original.state(now), restored.state(now));
        }
    }
}

fn any_rule() -> impl Strategy<Value = BudgetRule> {
    proptest::sample::select(vec![
        BudgetRule::TokenBucketAboveHalf,
        BudgetRule::TokenBucketAtOrBelowHalf,
        BudgetRule::RetryQuotaAvailable,
        BudgetRule::RetryQuotaExhausted,
        BudgetRule::PercentageWithinBudget,
        BudgetRule::PercentageBudgetSpent,
    ])
}

proptest! {
    /// Without a verdict, or with a permitting one, `decide_with_budget` is `decide`; with a
    /// refusing one, exactly `decide`'s retries become budget refusals, every other decision stays.
    #[test]
    fn a_budget_verdict_only_ever_removes_retries(
        reason in proptest::sample::select(RetryReason::ALL.to_vec()),
        attempts in 0u32..12,
        elapsed in 0u64..3000,
        rule in any_rule(),
        balance in 0u64..10_000,
    ) {
        let mut request = Request::new(Operation::Kv(KvOperation::Upsert), elapsed, 2500);
        request.attempts = attempts;
        let policy = Policy::default();
        let plain = decide(&request, reason, &policy).unwrap();
        prop_assert_eq!(
            decide_with_budget(&request, reason, &policy, None).unwrap(),
            BudgetedDecision::Decided(plain)
        );
        let verdict = BudgetVerdict::of(rule, balance);
        let budgeted = decide_with_budget(&request, reason, &policy, Some(&verdict)).unwrap();
        match (plain, budgeted) {
            (Decision::Retry(r), BudgetedDecision::Refused(refusal)) => {
                prop_assert!(!verdict.permitted);
                prop_assert_eq!(refusal.refused_delay_ms, r.delay_ms);
                prop_assert_eq!(refusal.verdict, verdict);
            }
            (_, BudgetedDecision::Decided(d)) => {
                prop_assert!(verdict.permitted || !plain.is_retry());
                prop_assert_eq!(d, plain);
            }
            (d, refused) => prop_assert!(false, "{d:?} became {refused:?}"),
        }
    }
}

/// A percentage budget's own snapshot restores whatever the clock read (readings past 2^53 − 1 ms
/// are read as 2^53 − 1; a snapshot taken at 2^63 was refused before).
#[test]
fn a_percentage_snapshot_taken_at_any_clock_restores() {
    let config = BudgetConfig::Percentage(PercentageConfig {
        percent: 20.0,
        ttl_s: 10,
        min_retries_per_sec: 1,
    });
    for now in [0, (1 << 53) - 1, 1 << 63, u64::MAX] {
        let mut budget = RetryBudget::new(&config);
        budget.record(now, BudgetEvent::Request);
        let snapshot: BudgetSnapshot =
            serde_json::from_str(&serde_json::to_string(&budget.snapshot()).unwrap()).unwrap();
        let restored = RetryBudget::restore(&config, &snapshot, "state").unwrap();
        assert_eq!(restored.snapshot(), budget.snapshot(), "at {now}");
    }
}

fn with_breaker(b: &mut CircuitBreaker) -> Guards<'_> {
    Guards {
        budget: None,
        breaker: Some(b),
    }
}

/// A breaker tripped open at 0: a canary may go after 100 ms, and times out after 50 ms.
fn tripped_at_zero() -> CircuitBreaker {
    let mut b = CircuitBreaker::new(&BreakerConfig {
        volume_threshold: 1,
        sleep_window_ms: 100,
        canary_timeout_ms: 50,
        ..BreakerConfig::default()
    });
    b.record(0, BreakerOutcome::Failure);
    b
}

/// Found by review (issue 28): a run whose canary timed out, cancelled later, freed the canary
/// another run had sent since, letting a second canary out beside it.
#[test]
fn a_run_releases_only_the_canary_it_holds() {
    let mut b = tripped_at_zero();
    let config = RunConfig {
        max_attempts: Some(3),
        ..RunConfig::new(RunRules::Decide(Box::new(DecideRules {
            operation: Operation::Kv(KvOperation::Get),
            idempotent: None,
            strategy: None,
            policy: Policy::default(),
        })))
    };
    let config = RunConfig {
        timeout_ms: Some(60_000),
        ..config
    };
    let mut a = Run::new(config.clone()).unwrap();
    let s = a.start(Clock::at(200.0), with_breaker(&mut b)).unwrap();
    assert_eq!(s.breaker.map(|v| v.canary), Some(true), "a's canary");
    // a's canary times out at 250; past the sleep window that follows, b's request is the canary.
    let mut other = Run::new(config).unwrap();
    let s = other.start(Clock::at(351.0), with_breaker(&mut b)).unwrap();
    assert_eq!(s.breaker.map(|v| v.canary), Some(true), "b's canary");
    let rules = |s: &retrypolicy::RunStep| {
        s.breaker_changes
            .iter()
            .map(|c| c.rule.name())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        rules(&s),
        ["canary_timed_out", "breaker_canary"],
        "b's start found a's canary timed out, then sent its own"
    );
    let s = a.cancel(Clock::at(360.0), with_breaker(&mut b)).unwrap();
    assert!(s.breaker_changes.is_empty(), "a's cancel changes nothing");
    assert!(!b.permit(361).permitted, "b's canary is still the one out");
    // b's own cancel frees it.
    let s = other.cancel(Clock::at(362.0), with_breaker(&mut b)).unwrap();
    assert_eq!(rules(&s), ["canary_released"]);
    assert!(b.permit(363).canary);
}

#[test]
fn a_canary_token_frees_only_its_own_canary() {
    let mut b = tripped_at_zero();
    let first = b.permit(101);
    assert!(first.canary && first.canary_token.is_some());
    // It times out at 151 (open again); the next canary goes past that sleep window.
    let second = b.permit(252);
    assert!(second.canary);
    assert_ne!(first.canary_token, second.canary_token);
    b.release_canary(253, first.canary_token);
    assert_eq!(b.last_changes(), []);
    assert_eq!(b.state(253), BreakerState::HalfOpen);
    b.release_canary(254, None);
    assert_eq!(
        b.state(254),
        BreakerState::HalfOpen,
        "a request that was no canary"
    );
    b.release_canary(255, second.canary_token);
    assert_eq!(
        b.last_changes().iter().map(|c| c.rule).collect::<Vec<_>>(),
        [BreakerChangeRule::CanaryReleased]
    );
    // A canary whose success closed the circuit: a later canary's token is its own.
    let third = b.permit(256);
    b.record(257, BreakerOutcome::Success);
    b.record(258, BreakerOutcome::Failure);
    let fourth = b.permit(359);
    assert!(fourth.canary);
    b.release_canary(360, third.canary_token);
    assert_eq!(b.state(360), BreakerState::HalfOpen);
    assert!(b.permit(361).reason.is_some(), "the fourth canary is still out");
    // A verdict's JSON form is unchanged: no token in it.
    assert!(!serde_json::to_string(&fourth).unwrap().contains("token"));
}
