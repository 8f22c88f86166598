//! The run machine's promises, checked over random runs driven by a simulated host: no attempt
//! is sent at or after the deadline, no wait is zero while the breaker refuses (no spin), every
//! run ends, the cap holds, and the budget is asked only after sent failures.

use proptest::prelude::*;
use retrypolicy::*;

fn any_reason() -> impl Strategy<Value = RetryReason> {
    (0..RetryReason::ALL.len()).prop_map(|i| RetryReason::ALL[i])
}

/// One attempt's outcome as a host might report it.
fn any_outcome() -> impl Strategy<Value = Outcome> {
    prop_oneof![
        Just(Outcome::Success),
        Just(Outcome::Final),
        Just(Outcome::Timeout),
        any::<Option<bool>>().prop_map(|sent| Outcome::Network { sent }),
        (any_reason(), any::<bool>()).prop_map(|(reason, timeout)| Outcome::Reason { reason, timeout }),
        (
            prop_oneof![Just(200u16), Just(404), Just(429), Just(503)],
            prop::option::of(0u32..5)
        )
            .prop_map(|(status, ra)| Outcome::Http {
                status,
                retry_after: ra.map(|s| s.to_string()),
            }),
    ]
}

fn any_rules() -> impl Strategy<Value = RunRules> {
    prop_oneof![
        any::<bool>().prop_map(|get| RunRules::Decide(Box::new(DecideRules {
            operation: Operation::Kv(if get {
                KvOperation::Get
            } else {
                KvOperation::Upsert
            }),
            idempotent: None,
            strategy: None,
            policy: Policy::default(),
        }))),
        prop_oneof![Just("GET"), Just("POST")].prop_map(|m| RunRules::Http(HttpRules {
            method: Some(m.to_owned()),
            idempotent: None,
            backoff: Backoff::Fixed { delay_ms: 0 },
            jitter: Jitter::None,
        })),
    ]
}

