//! Whole schedules replayed through `decide`.

use retrypolicy::*;

fn scenario(op: KvOperation, outcomes: Vec<Option<RetryReason>>, repeat_last: bool) -> Scenario {
    Scenario {
        name: String::new(),
        description: String::new(),
        request: Request::new(Operation::Kv(op), 0, 2500),
        outcomes,
        repeat_last,
        latency_ms: 2,
        draws: vec![],
        policy: Policy::default(),
    }
}

#[test]
fn temporary_failures_until_the_timeout_end_capped_at_2500_ms() {
    let t = simulate(&scenario(
        KvOperation::Get,
        vec![Some(RetryReason::KvTemporaryFailure)],
        true,
    ))
    .unwrap();
    // 1+2+...+256 = 511 ms, then 500 ms three times, 13 attempts of 2 ms: the 13th ends at
    // 2037 ms and its 500 ms wait is cut to the 463 ms left.
    assert_eq!(t.steps.len(), 13);
    assert_eq!(t.ending, Ending::TimedOut);
    assert_eq!(t.total_ms, 2500);
    match t.steps[12].decision {
        Some(Decision::Retry(r)) => assert_eq!((r.delay_ms, r.capped, r.then_cancel), (463, true, true)),
        ref other => panic!("expected a capped retry, got {other:?}"),
    }
}

#[test]
fn one_socket_close_then_success_retries_a_get_but_not_an_upsert() {
    let closed = Some(RetryReason::SocketClosedWhileInFlight);
    let get = simulate(&scenario(KvOperation::Get, vec![closed, None], false)).unwrap();
    assert_eq!(
        (get.ending, get.steps.len(), get.total_ms),
        (Ending::Succeeded, 2, 5)
    );
    let upsert = simulate(&scenario(KvOperation::Upsert, vec![closed, None], false)).unwrap();
    assert_eq!((upsert.ending, upsert.steps.len()), (Ending::Failed, 1));
}

#[test]
fn zero_delays_stop_at_the_attempt_limit() {
    let mut s = scenario(KvOperation::Get, vec![Some(RetryReason::KvLocked)], true);
    s.latency_ms = 0;
    s.policy.backoff = Backoff::Fixed { delay_ms: 0 };
    let t = simulate(&s).unwrap();
    assert_eq!(t.ending, Ending::AttemptLimit);
    assert_eq!(t.steps.len() as u32, simulate::MAX_SIMULATED_ATTEMPTS);
}

#[test]
fn a_bad_draw_is_a_typed_error_naming_its_index() {
    let mut s = scenario(KvOperation::Get, vec![Some(RetryReason::KvLocked)], false);
    s.draws = vec![0.5, 1.5];
    let e = simulate(&s).unwrap_err();
    assert_eq!((e.code(), e.field()), ("invalid_random", "draws[1]"));
}
