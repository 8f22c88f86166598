//! gRPC retry and hedging (gRFC A6): expected values worked out by hand from A6's text and the
//! examples it and grpc's service_config.proto give.

use retrypolicy::grpc::*;
use retrypolicy::{BudgetConfig, BudgetDocument, RetryBudget};
use serde_json::json;

fn service_config(doc: serde_json::Value) -> Result<ServiceConfig, retrypolicy::Error> {
    let doc: ServiceConfigDocument = serde_json::from_value(doc).expect("a service config's shape");
    ServiceConfig::from_document(&doc, &ClientOptions::default())
}

/// A6's example retry policy.
fn a6_retry_policy() -> serde_json::Value {
    json!({"maxAttempts": 4, "initialBackoff": ".1s", "maxBackoff": "1s", "backoffMultiplier": 2,
           "retryableStatusCodes": ["UNAVAILABLE"]})
}

fn retry_policy(doc: serde_json::Value) -> RetryPolicy {
    let doc: RetryPolicyDocument = serde_json::from_value(doc).unwrap();
    doc.validate("retryPolicy", &ClientOptions::default()).unwrap()
}

fn error_field(doc: serde_json::Value) -> String {
    match service_config(json!({"methodConfig": [{"name": [{"service": "s"}], "retryPolicy": doc}]})) {
        Err(e) => e.field().to_owned(),
        Ok(_) => panic!("accepted an invalid policy"),
    }
}

#[test]
fn a_retry_policy_is_validated_as_a6_asks() {
    let p = retry_policy(a6_retry_policy());
    assert_eq!(
        (p.max_attempts, p.initial_backoff_ns, p.max_backoff_ns),
        (4, 100_000_000, 1_000_000_000)
    );
    let with = |key: &str, value: serde_json::Value| {
        let mut doc = a6_retry_policy();
        doc[key] = value;
        doc
    };
    let field = "methodConfig[0].retryPolicy";
    for (key, bad) in [
        ("maxAttempts", json!(1)),
        ("maxAttempts", json!(2.5)),
        ("initialBackoff", json!("0s")),
        ("initialBackoff", json!("1")),
        ("initialBackoff", json!("-1s")),
        ("maxBackoff", json!("1.0000000001s")),
        ("backoffMultiplier", json!(0)),
        ("retryableStatusCodes", json!([])),
    ] {
        assert_eq!(
            error_field(with(key, bad.clone())),
            format!("{field}.{key}"),
            "{key}: {bad}"
        );
    }
    let mut no_codes = a6_retry_policy();
    no_codes.as_object_mut().unwrap().remove("retryableStatusCodes");
    assert_eq!(error_field(no_codes), format!("{field}.retryableStatusCodes"));
    // "Values greater than 5 are treated as 5 without being considered a validation error."
    assert_eq!(retry_policy(with("maxAttempts", json!(7))).max_attempts, 5);
    // Codes "in the integer form or the case-insensitive string form".
    let codes =
        retry_policy(with("retryableStatusCodes", json!([14, "internal", "Aborted"]))).retryable_status_codes;
    assert_eq!(
        codes.codes().collect::<Vec<_>>(),
        [GrpcCode::Aborted, GrpcCode::Internal, GrpcCode::Unavailable]
    );
    for bad in [json!([17]), json!(["NOPE"]), json!([-1])] {
        let doc = with("retryableStatusCodes", bad.clone());
        assert!(
            serde_json::from_value::<RetryPolicyDocument>(doc).is_err(),
            "{bad}"
        );
    }
    assert!(serde_json::from_value::<RetryPolicyDocument>(with("maxAttemps", json!(3))).is_err());
}

#[test]
fn durations_read_as_proto3_json() {
    for (text, ns) in [
        ("1s", 1_000_000_000),
        (".1s", 100_000_000),
        ("0.000000001s", 1),
        ("-2.5s", -2_500_000_000),
    ] {
        assert_eq!(parse_duration("d", text).unwrap(), ns, "{text}");
    }
    for bad in [
        "1",
        "s",
        ".s",
        "1.s",
        "1.0000000001s",
        "1ms",
        "+1s",
        "315576000001s",
    ] {
        assert!(parse_duration("d", bad).is_err(), "{bad}");
    }
}

