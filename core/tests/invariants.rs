//! Properties that must hold for every input, checked over random ones.

use proptest::prelude::*;
use retrypolicy::operation::KV_CATALOG;
use retrypolicy::*;

fn any_reason() -> impl Strategy<Value = RetryReason> {
    (0..RetryReason::ALL.len()).prop_map(|i| RetryReason::ALL[i])
}

fn any_operation() -> impl Strategy<Value = Operation> {
    prop_oneof![
        (0..KV_CATALOG.len()).prop_map(|i| Operation::Kv(KV_CATALOG[i].operation)),
        any::<bool>().prop_map(|readonly| Operation::Query { readonly }),
        any::<bool>().prop_map(|readonly| Operation::Analytics { readonly }),
        Just(Operation::Search),
        Just(Operation::Views),
        Just(Operation::Management(HttpMethod::Get)),
        Just(Operation::Management(HttpMethod::Post)),
    ]
}

fn any_backoff() -> impl Strategy<Value = Backoff> {
    prop_oneof![
        (0u64..10_000, 0u64..100_000, 1.0f64..10.0, any::<bool>()).prop_map(|(a, b, f, z)| {
            Backoff::Exponential {
                min_ms: a.min(b),
                max_ms: a.max(b),
                factor: f,
                first: if z { FirstDelay::Zero } else { FirstDelay::Min },
            }
        }),
        Just(Backoff::Controlled),
        any::<u64>().prop_map(|delay_ms| Backoff::Fixed { delay_ms }),
    ]
}

fn any_jitter() -> impl Strategy<Value = Jitter> {
    prop_oneof![
        Just(Jitter::None),
        Just(Jitter::Full),
        Just(Jitter::Equal),
        Just(Jitter::Decorrelated)
    ]
}

fn any_policy() -> impl Strategy<Value = Policy> {
    (any_backoff(), any_jitter(), any::<bool>(), any::<[bool; 4]>()).prop_map(|(backoff, jitter, ff, c)| {
        Policy {
            strategy: if ff {
                StrategyKind::FailFast
            } else {
                StrategyKind::BestEffort
            },
            backoff,
            jitter,
            compat: Compat {
                collection_outdated_not_always_retry: c[0],
                retry_kv_busy: c[1],
                query_retry_4040_to_4090: c[2],
                retry_unknown_if_idempotent: c[3],
            },
            ..Policy::default()
        }
    })
}

fn any_request() -> impl Strategy<Value = Request> {
    (
        any_operation(),
        proptest::option::of(any::<bool>()),
        any::<u32>(),
        any::<u64>(),
        any::<u64>(),
        0.0f64..1.0,
        proptest::option::of(any::<u64>()),
    )
        .prop_map(
            |(operation, idempotent, attempts, elapsed_ms, timeout_ms, r, prev)| Request {
                idempotent,
                attempts,
                random: Some(r),
                previous_delay_ms: prev,
                ..Request::new(operation, elapsed_ms, timeout_ms)
            },
        )
}

