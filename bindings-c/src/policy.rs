//! `rp_policy`: a loaded, validated policy document, immutable and shared between threads.

use std::ffi::c_char;

use retrypolicy::Policy;

use crate::error::rp_result;
use crate::ffi::{free_handle, output, text};
use crate::panic::guard;

/// A loaded policy: immutable, shareable between threads; create with `rp_policy_from_json`, free
/// with `rp_policy_free`. Where a function takes a policy, NULL stands for the RFC 0049 default.
pub struct rp_policy(Policy);

/// The policy behind `p`, or the RFC 0049 default for NULL.
/// Safety: `p` must be NULL or a live handle, not freed while the result is used.
pub(crate) unsafe fn policy_or_default<'a>(p: *const rp_policy) -> &'a Policy {
    // SAFETY: forwarded from this function's contract.
    unsafe { p.as_ref() }.map_or(&Policy::RFC, |p| &p.0)
}

/// Parses and validates a policy document (`{"version": 1, "strategy": "best_effort", ...}`; `{}`
/// is the RFC 0049 default) into a new handle, which the caller frees with `rp_policy_free`.
///
/// On failure `rp_last_error_message` names the field, e.g. "backoff.min_ms: 9 is out of range: ...".
#[no_mangle]
pub unsafe extern "C" fn rp_policy_from_json(
    json: *const c_char,
    json_len: usize,
    policy_out: *mut *mut rp_policy,
) -> rp_result {
    output!(policy_out, {
        let policy = retrypolicy_wire::parse_policy(text(json, Some(json_len), "json")?)?;
        Ok(Box::into_raw(Box::new(rp_policy(policy))))
    })
}

/// Frees a policy handle; NULL is a no-op. No thread may use the handle any more.
#[no_mangle]
pub unsafe extern "C" fn rp_policy_free(policy: *mut rp_policy) {
    // SAFETY: the pointer contract (lib.rs).
    unsafe { free_handle(policy) }
}

/// Frees a string this library returned (`rp_decision_format`, `rp_call_json`); NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn rp_string_free(s: *mut c_char) {
    if !s.is_null() {
        // SAFETY: the pointer contract (lib.rs): a string made by CString::into_raw, freed once.
        guard((), || drop(unsafe { std::ffi::CString::from_raw(s) }));
    }
}
