//! The AWS modes against the SDKs' own test values, and their invariants under proptest.

use proptest::prelude::*;

use super::*;
use crate::budget::{BudgetRule, BudgetVerdict};

fn status(s: u16) -> AwsError {
    AwsError {
        status: Some(s),
        ..AwsError::default()
    }
}

fn config(doc: AwsRetryDocument) -> AwsRetryConfig {
    AwsRetryConfig::from_document(&doc, "config").unwrap()
}

fn behavior_2026() -> AwsRetryDocument {
    AwsRetryDocument {
        behavior: Some(AwsBehavior::Retries2026),
        max_attempts: Some(100),
        ..AwsRetryDocument::default()
    }
}

/// aws-sdk-go-v2 `floatEqual`: within 1e-15.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-15
}

#[test]
fn the_sdk_update_vector_matches_within_the_sdks_epsilon() {
    // aws-sdk-go-v2 aws/retry/adaptive_ratelimit_test.go TestAdaptiveRateLimit_Update "base".
    let expected: [(u64, bool, f64, f64); 17] = [
        (200, false, 0., 0.5),
        (400, false, 0., 0.5),
        (600, false, 4.8, 0.5),
        (800, false, 4.8, 0.5),
        (1000, false, 4.16, 0.5),
        (1200, false, 4.16, 0.6912),
        (1400, false, 4.16, 1.0976),
        (1600, false, 5.632, 1.6384),
        (1800, false, 5.632, 2.3328),
        (2000, true, 4.3264, 3.02848),
        (2200, false, 4.3264, 3.4866391734702598),
        (2400, false, 4.3264, 3.8218744160402554),
        (2600, false, 5.665280, 4.053385727709987),
        (2800, false, 5.665280, 4.200373108479455),
        (3000, false, 4.333056, 4.282036558348658),
        (3200, true, 4.333056, 2.99742559084406),
        (3400, false, 4.333056, 3.4522263943863463),
    ];
    let mut limiter = AdaptiveRateLimiter::new(&RateLimiterConfig::default(), 0);
    for (at, throttled, measured, fill) in expected {
        let u = limiter.record(at, throttled);
        assert!(
            close(u.measured_rate, measured),
            "{at}: measured {}",
            u.measured_rate
        );
        assert!(close(u.fill_rate, fill), "{at}: fill {}", u.fill_rate);
    }
}

#[test]
fn the_sdk_cubic_vector_matches_within_the_sdks_epsilon() {
    // aws-sdk-go-v2 TestAdaptiveRateLimit_cubic "success": lastMaxRate 10, lastThrottleTime 5 s.
    let expected = [
        7.,
        9.64893600966,
        10.000030849917364,
        10.453284520772092,
        13.408697022224185,
        21.26626835427364,
        36.425998516920465,
    ];
    let config = RateLimiterConfig::default();
    let mut state = AdaptiveRateLimiter::new(&config, 0).snapshot();
    state.last_max_rate = 10.0;
    state.last_throttle_ms = 5_000;
    let mut limiter = AdaptiveRateLimiter::restore(&config, &state, "state").unwrap();
    for (i, rate) in expected.into_iter().enumerate() {
        let u = limiter.record(5_000 + 1_000 * i as u64, false);
        assert!(close(u.calculated_rate, rate), "{i}: {}", u.calculated_rate);
    }
}

#[test]
fn an_update_names_its_term_and_the_bound_that_applied() {
    let config = RateLimiterConfig::default();
    let at = |last_max_rate: f64, measured_rate: f64| {
        let mut state = AdaptiveRateLimiter::new(&config, 0).snapshot();
        (state.last_max_rate, state.measured_rate) = (last_max_rate, measured_rate);
        AdaptiveRateLimiter::restore(&config, &state, "state").unwrap()
    };
    let named = |u: RateUpdate| (u.rule, u.bound, u.fill_rate);
    // Measured 8/s, throttled: 0.7 × 8 = 5.6, under 16 and over 0.5.
    assert_eq!(
        named(at(10.0, 8.0).record(100, true)),
        ("throttle_beta", None, 5.6)
    );
    // Measured 20/s, CUBIC from w_max 100 at 0.1 s: about 72, over 2 × 20.
    let capped = named(at(100.0, 20.0).record(100, false));
    assert_eq!(capped, ("cubic_curve", Some("capped_at_twice_measured"), 40.0));
    // Nothing measured yet: the curve (0.4 × 0.2³ from 0) is capped at 0, raised to 0.5.
    let raised = named(at(0.0, 0.0).record(200, false));
    assert_eq!(raised, ("cubic_curve", Some("raised_to_min_fill_rate"), 0.5));
}