#[test]
fn a_config_refuses_two_policies_a_method_without_service_and_a_name_twice() {
    let hedging = json!({"maxAttempts": 2});
    let both = json!({"methodConfig": [{"name": [{"service": "s"}], "retryPolicy": a6_retry_policy(), "hedgingPolicy": hedging}]});
    assert_eq!(
        service_config(both).unwrap_err().field(),
        "methodConfig[0].hedgingPolicy"
    );
    let orphan = json!({"methodConfig": [{"name": [{"method": "Foo"}]}]});
    assert_eq!(
        service_config(orphan).unwrap_err().field(),
        "methodConfig[0].name[0].method"
    );
    let twice =
        json!({"methodConfig": [{"name": [{"service": "s"}]}, {"name": [{"service": "s", "method": ""}]}]});
    assert_eq!(
        service_config(twice).unwrap_err().field(),
        "methodConfig[1].name[0]"
    );
    let throttling = |t: serde_json::Value| service_config(json!({"retryThrottling": t}));
    assert_eq!(
        throttling(json!({"maxTokens": 1001, "tokenRatio": 0.1}))
            .unwrap_err()
            .field(),
        "retryThrottling.maxTokens"
    );
    assert_eq!(
        throttling(json!({"maxTokens": 10.5, "tokenRatio": 0.1}))
            .unwrap_err()
            .field(),
        "retryThrottling.maxTokens"
    );
    assert_eq!(
        throttling(json!({"maxTokens": 10})).unwrap_err().field(),
        "retryThrottling.tokenRatio"
    );
    assert!(throttling(json!({"maxTokens": 10, "tokenRatio": 0.5466})).is_ok());
}

#[test]
fn the_most_specific_method_config_wins() {
    // grpc service_config.proto's example: MyService/Foo takes the third entry, MyService/Bar the
    // second, AnotherService/Baz the first.
    let policy = |n: u32| json!({"maxAttempts": n, "hedgingDelay": "0s"});
    let config = service_config(json!({"loadBalancingPolicy": "round_robin", "methodConfig": [
        {"name": [{}], "hedgingPolicy": policy(2), "timeout": "1s"},
        {"name": [{"service": "MyService"}], "hedgingPolicy": policy(3)},
        {"name": [{"service": "MyService", "method": "Foo"}], "hedgingPolicy": policy(4)},
    ]}))
    .unwrap();
    let attempts = |s: &str, m: &str| match config.matched(s, m) {
        Some((how, MethodPolicy::Hedging(h))) => (how, h.max_attempts),
        other => panic!("{other:?}"),
    };
    assert_eq!(attempts("MyService", "Foo"), ("exact", 4));
    assert_eq!(attempts("MyService", "Bar"), ("service", 3));
    assert_eq!(attempts("AnotherService", "Baz"), ("default", 2));
    assert_eq!(
        attempts("", ""),
        ("default", 2),
        "no service name: the default config"
    );
    // The longest proto3 duration is past u64 nanoseconds: it reads as the most there is.
    let longest = retry_policy(json!({"maxAttempts": 2, "initialBackoff": "315576000000s",
        "maxBackoff": "315576000000s", "backoffMultiplier": 1, "retryableStatusCodes": [14]}));
    assert_eq!(longest.initial_backoff_ns, u64::MAX);
    let none = service_config(
        json!({"methodConfig": [{"name": [{"service": "A"}], "retryPolicy": a6_retry_policy()}]}),
    );
    assert_eq!(none.unwrap().policy_for("B", "x"), MethodPolicy::None);
}

fn attempt(status: GrpcCode) -> GrpcAttempt {
    GrpcAttempt {
        status,
        pushback: Vec::new(),
        committed: false,
        reach: AttemptReach::Processed,
    }
}

fn state(attempts: u32, retries_since_pushback: u32) -> GrpcRetryState {
    GrpcRetryState {
        attempts,
        retries: attempts - 1,
        retries_since_pushback,
        elapsed_ms: 0,
        deadline_ms: None,
    }
}

fn decide(s: &GrpcRetryState, a: &GrpcAttempt, r: f64, jitter: GrpcJitter) -> GrpcRetryDecision {
    grpc_retry(
        Some(&retry_policy(a6_retry_policy())),
        s,
        a,
        Some(r),
        jitter,
        None,
    )
    .unwrap()
}

#[test]
fn the_backoff_grows_from_initial_to_max_and_the_draw_picks_within_it() {
    use GrpcJitter::*;
    let unavailable = attempt(GrpcCode::Unavailable);
    // random(0, 100 ms) with r = 0.5; then random(0, 200 ms); past 1 s the bound stays 1 s.
    let d = decide(&state(1, 0), &unavailable, 0.5, Full);
    assert_eq!(
        (d.action, d.delay_ms, d.rule),
        (GrpcAction::Retry, Some(50), "exponential_backoff")
    );
    assert_eq!(
        d.next.map(|n| (n.attempts, n.retries, n.retries_since_pushback)),
        Some((2, 1, 1))
    );
    assert_eq!(decide(&state(2, 1), &unavailable, 0.5, Full).delay_ms, Some(100));
    assert_eq!(
        decide(
            &GrpcRetryState {
                retries: 1,
                ..state(1, 5)
            },
            &unavailable,
            0.5,
            Full
        )
        .delay_ms,
        Some(500)
    );
    // grpc-go's jitter: 0.8 to 1.2 times the bound.
    assert_eq!(
        decide(&state(1, 0), &unavailable, 0.5, PlusMinus20Percent).delay_ms,
        Some(100)
    );
    assert_eq!(
        decide(&state(1, 0), &unavailable, 0.0, PlusMinus20Percent).delay_ms,
        Some(80)
    );
    assert_eq!(
        decide(&state(1, 0), &unavailable, 0.999_999, PlusMinus20Percent).delay_ms,
        Some(119)
    );
    let last = decide(&state(4, 3), &unavailable, 0.5, Full);
    assert_eq!(
        (last.action, last.rule),
        (GrpcAction::Fail, "max_attempts_reached")
    );
    assert_eq!(
        last.throttle,
        Some(ThrottleEvent::Failure),
        "a retryable status is a throttling failure"
    );
}

