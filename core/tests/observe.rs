//! What a host observes of a breaker and a run: each state change with its rule, and a run's
//! statistics. Expected values are worked out by hand from the breaker's and the run's rules.

use retrypolicy::{
    BreakerChange, BreakerChangeRule, BreakerConfig, BreakerOutcome, BreakerState, CircuitBreaker, Clock,
    DecideRules, Guards, KvOperation, Operation, Outcome, Policy, Run, RunConfig, RunEnd, RunRules,
    RunSignal,
};

fn change(from: BreakerState, to: BreakerState, rule: BreakerChangeRule) -> Vec<BreakerChange> {
    vec![BreakerChange { from, to, rule }]
}

const NONE: Vec<BreakerChange> = Vec::new();

fn small_breaker() -> CircuitBreaker {
    CircuitBreaker::new(&BreakerConfig {
        volume_threshold: 2,
        error_threshold_percentage: 50,
        sleep_window_ms: 100,
        rolling_window_ms: 10_000,
        canary_timeout_ms: 50,
        ..BreakerConfig::default()
    })
}

#[test]
fn every_state_change_is_reported_once_with_its_rule() {
    use BreakerChangeRule::*;
    use BreakerState::*;
    let mut b = small_breaker();
    b.record(0, BreakerOutcome::Failure);
    assert_eq!(b.last_changes(), NONE, "one outcome is below the volume of 2");
    b.record(1, BreakerOutcome::Failure);
    assert_eq!(b.last_changes(), change(Closed, Open, BreakerTripped));
    b.permit(50);
    assert_eq!(b.last_changes(), NONE, "refused within the window: no change");
    b.permit(102); // 101 ms after opening at 1: more than the 100 ms window
    assert_eq!(b.last_changes(), change(Open, HalfOpen, BreakerCanary));
    b.permit(103);
    assert_eq!(b.last_changes(), NONE, "the canary is out: refused, no change");
    // The canary sent at 102 times out at 152; at 153 the circuit is open again, 1 ms into its window.
    assert!(!b.permit(153).permitted);
    assert_eq!(b.last_changes(), change(HalfOpen, Open, CanaryTimedOut));
    b.permit(253); // 101 ms after 152
    assert_eq!(b.last_changes(), change(Open, HalfOpen, BreakerCanary));
    b.record(254, BreakerOutcome::Success);
    assert_eq!(b.last_changes(), change(HalfOpen, Closed, CanarySucceeded));
    b.record(255, BreakerOutcome::Success);
    assert_eq!(b.last_changes(), NONE);
}

#[test]
fn a_failed_a_released_and_a_timed_out_then_replaced_canary() {
    use BreakerChangeRule::*;
    use BreakerState::*;
    let mut b = small_breaker();
    b.record(0, BreakerOutcome::Failure);
    b.record(0, BreakerOutcome::Timeout);
    assert_eq!(
        b.last_changes(),
        change(Closed, Open, BreakerTripped),
        "a timeout is a failure"
    );
    assert!(b.permit(101).canary);
    b.record(110, BreakerOutcome::Failure);
    assert_eq!(b.last_changes(), change(HalfOpen, Open, CanaryFailed));
    assert!(b.permit(211).canary);
    b.release(220, false);
    assert_eq!(
        b.last_changes(),
        NONE,
        "releasing a request that was not the canary changes nothing"
    );
    b.release(220, true);
    assert_eq!(b.last_changes(), change(HalfOpen, Open, CanaryReleased));
    assert!(b.permit(221).canary, "a released canary's window is over");
    // Sent at 221, timed out at 271; at 372 (101 ms later) the same call sends the next canary:
    // two changes, each reported, in order.
    assert!(b.permit(372).canary);
    assert_eq!(
        b.last_changes(),
        [
            change(HalfOpen, Open, CanaryTimedOut),
            change(Open, HalfOpen, BreakerCanary)
        ]
        .concat()
    );
    assert!(!b.permit(373).permitted, "the new canary is out");
    assert_eq!(
        b.last_changes(),
        NONE,
        "a call that changes nothing forgets the last call's"
    );
}

#[test]
fn a_disabled_breaker_never_changes_and_a_restored_one_has_no_change() {
    let mut b = CircuitBreaker::new(&BreakerConfig {
        enabled: false,
        volume_threshold: 1,
        ..BreakerConfig::default()
    });
    b.record(0, BreakerOutcome::Failure);
    assert_eq!(b.last_changes(), NONE);
    let mut tripped = small_breaker();
    tripped.record(0, BreakerOutcome::Failure);
    tripped.record(0, BreakerOutcome::Failure);
    let restored = CircuitBreaker::restore(&tripped.config(), &tripped.snapshot(), "state").unwrap();
    assert_eq!(restored.last_changes(), NONE);
    assert_eq!(restored, tripped, "the last change is not part of the state");
}

fn kv_get_run(timeout_ms: u64) -> Run {
    let mut config = RunConfig::new(RunRules::Decide(Box::new(DecideRules {
        operation: Operation::Kv(KvOperation::Get),
        idempotent: None,
        strategy: None,
        policy: Policy::default(),
    })));
    config.timeout_ms = Some(timeout_ms);
    Run::new(config).unwrap()
}

