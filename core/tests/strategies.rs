//! Host strategies: the trait, the per-request override, and what the core still enforces.

use std::cell::Cell;

use retrypolicy::*;

/// Fails fast on KV_LOCKED, defers to best effort for everything else (the RFC's advice).
struct NoLockRetries {
    inner: BestEffort,
    calls: Cell<u32>,
}

impl RetryStrategy for NoLockRetries {
    fn retry_after(&self, request: &Request, reason: RetryReason) -> Result<StrategyVerdict, Error> {
        self.calls.set(self.calls.get() + 1);
        if reason == RetryReason::KvLocked {
            return Ok(StrategyVerdict::custom_no_retry());
        }
        self.inner.retry_after(request, reason)
    }
}

fn get(attempts: u32, elapsed_ms: u64, timeout_ms: u64) -> Request {
    Request {
        attempts,
        ..Request::new(Operation::Kv(KvOperation::Get), elapsed_ms, timeout_ms)
    }
}

#[test]
fn a_host_strategy_overrides_one_case_and_defers_the_rest() {
    let s = NoLockRetries {
        inner: BestEffort::default(),
        calls: Cell::new(0),
    };
    let p = Policy::default();
    let locked = decide_with(&get(0, 0, 2500), RetryReason::KvLocked, &p, Some(&s)).unwrap();
    assert!(matches!(
        locked,
        Decision::NoRetry(NoRetry {
            cause: NoRetryCause::StrategyDeclined,
            rule: Rule::CustomStrategy,
            ..
        })
    ));
    let tmp = decide_with(&get(3, 0, 2500), RetryReason::KvTemporaryFailure, &p, Some(&s)).unwrap();
    assert_eq!(tmp.delay_ms(), Some(8));
    assert_eq!(s.calls.get(), 2);
}

#[test]
fn always_retry_reasons_never_reach_the_host_strategy() {
    let s = NoLockRetries {
        inner: BestEffort::default(),
        calls: Cell::new(0),
    };
    let d = decide_with(
        &get(2, 0, 2500),
        RetryReason::KvNotMyVbucket,
        &Policy::default(),
        Some(&s),
    )
    .unwrap();
    assert_eq!(d.delay_ms(), Some(50));
    assert_eq!(s.calls.get(), 0);
}

struct Sleepy;
impl RetryStrategy for Sleepy {
    fn retry_after(&self, _: &Request, _: RetryReason) -> Result<StrategyVerdict, Error> {
        Ok(StrategyVerdict::custom_retry(60_000))
    }
}

#[test]
fn a_host_strategy_delay_is_still_capped_to_the_timeout() {
    let d = decide_with(
        &get(0, 2000, 2500),
        RetryReason::KvLocked,
        &Policy::default(),
        Some(&Sleepy),
    )
    .unwrap();
    match d {
        Decision::Retry(r) => {
            assert_eq!((r.delay_ms, r.capped, r.then_cancel), (500, true, true));
            assert_eq!(r.rule, Rule::CustomStrategy);
        }
        other => panic!("expected a retry, got {other:?}"),
    }
}

#[test]
fn the_per_request_override_beats_the_host_strategy() {
    let mut req = get(0, 0, 2500);
    req.strategy = Some(StrategyKind::FailFast);
    let d = decide_with(&req, RetryReason::KvLocked, &Policy::default(), Some(&Sleepy)).unwrap();
    assert_eq!(d.rule(), Rule::FailFast);
}

#[test]
fn the_decision_record_reads_as_one_log_line() {
    let d = decide(
        &get(7, 2000, 2500),
        RetryReason::KvNotMyVbucket,
        &Policy::default(),
    )
    .unwrap();
    assert_eq!(
        d.to_string(),
        "retry 8 after 500 ms, capped to the timeout, then cancel (reason KV_NOT_MY_VBUCKET, \
         rule always_retry_controlled_backoff; RFC 0049, Retry Orchestration; Controlled Backoff for Always Retry)"
    );
    let mut up = get(0, 0, 2500);
    up.operation = Operation::Kv(KvOperation::Upsert);
    let d = decide(&up, RetryReason::SocketClosedWhileInFlight, &Policy::default()).unwrap();
    assert_eq!(
        d.to_string(),
        "no retry after 0 retries: not idempotent (reason SOCKET_CLOSED_WHILE_IN_FLIGHT, \
         rule best_effort_not_idempotent; RFC 0049, Best Effort)"
    );
    let json: serde_json::Value = serde_json::from_str(&d.to_json()).unwrap();
    assert_eq!(json["action"], "no_retry");
    assert_eq!(json["section"], "RFC 0049, Best Effort");
}

#[test]
fn the_after_strategy_step_alone_still_refuses_a_request_past_its_timeout() {
    for elapsed in [2500, 9000] {
        let d = decide_after_strategy(
            &get(0, elapsed, 2500),
            RetryReason::KvLocked,
            StrategyVerdict::custom_retry(10),
        );
        assert!(matches!(
            d,
            Decision::NoRetry(NoRetry {
                cause: NoRetryCause::DeadlinePassed,
                ..
            })
        ));
    }
}

#[test]
fn the_log_line_at_the_largest_attempt_count_does_not_overflow() {
    let d = decide(
        &get(u32::MAX, 0, 600_000),
        RetryReason::KvNotMyVbucket,
        &Policy::default(),
    )
    .unwrap();
    assert!(d.to_string().starts_with("retry 4294967295 after 1000 ms"), "{d}");
}

#[test]
fn a_policy_built_in_code_with_inverted_bounds_does_not_panic() {
    let policy = Policy {
        backoff: Backoff::Exponential {
            min_ms: 900,
            max_ms: 10,
            factor: 3.0,
            first: FirstDelay::Min,
        },
        ..Policy::default()
    };
    assert!(policy.validate().is_err());
    // Unvalidated, it still decides: the bound that applies last wins.
    let d = decide(&get(5, 0, 2500), RetryReason::KvLocked, &policy).unwrap();
    assert_eq!(d.delay_ms(), Some(10));
}