#[test]
fn ok_a_fatal_status_and_a_commit_are_never_retried() {
    let d = decide(&state(1, 0), &attempt(GrpcCode::Ok), 0.5, GrpcJitter::Full);
    assert_eq!(
        (d.action, d.rule, d.throttle),
        (GrpcAction::Succeeded, "ok", Some(ThrottleEvent::Success))
    );
    let d = decide(&state(1, 0), &attempt(GrpcCode::Internal), 0.5, GrpcJitter::Full);
    assert_eq!(
        (d.action, d.rule, d.throttle),
        (GrpcAction::Fail, "status_not_retryable", None)
    );
    let committed = GrpcAttempt {
        committed: true,
        ..attempt(GrpcCode::Unavailable)
    };
    assert_eq!(
        decide(&state(1, 0), &committed, 0.5, GrpcJitter::Full).rule,
        "committed"
    );
    let none = grpc_retry(
        None,
        &state(1, 0),
        &attempt(GrpcCode::Unavailable),
        None,
        GrpcJitter::Full,
        None,
    );
    assert_eq!(none.unwrap().rule, "no_retry_policy");
}

#[test]
fn transparent_retries_go_at_once_and_are_not_counted() {
    let never_sent = GrpcAttempt {
        reach: AttemptReach::NeverSent,
        ..attempt(GrpcCode::Unavailable)
    };
    // Even with no policy, and on any attempt: "until a success occurs, or the RPC's deadline passes".
    let d = grpc_retry(None, &state(3, 0), &never_sent, None, GrpcJitter::Full, None).unwrap();
    assert_eq!(
        (d.action, d.delay_ms, d.transparent),
        (GrpcAction::Retry, Some(0), true)
    );
    assert_eq!(d.next.map(|n| (n.attempts, n.retries)), Some((3, 3)));
    let unprocessed = GrpcAttempt {
        reach: AttemptReach::Unprocessed,
        ..attempt(GrpcCode::Internal)
    };
    // Once, on the call's first attempt; later the policy decides (INTERNAL is not retryable).
    assert_eq!(
        decide(&state(1, 0), &unprocessed, 0.5, GrpcJitter::Full).rule,
        "transparent_unprocessed"
    );
    assert_eq!(
        decide(&state(2, 1), &unprocessed, 0.5, GrpcJitter::Full).rule,
        "status_not_retryable"
    );
    let late = GrpcRetryState {
        elapsed_ms: 1000,
        deadline_ms: Some(1000),
        ..state(1, 0)
    };
    assert_eq!(
        decide(&late, &never_sent, 0.5, GrpcJitter::Full).rule,
        "deadline_reached"
    );
}

#[test]
fn pushback_replaces_the_backoff_or_stops_retrying() {
    let pushed = |values: &[&str]| GrpcAttempt {
        pushback: values.iter().map(|v| v.to_string()).collect(),
        ..attempt(GrpcCode::Unavailable)
    };
    let d = decide(&state(2, 3), &pushed(&["250"]), 0.5, GrpcJitter::Full);
    assert_eq!(
        (d.delay_ms, d.pushback_ms, d.rule),
        (Some(250), Some(250), "pushback")
    );
    assert_eq!(
        d.next.map(|n| n.retries_since_pushback),
        Some(0),
        "the backoff restarts at initialBackoff"
    );
    for (values, rule) in [
        (&["-1"][..], "pushback_negative"),
        (&["abc"][..], "pushback_malformed"),
        (&["2147483648"][..], "pushback_malformed"),
        (&["1", "2"][..], "pushback_multiple_values"),
    ] {
        let d = decide(&state(1, 0), &pushed(values), 0.5, GrpcJitter::Full);
        assert_eq!(
            (d.action, d.rule, d.throttle),
            (GrpcAction::Fail, rule, Some(ThrottleEvent::Failure))
        );
    }
    // "If the client has already exhausted its maxAttempts, the call will not be retried even if
    // the server says to retry after a given delay."
    assert_eq!(
        decide(&state(4, 0), &pushed(&["10"]), 0.5, GrpcJitter::Full).rule,
        "max_attempts_reached"
    );
}

