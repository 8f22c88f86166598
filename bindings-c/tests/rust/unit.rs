//! Unit tests of libretrypolicy's Rust side (a module of the library, `src/lib.rs`, kept out of
//! `src/`): the mappings the C tests cannot see whole, and the panic boundary.

use std::ffi::{c_char, CStr};

use retrypolicy::{HttpMethod, RetryReason};

use crate::enums::CEnum;
use crate::error::{result_for_code, with_last_error, RESULTS};
use crate::ffi::intern;
use crate::names::serde_name;
use crate::panic::{ffi_boundary, guard};
use crate::*;

#[test]
fn runtime_version_is_the_package_version() {
    // SAFETY: rp_version returns a static NUL-terminated string.
    let v = unsafe { CStr::from_ptr(rp_version()) };
    assert_eq!(v.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
    assert_eq!(v.to_str().unwrap(), retrypolicy::VERSION);
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
    for (i, (r, name, meaning)) in RESULTS.iter().enumerate() {
        for (s, other, _) in &RESULTS[i + 1..] {
            assert_ne!(r, s);
            assert_ne!(name, other);
        }
        assert!(!name.is_empty() && !meaning.is_empty(), "{r:?}");
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
    one_to_one::<rp_dispatch_failure>();
    for (f, _, _) in retrypolicy::classify::dispatch::DISPATCH_TABLE {
        assert!(rp_dispatch_failure::from_core(f).is_some(), "{f:?}");
    }
    one_to_one::<rp_no_retry_cause>();
    one_to_one::<rp_rule>();
    one_to_one::<rp_action>();
    assert_eq!(rp_reason(20).core(), None);
    assert_eq!(rp_rule(u32::MAX).core(), None);
}

#[test]
fn serde_names_round_trip() {
    for (_, s) in rp_service::ALL {
        let name = serde_name(s).to_str().unwrap();
        assert_eq!(
            retrypolicy_wire::parse_name::<retrypolicy::Service>("service", name).unwrap(),
            *s
        );
    }
    assert_eq!(serde_name(&HttpMethod::Delete).to_str().unwrap(), "DELETE");
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
    with_last_error(|m| assert_eq!(m, "panic: deliberate 42"));
}

#[test]
fn a_guarded_panic_returns_the_fallback() {
    let p: *const c_char = guard(std::ptr::null(), || panic!("x"));
    assert!(p.is_null());
    with_last_error(|m| assert_eq!(m, "panic: x"));
    guard((), || std::panic::panic_any(7_u8));
    with_last_error(|m| assert_eq!(m, "panic: (no message)"));
}