#[test]
fn a_wait_told_is_enough_for_the_next_ask() {
    // botocore bucket.py: 10 tokens/s; at 0.15 s half a token, so 50 ms more.
    let config = RateLimiterConfig {
        min_fill_rate: 0.1,
        ..RateLimiterConfig::default()
    };
    let mut state = AdaptiveRateLimiter::new(&config, 0).snapshot();
    (state.enabled, state.fill_rate, state.max_capacity) = (true, 10.0, 10.0);
    let mut limiter = AdaptiveRateLimiter::restore(&config, &state, "state").unwrap();
    assert!(limiter.acquire(100).acquired);
    let v = limiter.acquire(150);
    assert_eq!(
        (v.acquired, v.wait_ms, v.rule),
        (false, Some(50), "wait_for_token")
    );
    assert!(limiter.acquire(200).acquired);
}

#[test]
fn classic_and_2026_ceilings_follow_botocore() {
    // botocore test_standard.py / test_standard_retry_v2_1.py test_range_of_exponential_backoff.
    let classic = config(AwsRetryDocument {
        max_attempts: Some(100),
        ..AwsRetryDocument::default()
    });
    let new = config(behavior_2026());
    let ceilings = |c: &AwsRetryConfig, n: u32| -> Vec<u64> {
        (1..=n)
            .map(|a| {
                aws_decide(c, a, &status(500), Some(0.0), None)
                    .unwrap()
                    .ceiling_ms
                    .unwrap()
            })
            .collect()
    };
    assert_eq!(
        ceilings(&classic, 9),
        [1000, 2000, 4000, 8000, 16000, 20000, 20000, 20000, 20000]
    );
    assert_eq!(
        ceilings(&new, 11),
        [50, 100, 200, 400, 800, 1600, 3200, 6400, 12800, 20000, 20000]
    );
    // No overflow however many attempts.
    assert_eq!(ceilings(&classic, 99)[98], 20_000);
}

#[test]
fn a_refused_quota_keeps_the_retry_cause_and_takes_the_quotas_rule() {
    let refused = BudgetVerdict::of(BudgetRule::RetryQuotaExhausted, 3);
    let error = AwsError {
        timeout: Some(true),
        ..AwsError::default()
    };
    let d = aws_decide(&AwsRetryConfig::default(), 1, &error, Some(0.5), Some(&refused)).unwrap();
    assert_eq!(d.action, AwsAction::NoRetry);
    assert_eq!(d.rule, "retry_quota_exhausted");
    assert_eq!(d.cause, Some(RetryCause::Timeout));
    assert_eq!(d.delay_ms, None);
}

#[test]
fn documents_normalize_and_read_back() {
    for doc in [
        AwsRetryDocument::default(),
        behavior_2026(),
        AwsRetryDocument {
            mode: Some(AwsMode::Legacy),
            service: Some("dynamodb".into()),
            ..AwsRetryDocument::default()
        },
    ] {
        let c = config(doc);
        assert_eq!(config(c.to_document()), c);
    }
    let legacy = config(AwsRetryDocument {
        mode: Some(AwsMode::Legacy),
        service: Some("dynamodb".into()),
        ..AwsRetryDocument::default()
    });
    assert_eq!(legacy.max_attempts, LEGACY_DYNAMODB_MAX_ATTEMPTS);
    let limiter = RateLimiterConfig::default();
    assert_eq!(
        RateLimiterConfig::from_document(&limiter.to_document(), "limiter").unwrap(),
        limiter
    );
}

fn any_error() -> impl Strategy<Value = AwsError> {
    let codes = prop::sample::select(vec![
        None,
        Some("Throttling"),
        Some("RequestTimeout"),
        Some("ValidationException"),
        Some("SlowDown"),
    ]);
    (
        codes,
        prop::option::of(100u16..600),
        any::<bool>(),
        prop::option::of("[-+ ]?[0-9]{0,7}"),
    )
        .prop_map(|(code, status, no_response, retry_after)| {
            if no_response {
                AwsError {
                    connection_error: Some(true),
                    ..AwsError::default()
                }
            } else {
                AwsError {
                    code: code.map(str::to_owned),
                    status,
                    retry_after,
                    ..AwsError::default()
                }
            }
        })
}