#[test]
fn a_wait_that_reaches_the_deadline_ends_the_call() {
    let s = GrpcRetryState {
        elapsed_ms: 950,
        deadline_ms: Some(1000),
        ..state(1, 0)
    };
    let d = decide(&s, &attempt(GrpcCode::Unavailable), 0.99, GrpcJitter::Full);
    assert_eq!((d.action, d.rule), (GrpcAction::Fail, "deadline_before_retry"));
    let d = decide(&s, &attempt(GrpcCode::Unavailable), 0.4, GrpcJitter::Full);
    assert_eq!((d.action, d.delay_ms), (GrpcAction::Retry, Some(40)));
}

fn bucket(tokens_milli: u64) -> RetryBudget {
    let doc: BudgetDocument =
        serde_json::from_value(json!({"kind": "token_bucket", "max_tokens": 10, "token_ratio": 0.1}))
            .unwrap();
    let config = BudgetConfig::from_document(&doc, "budget").unwrap();
    let snapshot =
        serde_json::from_value(json!({"version": 1, "kind": "token_bucket", "balance": tokens_milli}))
            .unwrap();
    RetryBudget::restore(&config, &snapshot, "state").unwrap()
}

#[test]
fn throttling_counts_retryable_failures_and_refuses_at_half() {
    let policy = retry_policy(a6_retry_policy());
    let mut b = bucket(6_000);
    let d = grpc_retry(
        Some(&policy),
        &state(1, 0),
        &attempt(GrpcCode::Unavailable),
        Some(0.5),
        GrpcJitter::Full,
        Some((&mut b, 0)),
    )
    .unwrap();
    assert_eq!(
        (d.action, d.rule),
        (GrpcAction::Fail, "token_bucket_at_or_below_half"),
        "6 - 1 = 5 tokens: at half"
    );
    assert_eq!(b.snapshot(), bucket(5_000).snapshot());
    // A status that is not retryable takes no token; a success adds tokenRatio.
    let mut b = bucket(6_000);
    grpc_retry(
        Some(&policy),
        &state(1, 0),
        &attempt(GrpcCode::NotFound),
        Some(0.5),
        GrpcJitter::Full,
        Some((&mut b, 0)),
    )
    .unwrap();
    grpc_retry(
        Some(&policy),
        &state(1, 0),
        &attempt(GrpcCode::Ok),
        Some(0.5),
        GrpcJitter::Full,
        Some((&mut b, 0)),
    )
    .unwrap();
    assert_eq!(b.snapshot(), bucket(6_100).snapshot());
}

fn a6_hedging() -> HedgingPolicy {
    let doc: HedgingPolicyDocument = serde_json::from_value(
        json!({"maxAttempts": 4, "hedgingDelay": "0.5s", "nonFatalStatusCodes": ["UNAVAILABLE", "INTERNAL", "ABORTED"]}),
    )
    .unwrap();
    doc.validate("hedgingPolicy", &ClientOptions::default()).unwrap()
}

fn ended(status: GrpcCode, pushback: &[&str]) -> HedgeEvent {
    HedgeEvent::AttemptEnded {
        attempt: GrpcAttempt {
            pushback: pushback.iter().map(|v| v.to_string()).collect(),
            ..attempt(status)
        },
    }
}

