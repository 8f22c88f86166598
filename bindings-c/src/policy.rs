//! `rp_policy`: a loaded, validated policy document, immutable and shared between threads.

use std::ffi::c_char;

use retrypolicy::Policy;

use crate::error::rp_result;
use crate::ffi::{borrow, borrow_opt, free_handle, output, owned_string, text};
use crate::panic::guard;

/// A loaded policy: immutable, shareable between threads; create with `rp_policy_new_default` or
/// `rp_policy_from_json`, free with `rp_policy_free`.
pub struct rp_policy {
    inner: Policy,
}

/// The policy behind `p`, or the RFC 0049 default for NULL.
/// Safety: `p` must be NULL or a live handle, not freed while the result is used.
pub(crate) unsafe fn policy_or_default<'a>(p: *const rp_policy) -> &'a Policy {
    // SAFETY: forwarded from this function's contract.
    unsafe { borrow_opt(p) }.map_or(&Policy::RFC, |p| &p.inner)
}

/// A new handle holding `inner`, owned by the caller.
fn handle(inner: Policy) -> *mut rp_policy {
    Box::into_raw(Box::new(rp_policy { inner }))
}

/// Creates a handle holding the RFC 0049 default policy (best effort, exponential 1-500 ms, no jitter).
///
/// On success `*policy_out` owns a handle the caller frees with `rp_policy_free`.
#[no_mangle]
pub unsafe extern "C" fn rp_policy_new_default(policy_out: *mut *mut rp_policy) -> rp_result {
    output!(policy_out, Ok(handle(Policy::default())))
}

/// Parses and validates a policy document (`{"version": 1, "strategy": "best_effort", ...}`).
///
/// On success `*policy_out` owns a handle the caller frees with `rp_policy_free`; on failure
/// `rp_last_error_message` names the field, e.g. "backoff.min_ms: 9 is out of range: ...".
#[no_mangle]
pub unsafe extern "C" fn rp_policy_from_json(
    json: *const c_char,
    json_len: usize,
    policy_out: *mut *mut rp_policy,
) -> rp_result {
    output!(policy_out, {
        let json = text(json, json_len, "json", false)?;
        Ok(handle(retrypolicy_wire::parse_policy(json)?))
    })
}

/// Writes `policy` as its normalized JSON document (every field present) to a new string, which
/// the caller frees with `rp_string_free` (not `free`).
#[no_mangle]
pub unsafe extern "C" fn rp_policy_to_json(
    policy: *const rp_policy,
    json_out: *mut *mut c_char,
) -> rp_result {
    output!(json_out, owned_string(borrow(policy, "policy")?.inner.to_json()))
}

/// Frees a policy handle; NULL is a no-op. No thread may use the handle any more.
#[no_mangle]
pub unsafe extern "C" fn rp_policy_free(policy: *mut rp_policy) {
    // SAFETY: the pointer contract (lib.rs).
    unsafe { free_handle(policy) }
}

/// Frees a string this library returned (`rp_policy_to_json`, `rp_call_json`); NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn rp_string_free(s: *mut c_char) {
    if !s.is_null() {
        // SAFETY: the pointer contract (lib.rs): a string made by CString::into_raw, freed once.
        guard((), || drop(unsafe { std::ffi::CString::from_raw(s) }));
    }
}