fn any_config() -> impl Strategy<Value = AwsRetryConfig> {
    (
        0..3usize,
        any::<bool>(),
        1u32..20,
        prop::sample::select(vec![None, Some("dynamodb"), Some("sqs")]),
        0u64..60_000,
        any::<bool>(),
    )
        .prop_map(
            |(mode, new, max_attempts, service, max_backoff_ms, long_polling)| {
                let mode = [AwsMode::Standard, AwsMode::Adaptive, AwsMode::Legacy][mode];
                let standard = mode != AwsMode::Legacy;
                config(AwsRetryDocument {
                    mode: Some(mode),
                    behavior: (standard && new).then_some(AwsBehavior::Retries2026),
                    max_attempts: Some(u64::from(max_attempts)),
                    service: service.map(str::to_owned),
                    max_backoff_ms: standard.then_some(max_backoff_ms),
                    long_polling: standard.then_some(long_polling),
                    ..AwsRetryDocument::default()
                })
            },
        )
}

proptest! {
    #[test]
    fn delays_stay_within_their_bounds(
        c in any_config(),
        attempts in 1u32..40,
        error in any_error(),
        r in 0.0f64..1.0,
        refused in any::<bool>(),
    ) {
        let verdict = BudgetVerdict::of(BudgetRule::RetryQuotaExhausted, 0);
        let d = aws_decide(&c, attempts, &error, Some(r), refused.then_some(&verdict)).unwrap();
        prop_assert_eq!(d.retryable, d.cause.is_some());
        match d.action {
            AwsAction::Retry => {
                prop_assert!(d.retryable && attempts < c.max_attempts && !refused);
                let (delay, ceiling) = (d.delay_ms.unwrap(), d.ceiling_ms.unwrap());
                if c.mode != AwsMode::Legacy {
                    prop_assert!(ceiling <= c.max_backoff_ms);
                }
                match d.retry_after_ms {
                    // 2026: the wait is the retry-after clamped to [t, t + 5 s], t <= ceiling.
                    Some(ra) => prop_assert!(delay <= ceiling + 5_000 && delay >= ra.min(5_000)),
                    None => prop_assert!(delay <= ceiling),
                }
            }
            AwsAction::NoRetry => {
                prop_assert_eq!(d.delay_ms, None);
                prop_assert!(d.wait_ms.is_none() || (refused && c.long_polling));
            }
        }
    }

    #[test]
    fn the_limiter_keeps_its_rate_and_tokens_in_bounds(
        events in prop::collection::vec((0u64..3_000, any::<bool>(), any::<bool>()), 1..60),
        min_fill_rate in 0.01f64..5.0,
    ) {
        let config = RateLimiterConfig { min_fill_rate, ..RateLimiterConfig::default() };
        let mut limiter = AdaptiveRateLimiter::new(&config, 0);
        let mut now = 0u64;
        for (step, acquire, throttled) in events {
            // Mostly forward, sometimes back: a clock reading never breaks the bounds.
            now = if throttled && step % 7 == 0 { now.saturating_sub(step) } else { now + step };
            if acquire {
                let v = limiter.acquire(now);
                if let Some(wait) = v.wait_ms {
                    prop_assert!(wait >= 1);
                    prop_assert!(limiter.acquire(now + wait).acquired, "waited {} ms at {}", wait, now);
                }
            } else {
                let u = limiter.record(now, throttled);
                prop_assert!(u.fill_rate >= min_fill_rate);
                prop_assert!(u.max_capacity >= 1.0);
                // The named term and bound are the fill rate's.
                prop_assert_eq!(u.rule, if throttled { "throttle_beta" } else { "cubic_curve" });
                let fill = match u.bound {
                    None => u.calculated_rate,
                    Some("capped_at_twice_measured") => 2.0 * u.measured_rate,
                    Some(_) => min_fill_rate,
                };
                prop_assert_eq!(u.fill_rate, fill, "{:?}", u);
            }
            let s = limiter.snapshot();
            prop_assert!(s.fill_rate >= min_fill_rate && s.fill_rate.is_finite());
            prop_assert!(s.capacity >= 0.0 && s.capacity <= s.max_capacity);
            prop_assert!(s.measured_rate >= 0.0 && s.last_bucket_ms % 500 == 0);
            let restored = AdaptiveRateLimiter::restore(&config, &s, "state").unwrap();
            prop_assert_eq!(restored, limiter);
        }
    }
}