/// A hedging step as the tests read it: (send, next hedge in ms, cancel others, end, rule).
type Seen = (u32, Option<u64>, bool, Option<HedgeEnd>, &'static str);

/// Replays `events`; each step as [`Seen`].
fn hedge(policy: &HedgingPolicy, events: &[HedgeEvent]) -> Vec<Seen> {
    let mut s = HedgeState::default();
    events
        .iter()
        .map(|e| {
            let step = grpc_hedge(policy, &s, e, None).unwrap();
            s = step.state;
            (
                step.send,
                step.next_hedge_in_ms,
                step.cancel_others,
                step.end,
                step.rule,
            )
        })
        .collect()
}

#[test]
fn hedges_go_every_delay_and_at_once_after_a_non_fatal_status() {
    use GrpcCode::*;
    let steps = hedge(
        &a6_hedging(),
        &[
            HedgeEvent::Start,
            HedgeEvent::HedgeDue,
            ended(Unavailable, &[]),
            ended(Internal, &["100"]),
            HedgeEvent::HedgeDue,
            ended(Ok, &[]),
        ],
    );
    assert_eq!(
        steps,
        [
            (1, Some(500), false, None, "original_attempt"),
            (1, Some(500), false, None, "hedging_delay_over"),
            (1, Some(500), false, None, "non_fatal_status"),
            (0, Some(100), false, None, "pushback"),
            (1, None, false, None, "hedging_delay_over"),
            (0, None, true, Some(HedgeEnd::Succeeded), "ok"),
        ]
    );
}

#[test]
fn a_fatal_status_ends_the_call_and_all_failing_ends_it_with_the_last() {
    use GrpcCode::*;
    let fatal = hedge(
        &a6_hedging(),
        &[
            HedgeEvent::Start,
            HedgeEvent::HedgeDue,
            ended(InvalidArgument, &[]),
        ],
    );
    assert_eq!(fatal[2], (0, None, true, Some(HedgeEnd::Failed), "fatal_status"));
    let two: HedgingPolicy = HedgingPolicy {
        max_attempts: 2,
        ..a6_hedging()
    };
    let all = hedge(
        &two,
        &[
            HedgeEvent::Start,
            HedgeEvent::HedgeDue,
            ended(Unavailable, &[]),
            ended(Aborted, &[]),
        ],
    );
    assert_eq!(all[2], (0, None, false, None, "max_attempts_reached"));
    assert_eq!(
        all[3],
        (0, None, false, Some(HedgeEnd::Failed), "max_attempts_reached")
    );
    let stop = hedge(&a6_hedging(), &[HedgeEvent::Start, ended(Unavailable, &["-5"])]);
    assert_eq!(
        stop[1],
        (0, None, false, Some(HedgeEnd::Failed), "pushback_negative")
    );
    let at_once = hedge(
        &HedgingPolicy {
            hedging_delay_ns: 0,
            ..a6_hedging()
        },
        &[HedgeEvent::Start],
    );
    assert_eq!(at_once[0], (4, None, false, None, "all_attempts_at_once"));
}

#[test]
fn hedges_ask_the_bucket_and_events_out_of_order_are_refused() {
    let mut b = bucket(5_000);
    let start = grpc_hedge(
        &a6_hedging(),
        &HedgeState::default(),
        &HedgeEvent::Start,
        Some((&mut b, 0)),
    )
    .unwrap();
    assert_eq!(start.send, 1, "the first attempt always goes");
    let due = grpc_hedge(
        &a6_hedging(),
        &start.state,
        &HedgeEvent::HedgeDue,
        Some((&mut b, 0)),
    )
    .unwrap();
    assert_eq!(
        (due.send, due.rule, due.state.stopped),
        (0, "token_bucket_at_or_below_half", true)
    );
    assert!(grpc_hedge(&a6_hedging(), &HedgeState::default(), &HedgeEvent::HedgeDue, None).is_err());
    assert!(grpc_hedge(&a6_hedging(), &start.state, &HedgeEvent::Start, None).is_err());
}

#[test]
fn review_findings_a_commit_with_nothing_out_and_a_multiplier_of_one() {
    // Found by review: a commit with no attempt out wedged the machine (no send, no timer, no end).
    let s = grpc_hedge(&a6_hedging(), &HedgeState::default(), &HedgeEvent::Start, None).unwrap();
    let pushed = grpc_hedge(
        &a6_hedging(),
        &s.state,
        &ended(GrpcCode::Unavailable, &["100"]),
        None,
    )
    .unwrap();
    assert_eq!(pushed.state.outstanding, 0);
    assert!(grpc_hedge(&a6_hedging(), &pushed.state, &HedgeEvent::Committed, None).is_err());
    // A multiplier of 1 keeps the bound at initialBackoff however many retries (and answers at once).
    let flat = retry_policy(
        json!({"maxAttempts": 2, "initialBackoff": "0.1s", "maxBackoff": "1s",
        "backoffMultiplier": 1, "retryableStatusCodes": [14]}),
    );
    assert_eq!(backoff_bound_ns(&flat, u32::MAX), 100_000_000.0);
}

fn g(b: &mut retrypolicy::CircuitBreaker) -> retrypolicy::Guards<'_> {
    retrypolicy::Guards {
        budget: None,
        breaker: Some(b),
    }
}

#[test]
fn review_findings_a_transparent_retry_frees_its_canary_and_a_network_failure_is_a_failure() {
    use retrypolicy::{BreakerConfig, BreakerOutcome, CircuitBreaker, Clock, Outcome, Run, RunConfig};
    let config: RunConfig = serde_json::from_value(
        json!({"rules": {"grpc": {"retry_policy": a6_retry_policy()}}, "timeout_ms": 60000}),
    )
    .unwrap();
    let mut b = CircuitBreaker::new(&BreakerConfig {
        volume_threshold: 1,
        sleep_window_ms: 100,
        ..BreakerConfig::default()
    });
    b.record(0, BreakerOutcome::Failure);
    let mut run = Run::new(config.clone()).unwrap();

    let s = run.start(Clock::at(200.0), g(&mut b)).unwrap();
    assert_eq!(s.breaker.map(|v| v.canary), Some(true));
    let never_sent = Outcome::Network { sent: Some(false) };
    let s = run
        .attempt_ended(&never_sent, Clock::at(201.0), g(&mut b), None)
        .unwrap();
    assert_eq!((s.rule, s.delay_ms), ("transparent_never_sent", Some(0)));
    // The canary was released, so the transparent resend goes at once as the next canary.
    let s = run.wait_ended(Clock::at(201.0), g(&mut b)).unwrap();
    assert_eq!(
        (s.action, s.breaker.map(|v| v.canary)),
        (retrypolicy::RunAction::Send, Some(true))
    );
    // With no policy, a timeout is not retried, yet it is a failure for the breaker and ends timed out.
    let no_policy: RunConfig =
        serde_json::from_value(json!({"rules": {"grpc": {}}, "timeout_ms": 60000})).unwrap();
    let mut b = CircuitBreaker::new(&BreakerConfig {
        volume_threshold: 1,
        ..BreakerConfig::default()
    });
    let mut run = Run::new(no_policy).unwrap();
    run.start(Clock::at(0.0), g(&mut b)).unwrap();
    let s = run
        .attempt_ended(&Outcome::Timeout, Clock::at(5.0), g(&mut b), None)
        .unwrap();
    assert_eq!(s.end, Some(retrypolicy::RunEnd::TimedOut));
    assert_eq!(
        s.breaker_changes
            .iter()
            .map(|c| c.rule.name())
            .collect::<Vec<_>>(),
        ["breaker_tripped"]
    );
}

