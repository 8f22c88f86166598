//! Unit tests of libretrypolicy's Rust side (a module of the library, `src/lib.rs`, kept out of
//! `src/`): the mappings the C tests cannot see whole, and the panic boundary.

use std::ffi::CStr;

use retrypolicy::RetryReason;

use crate::enums::{CEnum, Either};
use crate::error::{result_for_code, CODES};
use crate::ffi::intern;
use crate::panic::{ffi_boundary, guard};
use crate::*;

/// This thread's last-error detail.
fn last_error() -> String {
    // SAFETY: rp_last_error_message returns a NUL-terminated string, valid until the next failure.
    unsafe { CStr::from_ptr(rp_last_error_message()) }
        .to_str()
        .unwrap()
        .to_owned()
}

#[test]
fn runtime_version_is_the_package_version() {
    // SAFETY: rp_version returns a static NUL-terminated string.
    let v = unsafe { CStr::from_ptr(rp_version()) };
    assert_eq!(v.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
    assert_eq!(v.to_str().unwrap(), retrypolicy::VERSION);
}

#[test]
fn the_c_array_of_changes_holds_every_change_one_call_can_make() {
    assert_eq!(RP_BREAKER_MAX_CHANGES, retrypolicy::MAX_BREAKER_CHANGES);
}

#[test]
fn every_core_code_has_its_own_number() {
    let mut seen = Vec::new();
    for code in retrypolicy::Error::ALL_CODES {
        let r = result_for_code(code);
        assert_ne!(r, RP_RESULT_OTHER_ERROR, "core code {code} has no rp_result");
        assert!(r.0 > 0 && r.0 < 100, "{code} must be in 1..=99");
        assert!(!seen.contains(&r), "{code} shares a number");
        seen.push(r);
    }
}

#[test]
fn result_numbers_and_names_are_unique() {
    for (i, (r, name)) in CODES.iter().enumerate() {
        for (s, other) in &CODES[i + 1..] {
            assert_ne!(r, s);
            assert_ne!(name, other);
        }
        assert!(!name.is_empty(), "{r:?}");
    }
}

/// Each constant once, each core value once, and both directions agree.
fn one_to_one<C: CEnum + PartialEq>()
where
    C::Core: PartialEq + std::fmt::Debug,
{
    for (i, (c, v)) in C::ALL.iter().enumerate() {
        assert!(
            c.core() == Some(*v),
            "{} {} maps elsewhere",
            C::TYPE_NAME,
            c.raw()
        );
        assert!(
            C::from_core(*v) == Some(*c),
            "{} {v:?} maps elsewhere",
            C::TYPE_NAME
        );
        for (d, w) in &C::ALL[i + 1..] {
            assert!(c != d && v != w, "duplicate row in {}", C::TYPE_NAME);
        }
    }
}

#[test]
fn every_core_value_has_exactly_one_c_constant() {
    one_to_one::<rp_reason>();
    for r in RetryReason::ALL {
        assert!(rp_reason::from_core(r).is_some(), "{r} has no rp_reason");
    }
    one_to_one::<rp_kv_operation>();
    for row in retrypolicy::operation::KV_CATALOG {
        assert!(
            rp_kv_operation::from_core(row.operation).is_some(),
            "{}",
            row.name
        );
    }
    one_to_one::<rp_service>();
    one_to_one::<rp_http_method>();
    one_to_one::<rp_strategy>();
    one_to_one::<rp_no_retry_cause>();
    one_to_one::<rp_rule>();
    one_to_one::<rp_retry_cause>();
    one_to_one::<rp_budget_event>();
    one_to_one::<rp_budget_kind>();
    one_to_one::<rp_budget_rule>();
    one_to_one::<rp_breaker_outcome>();
    one_to_one::<rp_breaker_state>();
    one_to_one::<rp_breaker_rule>();
    one_to_one::<rp_breaker_change_rule>();
    one_to_one::<rp_run_action>();
    one_to_one::<rp_run_end>();
    one_to_one::<rp_grpc_code>();
    one_to_one::<rp_grpc_reach>();
    one_to_one::<rp_grpc_jitter>();
    one_to_one::<rp_grpc_action>();
    one_to_one::<rp_grpc_throttle>();
    one_to_one::<rp_grpc_hedge_event>();
    one_to_one::<rp_grpc_hedge_end>();
    one_to_one::<rp_grpc_match>();
    one_to_one::<rp_aws_mode>();
    one_to_one::<rp_aws_behavior>();
    one_to_one::<rp_aws_retryable_trait>();
    one_to_one::<rp_aws_action>();
    assert_eq!(rp_reason(21).core(), None);
    assert_eq!(rp_rule(u32::MAX).core(), None);
}

/// Every constant of `C` has the core value's serde name, which parses back to it.
fn names_round_trip<C: CEnum + PartialEq + std::fmt::Debug>(kind: rp_enum) {
    for (c, _) in C::ALL {
        let (mut name, mut back) = (std::ptr::null(), u32::MAX);
        // SAFETY: valid out-pointers; the name is static and NUL-terminated.
        unsafe {
            assert_eq!(rp_enum_name(kind, c.raw(), &mut name), RP_RESULT_OK, "{c:?}");
            if name.is_null() {
                continue; // RP_NO_RETRY_CAUSE_NONE
            }
            assert_eq!(rp_enum_from_name(kind, name, &mut back), RP_RESULT_OK, "{c:?}");
        }
        assert_eq!(back, c.raw());
    }
}

#[test]
fn every_named_constant_round_trips_through_its_name() {
    names_round_trip::<rp_reason>(RP_ENUM_REASON);
    names_round_trip::<rp_service>(RP_ENUM_SERVICE);
    names_round_trip::<rp_kv_operation>(RP_ENUM_KV_OPERATION);
    names_round_trip::<rp_http_method>(RP_ENUM_HTTP_METHOD);
    names_round_trip::<rp_strategy>(RP_ENUM_STRATEGY);
    names_round_trip::<rp_no_retry_cause>(RP_ENUM_NO_RETRY_CAUSE);
    names_round_trip::<rp_rule>(RP_ENUM_RULE);
    names_round_trip::<rp_retry_cause>(RP_ENUM_RETRY_CAUSE);
    names_round_trip::<rp_budget_event>(RP_ENUM_BUDGET_EVENT);
    names_round_trip::<rp_budget_kind>(RP_ENUM_BUDGET_KIND);
    names_round_trip::<rp_budget_rule>(RP_ENUM_BUDGET_RULE);
    names_round_trip::<rp_breaker_outcome>(RP_ENUM_BREAKER_OUTCOME);
    names_round_trip::<rp_breaker_state>(RP_ENUM_BREAKER_STATE);
    names_round_trip::<rp_breaker_rule>(RP_ENUM_BREAKER_RULE);
    names_round_trip::<rp_breaker_change_rule>(RP_ENUM_BREAKER_CHANGE_RULE);
    names_round_trip::<rp_run_action>(RP_ENUM_RUN_ACTION);
    names_round_trip::<rp_run_end>(RP_ENUM_RUN_END);
    names_round_trip::<rp_run_signal>(RP_ENUM_RUN_SIGNAL);
    names_round_trip::<rp_grpc_code>(RP_ENUM_GRPC_CODE);
    names_round_trip::<rp_grpc_reach>(RP_ENUM_GRPC_REACH);
    names_round_trip::<rp_grpc_jitter>(RP_ENUM_GRPC_JITTER);
    names_round_trip::<rp_grpc_action>(RP_ENUM_GRPC_ACTION);
    names_round_trip::<rp_grpc_throttle>(RP_ENUM_GRPC_THROTTLE);
    names_round_trip::<rp_grpc_hedge_event>(RP_ENUM_GRPC_HEDGE_EVENT);
    names_round_trip::<rp_grpc_hedge_end>(RP_ENUM_GRPC_HEDGE_END);
    names_round_trip::<rp_grpc_match>(RP_ENUM_GRPC_MATCH);
    names_round_trip::<rp_aws_mode>(RP_ENUM_AWS_MODE);
    names_round_trip::<rp_aws_behavior>(RP_ENUM_AWS_BEHAVIOR);
    names_round_trip::<rp_aws_retryable_trait>(RP_ENUM_AWS_RETRYABLE_TRAIT);
    names_round_trip::<rp_aws_action>(RP_ENUM_AWS_ACTION);
}

#[test]
fn every_grpc_and_aws_value_has_a_c_constant_numbered_as_grpc_numbers_it() {
    use retrypolicy::aws::{AwsAction, AwsBehavior, AwsMode};
    use retrypolicy::grpc::{DEFAULT_MAX_ATTEMPTS_CAP, GRPC_CODES};
    // A status code's C number is its gRPC number (doc/statuscodes.md).
    for code in GRPC_CODES {
        assert_eq!(
            rp_grpc_code::from_core(code).map(|c| c.0),
            Some(u32::from(code.number())),
            "{code}"
        );
    }
    assert_eq!(rp_grpc_code(17).core(), None);
    for mode in [AwsMode::Standard, AwsMode::Adaptive, AwsMode::Legacy] {
        assert!(rp_aws_mode::from_core(mode).is_some(), "{}", mode.name());
    }
    for behavior in [AwsBehavior::Classic, AwsBehavior::Retries2026] {
        assert!(rp_aws_behavior::from_core(behavior).is_some(), "{behavior:?}");
    }
    for action in [AwsAction::Retry, AwsAction::NoRetry] {
        assert!(rp_aws_action::from_core(action).is_some(), "{action:?}");
    }
    assert_eq!(RP_GRPC_DEFAULT_MAX_ATTEMPTS_CAP, DEFAULT_MAX_ATTEMPTS_CAP);
}

#[test]
fn a_grpc_code_is_read_by_any_case_of_its_name_or_its_number() {
    let mut value = u32::MAX;
    for name in [c"UNAVAILABLE", c"unavailable", c"Unavailable"] {
        // SAFETY: a valid out-pointer and a NUL-terminated name.
        let rc = unsafe { rp_enum_from_name(RP_ENUM_GRPC_CODE, name.as_ptr(), &mut value) };
        assert_eq!(
            (rc, value),
            (RP_RESULT_OK, RP_GRPC_CODE_UNAVAILABLE.0),
            "{name:?}"
        );
    }
    // SAFETY: as above.
    let rc = unsafe { rp_enum_from_name(RP_ENUM_GRPC_CODE, c"NOPE".as_ptr(), &mut value) };
    // The core's refusal of a status code, in a name as in a service config: out_of_range.
    assert_eq!(rc, RP_RESULT_OUT_OF_RANGE);
    assert_eq!(value, RP_GRPC_CODE_UNAVAILABLE.0, "not written on failure");
}

#[test]
fn every_budget_and_breaker_value_has_a_c_constant() {
    use retrypolicy::{BreakerChangeRule, BreakerState, BudgetKind, BudgetRule};
    use serde_json::json;
    // Every core value of these enums, read from its name (the core's own list is its serde form).
    for name in ["token_bucket", "retry_quota", "percentage"] {
        let kind: BudgetKind = serde_json::from_value(json!(name)).unwrap();
        assert!(rp_budget_kind::from_core(kind).is_some(), "{name}");
    }
    for rule in [
        BudgetRule::TokenBucketAboveHalf,
        BudgetRule::TokenBucketAtOrBelowHalf,
        BudgetRule::RetryQuotaAvailable,
        BudgetRule::RetryQuotaExhausted,
        BudgetRule::PercentageWithinBudget,
        BudgetRule::PercentageBudgetSpent,
    ] {
        assert!(rp_budget_rule::from_core(rule).is_some(), "{}", rule.name());
        // Each refusing rule is also a decision's rule (C-only codes), and no permitting one.
        assert_eq!(
            rp_rule::from_core(Either::Right(rule)).is_some(),
            !rule.permits(),
            "{}",
            rule.name()
        );
    }
    for state in [BreakerState::Closed, BreakerState::Open, BreakerState::HalfOpen] {
        assert!(rp_breaker_state::from_core(state).is_some(), "{}", state.name());
    }
    for name in [
        "breaker_tripped",
        "breaker_canary",
        "canary_succeeded",
        "canary_failed",
        "canary_timed_out",
        "canary_released",
    ] {
        let rule: BreakerChangeRule = serde_json::from_value(json!(name)).unwrap();
        assert!(rp_breaker_change_rule::from_core(rule).is_some(), "{name}");
    }
}

#[test]
fn a_name_of_neither_side_is_unknown_name_listing_both() {
    let mut value = 0_u32;
    // SAFETY: a valid out-pointer and a NUL-terminated name.
    let rc = unsafe { rp_enum_from_name(RP_ENUM_RULE, c"no_such_rule".as_ptr(), &mut value) };
    assert_eq!(rc, RP_RESULT_UNKNOWN_NAME);
    let e = last_error();
    assert!(
        e.contains("no_such_rule")
            && e.contains("best_effort_backoff")
            && e.contains("retry_quota_exhausted"),
        "{e}"
    );
    // A permitting budget rule is a budget rule, not a decision's.
    // SAFETY: as above.
    let rc = unsafe { rp_enum_from_name(RP_ENUM_RULE, c"retry_quota_available".as_ptr(), &mut value) };
    assert_eq!(rc, RP_RESULT_UNKNOWN_NAME);
}

#[test]
fn a_poisoned_handle_is_a_typed_error_on_every_call() {
    let json = r#"{"kind": "retry_quota"}"#;
    let mut budget = std::ptr::null_mut();
    // SAFETY: valid text and out-pointer.
    assert_eq!(
        unsafe { rp_budget_from_json(json.as_ptr().cast(), json.len(), &mut budget) },
        RP_RESULT_OK
    );
    let mut breaker = std::ptr::null_mut();
    // SAFETY: as above.
    assert_eq!(
        unsafe { rp_breaker_from_json(c"{}".as_ptr(), 2, &mut breaker) },
        RP_RESULT_OK
    );
    // Poison both locks: a thread panics while holding them.
    // SAFETY: both handles are live until freed below.
    let (b, k) = unsafe { (&*budget, &*breaker) };
    std::thread::scope(|s| {
        s.spawn(|| {
            let _held = (b.lock_for_test(), k.lock_for_test());
            panic!("poison");
        })
        .join()
        .unwrap_err();
    });
    let mut verdict = std::mem::MaybeUninit::uninit();
    let mut text = std::ptr::null_mut();
    // SAFETY: live handles, valid out-pointers.
    unsafe {
        assert_eq!(
            rp_budget_try_retry(budget, 0, RP_RETRY_CAUSE_ERROR, verdict.as_mut_ptr()),
            RP_RESULT_POISONED
        );
        assert_eq!(
            last_error(),
            "budget: a call panicked while holding this handle's lock; free it and make a new one"
        );
        assert_eq!(
            rp_budget_record(budget, 0, RP_BUDGET_EVENT_FAILURE, RP_RETRY_CAUSE_NONE),
            RP_RESULT_POISONED
        );
        assert_eq!(rp_budget_snapshot(budget, &mut text), RP_RESULT_POISONED);
        let mut breaker_verdict = std::mem::MaybeUninit::uninit();
        assert_eq!(
            rp_breaker_permit(breaker, 0, breaker_verdict.as_mut_ptr()),
            RP_RESULT_POISONED
        );
        assert_eq!(
            rp_breaker_record(breaker, 0, RP_BREAKER_OUTCOME_FAILURE),
            RP_RESULT_POISONED
        );
        assert!(text.is_null());
        rp_budget_free(budget);
        rp_breaker_free(breaker);
    }
}

#[test]
fn a_poisoned_rate_limiter_is_a_typed_error_on_every_call() {
    let mut limiter = std::ptr::null_mut();
    // SAFETY: valid text and out-pointer.
    assert_eq!(
        unsafe { rp_aws_rate_limiter_from_json(c"{}".as_ptr(), 2, 0, &mut limiter) },
        RP_RESULT_OK
    );
    // SAFETY: live until freed below.
    let l = unsafe { &*limiter };
    std::thread::scope(|s| {
        s.spawn(|| {
            let _held = l.lock_for_test();
            panic!("poison");
        })
        .join()
        .unwrap_err();
    });
    let mut verdict = std::mem::MaybeUninit::uninit();
    let mut update = std::mem::MaybeUninit::uninit();
    let mut text = std::ptr::null_mut();
    // SAFETY: a live handle, valid out-pointers.
    unsafe {
        assert_eq!(
            rp_aws_rate_limiter_acquire(limiter, 0, verdict.as_mut_ptr()),
            RP_RESULT_POISONED
        );
        assert_eq!(
            last_error(),
            "limiter: a call panicked while holding this handle's lock; free it and make a new one"
        );
        assert_eq!(
            rp_aws_rate_limiter_record(limiter, 0, true.into(), update.as_mut_ptr()),
            RP_RESULT_POISONED
        );
        assert_eq!(
            rp_aws_rate_limiter_snapshot(limiter, &mut text),
            RP_RESULT_POISONED
        );
        assert!(text.is_null());
        rp_aws_rate_limiter_free(limiter);
    }
}

#[test]
fn intern_returns_the_same_pointer_for_the_same_text() {
    let a = intern("kv_response_code");
    let b = intern(&String::from("kv_response_code"));
    assert_eq!(a.as_ptr(), b.as_ptr());
    assert_eq!(a.to_str().unwrap(), "kv_response_code");
}

fn boom(fail: bool) -> rp_result {
    ffi_boundary(|| {
        if fail {
            panic!("deliberate {}", 42);
        }
        Ok(())
    })
}

#[test]
fn a_panic_becomes_rp_result_panic_with_its_message() {
    assert_eq!(boom(false), RP_RESULT_OK);
    assert_eq!(boom(true), RP_RESULT_PANIC);
    assert_eq!(last_error(), "panic: deliberate 42");
}

#[test]
fn a_guarded_panic_returns_the_fallback() {
    let p: *const u8 = guard(std::ptr::null(), || panic!("x"));
    assert!(p.is_null());
    assert_eq!(last_error(), "panic: x");
    guard((), || std::panic::panic_any(7_u8));
    assert_eq!(last_error(), "panic: (no message)");
}
