//! The JSON forms of the core's types read through the wire layer: round trips and typed errors.

use proptest::prelude::*;
use retrypolicy::*;
use retrypolicy_wire::{from_json_str, parse_policy};

#[test]
fn bad_policy_json_names_the_field() {
    let e = parse_policy(r#"{"backoff": {"kind": "exponential", "factor": "two"}}"#).unwrap_err();
    assert_eq!(e.code(), "invalid_type");
    let e = parse_policy(r#"{"compat": {"retry_kv_bsy": true}}"#).unwrap_err();
    assert_eq!((e.code(), e.field()), ("unknown_field", "compat.retry_kv_bsy"));
    let e = parse_policy(r#"{"backoff": {"kind": "exponential", "min_ms": 9, "max_ms": 3}}"#).unwrap_err();
    assert_eq!((e.code(), e.field()), ("out_of_range", "backoff.min_ms"));
}

fn any_policy() -> impl Strategy<Value = Policy> {
    (
        0u64..1_000,
        0u64..100_000,
        1.0f64..10.0,
        any::<bool>(),
        0..4usize,
        any::<bool>(),
    )
        .prop_map(|(min_ms, span, factor, zero_first, jitter, fail_fast)| Policy {
            backoff: Backoff::Exponential {
                min_ms,
                max_ms: min_ms + span,
                factor,
                first: if zero_first {
                    FirstDelay::Zero
                } else {
                    FirstDelay::Min
                },
            },
            jitter: [Jitter::None, Jitter::Full, Jitter::Equal, Jitter::Decorrelated][jitter],
            strategy: if fail_fast {
                StrategyKind::FailFast
            } else {
                StrategyKind::BestEffort
            },
            ..Policy::RFC
        })
}

fn any_request() -> impl Strategy<Value = Request> {
    (
        0u32..100,
        any::<u64>(),
        any::<u64>(),
        proptest::option::of(0.0f64..1.0),
        any::<bool>(),
    )
        .prop_map(|(attempts, elapsed_ms, timeout_ms, random, readonly)| {
            let mut r = Request::new(Operation::Query { readonly }, elapsed_ms, timeout_ms);
            r.attempts = attempts;
            r.random = random;
            r.previous_reasons = vec![RetryReason::KvLocked];
            r
        })
}

proptest! {
    #[test]
    fn policies_round_trip_through_json(policy in any_policy()) {
        let back = parse_policy(&policy.to_json()).unwrap();
        prop_assert_eq!(back, policy);
    }

    #[test]
    fn requests_round_trip_through_json(req in any_request()) {
        let text = serde_json::to_string(&req).unwrap();
        let back: Request = from_json_str(&text).unwrap();
        prop_assert_eq!(back, req);
    }

    #[test]
    fn arbitrary_text_never_panics_the_policy_parser(text in ".{0,64}") {
        let _ = parse_policy(&text);
    }
}

/// A variant that has nothing but its tag (`{"kind": "success"}`, `{"event": "start"}`) refuses any
/// other key, naming it, as the enum's other variants do; serde alone would ignore it.
#[cfg(all(feature = "grpc", feature = "mongodb"))]
#[test]
fn a_tag_only_variant_refuses_another_key_naming_it() {
    use retrypolicy::grpc::HedgeEvent;
    use retrypolicy::mongodb::transaction::TransactionEvent;
    use retrypolicy::Outcome;
    use serde_json::json;

    let outcome = |v| retrypolicy_wire::from_json_value::<Outcome>(&v);
    for kind in ["success", "final", "timeout"] {
        assert!(outcome(json!({"kind": kind})).is_ok(), "{kind}");
        let e = outcome(json!({"kind": kind, "status": 503})).unwrap_err();
        assert_eq!((e.code(), e.field()), ("unknown_field", "status"), "{kind}");
    }
    let hedge = |v| retrypolicy_wire::from_json_value::<HedgeEvent>(&v);
    for event in ["start", "hedge_due", "committed"] {
        assert!(hedge(json!({"event": event})).is_ok(), "{event}");
        let e = hedge(json!({"event": event, "attempt": {"status": "OK"}})).unwrap_err();
        assert_eq!((e.code(), e.field()), ("unknown_field", "attempt"), "{event}");
    }
    // An attempt's own fields are named inside it; one left out where it is needed, by its name.
    for (v, code, field) in [
        (
            json!({"event": "attempt_ended", "attempt": {"status": "OK", "x": 1}}),
            "unknown_field",
            "attempt.x",
        ),
        (
            json!({"event": "attempt_ended", "attempt": {}}),
            "missing_field",
            "attempt.status",
        ),
        (
            json!({"event": "attempt_ended", "attempt": {"status": "NOPE"}}),
            "out_of_range",
            "attempt.status",
        ),
        (json!({"event": "attempt_ended"}), "missing_field", "attempt"),
        (json!({"event": "start", "x": 1}), "unknown_field", "x"),
    ] {
        let e = hedge(v.clone()).unwrap_err();
        assert_eq!((e.code(), e.field()), (code, field), "{v}");
    }
    let transaction = |v| retrypolicy_wire::from_json_value::<TransactionEvent>(&v);
    for event in ["begin", "commit_succeeded"] {
        assert!(transaction(json!({"event": event})).is_ok(), "{event}");
        let e = transaction(json!({"event": event, "elapsed_ms": 5})).unwrap_err();
        assert_eq!((e.code(), e.field()), ("unknown_field", "elapsed_ms"), "{event}");
    }
    // Through a whole run: the field is placed in its event.
    let e = retrypolicy_wire::api::call(
        "run",
        &json!({"run": {"rules": {"kind": "http"}}, "events": [
            {"event": "start", "at_ms": 0},
            {"event": "attempt_ended", "at_ms": 1, "outcome": {"kind": "success", "status": 200}}]}),
    )
    .unwrap_err();
    assert_eq!(
        (e.code(), e.field()),
        ("unknown_field", "events[1].outcome.status")
    );
}