#[test]
fn the_client_cap_is_at_least_two() {
    assert_eq!(
        ClientOptions::with_cap(5, "cap").unwrap(),
        ClientOptions::default()
    );
    let e = ClientOptions::with_cap(1, "maxAttemptsCap").unwrap_err();
    assert_eq!((e.code(), e.field()), ("out_of_range", "maxAttemptsCap"));
}

// ---- Review of issue 28 (gRPC and AWS in the core): each defect found, as a test ----

fn never_sent() -> GrpcAttempt {
    GrpcAttempt {
        reach: AttemptReach::NeverSent,
        ..attempt(GrpcCode::Unavailable)
    }
}

/// A run of `rules` (a run's JSON form) with the bounds `bounds` merged in.
fn grpc_run(bounds: serde_json::Value) -> retrypolicy::Run {
    let mut config = json!({"rules": {"grpc": {"retry_policy": a6_retry_policy()}}});
    for (k, v) in bounds.as_object().unwrap() {
        config[k] = v.clone();
    }
    retrypolicy::Run::new(serde_json::from_value(config).unwrap()).unwrap()
}

#[test]
fn review_transparent_retries_are_bounded_by_the_run_and_by_grpc_javas_limit() {
    use retrypolicy::{Clock, Guards, Outcome, RunAction, RunDecision, RunEnd};
    // grpc-java (RetriableStream: `localOnlyTransparentRetries.incrementAndGet() > 1_000`) fails
    // the call at the 1,001st attempt that never left the client.
    let after = |transparent: u32| GrpcRetryState {
        retries: transparent,
        ..state(1, 0)
    };
    let d = grpc_retry(None, &after(999), &never_sent(), None, GrpcJitter::Full, None).unwrap();
    assert_eq!((d.action, d.rule), (GrpcAction::Retry, "transparent_never_sent"));
    let d = grpc_retry(None, &after(1000), &never_sent(), None, GrpcJitter::Full, None).unwrap();
    assert_eq!(
        (d.action, d.rule, d.delay_ms, d.next),
        (GrpcAction::Fail, "transparent_retries_exhausted", None, None)
    );
    // Two attempts with the policy's counted retries between them: still 1,000 transparent.
    let counted = GrpcRetryState {
        attempts: 3,
        retries: 1002,
        ..state(1, 0)
    };
    let d = grpc_retry(None, &counted, &never_sent(), None, GrpcJitter::Full, None).unwrap();
    assert_eq!(d.rule, "transparent_retries_exhausted");

    // The run's own max_attempts counts every attempt sent, transparent resends included.
    let network = Outcome::Network { sent: Some(false) };
    let mut run = grpc_run(json!({"max_attempts": 2}));
    run.start(Clock::at(0.0), Guards::none()).unwrap();
    let s = run
        .attempt_ended(&network, Clock::at(1.0), Guards::none(), None)
        .unwrap();
    assert_eq!((s.action, s.rule), (RunAction::Wait, "transparent_never_sent"));
    run.wait_ended(Clock::at(1.0), Guards::none()).unwrap();
    let s = run
        .attempt_ended(&network, Clock::at(2.0), Guards::none(), None)
        .unwrap();
    assert_eq!(
        (s.action, s.end, s.rule),
        (RunAction::Done, Some(RunEnd::GaveUp), "max_attempts_reached")
    );
    match s.decision {
        Some(RunDecision::Grpc(d)) => assert_eq!(
            (d.action, d.delay_ms, d.transparent, d.next, d.rule),
            (GrpcAction::Fail, None, false, None, "max_attempts_reached")
        ),
        other => panic!("{other:?}"),
    }
    // With neither bound, a run that never gets an attempt out still ends.
    let mut run = grpc_run(json!({}));
    let mut s = run.start(Clock::at(0.0), Guards::none()).unwrap();
    while s.action != RunAction::Done {
        s = match s.action {
            RunAction::Send => run.attempt_ended(&network, Clock::at(0.0), Guards::none(), None),
            _ => run.wait_ended(Clock::at(0.0), Guards::none()),
        }
        .unwrap();
        assert!(
            run.attempts_sent() <= 1001,
            "a transparent retry past grpc-java's bound"
        );
    }
    assert_eq!(
        (s.rule, s.end, run.attempts_sent()),
        ("transparent_retries_exhausted", Some(RunEnd::GaveUp), 1001)
    );
}