/// Drives a run to its end: outcomes in turn (the last repeated), each attempt taking `latency`
/// ms, each wait slept exactly; returns every step.
fn drive(
    config: RunConfig,
    outcomes: &[Outcome],
    latency: u64,
    budget: &mut Option<RetryBudget>,
    breaker: &mut Option<CircuitBreaker>,
    start: f64,
) -> Vec<RunStep> {
    let mut run = Run::new(config).unwrap();
    let mut now = start;
    let mut steps = vec![run
        .start(
            Clock::at(now),
            Guards {
                budget: budget.as_mut(),
                breaker: breaker.as_mut(),
            },
        )
        .unwrap()];
    let mut i = 0;
    while steps.len() < 10_000 {
        let step = steps.last().unwrap().clone();
        let next = match step.action {
            RunAction::Done => break,
            RunAction::Send => {
                now += latency as f64;
                let outcome = &outcomes[i.min(outcomes.len() - 1)];
                i += 1;
                let clock = Clock {
                    now_ms: now,
                    random: Some(0.5),
                    now_unix_ms: Some(0),
                };
                run.attempt_ended(
                    outcome,
                    clock,
                    Guards {
                        budget: budget.as_mut(),
                        breaker: breaker.as_mut(),
                    },
                    None,
                )
                .unwrap()
            }
            RunAction::Wait => {
                now += step.delay_ms.unwrap() as f64;
                run.wait_ended(
                    Clock::at(now),
                    Guards {
                        budget: budget.as_mut(),
                        breaker: breaker.as_mut(),
                    },
                )
                .unwrap()
            }
        };
        steps.push(next);
    }
    steps
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn runs_end_and_keep_their_deadline_and_cap(
        rules in any_rules(),
        outcomes in prop::collection::vec(any_outcome(), 1..6),
        timeout in 1u64..3_000,
        cap in prop::option::of(1u32..6),
        // An attempt takes at least 1 ms: with attempts of no time and a 0 ms fixed backoff no
        // time passes, and a run with no cap would retry without end before its deadline.
        latency in 1u64..200,
        with_budget in any::<bool>(),
        with_breaker in any::<bool>(),
    ) {
        // An HTTP run takes responses and transport failures, not host-named reasons.
        let outcomes: Vec<Outcome> = outcomes
            .into_iter()
            .map(|o| match (&rules, o) {
                (RunRules::Http(_), Outcome::Reason { .. }) => Outcome::Network { sent: None },
                (_, o) => o,
            })
            .collect();
        let config = RunConfig { rules, timeout_ms: Some(timeout), max_attempts: cap, attempt_timeout_ms: None };
        let mut budget = with_budget.then(|| {
            let doc: BudgetDocument = serde_json::from_str(r#"{"kind": "retry_quota"}"#).unwrap();
            RetryBudget::new(&BudgetConfig::from_document(&doc, "budget").unwrap())
        });
        let mut breaker = with_breaker.then(|| {
            let doc = BreakerDocument { volume_threshold: Some(1), sleep_window_ms: Some(50), ..Default::default() };
            CircuitBreaker::new(&BreakerConfig::from_document(&doc, "breaker").unwrap())
        });
        let steps = drive(config, &outcomes, latency, &mut budget, &mut breaker, 0.0);
        let last = steps.last().unwrap();
        prop_assert_eq!(last.action, RunAction::Done, "the run ended");
        let sends = steps.iter().filter(|s| s.action == RunAction::Send).count() as u32;
        if let Some(cap) = cap {
            prop_assert!(sends <= cap, "at most {} attempts, sent {}", cap, sends);
        }
        for s in &steps {
            if s.action == RunAction::Send {
                prop_assert!(s.elapsed_ms < timeout, "a send at {} ms with a {} ms timeout", s.elapsed_ms, timeout);
                prop_assert!(s.timeout_ms.unwrap() <= timeout - s.elapsed_ms);
            }
            if s.action == RunAction::Wait {
                prop_assert!(s.elapsed_ms + s.delay_ms.unwrap() < timeout, "a wait reaching the deadline");
                if s.breaker.is_some_and(|v| !v.permitted) {
                    prop_assert!(s.delay_ms.unwrap() >= 1, "a breaker refusal never spins");
                }
            }
        }
    }
}

#[test]
fn a_refused_attempt_waits_for_the_breaker_window() {
    let doc = BreakerDocument {
        volume_threshold: Some(1),
        sleep_window_ms: Some(100),
        ..Default::default()
    };
    let mut breaker = Some(CircuitBreaker::new(
        &BreakerConfig::from_document(&doc, "b").unwrap(),
    ));
    let mut budget = None;
    let config = RunConfig {
        rules: RunRules::Http(HttpRules {
            method: None,
            idempotent: None,
            backoff: Backoff::Fixed { delay_ms: 0 },
            jitter: Jitter::None,
        }),
        timeout_ms: Some(1_000),
        max_attempts: None,
        attempt_timeout_ms: None,
    };
    let steps = drive(
        config,
        &[
            Outcome::Http {
                status: 503,
                retry_after: None,
            },
            Outcome::Http {
                status: 200,
                retry_after: None,
            },
        ],
        0,
        &mut budget,
        &mut breaker,
        0.0,
    );
    let actions: Vec<_> = steps.iter().map(|s| s.action).collect();
    // 503 trips the breaker; the 0 ms backoff's retry is refused and waits 101 ms; then 200.
    assert_eq!(
        actions,
        [
            RunAction::Send,
            RunAction::Wait,
            RunAction::Wait,
            RunAction::Send,
            RunAction::Done
        ]
    );
    assert_eq!(steps[1].delay_ms, Some(0));
    assert_eq!(steps[2].delay_ms, Some(101));
    assert_eq!(steps[4].end, Some(RunEnd::Succeeded));
}

#[test]
fn a_clock_going_back_reads_as_no_time_passing() {
    let config = RunConfig {
        rules: RunRules::Decide(Box::new(DecideRules {
            operation: Operation::Kv(KvOperation::Get),
            idempotent: None,
            strategy: None,
            policy: Policy::default(),
        })),
        timeout_ms: Some(100),
        max_attempts: None,
        attempt_timeout_ms: None,
    };
    let mut run = Run::new(config).unwrap();
    run.start(Clock::at(1_000.0), Guards::none()).unwrap();
    let step = run
        .attempt_ended(
            &Outcome::Reason {
                reason: RetryReason::KvTemporaryFailure,
                timeout: false,
            },
            Clock::at(10.0),
            Guards::none(),
            None,
        )
        .unwrap();
    assert_eq!(step.elapsed_ms, 0);
    assert_eq!(step.action, RunAction::Wait);
}