fn guards<'a>(b: &'a mut CircuitBreaker) -> Guards<'a> {
    Guards {
        budget: None,
        breaker: Some(b),
    }
}

#[test]
fn a_run_reports_the_breaker_changes_it_caused_and_counts_what_it_did() {
    use BreakerChangeRule::*;
    use BreakerState::*;
    let mut b = CircuitBreaker::new(&BreakerConfig {
        volume_threshold: 1,
        sleep_window_ms: 100,
        ..BreakerConfig::default()
    });
    let mut run = kv_get_run(10_000);
    let s = run.start(Clock::at(0.0), guards(&mut b)).unwrap();
    assert_eq!(s.breaker_changes, NONE);
    // 0x86 is KV TEMPFAIL: the first failure trips a breaker of volume 1; RFC 0049's best-effort
    // backoff asks for 1 ms.
    let failed = Outcome::Kv { status: 0x86 };
    let s = run
        .attempt_ended(&failed, Clock::at(10.0), guards(&mut b), None)
        .unwrap();
    assert_eq!(
        (s.delay_ms, s.breaker_changes, s.signal),
        (Some(1), change(Closed, Open, BreakerTripped), RunSignal::Retry)
    );
    // Open since 10: at 11 the breaker refuses; the run waits the rest of the window, 101 − 1 ms.
    let s = run.wait_ended(Clock::at(11.0), guards(&mut b)).unwrap();
    assert_eq!(
        (s.rule, s.delay_ms, s.breaker_changes, s.signal),
        ("breaker_wait", Some(100), NONE, RunSignal::BreakerWait),
        "a wait for the breaker's window is no retry"
    );
    assert_eq!(s.signal.name(), "breaker_wait");
    let s = run.wait_ended(Clock::at(111.0), guards(&mut b)).unwrap();
    assert_eq!(
        (s.attempt, s.breaker_changes),
        (2, change(Open, HalfOpen, BreakerCanary))
    );
    let s = run
        .attempt_ended(&Outcome::Success, Clock::at(120.0), guards(&mut b), None)
        .unwrap();
    assert_eq!(
        (s.breaker_changes, s.signal),
        (change(HalfOpen, Closed, CanarySucceeded), RunSignal::None)
    );
    let stats = run.stats();
    assert_eq!(
        (stats.attempts, stats.retries, stats.waited_ms, stats.elapsed_ms),
        (2, 1, 101, 120),
        "two sent; one retry decided; 1 + 100 ms asked to wait"
    );
    assert_eq!((stats.budget_refusals, stats.breaker_rejections), (0, 1));
    assert_eq!(
        (stats.end, stats.last_rule),
        (Some(RunEnd::Succeeded), Some("attempt_succeeded"))
    );
    assert_eq!(stats.last_reason.map(|r| r.name()), Some("CIRCUIT_BREAKER_OPEN"));
    assert_eq!(
        stats.last_breaker.map(|v| v.canary),
        Some(true),
        "the last verdict let the canary out"
    );
    assert_eq!(stats.last_budget, None);
}

#[test]
fn a_cancelled_canary_is_reported_released() {
    let mut b = CircuitBreaker::new(&BreakerConfig {
        volume_threshold: 1,
        sleep_window_ms: 100,
        ..BreakerConfig::default()
    });
    b.record(0, BreakerOutcome::Failure);
    let mut run = kv_get_run(10_000);
    run.start(Clock::at(200.0), guards(&mut b)).unwrap();
    let s = run.cancel(Clock::at(210.0), guards(&mut b)).unwrap();
    assert_eq!(
        s.breaker_changes,
        change(
            BreakerState::HalfOpen,
            BreakerState::Open,
            BreakerChangeRule::CanaryReleased
        )
    );
    let stats = run.stats();
    assert_eq!(
        (stats.attempts, stats.retries, stats.end),
        (1, 0, Some(RunEnd::Cancelled))
    );
}

#[test]
fn a_give_up_and_a_time_out_are_signalled_as_give_ups() {
    // KV TEMPFAIL is retried with RFC 0049's best-effort backoff (1 ms for the first retry).
    let failed = Outcome::Kv { status: 0x86 };
    let mut run = kv_get_run(10);
    let s = run.start(Clock::at(0.0), Guards::default()).unwrap();
    assert_eq!(s.signal, RunSignal::None);
    // 10 ms into a 10 ms run: no time left, so it timed out.
    let s = run
        .attempt_ended(&failed, Clock::at(10.0), Guards::default(), None)
        .unwrap();
    assert_eq!((s.end, s.signal), (Some(RunEnd::TimedOut), RunSignal::GiveUp));
    assert_eq!(s.signal.name(), "give_up");
    let mut run = kv_get_run(10_000);
    run.start(Clock::at(0.0), Guards::default()).unwrap();
    let s = run
        .attempt_ended(&Outcome::Final, Clock::at(5.0), Guards::default(), None)
        .unwrap();
    assert_eq!(
        (s.end, s.signal),
        (Some(RunEnd::Final), RunSignal::None),
        "a final failure surfaces as it is: no give-up"
    );
}