fn with_budget(b: &mut RetryBudget) -> retrypolicy::Guards<'_> {
    retrypolicy::Guards {
        budget: Some(b),
        breaker: None,
    }
}

#[test]
fn review_a_done_step_never_carries_a_retry_decision() {
    use retrypolicy::{Clock, Guards, Outcome, RunDecision, RunEnd};
    let unavailable = Outcome::Grpc {
        status: GrpcCode::Unavailable,
        pushback: Vec::new(),
        committed: false,
        reach: AttemptReach::Processed,
    };
    // The budget refuses the retry the policy wanted.
    let mut b = bucket(6_000);
    let mut run = grpc_run(json!({"timeout_ms": 60000}));
    run.start(Clock::at(0.0), with_budget(&mut b)).unwrap();
    let mut clock = Clock::at(1.0);
    clock.random = Some(0.5);
    let s = run
        .attempt_ended(&unavailable, clock, with_budget(&mut b), None)
        .unwrap();
    assert_eq!(
        (s.end, s.rule),
        (Some(RunEnd::GaveUp), "token_bucket_at_or_below_half")
    );
    match s.decision {
        Some(RunDecision::Grpc(d)) => {
            assert_eq!(
                (d.action, d.delay_ms, d.next, d.rule),
                (GrpcAction::Fail, None, None, "token_bucket_at_or_below_half")
            );
            assert_eq!(d.budget.map(|v| v.permitted), Some(false));
        }
        other => panic!("{other:?}"),
    }
    // The run's max_attempts ends it where the policy would retry.
    let mut run = grpc_run(json!({"max_attempts": 1}));
    run.start(Clock::at(0.0), Guards::none()).unwrap();
    let s = run
        .attempt_ended(&unavailable, clock, Guards::none(), None)
        .unwrap();
    match s.decision {
        Some(RunDecision::Grpc(d)) => assert_eq!(
            (d.action, d.delay_ms, d.rule),
            (GrpcAction::Fail, None, "max_attempts_reached")
        ),
        other => panic!("{other:?}"),
    }
}