proptest! {
    #[test]
    fn a_retry_never_ends_past_the_deadline(req in any_request(), reason in any_reason(), policy in any_policy()) {
        let d = decide(&req, reason, &policy).unwrap();
        if let Decision::Retry(r) = d {
            prop_assert!(req.elapsed_ms < req.timeout_ms);
            prop_assert!(r.delay_ms <= req.timeout_ms - req.elapsed_ms);
            prop_assert_eq!(r.then_cancel, r.delay_ms == req.timeout_ms - req.elapsed_ms);
        }
    }

    #[test]
    fn every_entry_point_decides_alike(req in any_request(), reason in any_reason(), policy in any_policy()) {
        // The policy's own strategy as a host strategy, and the two-step form hosts use, must
        // give `decide`'s decision (a per-request override would win over the host: none here).
        let req = Request { strategy: None, ..req };
        let expected = decide(&req, reason, &policy).unwrap();
        let host: Box<dyn RetryStrategy> = match policy.strategy {
            StrategyKind::BestEffort => Box::new(policy.best_effort()),
            StrategyKind::FailFast => Box::new(FailFast),
        };
        prop_assert_eq!(decide_with(&req, reason, &policy, Some(host.as_ref())).unwrap(), expected);
        let two_step = match decide_before_strategy(&req, reason, &policy).unwrap() {
            Some(d) => d,
            None => decide_after_strategy(&req, reason, host.retry_after(&req, reason).unwrap()),
        };
        prop_assert_eq!(two_step, expected);
    }

    #[test]
    fn a_request_at_or_past_its_deadline_is_never_retried(req in any_request(), reason in any_reason(), policy in any_policy()) {
        let req = Request { elapsed_ms: req.timeout_ms.saturating_add(req.elapsed_ms % 3), ..req };
        let d = decide(&req, reason, &policy).unwrap();
        let passed = matches!(d, Decision::NoRetry(NoRetry { cause: NoRetryCause::DeadlinePassed, .. }));
        prop_assert!(passed);
    }

    #[test]
    fn non_idempotent_requests_are_retried_only_when_the_reason_allows(
        req in any_request(), reason in any_reason(), policy in any_policy()
    ) {
        let req = Request { idempotent: Some(false), ..req };
        if decide(&req, reason, &policy).unwrap().is_retry() {
            prop_assert!(reason.allows_non_idempotent_retry());
        }
    }

    #[test]
    fn unknown_is_never_retried_by_default(req in any_request(), policy in any_policy()) {
        let policy = Policy { compat: Compat { retry_unknown_if_idempotent: false, ..policy.compat }, ..policy };
        prop_assert!(!decide(&req, RetryReason::Unknown, &policy).unwrap().is_retry());
    }

    #[test]
    fn always_retry_reasons_retry_under_any_strategy(req in any_request(), policy in any_policy()) {
        let req = Request { strategy: Some(StrategyKind::FailFast), elapsed_ms: 0, timeout_ms: req.timeout_ms.max(1), ..req };
        for reason in [RetryReason::KvNotMyVbucket, RetryReason::ViewsNoActivePartition] {
            let d = decide(&req, reason, &policy).unwrap();
            prop_assert!(d.is_retry());
            prop_assert_eq!(d.rule(), Rule::AlwaysRetryControlledBackoff);
        }
    }

    #[test]
    fn backoff_with_jitter_stays_within_the_calculated_delay(
        b in any_backoff(), attempt in any::<u32>(), r in 0.0f64..1.0, j in prop_oneof![Just(Jitter::Full), Just(Jitter::Equal)]
    ) {
        let base = b.delay(attempt);
        let d = backoff_delay(&b, j, attempt, Some(r), None).unwrap();
        prop_assert!(d <= base);
        if j == Jitter::Equal { prop_assert!(d >= base / 2); }
    }

    #[test]
    fn exponential_backoff_is_monotonic_and_bounded(b in any_backoff(), attempt in 0u32..200) {
        if let Backoff::Exponential { min_ms, max_ms, first, .. } = b {
            let d = b.delay(attempt);
            prop_assert!(d <= max_ms);
            prop_assert!(d >= min_ms || (first == FirstDelay::Zero && attempt == 0));
            prop_assert!(b.delay(attempt + 1) >= d);
        }
    }

    #[test]
    fn kv_statuses_off_the_rfc_list_without_error_map_are_not_retried(status in any::<u16>()) {
        // Unknown codes and named statuses without a rule of their own wait for an error map.
        let c = classify_kv(KvOperation::Get, status, None, &Compat::default());
        let rfc_reason = retrypolicy::classify::kv::kv_status(status).and_then(|s| s.reason());
        if rfc_reason.is_none() {
            prop_assert_eq!(c.reason, None);
        } else {
            prop_assert_eq!(c.reason, rfc_reason);
        }
    }
}
