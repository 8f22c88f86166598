//! `make demo`: the decisions for a few realistic scenarios, one log line per decision.

use retrypolicy::*;

fn show(title: &str, scenario: &Scenario) {
    println!("\n== {title}");
    let t = simulate(scenario).expect("the bundled scenarios are valid");
    for s in &t.steps {
        let what = match (s.reason, &s.decision) {
            (None, _) => "succeeded".to_owned(),
            (Some(r), Some(d)) => format!("failed with {r}: {d}"),
            (Some(r), None) => format!("failed with {r}"),
        };
        println!(
            "  attempt {:>2} sent at {:>5} ms: {what}",
            s.attempt, s.sent_at_ms
        );
    }
    println!(
        "  => {:?} after {} attempts, {} ms in all ({} ms waiting)",
        t.ending,
        t.steps.len(),
        t.total_ms,
        t.waited_ms
    );
}

fn kv(op: KvOperation, timeout_ms: u64) -> Request {
    Request::new(Operation::Kv(op), 0, timeout_ms)
}

fn main() {
    let closed = Some(RetryReason::SocketClosedWhileInFlight);
    show(
        "KV upsert, socket closed while in flight (non-idempotent: must not be retried)",
        &Scenario {
            name: String::new(),
            description: String::new(),
            request: kv(KvOperation::Upsert, 2500),
            outcomes: vec![closed],
            repeat_last: false,
            latency_ms: 3,
            draws: vec![],
            policy: Policy::default(),
        },
    );
    show(
        "KV get, socket closed while in flight once, then success (idempotent: retried)",
        &Scenario {
            name: String::new(),
            description: String::new(),
            request: kv(KvOperation::Get, 2500),
            outcomes: vec![closed, None],
            repeat_last: false,
            latency_ms: 3,
            draws: vec![],
            policy: Policy::default(),
        },
    );
    show(
        "KV get hitting KV_TEMPORARY_FAILURE until its 2.5 s timeout (best effort, capped at the end)",
        &Scenario {
            name: String::new(),
            description: String::new(),
            request: kv(KvOperation::Get, 2500),
            outcomes: vec![Some(RetryReason::KvTemporaryFailure)],
            repeat_last: true,
            latency_ms: 2,
            draws: vec![],
            policy: Policy::default(),
        },
    );
    let fail_fast = Policy {
        strategy: StrategyKind::FailFast,
        ..Policy::default()
    };
    show(
        "NOT_MY_VBUCKET storm under a fail-fast strategy (always-retry: controlled backoff anyway)",
        &Scenario {
            name: String::new(),
            description: String::new(),
            request: kv(KvOperation::Replace, 2500),
            outcomes: vec![Some(RetryReason::KvNotMyVbucket); 6],
            repeat_last: false,
            latency_ms: 1,
            draws: vec![],
            policy: fail_fast,
        },
    );
    show(
        "KV_LOCKED under the same fail-fast strategy (declined at once)",
        &Scenario {
            name: String::new(),
            description: String::new(),
            request: kv(KvOperation::Replace, 2500),
            outcomes: vec![Some(RetryReason::KvLocked)],
            repeat_last: false,
            latency_ms: 1,
            draws: vec![],
            policy: fail_fast,
        },
    );
}