/// The same for AWS: a 503 standard mode retries, the run's cap of 1 does not.
#[cfg(feature = "aws")]
#[test]
fn review_an_aws_done_step_never_carries_a_retry_decision() {
    use retrypolicy::aws::{AwsAction, AwsError};
    use retrypolicy::{Clock, Guards, Outcome, RunDecision, RunEnd};
    let mut clock = Clock::at(1.0);
    clock.random = Some(0.5);
    let config = serde_json::from_value(json!({"rules": {"aws": {}}, "max_attempts": 1})).unwrap();
    let mut run = retrypolicy::Run::new(config).unwrap();
    run.start(Clock::at(0.0), Guards::none()).unwrap();
    let outcome = Outcome::Aws {
        error: AwsError {
            status: Some(503),
            ..AwsError::default()
        },
    };
    let s = run.attempt_ended(&outcome, clock, Guards::none(), None).unwrap();
    assert_eq!((s.end, s.rule), (Some(RunEnd::GaveUp), "max_attempts_reached"));
    match s.decision {
        Some(RunDecision::Aws(d)) => assert_eq!(
            (d.action, d.delay_ms, d.rule),
            (AwsAction::NoRetry, None, "max_attempts_reached")
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn review_a_fatal_status_with_pushback_not_to_retry_ends_the_hedged_call() {
    use GrpcCode::*;
    let steps = hedge(
        &a6_hedging(),
        &[
            HedgeEvent::Start,
            HedgeEvent::HedgeDue,
            ended(InvalidArgument, &["-1"]),
        ],
    );
    assert_eq!(steps[2], (0, None, true, Some(HedgeEnd::Failed), "fatal_status"));
    // A6 "Throttling": pushback not to retry counts as a failure (grpc-java counts it too).
    let mut b = bucket(10_000);
    let s = grpc_hedge(&a6_hedging(), &HedgeState::default(), &HedgeEvent::Start, None).unwrap();
    let s = grpc_hedge(
        &a6_hedging(),
        &s.state,
        &ended(InvalidArgument, &["-1"]),
        Some((&mut b, 0)),
    )
    .unwrap();
    assert_eq!(
        (s.end, s.status, s.throttle),
        (
            Some(HedgeEnd::Failed),
            Some(InvalidArgument),
            Some(ThrottleEvent::Failure)
        )
    );
    assert_eq!(b.snapshot(), bucket(9_000).snapshot());
}

#[test]
fn review_a_huge_cap_with_no_hedging_delay_sends_every_attempt_in_one_step() {
    let huge = HedgingPolicy {
        max_attempts: u32::MAX,
        hedging_delay_ns: 0,
        ..a6_hedging()
    };
    let s = grpc_hedge(&huge, &HedgeState::default(), &HedgeEvent::Start, None).unwrap();
    assert_eq!(
        (s.send, s.state.outstanding, s.rule),
        (u32::MAX, u32::MAX, "all_attempts_at_once")
    );
    // A bucket above half lets every hedge go (a hedge takes no token), asked as for one.
    let mut b = bucket(10_000);
    let s = grpc_hedge(
        &huge,
        &HedgeState::default(),
        &HedgeEvent::Start,
        Some((&mut b, 0)),
    )
    .unwrap();
    assert_eq!((s.send, s.state.stopped), (u32::MAX, false));
    assert_eq!(s.budget.map(|v| v.permitted), Some(true));
    assert_eq!(b.snapshot(), bucket(10_000).snapshot());
    // A budget a retry draws from (the AWS quota: 500 tokens, 5 a retry) lets 100 go, then refuses.
    let doc: BudgetDocument =
        serde_json::from_value(json!({"kind": "retry_quota", "capacity": 500, "retry_cost": 5})).unwrap();
    let mut quota = RetryBudget::new(&BudgetConfig::from_document(&doc, "budget").unwrap());
    let s = grpc_hedge(
        &huge,
        &HedgeState::default(),
        &HedgeEvent::Start,
        Some((&mut quota, 0)),
    )
    .unwrap();
    assert_eq!((s.send, s.state.stopped), (101, true));
    assert_eq!(
        (s.rule, s.budget.map(|v| (v.permitted, v.balance))),
        ("retry_quota_exhausted", Some((false, 0)))
    );
}

#[test]
fn review_pushback_not_to_retry_is_a_throttling_failure_without_a_policy() {
    // grpc-go stream.go shouldRetry reads pushback (and throttles) before it looks for a policy; a
    // valid pushback without a policy: no retry, and no throttling failure.
    for (pushback, rule, throttle, balance) in [
        ("-1", "pushback_negative", Some(ThrottleEvent::Failure), 9_000),
        ("10", "no_retry_policy", None, 10_000),
    ] {
        let pushed = GrpcAttempt {
            pushback: vec![pushback.to_owned()],
            ..attempt(GrpcCode::Unavailable)
        };
        let mut b = bucket(10_000);
        let d = grpc_retry(
            None,
            &state(1, 0),
            &pushed,
            None,
            GrpcJitter::Full,
            Some((&mut b, 0)),
        )
        .unwrap();
        assert_eq!((d.action, d.rule, d.throttle), (GrpcAction::Fail, rule, throttle));
        assert_eq!(b.snapshot(), bucket(balance).snapshot());
    }
}

#[test]
fn review_a_hedge_throttled_at_the_start_stops_hedging() {
    let at_once = HedgingPolicy {
        hedging_delay_ns: 0,
        ..a6_hedging()
    };
    let mut b = bucket(5_000);
    let s = grpc_hedge(
        &at_once,
        &HedgeState::default(),
        &HedgeEvent::Start,
        Some((&mut b, 0)),
    )
    .unwrap();
    assert_eq!(
        (s.send, s.state.stopped, s.rule),
        (1, true, "token_bucket_at_or_below_half")
    );
    // Other calls' successes fill the bucket; the refused hedge still does not go later.
    for _ in 0..30 {
        b.record(0, retrypolicy::BudgetEvent::Success { after_retry: None });
    }
    let s = grpc_hedge(
        &at_once,
        &s.state,
        &ended(GrpcCode::Unavailable, &[]),
        Some((&mut b, 0)),
    )
    .unwrap();
    assert_eq!(
        (s.send, s.end, s.rule),
        (0, Some(HedgeEnd::Failed), "hedging_stopped")
    );
}

#[test]
fn review_a_service_config_is_an_object() {
    for doc in [json!([]), json!([[], null])] {
        assert!(
            serde_json::from_value::<ServiceConfigDocument>(doc.clone()).is_err(),
            "{doc}"
        );
    }
    for doc in [json!({"methodConfig": [[]]}), json!({"retryThrottling": []})] {
        assert!(
            serde_json::from_value::<ServiceConfigDocument>(doc.clone()).is_err(),
            "{doc}"
        );
    }
    assert!(serde_json::from_value::<RetryPolicyDocument>(json!([])).is_err());
    assert!(serde_json::from_value::<HedgingPolicyDocument>(json!([])).is_err());
    assert!(serde_json::from_value::<MethodName>(json!(["s", "m"])).is_err());
    assert!(serde_json::from_value::<ServiceConfigDocument>(json!({})).is_ok());
}
